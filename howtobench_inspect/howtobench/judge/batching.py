"""A judge in batch mode: its batch API checked, its wait for the batch bounded.

inspect polls a batch with no bound at all, so two more ways a batched judge cannot
answer end the run as an outage does: its endpoint has no batch API (asked once per judge
and run before the first batch, since a failed batch creation inside inspect brings the
eval down with a traceback), and its batch did not finish within `HOWTOBENCH_BATCH_WAIT`
seconds of the call being queued (naming the batches). The answered questions are in
the reply store either way (docs/large-runs.md, "Batch mode").
"""

from __future__ import annotations

import math
import time

import anyio
from inspect_ai.model import ChatMessage, GenerateConfig, Model

from howtobench._inspect import batch_list_request, listen_to_batch_log
from howtobench.judge.defaults import DEFAULT_BATCH_WAIT
from howtobench.judge.failures import (
    CallFailed,
    JudgeUnavailable,
    Lasting,
    classified,
    judge_at,
    reply_text,
)
from howtobench.judge.lost_batches import BatchLog
from howtobench.judge.question_locks import held
from howtobench.judge.request_shape import endpoint_key
from howtobench.judge.runs import this_run
from howtobench.judge.server_words import server_message
from howtobench.judge.settings import wait_setting

__all__ = ["BATCH_WAIT_VARIABLE", "batch_wait", "batched_reply"]

BATCH_WAIT_VARIABLE = "HOWTOBENCH_BATCH_WAIT"


async def batched_reply(model: Model, sent: list[ChatMessage], config: GenerateConfig) -> str:
    """The reply of a batched judge call: the endpoint's batch API checked first, then
    at most `batch_wait()` seconds for its batch; a lost batch's reply is read back."""
    await _check_batch_api(model)
    wait = batch_wait()
    started = time.time()
    waiting = anyio.move_on_after(None if math.isinf(wait) else wait)
    try:
        with waiting:
            output = await model.generate(sent, config=config, cache=False)
    except Exception as error:
        lost = await _BATCHES.answer(model, sent, error, started)
        if lost is None:
            failure = classified(error, model)
            raise (failure.outage if isinstance(failure, Lasting) else failure) from None
        if isinstance(lost, CallFailed):
            raise lost from None
        output = lost
    if waiting.cancelled_caught:
        batches = _BATCHES.unfinished(since=started)
        named = (
            f"batch {', '.join(batches)}"
            if batches
            else "its batch (no batch was reported created for it)"
        )
        raise JudgeUnavailable(
            f"{judge_at(model)}: {named} did not finish within "
            f"{BATCH_WAIT_VARIABLE}={wait:g} s; the run stops here. Finish the run with "
            "`inspect eval-retry <log>`: answered judge questions are kept and not asked "
            "again, the unfinished batch's questions are sent again (cancel it at the "
            "provider if it should not run on)."
        )
    return reply_text(output, model, sent, max_tokens=config.max_tokens)


def batch_wait() -> float:
    """Seconds a batched judge call waits for its batch: `HOWTOBENCH_BATCH_WAIT`, or 24 h
    (an environment variable: `wait_setting` says why)."""
    return wait_setting(
        BATCH_WAIT_VARIABLE, DEFAULT_BATCH_WAIT, "a batched judge call may wait for its batch"
    )


_BATCHES = BatchLog()


async def _check_batch_api(model: Model) -> None:
    """Raise `JudgeUnavailable` when the judge's endpoint has no batch API, asked once per
    judge and run before inspect's batcher sends anything (the module docstring says why).
    Any answer but 404 (or 405) counts as "has one"; inspect's retries deal with the rest."""
    listen_to_batch_log(_BATCHES.read)
    known = this_run().batch_api
    key = endpoint_key(model)
    async with held(None, f"batch API of {key}"):  # asked by the first caller, once
        if key not in known:
            known[key] = None
            try:
                request = batch_list_request(model)
                if request is not None:
                    await request
            except Exception as error:
                status = getattr(error, "status_code", None)
                if status in (404, 405):
                    known[key] = f"HTTP {status}: {server_message(error)}"
    if (reason := known[key]) is not None:
        raise JudgeUnavailable(
            f"{judge_at(model)} runs in batch mode, but it has no batch API ({reason}); "
            "the run stops here. Bind the judge without `batch` (or to a provider with a "
            "batch API) and run the same `inspect eval` again: answered judge questions are "
            "kept and not asked again."
        )
