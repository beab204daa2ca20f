"""Ctrl-C stops the suite, also while a test runs an eval in process (support/interrupt.py)."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from support.signals import default_sigint

TESTS = Path(__file__).parent

# two tests, each an in-process eval whose solver says it started and then waits
INNER = """
import asyncio, sys
from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.solver import solver

@solver
def waits():
    async def solve(state, generate):
        print("EVAL STARTED", file=sys.__stdout__, flush=True)
        await asyncio.sleep(60)
        return state
    return solve

def run(tmp_path):
    eval(Task(dataset=[Sample(input="x")], solver=waits()), model="mockllm/model",
         display="none", log_dir=str(tmp_path))

def test_first(tmp_path):
    run(tmp_path)

def test_second(tmp_path):
    print("SECOND RAN", file=sys.__stdout__, flush=True)
    run(tmp_path)
"""


@pytest.mark.slow
def test_ctrl_c_inside_an_in_process_eval_stops_the_suite(tmp_path: Path) -> None:
    (tmp_path / "test_inner.py").write_text(INNER, encoding="utf-8")
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "support.interrupt",
            "-p",
            "no:cacheprovider",
            "-q",
            "-s",
            "test_inner.py",
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=default_sigint,
    )
    assert child.stdout is not None
    seen = []
    for line in child.stdout:  # wait for the eval to be running, then press Ctrl-C
        seen.append(line)
        if "EVAL STARTED" in line:
            child.send_signal(signal.SIGINT)
            break
    rest, _ = child.communicate(timeout=60)
    output = "".join(seen) + rest
    assert child.returncode == pytest.ExitCode.INTERRUPTED, output
    assert "SECOND RAN" not in output
