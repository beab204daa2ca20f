"""The suite's fixtures, each defined once: data folders and files, the shared benchmark
copy, judge simulators, and the logs the studies' tests read (built once per session).

Helpers are imported from the `support` package (`from support.judges import ...`);
nothing here is meant to be imported.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from howtobench.simulator import JudgeSimulator
from support import logs
from support.data import (
    SHARED_DATA,
    aligned_row,
    perturbed_file,
    write_jsonl,
    writers_file,
)
from support.judges import Serve

pytest_plugins = ["support.interrupt"]

NIGHTLY = os.environ.get("HOWTOBENCH_NIGHTLY") == "1"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reads the published benchmark (`-m "not shared_data"`); first,
    so that `-m` sees the mark when it deselects. Skip the `nightly` tests, with how to run
    them, unless HOWTOBENCH_NIGHTLY=1 (`.ci/run --nightly`)."""
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_data)
        if not NIGHTLY and item.get_closest_marker("nightly"):
            item.add_marker(
                pytest.mark.skip(reason="nightly: HOWTOBENCH_NIGHTLY=1, or .ci/run --nightly")
            )


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
    """The published benchmark (../shared/howtobench-data); the test skips where it is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"the shared benchmark copy is not at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(autouse=True)
def fresh_judging(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test starts with an empty inspect cache and reply store."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "inspect-cache"))


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator[Serve]:
    """Start simulators on demand; point the `sim` service at the latest one."""
    started: list[JudgeSimulator] = []

    def start(**options: Any) -> JudgeSimulator:
        simulator = JudgeSimulator(**options).start()
        started.append(simulator)
        monkeypatch.setenv("SIM_BASE_URL", simulator.base_url)
        monkeypatch.setenv("SIM_API_KEY", "none")
        return simulator

    yield start
    for simulator in started:
        simulator.stop()


# --- the studies' logs: real runs of our tasks, once per session (support/logs.py) --------


@pytest.fixture(scope="session")
def writers_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo records with four writers' writings (`support.data.writers_file`)."""
    return writers_file(tmp_path_factory.mktemp("writers-data"))


@pytest.fixture(scope="session")
def writers_logs(tmp_path_factory: pytest.TempPathFactory, writers_data: Path) -> Path:
    """12 logs: four writers × three tasks, tow (judge-1) and rouge_l; one writing unscored."""
    folder = tmp_path_factory.mktemp("writers-logs")
    logs.build_writers(folder, writers_data)
    return folder


@pytest.fixture(scope="session")
def second_judge_logs(tmp_path_factory: pytest.TempPathFactory, writers_data: Path) -> Path:
    """The four writers' guide writings judged by judge-2."""
    folder = tmp_path_factory.mktemp("second-judge-logs")
    logs.build_second_judge(folder, writers_data)
    return folder


@pytest.fixture(scope="session")
def panel_logs(tmp_path_factory: pytest.TempPathFactory, writers_data: Path) -> Path:
    """Two writers' guide writings judged by a panel of two (strict and kind)."""
    folder = tmp_path_factory.mktemp("panel-logs")
    logs.build_panel(folder, writers_data)
    return folder


@pytest.fixture(scope="session")
def epochs_logs(tmp_path_factory: pytest.TempPathFactory, writers_data: Path) -> Path:
    """w-a's guide writings judged in five epochs."""
    folder = tmp_path_factory.mktemp("epochs-logs")
    logs.build_epochs(folder, writers_data)
    return folder


@pytest.fixture(scope="session")
def perturbed_logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Open writings clean, with paragraphs dropped, and with the reference injected."""
    data = perturbed_file(tmp_path_factory.mktemp("perturbed-data"))
    folder = tmp_path_factory.mktemp("perturbed-logs")
    logs.build_perturbed(folder, data)
    return folder


# --- object storage: an S3-compatible server for the tests of logs on s3:// (support/s3.py)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """A moto S3 server on 127.0.0.1 (a `support.s3.S3Server`), once per session; its
    `environment(...)` points inspect and the studies at it, in the tests that ask only."""
    from support import s3  # moto and s3fs take ~1 s to import: only where a test uses them

    with s3.serve() as server:
        yield server
