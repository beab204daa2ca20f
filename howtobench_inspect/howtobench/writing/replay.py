"""Stored writings as a model: `--model replay/<writer>` answers each sample of a
howtobench task with that writer's stored writing for the sample, at zero tokens, so that
inspect's own model axis carries the writers (docs/running.md). Each sample carries its
data source's location (`SampleKey.DATASET`), so the provider needs no option of its own.
It answers only the sample's own input: a judge's or a perturber's question reaching it
through an unbound role is refused.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelOutput,
    ModelUsage,
)

from howtobench._inspect import sample_active
from howtobench.dataset import DataSource, open_source
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.in_process import InProcessModelAPI
from howtobench.vocabulary.metadata import SampleKey
from howtobench.vocabulary.words import replay_model

__all__ = ["ReplayAPI", "ReplayError"]


class ReplayError(UserError):
    """A replayed writer asked for what it cannot give."""


class ReplayAPI(InProcessModelAPI):
    """The `replay` provider: the model name is the writer whose writings are replayed."""

    def take_args(self, model_args: dict[str, Any]) -> None:
        model_name = self.model_name
        if not model_name:
            raise ReplayError(
                "--model replay/: name the writer whose writings are replayed, e.g. "
                "replay/gpt-4o-2024-11-20"
            )
        if model_args:
            raise ReplayError(
                f"-M {next(iter(model_args))}: {replay_model(model_name)} takes no model "
                "arguments (its writings come from the task's -T dataset=...)"
            )
        # each (source location, task)'s stored writings of this writer, read on first use
        self._sources: dict[str, DataSource] = {}
        self._writings: dict[tuple[str, str], dict[str, str]] = {}

    def max_connections(self) -> int:
        # an answer is a lookup: nothing to protect by queueing the samples
        return 1000

    async def answer(self, input: list[ChatMessage], config: GenerateConfig) -> ModelOutput:
        # nobody recorded why the writer stopped: `final_writing` reads a cut from the text
        output = ModelOutput.from_content(
            self.model_name, self.stored_writing(input), stop_reason="unknown"
        )
        output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output

    def stored_writing(self, input: list[ChatMessage]) -> str:
        """The writer's stored writing of the running sample, whose writer prompt `input`
        must be; anything else is refused in one line naming the writer and the sample."""
        name = replay_model(self.model_name)
        active = sample_active()
        if active is None or active.sample is None:
            raise ReplayError(f"{name} replays stored writings inside a running eval only")
        sample = active.sample
        metadata = sample.metadata or {}
        location, task = metadata.get(SampleKey.DATASET), metadata.get(SampleKey.TASK)
        if not location or not task:
            raise ReplayError(
                f"{name}: sample '{sample.id}' is not from a howtobench task, so it has no "
                "stored writings to replay"
            )
        asked = input[-1].text if input else ""
        expected = sample.input if isinstance(sample.input, str) else sample.input[-1].text
        if asked != expected:
            raise ReplayError(
                f"{name} only replays writings and cannot answer another question (a "
                "judge's or a perturber's, from an unbound role): bind that role to a "
                "model, e.g. --model-role grader=<model>"
            )
        stored = self._stored(str(location), str(task))
        if str(sample.id) not in stored:
            raise ReplayError(
                f"{name}: no stored writing of {self.model_name} for sample '{sample.id}' "
                f"({task} in {location})"
            )
        return stored[str(sample.id)]

    def _stored(self, location: str, task: str) -> dict[str, str]:
        if (location, task) not in self._writings:
            if location not in self._sources:
                self._sources[location] = open_source(location)
            source = self._sources[location]
            self._writings[location, task] = source.generations(task, self.model_name)
        return self._writings[location, task]
