"""HoWToBench for lm-evaluation-harness: its tasks, and judging its writings with ToW.

Many teams generate with lm-evaluation-harness (its vLLM, HF and API backends) and have
nothing to judge Chinese writing with. `tasks/` is a folder of lm-eval task files
(`howtobench_completion`, `howtobench_guide`, `howtobench_open`, the group `howtobench`)
that `howtobench lm-eval path` prints for `lm_eval --include_path`: they ask the inspect
tasks' writer prompts on the inspect tasks' data and report the package's BLEU and
ROUGE-L. `howtobench lm-eval import` (`imports.py`) turns lm-eval's `--log_samples`
output into a data folder whose writings `--model replay/<writer>` hands to the ToW judge
in inspect. Nothing here imports lm-eval: its output is JSON, and its task files call
plain functions (`tasks/hooks.py`), so the core install runs without it.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["TASKS_DIR", "TASK_PREFIX"]

TASKS_DIR = Path(__file__).parent / "tasks"
"""The folder `lm_eval --include_path` reads (what `howtobench lm-eval path` prints)."""

TASK_PREFIX = "howtobench_"
"""lm-eval's name of a task is this prefix and the benchmark's task (`howtobench_open`)."""
