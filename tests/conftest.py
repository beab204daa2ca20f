"""The suite's fixtures, each defined once: data folders and files, the shared benchmark
copy, judge simulators, the logs the studies' tests read and the docs' pages (run once
per session).

Helpers are imported from the `support` package (`from support.judges import ...`);
nothing here is meant to be imported.
"""

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.util import display_type

from howtobench.simulator import JudgeSimulator
from support import doc_pages as pages
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


# Modules whose tests start processes and wait on them the longest (a worker killed and
# resumed, concurrent runs, the judge checks' runs), longest first: measured one file at
# a time, 40-150 s each. Only the order changes, not what runs.
FIRST = (
    "test_workers.py",
    "test_trust.py",
    "test_judge_quality.py",
    "test_store_sharing.py",
    "test_replay_model.py",
    "test_server_words.py",
    "test_batch.py",
)


def order(item: pytest.Item) -> tuple[bool, int]:
    """Where a test goes: its module's place in `FIRST`, and the docs' pages last."""
    name = item.path.name
    return "doc_pages" in getattr(item, "fixturenames", ()), (
        FIRST.index(name) if name in FIRST else len(FIRST)
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that reads the published benchmark (`-m "not shared_data"`); first,
    so that `-m` sees the mark when it deselects. Skip the `nightly` tests, with how to run
    them and, where the mark gives one (`nightly("...")`), the regular test that runs
    their path, unless HOWTOBENCH_NIGHTLY=1 (`.ci/run --nightly`).

    The modules of the longest tests go first (`FIRST`), so that under `-n 2` neither
    worker ends the run on one of them while the other has nothing left; the tests of
    the docs' pages go last: the pages start with the session (`pages_early`) and have
    run by then, so that no test waits for one while the other tests could run."""
    items.sort(key=order)  # stable: the rest in the order pytest collected them
    for item in items:
        if "shared_data" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.shared_data)
        nightly = item.get_closest_marker("nightly")
        if not NIGHTLY and nightly:
            covered = f" ({nightly.args[0]})" if nightly.args else ""
            reason = f"nightly{covered}: HOWTOBENCH_NIGHTLY=1, or .ci/run --nightly"
            item.add_marker(pytest.mark.skip(reason=reason))


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


@pytest.fixture(scope="session", autouse=True)
def no_display() -> None:
    """inspect's display is chosen once a process, at its first look (a direct model call
    looks too, and then picks the full display where INSPECT_DISPLAY is unset). Chosen here
    as `none`, so that the tests that read judge-check's stdout in the test process find
    its report alone whichever tests ran before them in that process (under `-n 3` a
    direct call in test_server_words.py left the full display to the judge-check tests
    after it). Subprocesses are untouched: the environment is given back."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_DISPLAY", "none")
        display_type()


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


# --- the docs' pages, run as a reader pastes them, once per session (support/doc_pages.py)


@pytest.fixture(scope="session")
def doc_pages(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[pages.Pages]:
    """The pages this session's tests run or read (`pages.wanted`), started together with
    the session (`pages_early`), two at a time, those that other tests read first. Under
    pytest-xdist they run once for all workers, in the first worker to start (a folder of
    the run's, beside the workers' own), and the others read their results."""
    items = request.session.items
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    runner = pages.Pages(
        [page for page in pages.wanted(items) if not pages.skip_reason(page)],
        tmp_path_factory.mktemp("doc-pages"),
        shared=tmp_path_factory.getbasetemp().parent / "doc-pages" if worker else None,
        first=pages.read(items),
    )
    yield runner
    runner.close(interrupted=request.session.exitstatus == pytest.ExitCode.INTERRUPTED)


@pytest.fixture(scope="session", autouse=True)
def pages_early(request: pytest.FixtureRequest) -> None:
    """Start the docs' pages with the session's first test, when its tests want any: they
    run beside the other tests, and their own tests, last, find them done."""
    if pages.wanted(request.session.items):
        request.getfixturevalue("doc_pages")


# --- object storage: an S3-compatible server for the tests of logs on s3:// (support/s3.py)


@pytest.fixture(scope="session")
def s3_server() -> Iterator[Any]:
    """A moto S3 server on 127.0.0.1 (a `support.s3.S3Server`), once per session; its
    `environment(...)` points inspect and the studies at it, in the tests that ask only."""
    from support import s3  # moto and s3fs take ~1 s to import: only where a test uses them

    with s3.serve() as server:
        yield server
