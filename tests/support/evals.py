"""One way to run an eval in the tests, and to read its scores."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.log import EvalLog
from inspect_ai.model import Model
from inspect_ai.scorer import Score
from inspect_ai.util import DisplayType

from howtobench.simulator import JudgeSimulator
from support.judges import ScriptedJudge, simulator_model

Grader = ScriptedJudge | JudgeSimulator | Model | str | Sequence[str | Model]


def grader_model(grader: Grader) -> str | Model | Sequence[str | Model]:
    """What inspect takes for a role: a scripted judge's mockllm model, the simulator as an
    `openai-api` model, or a model (a name, or a list of names for a panel) as given."""
    if isinstance(grader, ScriptedJudge):
        return grader.model()
    if isinstance(grader, JudgeSimulator):
        return simulator_model(grader)
    if isinstance(grader, Model | str):
        return grader
    return list(grader)


def run_eval(
    tasks: Task | str | list[Task],
    log_dir: Path,
    grader: Grader | None = None,
    *,
    model: str | Model | list[str] = "none",
    roles: Mapping[str, str | Model | Sequence[str | Model]] | None = None,
    cache_dir: Path | None = None,
    status: str | None = "success",
    display: DisplayType = "none",
    **kwargs: Any,
) -> list[EvalLog]:
    """Run `tasks` with `model` as the writer (`replay/<writer>` replays a stored writer;
    several models run every task with each, inspect's model axis) and `grader` bound to the
    grader role, plus any other `roles` (e.g. `perturber`); logs go to `log_dir`.

    `cache_dir` sets INSPECT_CACHE_DIR for this run only (the autouse `fresh_judging`
    fixture gives each test its own, but not a session fixture). Every log must end with
    `status` ("success" by default, "error" where a test expects one; None: not checked).
    Other keyword arguments go to `inspect_ai.eval` (epochs, limit, max_retries, ...).
    Returns the logs, one per task: unpack one with `[log] = run_eval(...)`.
    """
    model_roles: dict[str, str | Model | Sequence[str | Model]] = dict(roles or {})
    if grader is not None:
        assert "grader" not in model_roles, "give the grader as `grader`"
        model_roles["grader"] = grader_model(grader)
    with pytest.MonkeyPatch.context() as patch:
        if cache_dir is not None:
            patch.setenv("INSPECT_CACHE_DIR", str(cache_dir))
        logs = eval(
            tasks,
            model=model,
            model_roles=model_roles or None,
            log_dir=str(log_dir),
            display=display,
            **kwargs,
        )
    if status is not None:
        for log in logs:
            assert log.status == status, log.error or f"status {log.status}, not {status}"
    return logs


def scores(log: EvalLog, scorer: str = "tow") -> dict[str, Score]:
    """Sample id -> the score of `scorer`."""
    return {str(s.id): (s.scores or {})[scorer] for s in log.samples or []}


def store_blocked_by_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An inspect cache (set for the test) whose reply store cannot hold a file: files
    stand where its folders belong, so every write fails with a real OSError."""
    cache = tmp_path / "cache"
    (cache / "howtobench").mkdir(parents=True)
    for name in ("replies", "locks"):
        (cache / "howtobench" / name).write_text("not a folder", "utf-8")
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(cache))
    return cache
