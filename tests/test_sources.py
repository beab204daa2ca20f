"""The data sources as objects: each kind's records and stored writings on real files (the
demo, lines of the published benchmark in the paper's folder layout, a user's JSONL file),
the one-line errors they refuse with, and that `open_source` resolves a source once."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from howtobench.construct.screen import screen_records
from howtobench.dataset import hub, open_source
from howtobench.dataset.jsonl import DEMO_FILE
from howtobench.dataset.records import DataError
from howtobench.vocabulary.words import TASKS
from support.data import MARKER, aligned_row, write_jsonl

MODELS = ("deepseek-chat", "gpt-4o-2024-11-20")
NOT_FOUND = (
    "dataset not found: give 'hub', 'demo', a data folder (<task>/aligned.jsonl) or a JSONL file"
)


def _published_folder(shared_data: Path, root: Path) -> dict[str, dict[str, list[dict]]]:
    """The first three guide and open records with two models' writings of them, copied
    line by line from the published data into the paper's layout: the rows copied, by
    task and file (`aligned` or the model)."""
    copied: dict[str, dict[str, list[dict]]] = {}
    for task in ("guide", "open"):
        lines = (shared_data / task / "aligned.jsonl").read_text("utf-8").splitlines()[:3]
        (root / task / "inferences").mkdir(parents=True)
        (root / task / "aligned.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
        ids = {json.loads(line)["infer_id"] for line in lines}
        copied[task] = {"aligned": [json.loads(line) for line in lines]}
        for model in MODELS:
            path = shared_data / task / "inferences" / f"{model}.jsonl"
            kept = [
                ln
                for ln in path.read_text("utf-8").splitlines()
                if json.loads(ln)["infer_id"] in ids
            ]
            (root / task / "inferences" / f"{model}.jsonl").write_text(
                "\n".join(kept) + "\n", "utf-8"
            )
            copied[task][model] = [json.loads(line) for line in kept]
    return copied


def test_a_folder_of_published_lines(shared_data: Path, tmp_path: Path) -> None:
    copied = _published_folder(shared_data, tmp_path / "data")
    source = open_source(str(tmp_path / "data"))
    assert source.name == str(tmp_path / "data")
    assert source.tasks() == ["guide", "open"]
    for task, rows in copied.items():
        records = source.records(task)
        assert [(r.id, r.instruction, r.reference, r.genre_raw) for r in records] == [
            (row["infer_id"], row["basic_instruction"], row["reference"], row["sub_task"])
            for row in rows["aligned"]
        ]
        assert source.models(task) == list(MODELS)
        for model in MODELS:
            stored = {row["infer_id"]: row["output"] for row in rows[model]}
            assert len(stored) == 3
            assert source.generations(task, model) == stored
            # a run of one record (one genre, say) gets that record's writing only
            assert source.generations_for(task, model, records[1:2]) == {
                records[1].id: stored[records[1].id]
            }
    assert [r.id for r in source.items()] == [
        row["infer_id"] for task in ("guide", "open") for row in copied[task]["aligned"]
    ]


def test_the_demo_source() -> None:
    rows = [json.loads(line) for line in DEMO_FILE.read_text("utf-8").splitlines()]
    source = open_source("demo")
    assert source.name == "demo" and source.tasks() == list(TASKS)
    for task in TASKS:
        mine = [row for row in rows if row["task"] == task]
        assert [r.id for r in source.records(task)] == [row["id"] for row in mine]
        assert source.models(task) == ["demo-writer-a", "demo-writer-b"]
        assert source.generations(task, "demo-writer-b") == {
            row["id"]: row["generations"]["demo-writer-b"] for row in mine
        }


def test_a_user_jsonl_file(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            {
                "instruction": "Write about trains.",
                "generations": {"m1": "Trains.", "m2": "Rails."},
            },
            {"id": "g", "task": "guide", "instruction": "写信。", "generations": {"m1": "信"}},
            {"task": "completion", "instruction": "补全。", "grounding": f"甲{MARKER}乙"},
        ],
    )
    source = open_source(str(path))
    assert source.tasks() == list(TASKS)  # the first record belongs to any task
    assert [r.id for r in source.records("guide")] == ["mine_1", "g"]
    assert source.models("guide") == ["m1", "m2"]
    assert source.generations("guide", "m1") == {"mine_1": "Trains.", "g": "信"}
    assert source.generations("guide", "m2") == {"mine_1": "Rails."}
    # screening reads every record once, one without a task as open writing
    assert [(r.id, r.task) for r in source.items()] == [
        ("mine_1", "open"),
        ("g", "guide"),
        ("mine_3", "completion"),
    ]
    write_jsonl(
        path, [{"task": "guide", "instruction": "写信。"}, {"task": "open", "instruction": "写"}]
    )
    assert open_source(str(path)).tasks() == ["guide", "open"]


def test_a_missing_path_is_one_line() -> None:
    with pytest.raises(DataError) as caught:
        open_source("/no/such/place")
    assert str(caught.value) == f"/no/such/place: {NOT_FOUND}"


def test_unknown_model_and_missing_generation(shared_data: Path, tmp_path: Path) -> None:
    root = tmp_path / "data"
    copied = _published_folder(shared_data, root)
    source = open_source(str(root))
    inferences = root / "guide" / "inferences"
    with pytest.raises(DataError) as caught:
        source.generations("guide", "nobody")
    assert str(caught.value) == (
        f"{inferences / 'nobody.jsonl'}: no stored writings of 'nobody' "
        "(stored: deepseek-chat, gpt-4o-2024-11-20)"
    )
    gone = copied["guide"]["deepseek-chat"][-1]
    kept = [json.dumps(row, ensure_ascii=False) for row in copied["guide"]["deepseek-chat"][:-1]]
    (inferences / "deepseek-chat.jsonl").write_text("\n".join(kept) + "\n", "utf-8")
    records = source.records("guide")
    with pytest.raises(DataError) as caught:
        source.generations_for("guide", "deepseek-chat", records)
    assert str(caught.value) == (
        f"{inferences / 'deepseek-chat.jsonl'}, field 'infer_id': "
        f"no stored writing of 'deepseek-chat' for '{gone['infer_id']}'"
    )
    # the records that have one still replay
    assert len(source.generations_for("guide", "deepseek-chat", records[:2])) == 2

    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [{"instruction": "写", "generations": {"m1": "诗"}}, {"instruction": "文"}],
    )
    mine = open_source(str(path))
    with pytest.raises(DataError) as caught:
        mine.generations("open", "m2")
    assert (
        str(caught.value) == f"{path}, field 'generations': no stored writings of 'm2' (stored: m1)"
    )
    with pytest.raises(DataError) as caught:
        mine.generations_for("open", "m1", mine.records("open"))
    assert (
        str(caught.value)
        == f"{path}, field 'generations.m1': no stored writing of 'm1' for 'mine_2'"
    )


def test_a_second_record_of_an_id_is_refused(tmp_path: Path) -> None:
    aligned = write_jsonl(
        tmp_path / "data" / "open" / "aligned.jsonl", [aligned_row("a", "open")] * 2
    )
    with pytest.raises(DataError) as caught:
        open_source(str(tmp_path / "data")).records("open")
    assert str(caught.value) == f"{aligned}, field 'infer_id': duplicate id 'a' (lines 1 and 2)"
    path = write_jsonl(tmp_path / "mine.jsonl", [{"id": "x", "instruction": "一"}] * 2)
    with pytest.raises(DataError) as caught:
        open_source(str(path)).records("open")
    assert str(caught.value) == f"{path}, field 'id': duplicate id 'x' (lines 1 and 2)"


def test_screening_reads_every_task_of_a_folder_once(tmp_path: Path) -> None:
    root = tmp_path / "data"
    (root / "guide").mkdir(parents=True)
    with pytest.raises(DataError) as caught:
        screen_records(str(root))
    assert str(caught.value) == f"{root}: the folder has no <task>/aligned.jsonl"
    write_jsonl(root / "guide" / "aligned.jsonl", [aligned_row("g1"), aligned_row("g2")])
    write_jsonl(root / "open" / "aligned.jsonl", [aligned_row("o1", "open")])
    assert [r.id for r in screen_records(str(root))] == ["g1", "g2", "o1"]
    write_jsonl(root / "open" / "aligned.jsonl", [aligned_row("g2", "open")])
    with pytest.raises(DataError, match=r"id 'g2' is used twice .*screening needs one id per item"):
        screen_records(str(root))


def test_a_relative_folder_is_resolved_when_opened(
    data_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The source is the folder the path named when it was opened, wherever it is read."""
    monkeypatch.chdir(data_folder.parent)
    source = open_source("data")
    assert source.name == "data"  # as given, for the task's metadata
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert [r.id for r in source.records("guide")] == ["infer_1", "infer_2"]
    assert source.generations("guide", "model-b") == {"infer_1": "城市需要公园。"}
    with pytest.raises(DataError, match=r"^data: dataset not found"):
        open_source("data")  # the same words now name nothing


