"""What the simulator answers, whatever carried the question.

Two carriers share this: the HTTP server (`server.py`) and the in-process inspect model
provider (`embedded.py`). Both read a request into the messages its model reads
(`read_by`), choose the answer (`choose`, `Choice.reply`) and bill it (`bill`); what
stays with each carrier is the carrying (the server's API shapes, statuses, refusals,
latency, faults of the wire and batches; the provider's `ModelOutput`).
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from howtobench.simulator.billing import CHARS_PER_TOKEN, PromptCache, Usage, tokens, written_out
from howtobench.simulator.faults import Faults
from howtobench.simulator.protocol import Asked, classify
from howtobench.simulator.refusals import Profile
from howtobench.simulator.replies import reply_text
from howtobench.simulator.wire import Api, Conversation

__all__ = ["Choice", "Fault", "Script", "bill", "choose", "read_by"]


@dataclass(frozen=True)
class Fault:
    """A scripted fault (one of `FAULTS`, `context` or `error_object`) instead of a reply.

    `context` is the refusal of a prompt over the model's context, in the words of the
    profile played (Anthropic's on its API); the default profile (OpenAI, whose context no
    judge prompt fills) and a profile that truncates instead answer as vLLM serving a
    4,096-token model does, the local server a test stands for. `error_object` answers
    HTTP 200 with `{"error": {"message": "model overloaded"}}`, as OpenAI-compatible
    proxies and overloaded local servers do. What each fault sends: `faults`.
    """

    name: str


# What a script answers a question with: reply text, a JSON reply, a fault, or None for
# the simulator's own valid reply.
Scripted = str | dict[str, Any] | Fault | None
# A script reads the question, never the call order.
Script = Callable[[Asked], Scripted]


@dataclass(frozen=True)
class Choice:
    """The answer chosen for one question: the question as read, what a script said
    (None: no script, or the script left it to the simulator), and the fault answered
    with (scripted or drawn; None: a valid reply)."""

    question: Asked
    scripted: Scripted
    fault: str | None

    def reply(self) -> str:
        """The text of a 200 answer: the script's, else the simulator's own (unusable for
        the reply faults, `malformed` and `out_of_range`)."""
        if isinstance(self.scripted, str):
            return self.scripted
        if isinstance(self.scripted, dict):
            return json.dumps(self.scripted)
        return reply_text(self.question, self.fault)


def choose(
    messages: list[dict[str, Any]],
    temperature: float | None,
    *,
    faults: Faults,
    rng: random.Random,
    script: Script | None = None,
    answered: bool = True,
) -> Choice:
    """The answer to the question `messages` ask (as the model reads them): the script's
    if it has one for it, else the simulator's, with a fault drawn from `faults`. A
    request that will not be answered (`answered=False`: its server refuses it) is only
    read: no script is asked and no fault drawn."""
    question = classify(messages, temperature)
    if not answered:
        return Choice(question, None, None)
    scripted = script(question) if script else None
    fault = scripted.name if isinstance(scripted, Fault) else faults.draw(rng)
    return Choice(question, scripted, fault)


def read_by(profile: Profile, conversation: Conversation) -> list[dict[str, Any]]:
    """The messages the profile's model reads: the request's own or, on a server that
    truncates rather than refuses (Ollama), a prompt over its context cut to fit it, as
    one user message: the prompt written out (two characters a token), its first `keep`
    tokens and as much of its tail as fits."""
    written = written_out(conversation.segments)
    if profile.context_error is None and tokens(len(written)) >= profile.context:
        tail = max(0, (profile.context - profile.keep - 1) * CHARS_PER_TOKEN)
        cut = written[: profile.keep * CHARS_PER_TOKEN] + written[len(written) - tail :]
        return [{"role": "user", "content": cut}]
    return conversation.messages


def bill(
    api: Api,
    cache: PromptCache,
    profile: Profile,
    model: str,
    conversation: Conversation,
    reply: str,
    *,
    cut: bool,
) -> Usage:
    """The tokens billed for a reply (`billing`): the prompt as sent or, where the
    server cut it (`cut`) and its profile reports what it read (`usage_read`), its
    context; a server that counts only what it did not reuse (`uncached_usage`) leaves
    out the longest prefix an earlier prompt shared."""
    usage = api.bill(cache, model, conversation, reply)
    if cut and profile.usage_read:
        usage = replace(usage, input=profile.context, cache_read=0, cache_write=0)
    elif profile.uncached_usage:
        reused = tokens(cache.reused(model, written_out(conversation.segments)))
        prompt = usage.input + usage.cache_read + usage.cache_write
        usage = replace(usage, input=prompt - reused, cache_read=0, cache_write=0)
    return usage
