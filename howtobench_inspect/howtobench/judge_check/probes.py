"""The probes: direct calls made before the eval that say, in seconds, which request
shapes the endpoint refuses (docs/judges.md). The tiny ones are reported, not ruled on:
the eval exercises what ToW needs of them. The long one is ruled on (`Probe.cut`), since
the demo's prompts may be too short for the eval to meet a server's cut to its context.
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

from howtobench.judge.redirects import bound_client
from howtobench.judge.server_words import server_message, status_of, stopped_redirects
from howtobench.judge.unread import cut_short

__all__ = ["NEEDED_FOR", "Probe", "probe"]

# The probes: (name, what it asks the endpoint to accept). The prompt names the probe,
# so a scripted test server can refuse one by its text.
PROBES: tuple[tuple[str, str], ...] = (
    ("plain", "a plain user message"),
    ("text_parts", "content as a list of text parts"),
    ("system", "a system message"),
    ("temperature_0", "temperature 0"),
    ("temperature_0.7", "temperature 0.7"),
    ("long_prompt", "a prompt as long as a ToW question"),
)
# What ToW uses each probe's feature for, said beside a refusal.
NEEDED_FOR = {
    "text_parts": "the prompt-cache breakpoint (joined into one string where the API allows)",
    "system": "the negotiator's system prompt",
    "temperature_0": "every first ask (ToW judges at temperature 0 unless set)",
    "temperature_0.7": "re-asks after an unusable reply, and -T judge_samples",
    "long_prompt": "every question (the reply to a prompt cut to the context is not scored)",
}
# The long probe's filler: one sentence of our own, repeated to about the size of a ToW
# negotiator prompt over a few writings (4,000 characters: 2,700 to 4,000 tokens).
_FILLER = "这是一段用来检验评审服务器是否完整读取长提示的填充文字，请忽略其内容。"
_LONG_CHARACTERS = 4000
_PROBE_CONFIG = GenerateConfig(max_tokens=16, max_retries=1, timeout=60, attempt_timeout=30)


@dataclass(frozen=True)
class Probe:
    """One tiny request and whether the endpoint took it."""

    name: str
    label: str
    accepted: bool
    status: int | None = None  # the HTTP status of a refusal, where there was one
    message: str | None = None  # the endpoint's message (or the error) of a refusal
    answered: bool = True  # False: no answer at all (connection refused, timeout)
    cut: bool = False  # answered, but its usage shows the prompt cut to the context

    @property
    def state(self) -> str:
        """What the server did, for the report."""
        if self.accepted:
            return "answered"
        if not self.answered:
            return f"no answer ({self.message})"
        if self.cut:
            return f"answered, but {self.message}"
        return f"refused: {self.said}"

    @property
    def said(self) -> str | None:
        return f"HTTP {self.status}: {self.message}" if self.status else self.message


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
    elif name == "long_prompt":
        filler = (_FILLER * (_LONG_CHARACTERS // len(_FILLER) + 1))[:_LONG_CHARACTERS]
        messages = [ChatMessageUser(content=f"{filler}\n\n{ask}")]
    elif name.startswith("temperature_"):
        temperature = float(name.removeprefix("temperature_"))
        config = config.merge(GenerateConfig(temperature=temperature))
    return messages, config


async def probe(model: Model, found: list[Probe]) -> list[Probe]:
    """The probes, one after the other (tiny, uncached), each added to `found` as it
    ends (so a check out of time keeps those made); stops after the plain one when it
    got no answer at all, since every other would wait out the same retries."""
    bound_client(model)
    own = model.config  # the role's own bounds, where it sets them, else the probes'
    bounds = GenerateConfig(max_retries=own.max_retries, attempt_timeout=own.attempt_timeout)
    for name, label in PROBES:
        messages, config = _probe_request(name)
        config = config.merge(bounds)
        try:
            output = await model.generate(messages, config=config, cache=False)
        except Exception as error:
            status, message, answered = _refusal(error)
            found.append(Probe(name, label, False, status, message, answered))
            if name == "plain" and not answered:
                break
        else:
            cut = cut_short(messages, output.usage)
            if cut is None:
                found.append(Probe(name, label, True))
            else:
                said = f"read {cut[0]:,} of at least {cut[1]:,} prompt tokens"
                found.append(Probe(name, label, False, message=said, cut=True))
    return found


def _refusal(error: BaseException) -> tuple[int | None, str, bool]:
    """(HTTP status, message, whether the endpoint answered) of a failed probe, read as
    the judge's calls read a failure, through to a retry's last attempt."""
    last = getattr(error, "last_attempt", None)
    if last is not None and last.exception() is not None:
        error = last.exception()
    if not isinstance(error, Exception):
        return None, type(error).__name__, False
    if loop := stopped_redirects(error):
        return None, loop, True
    status = status_of(error)
    names = {cls.__name__ for cls in type(error).__mro__}
    if status is None and names & {"APITimeoutError", "TimeoutError", "TimeoutException"}:
        return None, "timeout", False
    message = server_message(error) or type(error).__name__
    return status, message[:200], status is not None
