"""Benchmark items made from kept texts, and the two formats they are written in.

An item is (instruction, grounding, reference) for one task, made from one corpus text:
- completion: the fixed instruction, the text with its gap marked, the gap
  (`howtobench.build.completion`);
- guide: an instruction from the back-constructed summary and theme, the outline and
  the writing requirements as grounding, the whole text as reference;
- open: the same instruction without the outline's sentence, no grounding.

`aligned` is the published `aligned.jsonl` record (what `-T dataset=DIR` reads), with
the text's `language` added (the published format has none: its data is Chinese, and a
record without the field is read as Chinese); `user_record` is the package's own JSONL
format. The item's `infer_id` is `<task>-<text id>`: stable across reruns, and
the key the rating studio's pick mode (the reference check) and the logs use.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from howtobench.build.completion import Gap, cut
from howtobench.build.corpus import CorpusText
from howtobench.build.prompts import build_prompt, genre_name, genre_traits

_ENDS = ("。", "！", "？", ".", "!", "?")


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


def _ended(sentence: str, language: str) -> str:
    """The summary with a closing mark, so the instruction reads on after it."""
    if sentence.endswith(_ENDS):
        return sentence
    return sentence + ("。" if language == "zh" else ".")


def constructed_item(text: CorpusText, task: str, construction: dict[str, Any]) -> Item:
    """A guide or open item from the back-construction of `text` (its checked record)."""
    language = text.language
    instruction = build_prompt(
        f"instruction_{task}",
        language,
        phrase=genre_name(text.genre, language).phrase,
        theme=construction["theme"],
        summary=_ended(construction["summary"], language),
    )
    grounding = guide_grounding(text, construction) if task == "guide" else ""
    return Item(task, text, instruction, grounding, text.text)


def guide_grounding(text: CorpusText, construction: dict[str, Any]) -> str:
    """The outline, then one requirement per genre trait, under the trait's title."""
    colon = "：" if text.language == "zh" else ": "
    titles = {t.id: t.title for t in genre_traits(text.genre, text.language, text.genre_raw)}
    requirements = construction["requirements"]
    return build_prompt(
        "grounding_guide",
        text.language,
        outline="\n".join(f"- {point}" for point in construction["outline"]),
        requirements="\n".join(
            f"- {titles.get(trait, trait)}{colon}{requirement}"
            for trait, requirement in requirements.items()
        ),
    )
