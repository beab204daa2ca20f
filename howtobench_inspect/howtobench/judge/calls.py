"""One judge call, and what its failure means: this question fails, or the judge is gone.

inspect retries transient faults (429, 5xx, dropped connections, attempt timeouts) with
backoff. What is left after that falls in two classes:

- the judge cannot answer *this* question: the provider refuses the request (a 4xx
  such as 400 or 413), answers 200 with a body that is not a chat completion, or stops
  on its content filter. The question fails (it counts as a try), and the sample is
  left unscored with the reason when its tries are spent; the run goes on.
- the judge cannot answer *at all*: it refused connections, timed out, or kept
  answering 429/5xx through every retry. Scoring more samples would only wait out the
  same retries, so `JudgeUnavailable` ends the run with one line naming the model and
  its base URL; `inspect eval-retry` finishes it once the judge is back, and every
  answered question is kept in the reply store.

Retries are bounded by default (`JUDGE_MAX_RETRIES` on our tasks, `JUDGE_ATTEMPT_TIMEOUT`
per attempt on every judge call) so that a dead or hung endpoint ends a run in minutes
instead of retrying forever, as inspect does when nothing is set.

A judge in batch mode (its role's own `batch` setting, on a provider that batches)
waits for its batch, which inspect polls with no bound at all. Two more ways it cannot
answer end the run the same way: its endpoint has no batch API (asked once per judge
and run before the first batch is sent, since a failed batch creation inside inspect would
bring the eval down with a traceback and no word in the log), and its batch did not
finish within `HOWTOBENCH_BATCH_WAIT` seconds, counted from when the call was queued
(`BatchUnfinished`, naming the batches). The answered questions are in the reply store
either way. A batch that inspect's OpenAI batcher failed as a whole (one failed request
in it is enough) is read back from the provider's files (`howtobench.judge.lost_batches`).
"""

from __future__ import annotations

import logging
import math
import os
import re
import time
from collections.abc import Awaitable, Sequence
from typing import TypeVar

import anyio
from inspect_ai.model import (
    ChatMessage,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    Model,
    ModelOutput,
)
from tenacity import RetryError

from howtobench._inspect import (
    batch_list_request,
    batched,
    endpoint,
    listen_to_batch_log,
    model_list_request,
)
from howtobench.errors import UserError
from howtobench.judge.lost_batches import LostBatches
from howtobench.judge.runs import this_run

T = TypeVar("T")
logger = logging.getLogger(__name__)

# inspect's backoff waits about 3, 6, 12 and 24 s (plus up to 3 s jitter each), so four
# retries give up on a refused connection in under a minute.
JUDGE_MAX_RETRIES = 4
# A hung request is abandoned after this many seconds and retried; long enough for a
# reasoning model's considered answer.
JUDGE_ATTEMPT_TIMEOUT = 180
_TRANSIENT_STATUS = {408, 409, 425, 429}
# How long a batched judge call may wait for its batch, in seconds ("inf": no bound).
# Providers promise batches within 24 hours (OpenAI's completion window; Anthropic
# expires a batch after 24 hours), so by default the run waits as long as they may take.
BATCH_WAIT_VARIABLE = "HOWTOBENCH_BATCH_WAIT"
DEFAULT_BATCH_WAIT = 24 * 3600.0


class JudgeUnavailable(RuntimeError):
    """The judge did not answer at all, through every retry: the run stops here."""


class BatchUnfinished(JudgeUnavailable):
    """A batched judge call waited `HOWTOBENCH_BATCH_WAIT` seconds: the run stops here."""


class CallFailed(Exception):
    """The judge could not answer this question; `final` when asking again is pointless."""

    def __init__(self, message: str, *, final: bool) -> None:
        super().__init__(message)
        self.final = final


