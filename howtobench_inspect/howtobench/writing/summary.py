"""What a run's writings were: one line per task and writer at the end of the run.

Each sample records its writing's state (`SampleKey.WRITING`, written by
`writer.final_writing`); a run whose writings were not all whole ends with one warning
line per task saying how many were cut, filtered or empty, and how to raise the limit,
so that a run of cut writings cannot pass for a run of whole ones. The counting is
`writing_state.count_states`, shared with `howtobench report`; the line is printed by an inspect hook that sees every sample as it ends.

The hook is registered when a writing task is first built (`listen`), not when inspect
loads the package, and only after inspect has loaded and announced the hooks it knows:
inspect announces them once per process ("hooks enabled: 1", three lines on standard
output before anything else, for every task of every package), which would stand before
a one-line error and inside judge-check's JSON.
"""

from __future__ import annotations

import logging
from collections import Counter
from typing import Any

from inspect_ai.hooks import Hooks, SampleEnd, TaskEnd, hooks

from howtobench._inspect import init_hooks
from howtobench.vocabulary.metadata import SampleKey, TaskKey
from howtobench.writing.state import COMPLETE, CUT, STATES, count_states

logger = logging.getLogger(__name__)


def summary_line(
    writer: str, task: str, counts: Counter[str], max_tokens: int | None
) -> str | None:
    """The run's line for one task and writer, or None when every writing was whole and
    nothing was removed from any."""
    total = counts["writings"]
    if not total or (counts[COMPLETE] == total and not counts["reasoning"] + counts["artifacts"]):
        return None
    said = [f"{counts[state]} {state}" for state in STATES if counts[state]]
    line = f"{writer} ({task}): {', '.join(said)} of {total} writings"
    if counts["reasoning"]:
        line += f"; reasoning removed from {counts['reasoning']}"
    if counts["artifacts"]:
        line += f"; explanation blocks or generation tags in {counts['artifacts']}"
    live_cuts = counts[CUT] - counts["stored_cut"]
    if live_cuts:
        limit = f"{max_tokens:,}" if max_tokens else "the server's own"
        line += f"; the writer's limit ({limit} tokens) cut {live_cuts}: raise it with --max-tokens"
    if counts["stored_cut"]:
        line += (
            f"; {counts['stored_cut']} stored writings end mid-sentence (cut when stored: a "
            "live rerun of this model is not comparable)"
        )
    return line


class WritingStates(Hooks):
    """Counts each howtobench task's writing states as its samples end, and says them in
    one line when the task ends (samples of other tasks carry no state and are skipped)."""

    def __init__(self) -> None:
        self._records: dict[str, list[dict[str, Any]]] = {}

    async def on_sample_end(self, data: SampleEnd) -> None:
        record = (data.sample.metadata or {}).get(SampleKey.WRITING)
        if record:
            self._records.setdefault(data.eval_id, []).append(record)

    async def on_task_end(self, data: TaskEnd) -> None:
        records = self._records.pop(data.eval_id, [])
        if not records:
            return
        spec = data.log.eval
        metadata = spec.metadata or {}
        task = str(metadata.get(TaskKey.HOWTOBENCH_TASK) or spec.task)
        # the writer is the evaluated model: a live one, or `replay/<writer>`
        line = summary_line(
            str(spec.model), task, count_states(records), data.log.plan.config.max_tokens
        )
        if line:
            logger.warning(line)


_registered = False


def listen() -> None:
    """Register the `WritingStates` hook, once per process."""
    global _registered
    if not _registered:
        init_hooks()  # inspect's own, once per process: ours is added after it
        hooks(name="howtobench_writings", description="Counts cut, filtered and empty writings.")(
            WritingStates
        )
        _registered = True
