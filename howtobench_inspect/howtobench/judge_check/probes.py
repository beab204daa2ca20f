"""The probes: a handful of tiny direct calls (a few tokens each, no cache), made before
the eval, that say which request shapes the endpoint refuses. The first of them also
tells an endpoint that answers nothing from one that answers badly, in seconds rather
than after a run's retries. They are reported, not ruled on: what ToW needs from them (a
system message for the negotiator, temperature 0 for judging, 0.7 for re-asks) the eval
has already exercised.
"""

from __future__ import annotations

from dataclasses import dataclass

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    Model,
)

from howtobench.judge.calls import server_message, status_of

# The probes: (name, what it asks the endpoint to accept). The prompt names the probe,
# so a scripted test server can refuse one by its text.
PROBES: tuple[tuple[str, str], ...] = (
    ("plain", "a plain user message"),
    ("text_parts", "content as a list of text parts"),
    ("system", "a system message"),
    ("temperature_0", "temperature 0"),
    ("temperature_0.7", "temperature 0.7"),
)
# What ToW uses each probe's feature for, said beside a refusal.
NEEDED_FOR = {
    "text_parts": "the prompt-cache breakpoint (joined into one string where the API allows)",
    "system": "the negotiator's system prompt",
    "temperature_0": "every first ask (ToW judges at temperature 0 unless set)",
    "temperature_0.7": "re-asks after an unusable reply, and -T judge_samples",
}
_PROBE_CONFIG = GenerateConfig(max_tokens=16, max_retries=1, timeout=60, attempt_timeout=30)


@dataclass(frozen=True)
class Probe:
    """One tiny request and whether the endpoint took it."""

    name: str
    label: str
    accepted: bool
    status: int | None = None  # the HTTP status of a refusal, where there was one
    message: str | None = None  # the endpoint's message (or the error) of a refusal
    answered: bool = True  # False: no answer at all (connection refused, timeout, 5xx)


def _probe_request(name: str) -> tuple[list[ChatMessage], GenerateConfig]:
    ask = f"judge-check probe ({name}): answer with the single word OK."
    messages: list[ChatMessage] = [ChatMessageUser(content=ask)]
    config = _PROBE_CONFIG
    if name == "text_parts":
        halves = ask.split(": ", 1)
        parts = [ContentText(text=halves[0] + ":"), ContentText(text=halves[1])]
        messages = [ChatMessageUser(content=list(parts))]
    elif name == "system":
        messages = [ChatMessageSystem(content="You are a careful judge."), *messages]
    elif name.startswith("temperature_"):
        temperature = float(name.removeprefix("temperature_"))
        config = config.merge(GenerateConfig(temperature=temperature))
    return messages, config


async def probe(model: Model) -> list[Probe]:
    """The probes, one after the other (tiny, uncached); stops after the plain one when
    it got no answer at all, since every other would wait out the same retries."""
    found = []
    own = model.config  # the role's own bounds, where it sets them, else the probes'
    bounds = GenerateConfig(max_retries=own.max_retries, attempt_timeout=own.attempt_timeout)
    for name, label in PROBES:
        messages, config = _probe_request(name)
        config = config.merge(bounds)
        try:
            await model.generate(messages, config=config, cache=False)
        except Exception as error:
            status, message, answered = _refusal(error)
            found.append(Probe(name, label, False, status, message, answered))
            if name == "plain" and not answered:
                break
        else:
            found.append(Probe(name, label, True))
    return found


def _refusal(error: BaseException) -> tuple[int | None, str, bool]:
    """(HTTP status, message, whether the endpoint answered) of a failed probe, read as
    the judge's calls read a failure (`status_of`, `server_message`). A retry that ran
    out is read through to its last attempt."""
    last = getattr(error, "last_attempt", None)
    if last is not None and last.exception() is not None:
        error = last.exception()
    if not isinstance(error, Exception):
        return None, type(error).__name__, False
    status = status_of(error)
    message = server_message(error) or type(error).__name__
    answered = status is not None and status < 500 and status != 429
    return status, message[:200], answered
