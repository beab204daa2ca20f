"""The writer side of a task: the prompt a model writes from, and replay of stored writings."""

from pathlib import Path

from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver

from howtobench.dataset import WritingRecord
from howtobench.templates import render
from howtobench.vocabulary import replay_model

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
def replay(writer: str) -> Solver:
    """The old form of replay (`-T replay=<writer>`): ask the writer's replay model
    (`replay/<writer>`, howtobench/replay.py) instead of the evaluated one, so that both
    forms answer from one lookup. An empty stored writing is kept (and scored as empty)."""
    name = replay_model(writer)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.output = await get_model(name).generate(state.messages)
        state.messages.append(state.output.message)
        return state

    return solve


def writer(replayed: str | None = None) -> Solver:
    """Ask the `-T replay=` writer's stored writings when given, else the evaluated model
    (a live writer, or `--model replay/<writer>`)."""
    return replay(replayed) if replayed is not None else generate()
