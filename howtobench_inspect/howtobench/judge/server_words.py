"""What a judge's server said: its status, its own words, and the phrases we act on.

Servers refuse a request in their own error bodies and words; the judge reads the words
out of any of those shapes (`server_message`) and recognises two meanings by their
phrases (`PHRASES`): a prompt over the model's context (asked again, it is cut the same
way: the question fails for good), and a chat template with no system role (the system
prompt is then folded into the first user message). Every other refusal is judged by its
status alone (`judge.failures`). The table names the simulator's profiles that send each
phrase, or where a real server said it; `tests/test_server_phrases.py` keeps them in step.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from howtobench.judge.redirects import RedirectStop
from howtobench.judge.reply_size import ReplyTooLarge

__all__ = [
    "CONTEXT_TOO_LONG",
    "PHRASES",
    "SYSTEM_ROLE_REFUSED",
    "Meaning",
    "Phrase",
    "body_words",
    "context_refusal",
    "context_size",
    "last_line",
    "meanings",
    "one_line",
    "reply_counted",
    "stopped_body",
    "stopped_redirects",
    "said",
    "server_message",
    "status_of",
    "system_refusal",
]

Meaning = Literal["context too long", "system role refused"]
CONTEXT_TOO_LONG: Meaning = "context too long"
SYSTEM_ROLE_REFUSED: Meaning = "system role refused"


@dataclass(frozen=True)
class Phrase:
    """A phrase a server's refusal says (a case-insensitive regex), what it means, the
    simulator profiles that send it (`servers`), and, for a phrase no profile sends,
    where a real server says it (`seen`)."""

    pattern: str
    meaning: Meaning
    servers: tuple[str, ...] = ()
    seen: str = ""

    def found_in(self, text: str) -> bool:
        return re.search(self.pattern, text, re.IGNORECASE) is not None


PHRASES: tuple[Phrase, ...] = (
    # OpenAI's error code, beside its message in the body (and in the SDK error's text)
    Phrase("context_length_exceeded", CONTEXT_TOO_LONG, servers=("openai", "llama-cpp-python")),
    Phrase(
        "maximum context length",
        CONTEXT_TOO_LONG,
        servers=("openai", "vllm", "sglang", "llama-cpp-python"),
    ),
    Phrase(
        "context length",
        CONTEXT_TOO_LONG,
        servers=("openai", "vllm", "sglang", "llama-cpp-python", "lmstudio"),
    ),
    Phrase(r"exceeds? the (?:available )?context", CONTEXT_TOO_LONG, servers=("llama-cpp",)),
    Phrase("context size", CONTEXT_TOO_LONG, servers=("llama-cpp",)),
    Phrase(
        "context window",
        CONTEXT_TOO_LONG,
        seen="llama-cpp-python in process: 'Requested tokens (N) exceed context window of "
        "M' (issue abetlen/llama-cpp-python#416)",
    ),
    Phrase(
        "too many tokens",
        CONTEXT_TOO_LONG,
        seen="llama.cpp's tokenizer: 'llama_tokenize: too many tokens' (issue "
        "abetlen/llama-cpp-python#416)",
    ),
    Phrase(
        r"must have less than \d+ (?:input )?tokens",
        CONTEXT_TOO_LONG,
        seen="TGI with --max-input-tokens below the context: 'Input validation error: "
        "`inputs` must have less than N tokens. Given: M' (huggingface/"
        "text-generation-inference router/src/validation.rs, ValidationError::InputLength)",
    ),
    Phrase(r"tokens \+ `?max_new_tokens`? must be <=", CONTEXT_TOO_LONG, servers=("tgi", "tgi-1")),
    Phrase(
        "prompt is too long",
        CONTEXT_TOO_LONG,
        seen="Anthropic's Messages API: 'prompt is too long: N tokens > M maximum' (played "
        "by the simulator's Anthropic route, not a profile: simulator/faults.py)",
    ),
    Phrase(
        "input length",
        CONTEXT_TOO_LONG,
        seen="a broad wording kept from before this table; not traced to a server's source",
    ),
    # A chat template without a system role (Gemma's raises "System role not supported")
    Phrase(
        r"system (?:role|message|prompt)s? (?:is |are )?not supported",
        SYSTEM_ROLE_REFUSED,
        servers=("vllm", "sglang", "llama-cpp", "llama-cpp-python", "tgi", "tgi-1"),
    ),
)


# The model's context in a context refusal, where the server names it
_CONTEXT_SIZE = re.compile(
    r"(?:maximum context length|context size|context length|context window|"
    r"max_new_tokens`? must be <=)\D{0,20}(\d[\d,]*)",
    re.IGNORECASE,
)


# A context refusal that counts the reply's tokens too (vLLM's and SGLang's refusal of a
# max_tokens over what is left, TGI's and llama-cpp-python's and OpenAI's of the total),
# and the prompt's tokens, where it names them
_REPLY_COUNTED = re.compile(
    r"max_tokens|max_completion_tokens|max_new_tokens|(?:in|for) the completion", re.IGNORECASE
)
_PROMPT_TOKENS = re.compile(
    r"(\d[\d,]*) (?:in the messages|`?inputs`? tokens|tokens from the input|input tokens)",
    re.IGNORECASE,
)


def meanings(message: str) -> set[Meaning]:
    """What the table reads in a server's message: every meaning one of its phrases has."""
    return {phrase.meaning for phrase in PHRASES if phrase.found_in(message)}


