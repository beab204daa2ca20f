"""Campaigns from logs, their plan (sampling, assignment, orders) and the campaign file."""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from annotate_support import (
    demo_logs_fixture,  # noqa: F401 (a fixture)
    log_of,
    new_campaign,
)
from inspect_ai.log import read_eval_log, write_eval_log

from howtobench.annotate.campaign import Options, plan, sample_evenly
from howtobench.annotate.protocol import Rating
from howtobench.annotate.schema import SCHEMA_VERSION
from howtobench.annotate.sources import Instruction, read_instructions
from howtobench.annotate.store import Store
from howtobench.cli import main
from howtobench.studies import StudyError


def synthetic(genres: dict[str, int], writers: int = 3) -> list[Instruction]:
    """Instructions of made-up genres (name -> how many), each written by every writer."""
    return [
        Instruction(
            infer_id=f"{genre}_{i}",
            task="open",
            genre=genre,
            language="zh",
            instruction=f"写一篇{genre}",
            grounding="",
            reference="参考",
            writings={f"w{k}": f"{genre} {i} by w{k}" for k in range(writers)},
        )
        for genre, count in genres.items()
        for i in range(count)
    ]


def rows(db: Path, query: str) -> list[tuple]:  # type: ignore[type-arg]
    with sqlite3.connect(db) as connection:
        return connection.execute(query).fetchall()


def test_the_writings_are_the_logs_outputs_with_their_metadata(demo_logs: Path) -> None:
    found = {item.infer_id: item for item in read_instructions([demo_logs])}
    assert len(found) == 7  # 4 open and 3 completion items of the demo
    for path in demo_logs.glob("*.eval"):
        log = read_eval_log(str(path))
        model = log.eval.model.removeprefix("replay/")
        for sample in log.samples or []:
            item = found[str(sample.id)]
            assert item.writings[model] == sample.output.completion
            assert item.instruction == sample.metadata["instruction"]
            assert item.grounding == sample.metadata["grounding"]
            assert item.reference == sample.metadata["reference"]
            assert item.task == sample.metadata["task"] and item.genre == sample.metadata["genre"]


def test_each_writing_gets_k_raters_who_rate_its_instruction_whole(
    demo_logs: Path, tmp_path: Path
) -> None:
    db = tmp_path / "c.db"
    new_campaign(db, [demo_logs], raters=["ana", "ben", "chen", "dan"], per_writing=2).close()
    per_writing = rows(
        db,
        "SELECT c.writing_id, COUNT(DISTINCT a.rater_id) FROM candidates c "
        "JOIN assignments a ON a.id = c.assignment_id GROUP BY c.writing_id",
    )
    assert len(per_writing) == 14 and {n for _, n in per_writing} == {2}
    # every assignment holds all the writings of its instruction
    sizes = rows(
        db,
        "SELECT COUNT(c.id), (SELECT COUNT(*) FROM writings w WHERE w.instruction_id = "
        "a.instruction_id) FROM assignments a JOIN candidates c ON c.assignment_id = a.id "
        "GROUP BY a.id",
    )
    assert all(shown == written == 2 for shown, written in sizes)
    loads = Counter(rater for (rater,) in rows(db, "SELECT rater_id FROM assignments"))
    assert max(loads.values()) - min(loads.values()) <= 1 and sum(loads.values()) == 14


def test_sampling_goes_round_the_genres_and_follows_the_seed() -> None:
    items = synthetic({"poem": 2, "speech": 4, "report": 10, "letters": 10, "fiction": 10})
    chosen = sample_evenly(items, 14, random.Random(1))
    # three rounds; the poems run out after two
    counts = Counter(item.genre for item in chosen)
    assert counts == {"poem": 2, "speech": 3, "report": 3, "letters": 3, "fiction": 3}
    assert len({item.infer_id for item in chosen}) == 14
    options = Options(count=12, raters=("a", "b", "c"), seed=7)
    first = plan(items, options)
    assert first == plan(items, options)
    other = plan(items, replace(options, seed=8))
    assert [i.infer_id for i in first.instructions] != [i.infer_id for i in other.instructions]


def test_every_rater_has_orders_of_their_own() -> None:
    items = synthetic({"poem": 6, "speech": 6}, writers=5)
    chosen = plan(items, Options(count=12, raters=("a", "b"), seed=3))
    orders = {r: [a for a in chosen.assignments if a.rater == r] for r in ("a", "b")}
    assert [a.infer_id for a in orders["a"]] != [a.infer_id for a in orders["b"]]
    by_id = {r: {a.infer_id: a.candidates for a in orders[r]} for r in orders}
    assert any(by_id["a"][i] != by_id["b"][i] for i in by_id["a"])
    assert all(sorted(c) == [f"w{k}" for k in range(5)] for c in by_id["a"].values())


def test_a_pick_campaign_shows_the_reference_among_the_candidates() -> None:
    items = synthetic({"poem": 3})
    options = Options(raters=("a",), per_writing=1, kind="pick")
    chosen = plan(items, options)
    assert all(sorted(a.candidates) == ["", "w0", "w1", "w2"] for a in chosen.assignments)
    hidden = plan(items, replace(options, reference="hide"))
    assert all("" not in a.candidates for a in hidden.assignments)


