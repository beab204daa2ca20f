"""The materials a judge reads about one writing, taken from an inspect sample.

Works on our tasks and on any task whose samples carry `instruction`, `grounding`,
`reference` and `genre` metadata (`task` and `language` are optional).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.model import ChatMessageUser, ContentText
from inspect_ai.scorer import Target
from inspect_ai.solver import TaskState

from howtobench.judge.defaults import LONGEST_WRITING
from howtobench.vocabulary.genres import DEFAULT_GENRE
from howtobench.vocabulary.metadata import SampleKey, ScoreKey
from howtobench.vocabulary.templates import render
from howtobench.vocabulary.words import TASKS, detect_language

__all__ = ["FENCE_END", "JudgeInput", "PROMPTS", "clean_text", "fence", "judge_question"]

PROMPTS = Path(__file__).parent / "prompts"
FENCE_END = "</writing>"
# Anything a judge could read as the closing fence: any case, spaces inside the tag.
_FENCE_LIKE = re.compile(r"<\s*/\s*writing\s*>", re.IGNORECASE)
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")
# Unicode's control characters (category Cc: C0, DEL and C1) other than tab and line breaks
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def clean_text(text: str) -> tuple[str, dict[str, int]]:
    """Text every judge request can carry: lone surrogates (which cannot be encoded as
    UTF-8, so the request would fail) become U+FFFD, and control characters other than
    tab and line breaks are dropped. Returns the counts of what was changed."""
    cleaned, surrogates = _LONE_SURROGATE.subn("\ufffd", text)
    kept, controls = _CONTROL.subn("", cleaned)
    changes = {"lone_surrogates": surrogates, "control_characters": controls}
    return kept, {k: v for k, v in changes.items() if v}


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
    cleaned: dict[str, int] = field(default_factory=dict)  # what `clean_text` changed
    # the framing the judges get (the paper's code sends neither): the task-type and
    # genre lines of the task block, and the negotiator's and the experts' system prompts
    # (`tree.negotiator.negotiator_messages`, `tree.experts.expert_messages`)
    genre_line: bool = True
    judge_system: bool = True

    @classmethod
    def from_state(cls, state: TaskState, target: Target, task: str | None = None) -> JudgeInput:
        meta = state.metadata
        instruction = meta.get(SampleKey.INSTRUCTION) or state.input_text
        grounding = meta.get(SampleKey.GROUNDING) or ""
        task = task or meta.get(SampleKey.TASK) or ("guide" if grounding else "open")
        if task not in TASKS:
            raise ValueError(f"unknown task type '{task}' (expected one of {', '.join(TASKS)})")
        writing, cleaned = clean_text(state.output.completion)
        reference = clean_text(meta.get(SampleKey.REFERENCE) or target.text)[0]
        anchor_source = meta.get(SampleKey.ANCHOR_SOURCE) or "human"
        return cls(
            task=task,
            genre=meta.get(SampleKey.GENRE) or DEFAULT_GENRE,
            genre_raw=meta.get(SampleKey.GENRE_RAW) or "",
            language=meta.get(SampleKey.LANGUAGE) or detect_language(instruction + grounding),
            instruction=clean_text(instruction)[0],
            grounding=clean_text(grounding)[0],
            reference=reference,
            writing=writing,
            anchor=reference
            if anchor_source == "human"
            else clean_text(meta.get(SampleKey.ANCHOR) or "")[0],
            anchor_source=anchor_source,
            cleaned=cleaned,
        )

    def anchor_seen(self, with_anchor: bool) -> str:
        """What the judges were shown as an anchor, for the metadata: `human`, a model's
        name, or `none` with why (turned off, no reference in the record, empty anchor)."""
        if not with_anchor:
            return "none"
        if not self.anchor.strip():
            return (
                "none (the record has no reference)"
                if self.anchor_source == "human"
                else f"none ({self.anchor_source}'s anchor writing is empty)"
            )
        return self.anchor_source

    def seen(self, with_anchor: bool) -> dict[str, Any]:
        """What every judge score records about its input: the anchor the judges saw, and
        what cleaning changed in the writing (when anything)."""
        record: dict[str, Any] = {ScoreKey.ANCHOR: self.anchor_seen(with_anchor)}
        if self.cleaned:
            record[ScoreKey.WRITING_CLEANED] = self.cleaned
        return record

    @property
    def too_long(self) -> str | None:
        """Why the writing is not sent to a judge, when it is longer than `LONGEST_WRITING`."""
        if len(self.writing) <= LONGEST_WRITING:
            return None
        return (
            f"the writing has {len(self.writing):,} characters, more than the "
            f"{LONGEST_WRITING:,} a judge is sent; it was not judged"
        )

    def task_block(self) -> str:
        """Task type and genre (without `genre_line`: neither, as in the paper's code),
        instruction and grounding: what the negotiator sees too."""
        grounding = ""
        if self.grounding.strip():
            grounding = render(
                PROMPTS, f"grounding_{self.task}", self.language, grounding=self.grounding.strip()
            )
        task = render(PROMPTS, f"about_{self.task}", self.language).strip()
        genre = self.genre
        if self.genre_raw and self.genre_raw != self.genre:  # the record's own word beside it
            genre = f"{self.genre} ({self.genre_raw})"
        lines = {
            "task_line": render(PROMPTS, "task_line", self.language, task=task),
            "genre_line": render(PROMPTS, "genre_line", self.language, genre=genre),
        }
        return render(
            PROMPTS,
            "task",
            self.language,
            **{name: line if self.genre_line else "" for name, line in lines.items()},
            instruction=self.instruction.strip(),
            grounding=grounding,
        ).strip()

    def materials(self, with_anchor: bool) -> str:
        """Everything a judge reads about this writing, fenced, the same for all its criteria.

        With `with_anchor`, the anchor text is shown as the reference writing, whoever
        wrote it: appendix B.3 swaps a model's writing in for the human reference and
        changes nothing else, so the judges are told the same about both.
        """
        anchor = ""
        if with_anchor and self.anchor.strip():
            anchor = render(PROMPTS, "reference", self.language, reference=self.anchor.strip())
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
    """The writing between data fences; anything inside it that a judge could take for
    the closing fence (`</WRITING>`, `< / writing >`) is defused with full-width brackets."""
    return f"<writing>\n{_FENCE_LIKE.sub('＜/writing＞', writing)}\n{FENCE_END}"
