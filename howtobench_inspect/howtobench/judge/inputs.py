"""The materials a judge reads about one writing, taken from an inspect sample.

Works on our tasks and on any task whose samples carry `instruction`, `grounding`,
`reference` and `genre` metadata (`task` and `language` are optional).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

from howtobench.dataset import TASKS, detect_language
from howtobench.genres import DEFAULT_GENRE
from howtobench.templates import render

PROMPTS = Path(__file__).parent / "prompts"
FENCE_END = "</writing>"


@dataclass(frozen=True)
class JudgeInput:
    task: str
    genre: str
    genre_raw: str
    language: str
    instruction: str
    grounding: str
    reference: str
    writing: str

    @classmethod
    def from_state(cls, state: TaskState, target: Target, task: str | None = None) -> JudgeInput:
        meta = state.metadata
        instruction = meta.get("instruction") or state.input_text
        grounding = meta.get("grounding") or ""
        task = task or meta.get("task") or ("guide" if grounding else "open")
        if task not in TASKS:
            raise ValueError(f"unknown task type '{task}' (expected one of {', '.join(TASKS)})")
        return cls(
            task=task,
            genre=meta.get("genre") or DEFAULT_GENRE,
            genre_raw=meta.get("genre_raw") or "",
            language=meta.get("language") or detect_language(instruction + grounding),
            instruction=instruction,
            grounding=grounding,
            reference=meta.get("reference") or target.text,
            writing=state.output.completion,
        )

    @property
    def genre_label(self) -> str:
        if self.genre_raw and self.genre_raw != self.genre:
            return f"{self.genre} ({self.genre_raw})"
        return self.genre

    def task_block(self) -> str:
        """Task type, genre, instruction and grounding: what the negotiator sees too."""
        grounding = ""
        if self.grounding.strip():
            grounding = render(
                PROMPTS, f"grounding_{self.task}", self.language, grounding=self.grounding.strip()
            )
        return render(
            PROMPTS,
            "task",
            self.language,
            task=render(PROMPTS, f"about_{self.task}", self.language).strip(),
            genre=self.genre_label,
            instruction=self.instruction.strip(),
            grounding=grounding,
        ).strip()

    def materials(self, reference: str | None) -> str:
        """Everything a judge reads about this writing, fenced, the same for all its criteria.

        `reference` is the anchor text (None for reference-free judging).
        """
        anchor = ""
        if reference is not None and reference.strip():
            anchor = render(PROMPTS, "reference", self.language, reference=reference.strip())
        return render(
            PROMPTS,
            "materials",
            self.language,
            task=self.task_block(),
            reference=anchor,
            writing=fence(self.writing),
        )


def fence(writing: str) -> str:
    """The writing between data fences; a closing fence inside it is defused."""
    return f"<writing>\n{writing.replace(FENCE_END, '</ writing>')}\n{FENCE_END}"