def judge_config(model: Model, temperature: float | None, fallback: float) -> GenerateConfig:
    """The settings of every call to one judge model.

    Temperature: the scorer's (`-T judge_temperature`), else the role's own
    (`--model-role 'grader={model: ..., temperature: 0.7}'`), else `fallback`; when the
    scorer's and the role's disagree, neither is silently dropped: the run stops.
    Retries are bounded: the role's own settings when it has them (`attempt_timeout`,
    `max_retries`, `timeout`), else our attempt timeout; the number of retries otherwise
    comes from the eval (`--max-retries`, or our tasks' default), which inspect passes on
    to every role. A batched judge gets no attempt timeout of ours: inspect would abandon
    its call while the batch runs and queue the question again in a new batch, every
    180 s; `HOWTOBENCH_BATCH_WAIT` bounds its wait instead (`generate_reply`).
    """
    own = model.config
    if temperature is not None and own.temperature is not None and own.temperature != temperature:
        raise UserError(
            f"-T judge_temperature={temperature:g} and the temperature {own.temperature:g} "
            f"of judge {model} disagree: set only one of them"
        )
    chosen = temperature if temperature is not None else own.temperature
    attempt_timeout = own.attempt_timeout or (None if batched(model) else JUDGE_ATTEMPT_TIMEOUT)
    return GenerateConfig(
        temperature=chosen if chosen is not None else fallback,
        attempt_timeout=attempt_timeout,
        max_retries=own.max_retries,
        timeout=own.timeout,
    )


async def generate_reply(
    model: Model, conversation: Sequence[ChatMessage], config: GenerateConfig
) -> str:
    """The judge's reply text; raises `CallFailed` or `JudgeUnavailable` (above).

    Judge calls bypass inspect's generate cache: it would keep replies that fail their
    check and hand them back on every later run. Checked replies go to the reply store.
    A batched call first makes sure the endpoint has a batch API, then waits at most
    `batch_wait()` seconds for its batch.
    """
    sent = sendable(model, conversation)
    if not batched(model):
        try:
            try:
                output = await model.generate(sent, config=config, cache=False)
            except Exception as error:
                if not _refuses_system(model, sent, error):
                    raise
                output = await model.generate(_folded(sent), config=config, cache=False)
        except Exception as error:
            failure = _classified(error, model)  # the class says it all
            if isinstance(failure, _Lasting):
                failure = await _lasting(model, failure, config)
            raise failure from None
        return _reply_text(output, model)
    await _check_batch_api(model)
    wait = batch_wait()
    started = time.time()
    waiting = anyio.move_on_after(None if math.isinf(wait) else wait)
    try:
        with waiting:
            output = await model.generate(sent, config=config, cache=False)
    except Exception as error:
        lost = await _LOST.answer(model, sent, error, started)
        if isinstance(lost, str):
            return lost
        if lost is not None:
            raise CallFailed(lost.message, final=lost.final) from None
        failure = _classified(error, model)
        raise (failure.outage if isinstance(failure, _Lasting) else failure) from None
    if waiting.cancelled_caught:
        raise _unfinished(model, wait, _BATCHES.unfinished(since=started))
    return _reply_text(output, model)


