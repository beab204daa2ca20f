"""The writer side of a task: the prompt a model writes from, its generation settings,
and the writing the judges read (`final_writing`). The writer is the evaluated model: a
live one, or the stored writings of `--model replay/<writer>` (howtobench/writing/replay.py)."""

from pathlib import Path

from inspect_ai.model import ContentReasoning, ContentText
from inspect_ai.solver import Generate, Solver, TaskState, solver

from howtobench.dataset.records import WritingRecord
from howtobench.vocabulary.metadata import SampleKey
from howtobench.vocabulary.templates import render
from howtobench.writing.state import CUT, DEFAULT_ARTIFACTS, DEFAULT_CUT, examine

__all__ = ["PROMPTS", "WRITER_MAX_TOKENS", "final_writing", "writer_prompt"]

PROMPTS = Path(__file__).parent / "prompts"

# A live writer's length limit when the command line sets none (`--max-tokens` overrides
# it). The longest writing the benchmark asks for is its longest reference, 10,423
# characters, which Qwen2.5's tokenizer counts as 6,303 tokens (0.55-0.76 a character
# over the longest references); a tokenizer twice as costly on Chinese still fits, and a
# reasoning model whose trace counts against the limit keeps about 10,000 tokens for it
# beside a typical 2,000-character writing. Without a limit a local server may write for
# tens of minutes, and an API's own default cuts a long essay short.
WRITER_MAX_TOKENS = 16_384


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
def final_writing(cut: str = DEFAULT_CUT, artifacts: str = DEFAULT_ARTIFACTS) -> Solver:
    """Make the writer's reply the writing every scorer reads, and record its state.

    `state.examine` reads the reply (docs/data.md, "The writing the judges read") and the
    sample records its `WritingState` (`SampleKey.WRITING`); with `cut="unscored"` a cut
    writing is marked unscorable. The writer's message stays as it was sent: the log keeps
    what the writer really said.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        output = state.output
        message = output.message if output.choices else None
        parts = [] if message is None or isinstance(message.content, str) else message.content
        writing, found = examine(
            output.completion,
            output.stop_reason,
            str(state.metadata.get(SampleKey.TASK, "")),
            artifacts=artifacts,
            provider_reasoning="\n".join(
                part.reasoning for part in parts if isinstance(part, ContentReasoning)
            ),
            provider_refusal=any(isinstance(p, ContentText) and p.refusal for p in parts),
        )
        output.completion = writing
        state.metadata[SampleKey.WRITING] = found.record()
        if found.state == CUT and cut == "unscored":
            state.metadata[SampleKey.UNSCORABLE] = (
                f"{found.note} Left unscored (-T cut=unscored); raise the writer's limit with "
                "--max-tokens, or score it as written with -T cut=scored"
            )
        return state

    return solve
