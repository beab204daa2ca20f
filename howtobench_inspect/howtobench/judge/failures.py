"""What a failed judge call means: this question fails, or the judge is gone.

inspect retries transient faults. What is left is either a question the judge cannot
answer (a 4xx refusal, a 200 body that is no completion, its content filter, a reply past
its size bounds: `CallFailed`), left unscored when its tries are spent; or a judge that
cannot answer at all (`Lasting`), where scoring more samples would only wait out the same
retries, so `JudgeUnavailable` ends the run in one line and `inspect eval-retry` finishes
it later from the reply store.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from inspect_ai.model import ChatMessage, Model, ModelOutput
from tenacity import RetryError

from howtobench._inspect import endpoint
from howtobench.judge.reply_size import too_long
from howtobench.judge.server_words import (
    context_refusal,
    context_size,
    last_line,
    one_line,
    said,
    server_message,
    status_of,
    stopped_body,
    stopped_redirects,
)
from howtobench.judge.unread import unread_prompt

__all__ = [
    "CallFailed",
    "JudgeUnavailable",
    "Lasting",
    "TRANSIENT_STATUS",
    "classified",
    "reply_text",
]

TRANSIENT_STATUS = {408, 409, 425, 429}  # statuses inspect retries, as it does 5xx


class JudgeUnavailable(RuntimeError):
    """The judge did not answer at all, through every retry: the run stops here."""


def judge_at(model: Model) -> str:
    """How a run that stops names its judge: `judge <model> at <endpoint>`."""
    return f"judge {model} at {endpoint(model) or 'its default endpoint'}"


class CallFailed(Exception):
    """The judge could not answer this question; `final` when asking again is pointless."""

    def __init__(self, message: str, *, final: bool) -> None:
        super().__init__(message)
        self.final = final


class Lasting(Exception):
    """A fault that outlasted inspect's retries (5xx, 429, timeouts, refused
    connections): an outage, unless the endpoint still answers
    (`howtobench.judge.outages.diagnosed`)."""

    def __init__(self, cause: BaseException, outage: JudgeUnavailable) -> None:
        super().__init__(str(outage))
        self.cause, self.outage = cause, outage


def classified(error: Exception, model: Model) -> Exception:
    """The judge-level meaning of an exception raised by `model.generate`: a failure of
    this question, or a fault that outlasted the retries (`Lasting`)."""
    cause: BaseException = error
    if isinstance(error, RetryError):  # inspect's retries ran out on a transient fault
        cause = error.last_attempt.exception() or error
    if loop := stopped_redirects(cause):  # a base URL that redirects in a loop
        return JudgeUnavailable(
            f"judge {model}: {loop}; the run stops here. Check the base URL (the scheme, "
            "http or https, and the path, such as /v1, that the server answers on itself)."
        )
    if isinstance(error, RetryError):
        return Lasting(cause, _unavailable(model, cause))
    if too_large := stopped_body(error):
        return CallFailed(too_large, final=False)
    status = status_of(error)
    message = server_message(error)
    if context_refusal(message) and (status is None or 400 <= status < 500):
        return CallFailed(_too_long(model, message), final=True)
    if status == 200:  # an error object where the reply should be
        return CallFailed(
            f"the judge answered HTTP 200 with an error instead of a reply: {message[:300]}",
            final=False,
        )
    if isinstance(status, int) and (status in TRANSIENT_STATUS or status >= 500):
        return Lasting(error, _unavailable(model, error))
    if isinstance(status, int) and 400 <= status < 500:
        return CallFailed(f"the judge refused the request (HTTP {status}: {message})", final=True)
    if _is_connection_fault(error):
        return Lasting(error, _unavailable(model, error))
    if isinstance(error, UnicodeError):
        return CallFailed(f"the request could not be encoded: {error}", final=True)
    return CallFailed(
        f"the judge's answer could not be read ({type(error).__name__}: {last_line(str(error))})",
        final=False,
    )


def reply_text(
    output: ModelOutput,
    model: Model,
    sent: Sequence[ChatMessage],
    recent: Iterable[str] = (),
    max_tokens: int | None = None,
) -> str:
    """The reply's text, or `CallFailed` for a reply that cannot be scored. A reply to a
    prompt the server did not read whole (`judge.unread`, with the judge's `recent`
    prompts) is final, like a context refusal: the same prompt is cut the same way."""
    if runaway := too_long(output.completion):
        raise CallFailed(runaway, final=False)
    if output.stop_reason == "model_length" and context_refusal(output.completion):
        raise CallFailed(_too_long(model, output.completion), final=True)
    if output.error:
        raise CallFailed(f"the judge answered with an error: {one_line(output.error)}", final=False)
    unread = unread_prompt(str(model), sent, output.usage, recent)
    if unread is not None:
        raise CallFailed(unread, final=True)
    if output.stop_reason == "content_filter":
        raise CallFailed("the judge's provider filtered the reply (content filter)", final=False)
    if output.stop_reason == "max_tokens" and max_tokens:
        raise CallFailed(
            f"the reply was cut off at its max_tokens ({max_tokens:,}) before the judge "
            "finished; a judge that reasons before it answers needs more: set its role's, "
            "--model-role 'grader={model: ..., max_tokens: 16384}'",
            final=False,
        )
    if output.stop_reason in ("max_tokens", "model_length"):
        raise CallFailed(
            f"the reply was cut off ({output.stop_reason}) before the judge finished",
            final=False,
        )
    return output.completion


def _too_long(model: Model, message: str) -> str:
    size = context_size(message)
    limit = f" ({size} tokens)" if size else ""
    return (
        f"the prompt is longer than judge {model}'s context{limit}, so it was not asked "
        f"again; choose a judge with a longer context (server: {one_line(message)[:300]})"
    )


def _is_connection_fault(error: BaseException) -> bool:
    """No answer at all: refused or dropped connections and timeouts, from any client."""
    if isinstance(error, TimeoutError | ConnectionError):
        return True
    names = {cls.__name__ for cls in type(error).__mro__}
    return bool(names & {"APIConnectionError", "APITimeoutError", "TransportError"})


def _unavailable(model: Model, cause: BaseException) -> JudgeUnavailable:
    return JudgeUnavailable(
        f"{judge_at(model)} did not answer ({said(cause)}) "
        "through its retries, nor a tiny request after them; the run stops here. Check "
        "that the server is running and reachable at that address, and the key "
        "(<SERVICE>_API_KEY). When it answers again, finish the run with "
        "`inspect eval-retry <log>`: answered judge questions are kept and not asked again."
    )
