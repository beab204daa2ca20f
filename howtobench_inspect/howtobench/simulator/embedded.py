"""The judge simulator as an inspect model provider, in process: `towsim/<any name>`.

`--model-role grader=towsim/judge` judges with the simulator's replies with no server, port
or key. A request is written as inspect's `openai-api` provider sends it, then answered by
the simulator's own code (`answers`) in the profile's shape (`wire.OpenAIChat`), so it gets
the reply the HTTP simulator gives (docs/simulator.md, "In process"). An argument out of
its bounds (`MOST_LATENCY`: `latency: 1e9` would hang every sample) is refused in one line.
"""

from __future__ import annotations

import difflib
import json
import random
from typing import Any

import anyio
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelCall,
    ModelOutput,
    messages_to_openai,
    model_output_from_openai,
)

from howtobench.simulator.answers import bill, choose, read_by
from howtobench.simulator.billing import PromptCache
from howtobench.simulator.faults import FAULTS, Faults
from howtobench.simulator.profiles import DEFAULT_PROFILE, PROFILES, get_profile
from howtobench.simulator.wire import OpenAIChat
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.in_process import InProcessModelAPI
from howtobench.vocabulary.words import SIMULATOR_API

__all__ = ["SimulatorAPI", "SimulatorArgumentError"]

# the reply faults: a 200 answer whose text is unusable, which needs no wire
REPLY_FAULTS = ("malformed", "out_of_range")
WIRE_FAULTS = tuple(name for name in FAULTS if name not in REPLY_FAULTS)
MODEL_ARGS = ("profile", "context", "latency", *(f"rate_{n}" for n in REPLY_FAULTS), "seed")
MOST_LATENCY = 600  # seconds: ten minutes, past any judge call's timeout
MOST_CONTEXT = 10_000_000  # tokens: five times the longest context served today (2M)
MOST_SEED = 2**32 - 1


class SimulatorArgumentError(UserError):
    """A model argument the embedded simulator does not take, or a value it cannot use."""


class SimulatorAPI(InProcessModelAPI):
    """The `towsim` provider: the judge simulator answering in process (any model name)."""

    def take_args(self, model_args: dict[str, Any]) -> None:
        name = f"{SIMULATOR_API}/{self.model_name}"
        unknown = next((arg for arg in model_args if arg not in MODEL_ARGS), None)
        if unknown is not None and unknown in (f"rate_{n}" for n in WIRE_FAULTS):
            raise SimulatorArgumentError(
                f"-M {unknown}: a fault of the wire, and {name} answers in process; serve the "
                f"simulator for it (python -m howtobench.simulator --{unknown.replace('_', '-')})"
            )
        if unknown is not None:
            near = difflib.get_close_matches(unknown, MODEL_ARGS, n=1)
            hint = f"did you mean {near[0]}?" if near else f"it takes {', '.join(MODEL_ARGS)}"
            raise SimulatorArgumentError(f"-M {unknown}: not a model argument of {name}; {hint}")
        profile = str(model_args.get("profile", DEFAULT_PROFILE))
        if profile not in PROFILES:
            raise SimulatorArgumentError(
                f"-M profile={profile}: {name} plays one of {', '.join(PROFILES)}"
            )
        changes: dict[str, Any] = {}
        if "context" in model_args:
            context = _bounded(name, "context", model_args["context"], 1, MOST_CONTEXT, whole=True)
            changes["context"] = int(context)
        rates = {
            arg: _bounded(name, arg, model_args.get(arg, 0), 0, 1)
            for arg in (f"rate_{n}" for n in REPLY_FAULTS)
        }
        if sum(rates.values()) > 1:
            raise SimulatorArgumentError(f"-M rate_*: {name}'s fault rates add up to over 1")
        self.latency = _bounded(name, "latency", model_args.get("latency", 0), 0, MOST_LATENCY)
        seed = _bounded(name, "seed", model_args.get("seed", 0), 0, MOST_SEED, whole=True)
        self.faults = Faults(**rates, seed=int(seed))
        self.profile = get_profile(profile, **changes)
        self._rng = random.Random(self.faults.seed)
        self._cache = PromptCache()
        self._api = OpenAIChat(self.profile)

    async def answer(
        self, input: list[ChatMessage], config: GenerateConfig
    ) -> tuple[ModelOutput, ModelCall]:
        # the request inspect's `openai-api` provider would send the HTTP simulator
        body: dict[str, Any] = {
            "model": self.model_name,
            "messages": await messages_to_openai(input),
        }
        if config.temperature is not None:
            body["temperature"] = config.temperature
        conversation = self._api.read(body)
        read = read_by(self.profile, conversation)
        choice = choose(read, config.temperature, faults=self.faults, rng=self._rng)
        if self.latency:
            await anyio.sleep(self.latency)
        reply = choice.reply()
        cut = read is not conversation.messages
        usage = bill(
            self._api, self._cache, self.profile, self.model_name, conversation, reply, cut=cut
        )
        completion = json.loads(self._api.answer(self.model_name, reply, usage, False).data)
        output = await model_output_from_openai(completion)
        return output, ModelCall.create(request=body, response=completion)


def _bounded(name: str, arg: str, value: Any, low: int, high: int, *, whole: bool = False) -> float:
    """`value` as a number from `low` to `high` (a whole one with `whole`), or one line
    saying what is wanted; a flag is no number."""
    try:
        number = float("nan") if isinstance(value, bool) else float(value)
    except (TypeError, ValueError):
        number = float("nan")
    if not (low <= number <= high and (number.is_integer() or not whole)):
        wanted = "a whole number" if whole else "a number"
        raise SimulatorArgumentError(
            f"-M {arg}={value}: {name} takes {wanted} from {low} to {high}"
        )
    return number