def other_task_log(demo_logs: Path, folder: Path) -> Path:
    path = folder / "other.eval"
    log = read_eval_log(str(log_of(demo_logs, "open", "demo-writer-a")))
    log.eval.task = "someone/else"
    write_eval_log(log, str(path))
    return path


def perturbed_log(demo_logs: Path, folder: Path) -> Path:
    path = folder / "perturbed.eval"
    log = read_eval_log(str(log_of(demo_logs, "open", "demo-writer-a")))
    log.eval.metadata = {**(log.eval.metadata or {}), "perturb": "drop"}
    write_eval_log(log, str(path))
    return path


def changed_copy(demo_logs: Path, folder: Path) -> Path:
    """The same run again (same eval id) with one writing changed."""
    path = folder / "changed.eval"
    log = read_eval_log(str(log_of(demo_logs, "open", "demo-writer-a")))
    assert log.samples
    log.samples[0].output.completion = "另一篇"
    write_eval_log(log, str(path))
    return path


@pytest.mark.parametrize(
    ("make", "options", "expected"),
    [
        (other_task_log, [], "a log of task 'someone/else', not of a howtobench task"),
        (perturbed_log, [], "its writings were disturbed (perturb=drop)"),
        (changed_copy, [], "demo-writer-a's writing of demo_open_1 differs from the one in"),
        (None, ["--raters", "ana"], "--raters: 1 rater(s) cannot give each writing 2 ratings"),
        (None, ["--raters", "ana,ana,ben"], "--raters: ana named more than once"),
        (None, ["--instructions", "8"], "--instructions 8: the logs hold 7 instruction(s)"),
        (None, ["--instructions", "0"], "argument --instructions: expected a whole number of"),
        (None, ["--raters-per-writing", "0"], "argument --raters-per-writing: expected a whole"),
    ],
)
def test_bad_input_stops_with_one_line(
    demo_logs: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: object,
    options: list[str],
    expected: str,
) -> None:
    logs = [str(demo_logs)]
    if callable(make):
        logs.append(str(make(demo_logs, tmp_path)))
    db = tmp_path / "c.db"
    try:
        status = main(["annotate", "new", str(db), "--logs", *logs, *options])
    except SystemExit as stop:  # refused by argparse, as the option is read
        status = stop.code
    assert status == 2
    err = capsys.readouterr().err
    assert err.startswith("howtobench annotate new: error: ") and err.count("\n") == 1
    assert expected in err
    assert not db.exists()


def test_an_existing_file_is_never_overwritten(
    demo_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "c.db"
    db.write_text("keep me", encoding="utf-8")
    assert main(["annotate", "new", str(db), "--logs", str(demo_logs)]) == 2
    assert "the file exists" in capsys.readouterr().err
    assert db.read_text(encoding="utf-8") == "keep me"


def test_the_file_is_wal_with_foreign_keys_and_a_schema_version(
    demo_logs: Path, tmp_path: Path
) -> None:
    db = tmp_path / "c.db"
    store = new_campaign(db, [demo_logs])
    with store._db() as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert connection.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert connection.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
        assert connection.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        with pytest.raises(sqlite3.IntegrityError):
            connection.execute(
                "INSERT INTO ratings VALUES ('nobody', 3, '[]', '', '2026-01-01T00:00:00')"
            )
        with pytest.raises(sqlite3.IntegrityError):  # the score's CHECK
            connection.execute(
                "INSERT INTO ratings SELECT id, 6, '[]', '', '' FROM candidates LIMIT 1"
            )
    store.close()


def test_files_that_are_no_campaign_are_refused(demo_logs: Path, tmp_path: Path) -> None:
    with pytest.raises(StudyError, match="no such campaign file"):
        Store(tmp_path / "missing.db")
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is no database at all, just some bytes" * 10)
    with pytest.raises(StudyError, match="not a campaign file"):
        Store(junk)
    db = tmp_path / "c.db"
    new_campaign(db, [demo_logs]).close()
    older = tmp_path / "older.db"
    shutil.copy(db, older)
    with sqlite3.connect(older) as connection:
        connection.execute("PRAGMA user_version = 99")
    with pytest.raises(StudyError, match="schema version 99; this howtobench reads version 1"):
        Store(older)


def test_a_rater_reaches_only_their_own_writings(demo_logs: Path, tmp_path: Path) -> None:
    store = new_campaign(tmp_path / "c.db", [demo_logs], raters=["ana", "ben", "chen"])
    ids = {name: rater_id for name, (rater_id, _) in store.settings().raters.items()}
    ana = store.assignments(ids["ana"])
    ben = store.assignments(ids["ben"])
    mine = {w["id"] for item in ana for w in item["writings"]}
    theirs = {w["id"] for item in ben for w in item["writings"]}
    assert not mine & theirs  # every rater has ids of their own, even for shared writings
    some = next(iter(theirs))
    assert store.save_rating(ids["ana"], some, Rating(4, (), "")) is None
    assert store.save_rating(ids["ben"], some, Rating(4, (), "")) is not None
    assert len(store.ratings()) == 1
    store.close()
