"""The scale-out recipe as the tests run it: its settings with a plan negotiated once, and
`docs/examples/scale_out.py` started as a process (a capture, a worker, a one-process run).

Shared by `test_scale_out.py`, `test_workers.py` and `test_cluster.py`, which each run the
recipe as a user or a job runner would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from howtobench.simulator import JudgeSimulator
from howtobench.simulator.process import Served
from howtobench.studies.plans import export_plan
from howtobench.tasks import negotiate
from support.evals import run_eval

RECIPE = Path(__file__).parents[2] / "docs" / "examples" / "scale_out.py"
WRITERS = "demo-writer-a,demo-writer-b"
SAMPLES = 3 + 3 + 4  # the demo's completion, guide and open instructions
JUDGE = "openai-api/sim/judge"


def job_settings(folder: Path) -> dict[str, str]:
    """The job's HOWTOBENCH_* settings, with a plan negotiated once (by a judge of its own,
    so that no worker's judge is asked a negotiator question)."""
    import pytest

    with JudgeSimulator() as judge, pytest.MonkeyPatch.context() as patch:
        patch.setenv("SIM_BASE_URL", judge.base_url)
        patch.setenv("SIM_API_KEY", "none")
        run_eval(
            negotiate(dataset="demo"),
            folder / "negotiate",
            JUDGE,
            cache_dir=folder / "negotiator-cache",
        )
    export_plan([folder / "negotiate"], folder / "plan.jsonl")
    return {
        "HOWTOBENCH_WRITERS": WRITERS,
        "HOWTOBENCH_DATASET": "demo",
        "HOWTOBENCH_PLAN": str(folder / "plan.jsonl"),
        "HOWTOBENCH_JUDGE": JUDGE,
        "FOLDER": str(folder),
    }


def judge_environment(base_url: str | None, cache: Path) -> dict[str, str]:
    """What a worker adds for its judge: the endpoint (none: no SIM_* at all) and its
    reply store."""
    env = {name: value for name, value in os.environ.items() if not name.startswith("SIM_")}
    if base_url is not None:
        env.update(SIM_BASE_URL=base_url, SIM_API_KEY="none")
    env["INSPECT_CACHE_DIR"] = str(cache)
    return env


def recipe(
    env: dict[str, str], base_url: str | None, cache: Path, **more: str
) -> subprocess.Popen[str]:
    """The recipe's definition file, run as a process with the job's settings (`env`),
    a judge at `base_url` and the reply store `cache`."""
    return subprocess.Popen(
        [sys.executable, str(RECIPE)],
        env={**judge_environment(base_url, cache), **env, **more},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finished(process: subprocess.Popen[str], seconds: float = 110) -> str:
    """The process's output, once it exited 0."""
    output, _ = process.communicate(timeout=seconds)
    assert process.returncode == 0, output[-3000:]
    return output


def capture(env: dict[str, str], folder: Path, base_url: str | None) -> dict[str, Any]:
    """The eval set's tasks, captured (`base_url` None: with no judge endpoint at all)."""
    path = folder / f"tasks-{'endpoint' if base_url else 'none'}.json"
    finished(
        recipe(
            {**env, "HOWTOBENCH_LOG_DIR": str(folder / "unused")},
            base_url,
            folder / "capture-cache",
            INSPECT_EVAL_SET_CAPTURE=str(path),
        )
    )
    manifest: dict[str, Any] = json.loads(path.read_text("utf-8"))
    return manifest


WAIT = 90.0  # seconds an awaited event may take on a busy machine before the test fails


def wait_asked(judge: Served, count: int, alive: Callable[[], bool], seconds: float = WAIT) -> None:
    """Return once the judge has been asked `count` more questions (while `alive()`);
    fail after `seconds`."""
    start = judge.calls()
    deadline = time.monotonic() + seconds
    while judge.calls() - start < count:
        assert alive(), "the work ended before the judge was asked enough"
        assert time.monotonic() < deadline, f"the judge was not asked {count} questions"
        time.sleep(0.05)


def one_finished_log_per_unit(log_dir: str, shards: Path) -> None:
    """What `check-logs` and `report` need: the folder holds one log per task or range of
    the worker files in `shards`, each a success, and the runs count every sample once."""
    from inspect_ai.log import list_eval_logs, read_eval_log

    from howtobench.cli import main as howtobench
    from howtobench.studies import report

    logs = [read_eval_log(info, header_only=True) for info in list_eval_logs(log_dir)]
    units = sum(len(json.loads(p.read_text("utf-8"))["tasks"]) for p in shards.glob("*.json"))
    assert len(logs) == units
    assert {log.status for log in logs} == {"success"}
    assert howtobench(["check-logs", log_dir]) == 0
    result = report([log_dir])
    assert result.tables["counts"].loc["All"].tolist() == [SAMPLES, SAMPLES]
    assert not [note for note in result.notes if "lacks" in note or "continues" in note]
