"""The writer side of a task: the prompt a model writes from, and replay of stored writings."""

from pathlib import Path

from inspect_ai.model import ChatMessageAssistant, ModelOutput
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from howtobench.dataset import WritingRecord
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


@solver
def replay(generations: dict[str, str], model: str) -> Solver:
    """Answer each sample with `model`'s stored writing instead of calling a model.

    An empty stored writing is kept (and scored as empty), never dropped.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        text = generations[str(state.sample_id)]
        state.output = ModelOutput.from_content(model=model, content=text)
        state.messages.append(ChatMessageAssistant(content=text, model=model))
        state.metadata["writer"] = model
        return state

    return solve


def writer(generations: dict[str, str] | None = None, model: str | None = None) -> Solver:
    """Replay `model`'s stored writings when given, else generate with the evaluated model."""
    if generations is not None and model is not None:
        return replay(generations, model)
    return generate()
