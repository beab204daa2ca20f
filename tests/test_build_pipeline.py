"""`howtobench build` end to end against the judge simulator: the demo corpus becomes a
data folder that the tasks read and ToW scores; every text is accounted for; options
and failures are applied and recorded; a rerun asks nothing; an interrupted build
resumes without asking an answered question again; no table it prints says `nan`."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from build_support import DEMO_CORPUS, MODEL, Recorder, read_rows, restored, run_build, write_rows
from inspect_ai import eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import read_eval_log
from inspect_ai.model import get_model

from howtobench.cli import main
from howtobench.construct.backconstruct import MEASURES
from howtobench.construct.corpus import read_corpus
from howtobench.construct.options import BuildOptions
from howtobench.construct.runs import BuildIncomplete
from howtobench.construct.screen import CATEGORIES
from howtobench.dataset import open_source
from howtobench.simulator import Asked, Fault, JudgeSimulator
from howtobench.vocabulary.words import TASKS

OUTPUTS = ("items.jsonl", "rejected.jsonl", "manifest.json", "summary.md")


@dataclass(frozen=True)
class Built:
    out: Path
    cache: Path
    simulator: JudgeSimulator
    recorder: Recorder


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Built]:
    """The demo corpus built once with the command, as the README runs it."""
    root = tmp_path_factory.mktemp("demo-build")
    recorder = Recorder()
    with pytest.MonkeyPatch.context() as patch, JudgeSimulator(script=recorder) as simulator:
        patch.setenv("INSPECT_CACHE_DIR", str(root / "cache"))
        patch.setenv("INSPECT_DISPLAY", "none")
        patch.setenv("SIM_API_KEY", "none")
        argv = ["build", str(DEMO_CORPUS), "--out", str(root / "out"), "--model", MODEL]
        assert main([*argv, "--model-base-url", simulator.base_url]) == 0
        yield Built(root / "out", root / "cache", simulator, recorder)


@pytest.mark.slow
def test_every_corpus_text_is_in_one_item_or_one_rejection(demo: Built) -> None:
    corpus = [t.id for t in read_corpus(DEMO_CORPUS)]
    used = [row["bench_id"] for t in TASKS for row in read_rows(demo.out / t / "aligned.jsonl")]
    rejected = read_rows(demo.out / "rejected.jsonl")
    assert sorted(used + [r["id"] for r in rejected]) == sorted(corpus)
    assert all(r["step"] and r["code"] and r["reason"] for r in rejected)
    why = {r["id"]: (r["step"], r["code"]) for r in rejected}
    assert why["zh-weather"] == why["en-shout"] == ("quality", "below_threshold")
    assert why["zh-bakery"] == ("screen", "flagged")  # advertising: no placeholder mends it
    bakery = next(r for r in rejected if r["id"] == "zh-bakery")
    assert list(bakery["flags"]) == ["advertisement"] and "扫码加微信" in bakery["reason"]
    # the lost-cat notice names its owner, her phone and e-mail: kept, de-identified
    assert "en-lostcat" in used and "en-lostcat" not in why
    manifest = json.loads((demo.out / "manifest.json").read_text("utf-8"))
    [(item, replaced)] = manifest["deidentified"]["items"].items()
    assert item.endswith("-en-lostcat") and manifest["counts"]["deidentified"] == 1
    assert sorted(r["kind"] for r in replaced) == ["email", "name", "phone"]


def test_the_folder_is_a_dataset_the_tasks_read(demo: Built) -> None:
    corpus = {t.id: t for t in read_corpus(DEMO_CORPUS)}
    for task in TASKS:
        records = open_source(str(demo.out)).records(task)
        assert records and all(r.id == f"{task}-{r.bench_id}" for r in records)
        for record in records:
            text = corpus[record.bench_id]
            original = text.text
            if record.bench_id == "en-lostcat":  # de-identified
                original = original.replace("Mary Kent", "[name]")
                original = original.replace("555-201-7788", "[phone number]")
                original = original.replace("mary.kent@example.com", "[e-mail address]")
            if task == "completion":  # the round trip, on the written files
                assert restored(record.grounding, record.reference) == original
            else:
                assert record.reference == original
            if task == "guide":  # key points, or the genre's trait sections
                lines = record.grounding.splitlines()
                assert lines[0].startswith("- ") or " : " in lines[0] or ": " in lines[0]
            if task == "open":
                assert record.grounding == ""
    items = read_rows(demo.out / "items.jsonl")
    english = {row["id"] for row in items if row["language"] == "en"}
    assert english and all(corpus[i.split("-", 1)[1]].language == "en" for i in english)
    for task in TASKS:  # the package's own format keeps the language
        from_items = open_source(str(demo.out / "items.jsonl")).records(task)
        assert {r.id for r in from_items if r.language == "en"} == {
            i for i in english if i.startswith(f"{task}-")
        }


def test_manifest_and_summary_agree_with_the_files(demo: Built) -> None:
    manifest = json.loads((demo.out / "manifest.json").read_text("utf-8"))
    files = {t: read_rows(demo.out / t / "aligned.jsonl") for t in TASKS}
    assert manifest["counts"]["items"] == {t: len(rows) for t, rows in files.items()}
    assert manifest["counts"]["rejected"] == len(read_rows(demo.out / "rejected.jsonl"))
    assert manifest["counts"]["texts"] == 21
    assert manifest["reference_check"]["items"] == {
        t: [row["infer_id"] for row in rows] for t, rows in files.items()
    }
    steps = manifest["steps"]
    assert steps["screen"]["out"] == sum(manifest["counts"]["items"].values())
    assert steps["classify"]["asked"] == 14  # the texts without a genre
    for step in ("classify", "quality", "backconstruct", "screen"):
        assert (demo.out / steps[step]["log"]).is_file()
    scores = manifest["quality"]["by_source"]
    assert sum(sum(row.values()) for row in scores.values()) == 21
    summary = (demo.out / "summary.md").read_text("utf-8")
    for heading in ("## Steps", "## Quality scores by source", "## Lengths in characters"):
        assert heading in summary


def test_a_rerun_asks_nothing_and_writes_the_same_files(
    demo: Built, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = {name: (demo.out / name).read_bytes() for name in OUTPUTS}
    asked = len(demo.recorder.asked)
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(demo.cache))
    argv = ["build", str(DEMO_CORPUS), "--out", str(demo.out), "--model", MODEL]
    assert main([*argv, "--model-base-url", demo.simulator.base_url]) == 0
    assert len(demo.recorder.asked) == asked
    assert {name: (demo.out / name).read_bytes() for name in OUTPUTS} == before


@pytest.mark.slow
def test_the_built_folder_is_scored_by_tow_with_the_simulator_as_writer(
    demo: Built, tmp_path: Path
) -> None:
    grader = get_model(MODEL, base_url=demo.simulator.base_url)
    logs = eval(
        [f"howtobench/{task}" for task in TASKS],
        task_args={"dataset": str(demo.out), "scorers": "tow"},
        model="openai-api/sim/writer",
        model_base_url=demo.simulator.base_url,
        model_roles={"grader": grader},
        log_dir=str(tmp_path),
        display="none",
    )
    manifest = json.loads((demo.out / "manifest.json").read_text("utf-8"))
    for log in logs:
        task = log.eval.task.split("/")[-1]
        assert log.status == "success"
        assert len(log.samples or []) == manifest["counts"]["items"][task]
        for sample in log.samples or []:
            overall = sample.scores["tow"].value["overall"]  # type: ignore[index]
            assert not math.isnan(overall)


def _small_corpus(tmp_path: Path) -> Path:
    rows = [json.loads(line) for line in DEMO_CORPUS.read_text("utf-8").splitlines()]
    chosen = ("zh-queue", "zh-river", "zh-stove", "zh-lastbus", "en-bicycle", "en-fair", "en-shout")
    return write_rows(tmp_path / "small.jsonl", [r for r in rows if r["id"] in chosen])


@pytest.mark.slow
def test_options_and_failures_are_applied_and_recorded(
    serve: Callable[..., JudgeSimulator], tmp_path: Path
) -> None:
    refusing = {"now": True}

    def answer(question: Asked) -> str | None:
        stalled = question.kind == "quality" and "末班车" in (question.writing or "")
        return "I would rather not say." if refusing["now"] and stalled else None

    recorder = Recorder(answer)
    simulator = serve(script=recorder)
    options = BuildOptions(tasks=("open",), threshold=5, per_genre=1, seed=3)
    corpus, out = _small_corpus(tmp_path), tmp_path / "out"
    result = run_build(corpus, out, simulator, options)
    rejected = {r["id"]: r for r in read_rows(out / "rejected.jsonl")}
    assert rejected["zh-lastbus"]["code"] == "no_usable_reply"  # never a default score
    assert "the reply holds no JSON object" in rejected["zh-lastbus"]["reason"]
    quality = json.loads((out / "manifest.json").read_text("utf-8"))["quality"]
    assert sum(row["failed"] for row in quality["by_source"].values()) == 1
    below = [r for r in rejected.values() if r["code"] == "below_threshold"]
    assert below and all(r["score"] < 5 for r in below)
    open_items = read_rows(out / "open" / "aligned.jsonl")
    genres = Counter(row["sub_task"] for row in open_items)
    assert open_items and max(genres.values()) == 1
    assert not (out / "guide").exists()
    assert result.items["open"] + result.rejected == 7

    # the documented way to ask failed questions again: drop the step's logs, rerun
    refusing["now"] = False
    shutil.rmtree(out / "logs" / "quality")
    before = len(recorder.asked)
    run_build(corpus, out, simulator, options)
    again = [kind for kind, _, _ in recorder.asked[before:] if kind == "quality"]
    assert again == ["quality"]  # only the failed one; the others came from the store
    rejected = {r["id"]: r for r in read_rows(out / "rejected.jsonl")}
    assert rejected.get("zh-lastbus", {}).get("code") != "no_usable_reply"


@pytest.mark.slow
def test_an_interrupted_build_resumes_without_asking_an_answered_question(
    serve: Callable[..., JudgeSimulator], tmp_path: Path, demo: Built
) -> None:
    down = {"now": True}

    gone = {"now": False}

    def answer(question: Asked) -> Fault | None:
        # the model goes down while back-constructing one text, and answers nothing more
        stalled = question.kind == "backconstruct" and "末班车" in (question.writing or "")
        if down["now"] and stalled:
            gone["now"] = True
        return Fault("500") if down["now"] and gone["now"] else None

    recorder = Recorder(answer)
    simulator = serve(script=recorder)
    out = tmp_path / "out"
    with pytest.raises(BuildIncomplete, match="step backconstruct did not finish"):
        run_build(DEMO_CORPUS, out, simulator)
    answered = recorder.answered()
    first_run = len(recorder.asked)
    down["now"] = gone["now"] = False
    run_build(DEMO_CORPUS, out, simulator)
    again = [(kind, text) for kind, text, _ in recorder.asked[first_run:]]
    assert again and not set(again) & answered  # nothing answered was asked again
    assert len(again) == len(set(again))
    assert {kind for kind, _ in again} <= {"backconstruct", "screen"}
    built = json.loads((out / "manifest.json").read_text("utf-8"))
    uninterrupted = json.loads((demo.out / "manifest.json").read_text("utf-8"))
    assert built["items_sha256"] == uninterrupted["items_sha256"]


def test_each_question_and_its_checked_answer_are_in_the_step_log(demo: Built) -> None:
    """What `inspect view` shows for a step: the model call, and the score with the reply."""
    manifest = json.loads((demo.out / "manifest.json").read_text("utf-8"))
    log = read_eval_log(str(demo.out / manifest["steps"]["quality"]["log"]))
    assert log.eval.task == "howtobench/quality" and len(log.samples or []) == 21
    sample = (log.samples or [])[0]
    assert any(isinstance(event, ModelEvent) for event in sample.events)
    score = sample.scores["quality"]  # type: ignore[index]
    assert score.metadata["replies"] and score.value["score"] == score.metadata["value"]["score"]  # type: ignore[index]


def test_a_second_build_into_a_folder_being_built_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from filelock import FileLock

    from howtobench.construct.pipeline import LOCK_FILE

    # the model resolves, and no call is made: the folder is refused first. Its base
    # URL is given, not taken from SIM_BASE_URL, so that inspect's cache of models does
    # not hand this dead address to a later test's `openai-api/sim/judge`
    monkeypatch.setenv("SIM_API_KEY", "none")
    out = tmp_path / "bench"
    out.mkdir()
    argv = ["build", str(DEMO_CORPUS), "--out", str(out), "--model", MODEL]
    with FileLock(out / LOCK_FILE):  # the first build, still running
        status = main([*argv, "--model-base-url", "http://127.0.0.1:9/v1"])
    assert status == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"howtobench build: error: --out {out}: another howtobench build is writing this "
        "folder; wait for it to finish, or give another --out"
    )
    assert sorted(p.name for p in out.iterdir()) == [LOCK_FILE]  # nothing was written


# The tables a build prints: numbers, or none, never `nan` ---------------------------------

STEPS = ("classify", "quality", "backconstruct", "screen")
NAN = re.compile(r"\bnan\b", re.IGNORECASE)


def test_every_step_table_holds_numbers_and_classify_none_without_labels(demo: Built) -> None:
    """What inspect prints after each step are its log's results: every metric a number.
    The build classifies only the texts without a genre, so there is nothing for classify's
    `agreement` to agree with, and it is left out (it printed `agreement nan`)."""
    manifest = json.loads((demo.out / "manifest.json").read_text("utf-8"))
    tables = {}
    for step in STEPS:
        log = read_eval_log(str(demo.out / manifest["steps"][step]["log"]), header_only=True)
        assert log.results is not None
        tables[step] = {
            s.name: {k: m.value for k, m in s.metrics.items()} for s in log.results.scores
        }
    assert tables["classify"] == {"genre": {}}
    assert set(tables["quality"]["quality"]) == {"score", "kept"}
    assert set(tables["backconstruct"]["construction"]) == set(MEASURES)
    assert set(tables["screen"]["screen"]) == {"flagged", *CATEGORIES}
    values = [v for table in tables.values() for row in table.values() for v in row.values()]
    assert values and all(math.isfinite(v) for v in values)


@pytest.mark.slow
def test_the_build_prints_no_nan_when_a_step_has_nothing_to_report(
    serve: Callable[..., JudgeSimulator], tmp_path: Path
) -> None:
    """`howtobench build` as typed, with inspect's own display of each step: classify
    gets no labelled text and every quality reply is unusable, so there is no agreement
    and no mean to give. Each table shows its name alone (it printed `agreement nan` and
    `mean nan`), and the summary says that no items were made."""
    simulator = serve(script=lambda q: Fault("out_of_range") if q.kind == "quality" else None)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "INSPECT_DISPLAY"}
    done = subprocess.run(
        [
            *(sys.executable, "-m", "howtobench.cli", "build", str(DEMO_CORPUS)),
            *("--out", str(out), "--model", MODEL, "--model-base-url", simulator.base_url),
            *("--max-retries", "0"),
        ],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "SIM_API_KEY": "none", "COLUMNS": "120"},
    )
    printed = done.stdout + done.stderr
    assert done.returncode == 0, printed
    assert "classify (14 samples)" in printed and "quality (" in printed  # both tables shown
    assert not NAN.search(printed), printed
    assert "agreement" not in printed
    assert "completion 0, guide 0, open 0" in printed
    summary = (out / "summary.md").read_text("utf-8")
    assert "No items were made" in summary and not NAN.search(summary)
