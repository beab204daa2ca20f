"""The scale-out recipe of the README, run as a user would: one plan, inspect's eval-set
capture and selection, two workers as two hosts (each its own simulator process on its own
port, its own reply store), one log folder (local, or on an S3-compatible server), and one
`howtobench report` that equals a one-process run's to the last digit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from howtobench import tasks
from howtobench.simulator.process import Served, served
from howtobench.studies import report
from support.evals import run_eval
from support.judges import Serve
from support.scale_out import SAMPLES, capture, finished, job_settings, recipe

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hosts() -> Iterator[list[Served]]:
    """Two simulators, each in its own process: judge endpoints as two hosts serve them."""
    with served() as first, served() as second:
        yield [first, second]


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The job's settings, with a plan negotiated once (by a third judge)."""
    return job_settings(tmp_path_factory.mktemp("job"))


@pytest.fixture(scope="module")
def one_process(job: dict[str, str], hosts: list[Served]) -> pd.DataFrame:
    """The leaderboard of the same job run in one process (eval-set's own mode)."""
    folder = Path(job["FOLDER"])
    env = {**job, "HOWTOBENCH_LOG_DIR": str(folder / "one-process")}
    finished(recipe(env, hosts[0].base_url, folder / "one-process-cache"))
    return report([folder / "one-process"]).tables["leaderboard"]


@pytest.fixture(scope="module")
def manifest(job: dict[str, str], hosts: list[Served]) -> dict[str, Any]:
    """The eval set's tasks, captured once (the log folder is no part of a task's identity)."""
    captured = capture(job, Path(job["FOLDER"]), hosts[0].base_url)
    assert len(captured["tasks"]) == 6  # two writers × three tasks
    return captured


def scale_out(
    job: dict[str, str],
    manifest: dict[str, Any],
    hosts: list[Served],
    log_dir: str,
    scratch: Path,
) -> None:
    """Two selections, two workers at once, each on its own host and store."""
    env = {**job, "HOWTOBENCH_LOG_DIR": log_dir}
    workers = []
    for index, host in enumerate(hosts):
        selection = scratch / f"worker-{index}.json"
        selection.write_text(
            json.dumps(
                {
                    "version": 7,
                    "eval_set_id": manifest["eval_set_id"],
                    "tasks": [{"identifier": t["identifier"]} for t in manifest["tasks"][index::2]],
                }
            ),
            "utf-8",
        )
        workers.append(
            recipe(
                env,
                host.base_url,
                scratch / f"worker-{index}-cache",
                INSPECT_EVAL_SET_SELECTION=str(selection),
            )
        )
    for worker in workers:
        finished(worker)


@pytest.mark.nightly
def test_two_workers_on_two_hosts_equal_one_process(
    job: dict[str, str],
    manifest: dict[str, Any],
    hosts: list[Served],
    one_process: pd.DataFrame,
    tmp_path: Path,
) -> None:
    before = [host.stats()["calls"] for host in hosts]
    scale_out(job, manifest, hosts, str(tmp_path / "logs"), tmp_path)
    logs = sorted((tmp_path / "logs").glob("*.eval"))
    assert len(logs) == 6
    for host, earlier in zip(hosts, before, strict=True):
        calls = host.stats()["calls"]
        assert calls.get("negotiator", 0) == earlier.get("negotiator", 0) == 0
        assert sum(calls.values()) > sum(earlier.values())  # each host judged its share
    result = report([tmp_path / "logs"])
    pd.testing.assert_frame_equal(result.tables["leaderboard"], one_process, check_exact=True)
    assert result.tables["counts"].loc["All"].tolist() == [SAMPLES, SAMPLES]


@pytest.mark.nightly
def test_the_log_folder_can_be_on_object_storage(
    job: dict[str, str],
    manifest: dict[str, Any],
    hosts: list[Served],
    one_process: pd.DataFrame,
    tmp_path: Path,
    s3_server: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    s3_server.environment(monkeypatch, tmp_path / "no-aws-config")
    bucket = s3_server.bucket("scale-out")
    scale_out(job, manifest, hosts, f"{bucket}/logs", tmp_path)
    board = report([f"{bucket}/logs"]).tables["leaderboard"]
    pd.testing.assert_frame_equal(board, one_process, check_exact=True)


def test_shards_of_one_writer_count_as_one_run(
    serve: Serve, tmp_path: Path, job: dict[str, str]
) -> None:
    """`--limit` ranges split a writer's task into shards: together they are one row, with
    each sample once, equal to the unsplit run."""
    serve()
    task = tasks.open_writing(dataset="demo", weights=job["HOWTOBENCH_PLAN"])
    run_eval(task, tmp_path / "whole", "openai-api/sim/judge", model="replay/demo-writer-a")
    for shard in ((0, 2), (2, 4)):
        run_eval(
            tasks.open_writing(dataset="demo", weights=job["HOWTOBENCH_PLAN"]),
            tmp_path / "shards",
            "openai-api/sim/judge",
            limit=shard,
            model="replay/demo-writer-a",
        )
    whole = report([tmp_path / "whole"])
    shards = report([tmp_path / "shards"])
    pd.testing.assert_frame_equal(shards.tables["leaderboard"], whole.tables["leaderboard"])
    assert shards.tables["counts"].loc["All", "demo-writer-a"] == 4
    assert not [note for note in shards.notes if "lacks" in note]
