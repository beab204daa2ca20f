"""The faults the simulator injects: which there are, how they are drawn, what each sends.

`Faults` draws them by their rates (a flaky provider's 429, 500, hang, dropped
connection, 400, unusable reply, body that is no reply, or one that never ends:
`runaway`, a server that ignores `max_tokens`); a script names one (`answers.Fault`),
or one of two never drawn, `context` and `error_object`. `instead_of_reply` is what a
fault sends on the wire.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, fields, replace

from howtobench.simulator.billing import tokens, written_out
from howtobench.simulator.profiles import DEFAULT_PROFILE, PROFILES
from howtobench.simulator.refusals import Profile, check
from howtobench.simulator.wire import Api, Conversation, Outcome

__all__ = ["ERROR_OBJECT_MESSAGE", "FAULTS", "Faults", "instead_of_reply"]

ERROR_OBJECT_MESSAGE = "model overloaded"
_STATUS_FAULTS = ("429", "500", "400")  # answered with that status, in the API's error shape
# A runaway reply: a chat completion whose text opens and repeats one sentence without end
# (1,200 characters at a time, 7,200 bytes as JSON writes them)
_RUNAWAY_START = b'{"id": "runaway", "object": "chat.completion", "choices": [{"index": 0, '
_RUNAWAY_START += b'"message": {"role": "assistant", "content": "'
_RUNAWAY_REPEAT = json.dumps("这句话说完了又从头说起。" * 100).encode()[1:-1]


@dataclass
class Faults:
    """Chances per request (0-1) of each fault (`FAULTS`, drawn in this order); `seed`
    makes a run repeatable."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_hang: float = 0.0
    rate_drop: float = 0.0
    rate_malformed: float = 0.0
    rate_out_of_range: float = 0.0
    rate_400: float = 0.0
    rate_empty_body: float = 0.0
    rate_bad_body: float = 0.0
    rate_runaway: float = 0.0
    hang_seconds: float = 30.0
    seed: int = 0

    def draw(self, rng: random.Random) -> str | None:
        roll = rng.random()
        for name in FAULTS:
            rate = getattr(self, f"rate_{name}")
            if roll < rate:
                return name
            roll -= rate
        return None


# The faults drawn by rate, by name (`--rate-<name>`)
FAULTS = tuple(f.name.removeprefix("rate_") for f in fields(Faults) if f.name.startswith("rate_"))


def instead_of_reply(
    api: Api, profile: Profile, fault: str | None, conversation: Conversation
) -> Outcome | None:
    """What `fault` sends instead of a reply (`context` and `error_object`: see
    `answers.Fault`), or None when the request still gets one (late for `hang`, unusable
    for the reply faults)."""
    if fault == "context":
        prompt = tokens(len(written_out(conversation.segments)))
        if api.name == "anthropic":
            message = f"prompt is too long: {max(prompt, 200_001)} tokens > 200000 maximum"
            return Outcome.of(400, api.error(400, message))
        if profile.name == DEFAULT_PROFILE or profile.context_error is None:
            profile = replace(PROFILES["vllm"], context=4096)
        refused = check(profile, {}, max(prompt, profile.context + 1))
        assert refused is not None  # a prompt over the context, and nothing else asked
        return Outcome.of(refused.status, refused.body)
    if fault == "error_object":
        return Outcome.of(200, api.error(200, ERROR_OBJECT_MESSAGE))
    if fault == "drop":
        return Outcome(0, b"", dropped=True)
    if fault in _STATUS_FAULTS:
        return Outcome.of(int(fault), api.error(int(fault), f"simulated {fault}"))
    if fault == "runaway":
        return Outcome(200, _RUNAWAY_START, repeat=_RUNAWAY_REPEAT)
    if fault in ("empty_body", "bad_body"):
        return Outcome(200, b"" if fault == "empty_body" else b"<html>oops")
    return None