def test_a_jsonl_file_is_read_once(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            {"id": "a", "task": "guide", "instruction": "写信。", "generations": {"m": "信"}},
            {"id": "b", "task": "open", "instruction": "写诗。", "generations": {"m": "诗"}},
        ],
    )
    source = open_source(str(path))
    assert [r.id for r in source.records("guide")] == ["a"]
    path.unlink()  # what follows is answered from the one read
    assert [r.id for r in source.records("open")] == ["b"]
    assert source.generations("open", "m") == {"b": "诗"}
    assert source.tasks() == ["guide", "open"]


def test_the_hub_is_fetched_once_for_every_task(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [aligned_row("c1", "completion"), aligned_row("g1"), aligned_row("o1", "open")]
    calls = []

    def fake_load_dataset(path: str, revision: str, split: str) -> list[dict]:
        calls.append((path, revision, split))
        return rows

    monkeypatch.setattr("datasets.load_dataset", fake_load_dataset)
    monkeypatch.setattr(hub, "unreachable", lambda url: None)  # no network: rows as served
    source = open_source("hub")
    assert source.name == "hub" and open_source(None).name == "hub"
    assert {task: [r.id for r in source.records(task)] for task in source.tasks()} == {
        "completion": ["c1"],
        "guide": ["g1"],
        "open": ["o1"],
    }
    assert calls == [(hub.HF_REPO, hub.HF_REVISION, "train")]


def test_the_hub_stores_no_writings() -> None:
    source = open_source("hub")
    assert not source.stores_writings and source.models("open") == []
    with pytest.raises(DataError) as caught:
        source.generations("open", "gpt-4o")
    assert str(caught.value) == (
        "hf://andrewzhuoerfeng/HowToBench: replay needs stored generations: point dataset= at "
        "a local data folder (git clone https://github.com/ZhuoerFeng/ACL2026-Tree-of-Writing, "
        "then -T dataset=ACL2026-Tree-of-Writing/data) or a JSONL file with 'generations'"
    )


@pytest.mark.slow
def test_the_hub_offline_is_one_line(tmp_path: Path) -> None:
    """The real `datasets` client in offline mode (a fresh process, as the hub client reads
    HF_HUB_OFFLINE when imported), with an empty cache: one line, at once."""
    code = (
        "from howtobench.dataset import open_source\n"
        "try:\n"
        "    open_source('hub').records('guide')\n"
        "except ValueError as error:\n"
        "    print(type(error).__name__, str(error), sep='|')\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=100
    )
    assert done.returncode == 0, done.stderr
    kind, message = done.stdout.rstrip("\n").split("|")
    assert kind == "DataError" and "\n" not in message
    assert message.startswith(
        "hf://andrewzhuoerfeng/HowToBench@main: cannot load the benchmark (ConnectionError: "
        "Couldn't reach 'andrewzhuoerfeng/HowToBench' on the Hub"
    )
    assert message.endswith("; " + hub.HUB_UNREACHABLE_HELP)