def sendable(model: Model, conversation: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The conversation as the judge's server accepts it.

    Our prompts mark the end of a writing's shared materials as a prompt-cache
    breakpoint, which makes a message's content a list of text parts. Only Anthropic's
    API needs the parts (for `cache_control`); OpenAI caches long prefixes by itself,
    and several OpenAI-compatible servers refuse a list (llama-cpp-python answers HTTP
    500, "can only concatenate str (not "list") to str"). Everywhere else the parts are
    joined into the plain string they stand for, exactly `message.text`, so the reply
    store's key (which reads `message.text`) is the same either way.
    """
    if any(cls.__name__ == "AnthropicAPI" for cls in type(model.api).__mro__):
        return list(conversation)
    joined = [
        message.model_copy(update={"content": message.text})
        if isinstance(message.content, list)
        and all(isinstance(part, ContentText) for part in message.content)
        else message
        for message in conversation
    ]
    return _folded(joined) if _endpoint_key(model) in this_run().no_system else joined


# How a chat template that has no system role refuses one (Gemma's raises "System role
# not supported"); such an endpoint is learnt from its first refusal in a run.
_SYSTEM_REFUSED = re.compile(r"system (?:role|message|prompt)s? (?:is |are )?not supported", re.I)


def _endpoint_key(model: Model) -> str:
    return f"{model}@{endpoint(model)}"


def _refuses_system(model: Model, sent: Sequence[ChatMessage], error: Exception) -> bool:
    """Whether the server refused the request for its system message: the run then
    notes the endpoint (`RunNotes.no_system`), and this and every later request of the
    run carries the system prompt at the head of the first user message instead. The
    next run learns it again from one refusal (`howtobench.judge.runs` says why)."""
    cause = error.last_attempt.exception() if isinstance(error, RetryError) else error
    if not isinstance(cause, Exception) or not any(m.role == "system" for m in sent):
        return False
    if not _SYSTEM_REFUSED.search(server_message(cause)):
        return False
    learnt = this_run().no_system
    key = _endpoint_key(model)
    if key in learnt:  # learnt meanwhile, from a concurrent request
        return True
    learnt.add(key)
    logger.warning(
        f"judge {model} refuses system messages: its system prompts are sent at the head "
        "of the first user message for the rest of this run"
    )
    return True


def _folded(conversation: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The conversation with its system messages put at the head of the first user one."""
    system = "\n\n".join(m.text for m in conversation if m.role == "system")
    rest: list[ChatMessage] = [m for m in conversation if m.role != "system"]
    for index, message in enumerate(rest):
        if message.role == "user":
            rest[index] = ChatMessageUser(content=f"{system}\n\n{message.text}")
            break
    return rest


class _Lasting(Exception):
    """A fault that outlasted inspect's retries (5xx, 429, timeouts, refused
    connections): an outage, unless the endpoint still answers (`_lasting`)."""

    def __init__(self, cause: BaseException, outage: JudgeUnavailable) -> None:
        super().__init__(str(outage))
        self.cause, self.outage = cause, outage


# The probe that tells a question the server keeps failing from a server that is down:
# one tiny request, not retried, answered in seconds by any live server.
_PROBE: list[ChatMessage] = [ChatMessageUser(content="Reply with OK.")]
_PROBE_SECONDS = 30
_PROBE_CONFIG = GenerateConfig(max_tokens=8, max_retries=0)


async def _reachable(model: Model) -> bool:
    """Whether the server answers HTTP at all (any status), within 10 s."""
    try:
        with anyio.fail_after(10):
            request = model_list_request(model)
            if request is None:
                return False
            await request
    except Exception as error:
        return isinstance(error, Exception) and status_of(error) is not None
    return True


def _overloaded(model: Model, cause: BaseException) -> JudgeUnavailable:
    where = endpoint(model) or "its default endpoint"
    reason = _last_line(str(cause)) or type(cause).__name__
    return JudgeUnavailable(
        f"judge {model} at {where} is up but did not answer in time ({type(cause).__name__}: "
        f"{reason}), nor a tiny request after its retries: it queues more requests than it "
        "serves at once. Lower --max-connections to the server's parallel slots (llama.cpp's "
        "--parallel, vLLM's max_num_seqs), or raise the role's attempt_timeout "
        "(--model-role 'grader={model: ..., attempt_timeout: 900}'); the run stops here. "
        "Then finish it with `inspect eval-retry <log>`: answered judge questions are kept."
    )


async def _lasting(model: Model, lasting: _Lasting, config: GenerateConfig) -> Exception:
    """This question's failure when the endpoint answers a tiny request now (a request
    shape it cannot handle, like llama-cpp-python's 500 on content parts), else the
    end of the run: an overloaded server when it still answers a listing of its models
    (its chat requests wait in its queue past their timeout), or an outage."""
    wait = min(_PROBE_SECONDS, config.attempt_timeout or _PROBE_SECONDS)
    probe = _PROBE_CONFIG.merge(GenerateConfig(attempt_timeout=wait, timeout=wait))
    try:
        await model.generate(_PROBE, config=probe, cache=False)
    except Exception:
        return _overloaded(model, lasting.cause) if await _reachable(model) else lasting.outage
    cause = lasting.cause
    status = status_of(cause) if isinstance(cause, Exception) else None
    what = f"HTTP {status}" if status else type(cause).__name__
    message = server_message(cause) if isinstance(cause, Exception) else str(cause)
    return CallFailed(
        f'this question kept failing ({what} "{message[:300]}") through its retries while '
        "the judge answers other requests",
        final=True,
    )


def batch_wait() -> float:
    """Seconds a batched judge call waits for its batch: `HOWTOBENCH_BATCH_WAIT`, or 24 h.

    An environment variable rather than a scorer option: the wait changes no answer, so
    it belongs with the operational settings, not the task's arguments; it reaches every
    judge scorer, `inspect score` and `inspect eval-retry` alike; and a role's generate
    config cannot carry it (inspect forbids unknown settings there).
    """
    text = os.environ.get(BATCH_WAIT_VARIABLE, "").strip()
    if not text:
        return DEFAULT_BATCH_WAIT
    try:
        wait = float(text)
    except ValueError:
        wait = math.nan
    if not wait > 0:  # also NaN
        raise UserError(
            f"{BATCH_WAIT_VARIABLE}={text!r}: give the seconds a batched judge call may "
            "wait for its batch (a number above 0, or inf for no bound)"
        )
    return wait


class _BatchBook:
    """The batches inspect reported created and finished in this process, read from its
    batch log (inspect gives no other account of them)."""

    _CREATED = re.compile(r"Created batch (\S+) with (\d+) requests")
    _ENDED = re.compile(r"Batch (\S+) (?:completed|failed)")

    def __init__(self) -> None:
        self.created: dict[str, float] = {}
        self.ended: set[str] = set()

    def read(self, message: str) -> None:
        if created := self._CREATED.match(message):
            self.created[created.group(1)] = time.time()
            self.ended.discard(created.group(1))  # an id used again (a restarted server)
        elif ended := self._ENDED.match(message):
            self.ended.add(ended.group(1))

    def unfinished(self, since: float) -> list[str]:
        """Batches created since a call was queued that have not finished: the call's
        own batch among them (the log does not say which model a batch belongs to)."""
        return [
            batch
            for batch, created in self.created.items()
            if created >= since and batch not in self.ended
        ]


_BATCHES = _BatchBook()
_LOST = LostBatches()


async def _check_batch_api(model: Model) -> None:
    """Raise `JudgeUnavailable` when the judge's endpoint has no batch API.

    Asked once per judge and run (`RunNotes.batch_api`), before inspect's batcher sends
    anything: a batch creation that fails inside inspect is raised from its background
    worker and ends the eval with a traceback and a cancelled log, instead of one line.
    Any answer but 404 (or 405) counts as "has one"; inspect's own retries deal with the
    rest.
    """
    listen_to_batch_log(_BATCHES.read)
    listen_to_batch_log(_LOST.read)
    known = this_run().batch_api
    key = _endpoint_key(model)
    state = known.get(key)
    if isinstance(state, anyio.Event):
        await state.wait()
        state = known.get(key)
    elif key not in known:
        checking = anyio.Event()
        known[key] = checking
        state = None
        try:
            request = batch_list_request(model)
            if request is not None:
                await request
        except Exception as error:
            status = getattr(error, "status_code", None)
            if status in (404, 405):
                state = f"HTTP {status}: {server_message(error)}"
        finally:
            known[key] = state
            checking.set()
    if isinstance(state, str):
        raise _no_batch_api(model, state)


def _reply_text(output: ModelOutput, model: Model) -> str:
    if output.stop_reason == "model_length" and context_refusal(output.completion):
        raise CallFailed(_too_long(model, output.completion), final=True)
    if output.error:
        raise CallFailed(
            f"the judge answered with an error: {_one_line(output.error)}", final=False
        )
    if output.stop_reason == "content_filter":
        raise CallFailed("the judge's provider filtered the reply (content filter)", final=False)
    if output.stop_reason in ("max_tokens", "model_length"):
        raise CallFailed(
            f"the reply was cut off ({output.stop_reason}) before the judge finished",
            final=False,
        )
    return output.completion


# How servers say that a prompt does not fit the model's context: OpenAI's error code,
# vLLM's and SGLang's "maximum context length", llama.cpp's "exceeds the available context
# size", TGI's "must have less than N tokens", and the like.
_CONTEXT_REFUSAL = re.compile(
    r"context_length_exceeded|maximum context length|context length|exceeds? the "
    r"(?:available )?context|context size|context window|too many tokens|"
    r"must have less than \d+ (?:input )?tokens|tokens \+ `?max_new_tokens`? must be <=|"
    r"prompt is too long|input length",
    re.IGNORECASE,
)
_CONTEXT_SIZE = re.compile(
    r"(?:maximum context length|context size|context length|context window|"
    r"max_new_tokens`? must be <=)\D{0,20}(\d[\d,]*)",
    re.IGNORECASE,
)


def context_refusal(message: str) -> bool:
    """Whether a server's message says the prompt is longer than the model's context."""
    return bool(_CONTEXT_REFUSAL.search(message))


def _too_long(model: Model, message: str) -> str:
    size = _CONTEXT_SIZE.search(message)
    limit = f" ({size.group(1)} tokens)" if size else ""
    return (
        f"the prompt is longer than judge {model}'s context{limit}, so it was not asked "
        f"again; choose a judge with a longer context (server: {_one_line(message)[:300]})"
    )


def _classified(error: Exception, model: Model) -> Exception:
    """The judge-level meaning of an exception raised by `model.generate`: a failure of
    this question, or a fault that outlasted the retries (`_Lasting`)."""
    if isinstance(error, RetryError):  # inspect's retries ran out on a transient fault
        cause = error.last_attempt.exception() or error
        return _Lasting(cause, _unavailable(model, cause))
    status = status_of(error)
    message = server_message(error)
    if context_refusal(message) and (status is None or 400 <= status < 500):
        return CallFailed(_too_long(model, message), final=True)
    if isinstance(status, int) and (status in _TRANSIENT_STATUS or status >= 500):
        return _Lasting(error, _unavailable(model, error))
    if isinstance(status, int) and 400 <= status < 500:
        return CallFailed(f"the judge refused the request (HTTP {status}: {message})", final=True)
    if _is_connection_fault(error):
        return _Lasting(error, _unavailable(model, error))
    if isinstance(error, UnicodeError):
        return CallFailed(f"the request could not be encoded: {error}", final=True)
    return CallFailed(
        f"the judge's answer could not be read ({type(error).__name__}: {_last_line(str(error))})",
        final=False,
    )


def status_of(error: Exception) -> int | None:
    """The HTTP status an error stands for.

    The SDK's error class says it first where it names one (`BadRequestError`: 400):
    inspect builds the error of a request that failed inside an Anthropic batch as the
    class of its error type but with status 500, which would turn a refused question
    into an outage that ends the run. inspect raises a provider's error as its own
    `ModelGenerateError`, with the provider's error as the cause.
    """
    cause = error.__cause__ if isinstance(error.__cause__, Exception) else error
    for holder in (type(cause), cause, error):
        status = getattr(holder, "status_code", None)
        if isinstance(status, int):
            return status
    return None


async def surface_outage(judging: Awaitable[T]) -> T:
    """`judging`, with an outage raised as its own one-line `JudgeUnavailable`.

    A writing's judge calls run concurrently, so when the judge is gone several of them
    fail at once and reach inspect as an exception group ("unhandled errors in a
    TaskGroup"), which would hide the reason: the first outage is raised instead, and
    any other error out of a group as itself.
    """
    try:
        return await judging
    except Exception as error:
        found = _outage_in(error) or _first_leaf(error)
        if found is error:
            raise
        raise found from None


def _first_leaf(error: BaseException) -> BaseException:
    """The first exception inside (nested) exception groups: the real cause, where the
    group's own message would say only "unhandled errors in a TaskGroup"."""
    inner = getattr(error, "exceptions", ())
    return _first_leaf(inner[0]) if inner else error


def _outage_in(error: BaseException) -> JudgeUnavailable | None:
    if isinstance(error, JudgeUnavailable):
        return error
    for inner in getattr(error, "exceptions", ()):  # an exception group
        found = _outage_in(inner)
        if found is not None:
            return found
    return None


def _is_connection_fault(error: BaseException) -> bool:
    """No answer at all: refused or dropped connections and timeouts, from any client."""
    if isinstance(error, TimeoutError | ConnectionError):
        return True
    names = {cls.__name__ for cls in type(error).__mro__}
    return bool(names & {"APIConnectionError", "APITimeoutError", "TransportError"})


def _unavailable(model: Model, cause: BaseException) -> JudgeUnavailable:
    where = endpoint(model) or "its default endpoint"
    reason = _last_line(str(cause)) or type(cause).__name__
    return JudgeUnavailable(
        f"judge {model} at {where} did not answer ({type(cause).__name__}: {reason}) "
        "through its retries, nor a tiny request after them; the run stops here. Check "
        "that the server is running and reachable at that address, and the key "
        "(<SERVICE>_API_KEY). When it answers again, finish the run with "
        "`inspect eval-retry <log>`: answered judge questions are kept and not asked again."
    )


def server_message(error: Exception) -> str:
    """The server's own words from an SDK error's body, in any of the shapes servers
    use: `{"error": {"message": ...}}` (OpenAI, vLLM, llama.cpp, Anthropic), a string
    under `"error"` (LM Studio, TGI), or a top-level `"message"` (SGLang); inspect's
    own error keeps the SDK's error as its cause. Else the error's text."""
    for holder in (error, error.__cause__):
        body = getattr(holder, "body", None)
        if isinstance(body, str) and body.strip():  # the openai SDK unwraps "error"
            return _one_line(body)
        if not isinstance(body, dict):
            continue
        inner = body.get("error", body)
        if isinstance(inner, str) and inner.strip():
            return _one_line(inner)
        message = inner.get("message") if isinstance(inner, dict) else None
        if isinstance(message, str) and message.strip():
            return _one_line(message)
    return _one_line(getattr(error, "provider_message", None) or _last_line(str(error)))


def _no_batch_api(model: Model, reason: str) -> JudgeUnavailable:
    where = endpoint(model) or "its default endpoint"
    return JudgeUnavailable(
        f"judge {model} runs in batch mode but {where} has no batch API ({reason}); "
        "the run stops here. Bind the judge without `batch` (or to a provider with a batch "
        "API) and run the same `inspect eval` again: answered judge questions are kept and "
        "not asked again."
    )


def _unfinished(model: Model, wait: float, batches: Sequence[str]) -> BatchUnfinished:
    where = endpoint(model) or "its default endpoint"
    named = (
        f"batch {', '.join(batches)}"
        if batches
        else "its batch (no batch was reported created for it)"
    )
    return BatchUnfinished(
        f"judge {model} at {where}: {named} did not finish within "
        f"{BATCH_WAIT_VARIABLE}={wait:g} s; the run stops here. Finish the run with "
        "`inspect eval-retry <log>`: answered judge questions are kept and not asked again, "
        "the unfinished batch's questions are sent again (cancel it at the provider if it "
        "should not run on)."
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
