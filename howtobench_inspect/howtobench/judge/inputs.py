"""The materials a judge reads about one writing, taken from an inspect sample.

Works on our tasks and on any task whose samples carry `instruction`, `grounding`,
`reference` and `genre` metadata (`task` and `language` are optional).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inspect_ai.model import ChatMessageUser, ContentText
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
    anchor: str  # the text judges compare with: the human reference, or a model's writing
    anchor_source: str  # "human", or the name of the model that wrote the anchor

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
            anchor=meta.get("anchor") or meta.get("reference") or target.text,
            anchor_source=meta.get("anchor_source") or "human",
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

    def materials(self, with_anchor: bool) -> str:
        """Everything a judge reads about this writing, fenced, the same for all its criteria.

        With `with_anchor`, the anchor text is shown: a human reference as a good answer,
        a model's writing as an average one (the paper's appendix B.3).
        """
        anchor = ""
        if with_anchor and self.anchor.strip():
            name = "reference" if self.anchor_source == "human" else "reference_model"
            anchor = render(PROMPTS, name, self.language, reference=self.anchor.strip())
        return render(
            PROMPTS,
            "materials",
            self.language,
            task=self.task_block(),
            reference=anchor,
            writing=fence(self.writing),
        )


def judge_question(materials: str, question: str) -> ChatMessageUser:
    """The shared materials, marked as a prompt-cache boundary, then what this call asks.

    A writing's calls differ only after the mark, so providers with prompt caching
    (Anthropic, newer OpenAI models) bill the long shared prefix at the cached rate.
    """
    return ChatMessageUser(
        content=[ContentText(text=materials, cache_breakpoint=True), ContentText(text=question)]
    )


def fence(writing: str) -> str:
    """The writing between data fences; a closing fence inside it is defused."""
    return f"<writing>\n{writing.replace(FENCE_END, '</ writing>')}\n{FENCE_END}"
