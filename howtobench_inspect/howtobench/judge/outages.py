"""Whether a judge that kept failing is gone: a tiny probe, and one outage per writing.

A fault that outlasted inspect's retries (`howtobench.judge.failures.Lasting`) may be
this question's alone (a request shape the server cannot handle, like llama-cpp-python's
500 on content parts) or the server's: a tiny request tells them apart, and a listing of
the server's models tells an overloaded server from one that is down.
"""

from __future__ import annotations

from collections.abc import Awaitable, Iterator
from typing import TypeVar

import anyio
from inspect_ai.model import ChatMessage, ChatMessageUser, GenerateConfig, Model
from tenacity import RetryError

from howtobench._inspect import model_list_request
from howtobench.judge.failures import CallFailed, JudgeUnavailable, Lasting, judge_at
from howtobench.judge.server_words import said, server_message, status_of

__all__ = ["diagnosed", "surface_outage"]

T = TypeVar("T")

# The probe that tells a question the server keeps failing from a server that is down:
# one tiny request, not retried, answered in seconds by any live server.
_PROBE: list[ChatMessage] = [ChatMessageUser(content="Reply with OK.")]
_PROBE_SECONDS = 30
_PROBE_CONFIG = GenerateConfig(max_tokens=8, max_retries=0)


async def diagnosed(model: Model, lasting: Lasting, config: GenerateConfig) -> Exception:
    """This question's failure when the endpoint answers a tiny request now (a request
    shape it cannot handle, like llama-cpp-python's 500 on content parts), else the
    end of the run: an overloaded server when it still answers a listing of its models
    (its chat requests wait in its queue past their timeout), or an outage."""
    wait = min(_PROBE_SECONDS, config.attempt_timeout or _PROBE_SECONDS)
    probe = _PROBE_CONFIG.merge(GenerateConfig(attempt_timeout=wait, timeout=wait))
    try:
        await model.generate(_PROBE, config=probe, cache=False)
    except Exception as error:
        refused = error.last_attempt.exception() if isinstance(error, RetryError) else error
        if isinstance(refused, Exception) and status_of(refused) is not None:
            return JudgeUnavailable(
                f"{judge_at(model)} did not answer: every request, a tiny one too, got an "
                f"error ({said(refused)}) through its retries; the run stops here. When it "
                "answers again, finish the run with `inspect eval-retry <log>`: answered judge "
                "questions are kept."
            )
        if not await _reachable(model):
            return lasting.outage
        return JudgeUnavailable(
            f"{judge_at(model)} is up but did not answer in time ({said(lasting.cause)}), "
            "nor a tiny request after its retries: it queues more requests than it serves "
            "at once. Lower --max-connections to the server's parallel slots (llama.cpp's "
            "--parallel, vLLM's max_num_seqs), or raise the role's attempt_timeout "
            "(--model-role 'grader={model: ..., attempt_timeout: 900}'); the run stops here. "
            "Then finish it with `inspect eval-retry <log>`: answered judge questions are kept."
        )
    cause = lasting.cause
    status = status_of(cause) if isinstance(cause, Exception) else None
    what = f"HTTP {status}" if status else type(cause).__name__
    message = server_message(cause) if isinstance(cause, Exception) else str(cause)
    return CallFailed(
        f'this question kept failing ({what} "{message[:300]}") through its retries while '
        "the judge answers other requests",
        final=True,
    )


async def _reachable(model: Model) -> bool:
    """Whether the server answers HTTP at all (any status), within 10 s."""
    try:
        with anyio.fail_after(10):
            request = model_list_request(model)
            if request is None:
                return False
            await request
    except Exception as error:
        return status_of(error) is not None
    return True


async def surface_outage(judging: Awaitable[T]) -> T:
    """`judging`, with an outage raised as its own one-line `JudgeUnavailable`: a writing's
    calls run concurrently, so a gone judge fails several at once, and the exception group
    inspect would show hides the reason.
    """
    try:
        return await judging
    except Exception as error:
        leaves = list(_leaves(error))
        found = next((e for e in leaves if isinstance(e, JudgeUnavailable)), leaves[0])
        if found is error:
            raise
        raise found from None


def _leaves(error: BaseException) -> Iterator[BaseException]:
    """The exceptions inside (nested) exception groups: the real causes, where a group's
    own message would say only "unhandled errors in a TaskGroup"."""
    inner = getattr(error, "exceptions", ())
    if not inner:
        yield error
    for each in inner:
        yield from _leaves(each)