def context_refusal(message: str) -> bool:
    """Whether a server's message says the prompt is longer than the model's context."""
    return CONTEXT_TOO_LONG in meanings(message)


def system_refusal(message: str) -> bool:
    """Whether a server's message says its chat template has no system role."""
    return SYSTEM_ROLE_REFUSED in meanings(message)


def context_size(message: str) -> str | None:
    """The context size (in tokens, as written) a context refusal names, if it names one."""
    size = _CONTEXT_SIZE.search(message)
    return size.group(1) if size else None


def reply_counted(message: str) -> tuple[int | None, int | None] | None:
    """When a context refusal counts the reply's `max_tokens` too: the context and the
    prompt's tokens, each where the server names it (None where not). None for a refusal
    of the prompt alone, or any other message."""
    if not context_refusal(message) or not _REPLY_COUNTED.search(message):
        return None
    context, prompt = context_size(message), _PROMPT_TOKENS.search(message)
    return (
        int(context.replace(",", "")) if context else None,
        int(prompt.group(1).replace(",", "")) if prompt else None,
    )


def status_of(error: Exception) -> int | None:
    """The HTTP status an error stands for: the SDK error class's first (inspect gives a
    request failed inside an Anthropic batch its error's class but status 500, which would
    make a refused question an outage), then the error's or its cause's."""
    if _error_in_reply(error) is not None:
        return 200
    cause = error.__cause__ if isinstance(error.__cause__, Exception) else error
    for holder in (type(cause), cause, error):
        status = getattr(holder, "status_code", None)
        if isinstance(status, int):
            return status
    return None


def server_message(error: Exception) -> str:
    """The server's own words, on one line, whatever shape its refusal took (an error
    body of any shape servers use, an error object in a 200 answer, a redirect loop, a
    body read no further); else the error's text."""
    if stopped := stopped_redirects(error) or stopped_body(error):
        return stopped
    in_reply = _error_in_reply(error)
    for body in (in_reply, *(getattr(h, "body", None) for h in (error, error.__cause__))):
        if words := body_words(body):
            return words
    return one_line(getattr(error, "provider_message", None) or last_line(str(error)))


def said(cause: BaseException) -> str:
    """What a failure says, in the server's words where it sent any."""
    if not isinstance(cause, Exception):
        return type(cause).__name__
    status = status_of(cause)
    message = server_message(cause)[:300] or type(cause).__name__
    return f"HTTP {status}: {message}" if status else f"{type(cause).__name__}: {message}"


