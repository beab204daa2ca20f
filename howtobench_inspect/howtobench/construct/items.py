"""Benchmark items made from kept texts, and the two formats they are written in: the
published `aligned.jsonl` record (plus `language`) and the package's own JSONL. An
item's `infer_id` is `<task>-<text id>`, stable across reruns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from howtobench.construct.completion import Gap, cut
from howtobench.construct.corpus import CorpusText
from howtobench.construct.prompts import build_prompt, genre_sections

__all__ = ["Item", "completion_item", "constructed_item"]


@dataclass(frozen=True)
class Item:
    """One benchmark item and the corpus text it was made from."""

    task: str
    text: CorpusText
    instruction: str
    grounding: str
    reference: str

    @property
    def infer_id(self) -> str:
        return f"{self.task}-{self.text.id}"

    def aligned(self) -> dict[str, Any]:
        """The published `aligned.jsonl` record, plus `language`."""
        return {
            "infer_id": self.infer_id,
            "bench_id": self.text.id,
            "task_type": self.task,
            "sub_task": self.text.genre_raw,
            "basic_instruction": self.instruction,
            "information": self.grounding,
            "reference": self.reference,
            "language": self.text.language,
        }

    def user_record(self) -> dict[str, Any]:
        """The package's own JSONL record (`-T dataset=items.jsonl`)."""
        return {
            "id": self.infer_id,
            "task": self.task,
            "genre": self.text.genre_raw,
            "language": self.text.language,
            "instruction": self.instruction,
            "grounding": self.grounding,
            "reference": self.reference,
        }


def completion_item(text: CorpusText, gap: Gap) -> Item:
    grounding, reference = cut(text.text, gap)
    instruction = build_prompt("instruction_completion", text.language)
    return Item("completion", text, instruction, grounding, reference)


def constructed_item(text: CorpusText, task: str, construction: dict[str, Any]) -> Item:
    """A guide or open item from the back-construction of `text` (its checked record)."""
    grounding = guide_grounding(text, construction) if task == "guide" else ""
    return Item(task, text, construction["instruction"], grounding, text.text)


def guide_grounding(text: CorpusText, construction: dict[str, Any]) -> str:
    """The sections, one `Title : text` line each, or the outline as `- ` lines, as the
    published groundings are."""
    sections: dict[str, Any] | None = construction.get("sections")
    if not sections:
        return "\n".join(f"- {point}" for point in construction["outline"])
    separator = " : " if text.language == "zh" else ": "
    titles = {t.id: t.title for t in genre_sections(text.genre, text.language, text.genre_raw)}
    return "\n".join(
        titles[section]
        + separator
        + ("\n".join(f"- {line}" for line in value) if isinstance(value, list) else value)
        for section, value in sections.items()
    )
