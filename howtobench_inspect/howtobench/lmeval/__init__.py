"""HoWToBench for lm-evaluation-harness: its tasks, and judging its writings with ToW.

Many teams generate with lm-evaluation-harness and have nothing to judge Chinese writing
with (docs/lm-eval.md). Nothing here imports lm-eval, so the core install runs without it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TASKS_DIR", "TASK_PREFIX"]

TASKS_DIR = Path(__file__).parent / "tasks"
"""The folder `lm_eval --include_path` reads (what `howtobench lm-eval path` prints)."""

TASK_PREFIX = "howtobench_"
"""lm-eval's name of a task is this prefix and the benchmark's task (`howtobench_open`)."""