def body_words(body: object) -> str | None:
    """The message of an error body of any shape servers use, or None when it has none."""
    if isinstance(body, str) and body.strip():  # the openai SDK unwraps "error"
        return _page_text(body)
    if not isinstance(body, dict):
        return None
    inner = body.get("error", body)
    if isinstance(inner, str) and inner.strip():
        return one_line(inner)
    message = inner.get("message") if isinstance(inner, dict) else None
    if isinstance(message, str) and message.strip():
        return one_line(message)
    return None


_HTML = re.compile(r"<\s*(?:!doctype|html|head|body|title)\b", re.IGNORECASE)
_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
_TAGS = re.compile(r"<(script|style)\b.*?</\1\s*>|<[^>]+>", re.IGNORECASE | re.DOTALL)


def _page_text(body: str) -> str:
    """A text body on one line; an HTML page (a proxy's error page) as its title, else
    its text without tags, at most 300 characters."""
    if not _HTML.search(body):
        return one_line(body)
    title = _TITLE.search(body)
    text = title.group(1) if title and title.group(1).strip() else _TAGS.sub(" ", body)
    return one_line(html.unescape(text))[:300]


def _error_in_reply(error: BaseException) -> str | None:
    """The error object of a 200 answer that is no chat completion, in its own words.

    A 200 `{"error": {...}}` (from proxies and overloaded local servers) gets through the
    openai SDK as a completion with no `choices`, on which inspect 0.3.285 raises a bare
    `TypeError`; the parsed completion is still a local of the frame that raised.
    """
    if not isinstance(error, TypeError | AttributeError):
        return None
    trace = error.__traceback__
    while trace is not None:
        completion = trace.tb_frame.f_locals.get("completion")
        extra = getattr(completion, "model_extra", None)
        if (
            isinstance(extra, dict)
            and extra.get("error")
            and not getattr(completion, "choices", None)
        ):
            return body_words({"error": extra["error"]}) or one_line(str(extra["error"]))
        trace = trace.tb_next
    return None


def stopped_redirects(error: BaseException) -> str | None:
    """What the server did when a request stopped on redirects (`judge.redirects`, or
    httpx's own `TooManyRedirects`; the openai SDK says "Connection error."), else None."""
    for found in _chain(error):
        if isinstance(found, RedirectStop):
            return str(found)
        if type(found).__name__ == "TooManyRedirects":
            last = getattr(getattr(found, "request", None), "url", None)
            first = _request_url(error) or last
            return f"the server redirects too many times: {first} -> ... {last}"
    return None


def stopped_body(error: BaseException) -> str | None:
    """When the client stopped reading a reply's body past its bound
    (`judge.reply_size.ReplyTooLarge`): how large it had grown. Else None."""
    return next((str(f) for f in _chain(error) if isinstance(f, ReplyTooLarge)), None)


def _chain(error: BaseException) -> Iterator[BaseException]:
    """The error, then what it was raised from or while handling, each once."""
    seen: set[int] = set()
    found: BaseException | None = error
    while found is not None and id(found) not in seen:
        seen.add(id(found))
        yield found
        found = found.__cause__ or found.__context__


def _request_url(error: BaseException) -> str | None:
    """The URL of the request an SDK error (or its cause) was raised for."""
    for holder in (error, error.__cause__):
        try:
            url = getattr(getattr(holder, "request", None), "url", None)
        except RuntimeError:  # httpx raises when an error has no request
            url = None
        if url is not None:
            return str(url)
    return None


def last_line(text: str) -> str:
    """The last non-blank line of a text (a traceback's or an SDK error's own line)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def one_line(text: str) -> str:
    """A text with its runs of whitespace, line breaks included, as single spaces."""
    return " ".join(text.split())
