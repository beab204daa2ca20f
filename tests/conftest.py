"""Shared fixtures: small data folders and files written per test, and the shared benchmark copy."""

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from howtobench.simulator import JudgeSimulator

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "howtobench-data"
MARKER = "[fill in the blank]"


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def aligned_row(infer_id: str, task: str = "guide", **overrides: str) -> dict:
    row = {
        "infer_id": infer_id,
        "bench_id": f"bench_{infer_id}",
        "task_type": task,
        "sub_task": "议论文",
        "basic_instruction": "请写一篇关于城市公园的议论文。",
        "information": f"公园是城市的肺。{MARKER}我们应当珍惜它。"
        if task == "completion"
        else "- 公园的作用\n- 如何保护",
        "reference": "公园让城市更宜居。我们要爱护公园。",
    }
    row.update(overrides)
    return row


@pytest.fixture
def data_folder(tmp_path: Path) -> Path:
    """A folder like the paper repository's data/: two guide records, two models."""
    root = tmp_path / "data"
    write_jsonl(
        root / "guide" / "aligned.jsonl",
        [aligned_row("infer_1"), aligned_row("infer_2", sub_task="演讲稿")],
    )
    write_jsonl(
        root / "guide" / "inferences" / "model-a.jsonl",
        [
            {"infer_id": "infer_1", "model": "model-a", "output": "公园让城市更宜居。"},
            {"infer_id": "infer_2", "model": "model-a", "output": ""},
        ],
    )
    write_jsonl(
        root / "guide" / "inferences" / "model-b.jsonl",
        [
            {"infer_id": "infer_1", "model": "model-b", "output": "城市需要公园。"},
        ],
    )
    return root


@pytest.fixture
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the shared benchmark copy is not at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def fresh_judging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with an empty inspect cache and reply store."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator:  # type: ignore[type-arg]
    """Start simulators on demand; point the `sim` service at the latest one."""
    started: list[JudgeSimulator] = []

    def start(**options: object) -> JudgeSimulator:
        simulator = JudgeSimulator(**options).start()  # type: ignore[arg-type]
        started.append(simulator)
        monkeypatch.setenv("SIM_BASE_URL", simulator.base_url)
        monkeypatch.setenv("SIM_API_KEY", "none")
        return simulator

    yield start
    for simulator in started:
        simulator.stop()
