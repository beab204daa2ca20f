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
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TypeVar

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput
from tenacity import RetryError

from howtobench.errors import UserError

T = TypeVar("T")

# inspect's backoff waits about 3, 6, 12 and 24 s (plus up to 3 s jitter each), so four
# retries give up on a refused connection in under a minute.
JUDGE_MAX_RETRIES = 4
# A hung request is abandoned after this many seconds and retried; long enough for a
# reasoning model's considered answer.
JUDGE_ATTEMPT_TIMEOUT = 180
_TRANSIENT_STATUS = {408, 409, 425, 429}


class JudgeUnavailable(RuntimeError):
    """The judge did not answer at all, through every retry: the run stops here."""


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
    to every role.
    """
    own = model.config
    if temperature is not None and own.temperature is not None and own.temperature != temperature:
        raise UserError(
            f"-T judge_temperature={temperature:g} and the temperature {own.temperature:g} "
            f"of judge {model} disagree: set only one of them"
        )
    chosen = temperature if temperature is not None else own.temperature
    return GenerateConfig(
        temperature=chosen if chosen is not None else fallback,
        attempt_timeout=own.attempt_timeout or JUDGE_ATTEMPT_TIMEOUT,
        max_retries=own.max_retries,
        timeout=own.timeout,
    )


async def generate_reply(
    model: Model, conversation: Sequence[ChatMessage], config: GenerateConfig
) -> str:
    """The judge's reply text; raises `CallFailed` or `JudgeUnavailable` (above).

    Judge calls bypass inspect's generate cache: it would keep replies that fail their
    check and hand them back on every later run. Checked replies go to the reply store.
    """
    try:
        output = await model.generate(list(conversation), config=config, cache=False)
    except Exception as error:
        raise _classified(error, model) from None  # the class says it all; keep the log short
    return _reply_text(output)


def _reply_text(output: ModelOutput) -> str:
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


def _classified(error: Exception, model: Model) -> Exception:
    """The judge-level meaning of an exception raised by `model.generate`."""
    if isinstance(error, RetryError):  # inspect's retries ran out on a transient fault
        return _unavailable(model, error.last_attempt.exception() or error)
    status = getattr(error, "status_code", None)
    if isinstance(status, int) and (status in _TRANSIENT_STATUS or status >= 500):
        return _unavailable(model, error)
    if isinstance(status, int) and 400 <= status < 500:
        message = getattr(error, "provider_message", None) or _last_line(str(error))
        return CallFailed(f"the judge refused the request (HTTP {status}: {message})", final=True)
    if _is_connection_fault(error):
        return _unavailable(model, error)
    if isinstance(error, UnicodeError):
        return CallFailed(f"the request could not be encoded: {error}", final=True)
    return CallFailed(
        f"the judge's answer could not be read ({type(error).__name__}: {_last_line(str(error))})",
        final=False,
    )


async def surface_outage(judging: Awaitable[T]) -> T:
    """`judging`, with an outage raised as its own one-line `JudgeUnavailable`.

    A writing's judge calls run concurrently, so when the judge is gone several of them
    fail at once and reach inspect as an exception group ("unhandled errors in a
    TaskGroup"), which would hide the reason: the first outage is raised instead.
    """
    try:
        return await judging
    except Exception as error:
        outage = _outage_in(error)
        if outage is None or outage is error:
            raise
        raise outage from None


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
    where = model.api.base_url or "its default endpoint"
    reason = _last_line(str(cause)) or type(cause).__name__
    return JudgeUnavailable(
        f"judge {model} at {where} did not answer ({type(cause).__name__}: {reason}) "
        "after its retries; the run stops here. When it answers again, finish the run with "
        "`inspect eval-retry <log>`: answered judge questions are kept and not asked again."
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
