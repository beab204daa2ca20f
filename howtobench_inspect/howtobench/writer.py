"""The writer side of a task: the prompt a model writes from, and replay of stored writings."""

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from inspect_ai.model import ChatMessageAssistant, ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from howtobench.dataset import WritingRecord
from howtobench.metadata import SampleKey
from howtobench.templates import render

PROMPTS = Path(__file__).parent / "prompts"


def writer_prompt(record: WritingRecord) -> str:
    """The task's writer prompt, in the language of the record (Chinese for HoWToBench)."""
    return render(
        PROMPTS,
        f"writer_{record.task}",
        record.language,
        instruction=record.instruction.strip(),
        grounding=record.grounding.strip(),
    )


@dataclass(frozen=True)
class StoredWritings:
    """One model's stored writings by sample id.

    Not a dict on purpose: inspect records a solver's arguments in the log header, and
    for an object it records only its `name`, so a replay log carries one line here
    instead of every stored writing of the data source.
    """

    model: str
    texts: Mapping[str, str]

    @property
    def name(self) -> str:
        return f"{len(self.texts)} stored writings of {self.model}"


@solver
def replay(writings: StoredWritings) -> Solver:
    """Answer each sample with a model's stored writing instead of calling a model.

    An empty stored writing is kept (and scored as empty), never dropped.
    """
    model = writings.model

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        text = writings.texts[str(state.sample_id)]
        state.output = ModelOutput.from_content(model=model, content=text)
        state.messages.append(ChatMessageAssistant(content=text, model=model))
        state.metadata[SampleKey.WRITER] = model
        return state

    return solve


def writer(stored: StoredWritings | None = None) -> Solver:
    """Replay stored writings when given, else generate with the evaluated model."""
    return replay(stored) if stored is not None else generate()
