"""Where every corpus text ended up: in one benchmark item, or rejected at one step with
the reason. Nothing is dropped without a record, and `check_complete` refuses a build
in which a text is in both places or in neither.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from howtobench.construct.corpus import CorpusText
from howtobench.construct.deidentify import Replacement
from howtobench.construct.items import Item

__all__ = [
    "BELOW_THRESHOLD",
    "DUPLICATE",
    "FLAGGED",
    "Ledger",
    "NO_REPLY",
    "NO_TASK",
    "OVER_CAP",
    "STEPS",
]

# The steps in the order a text meets them; the LLM steps are inspect tasks. The first
# asks no model: it drops a corpus's second copies of a text before any call is paid.
STEPS: tuple[str, ...] = (
    "deduplicate",
    "classify",
    "quality",
    "per_genre",
    "assign",
    "backconstruct",
    "screen",
)
# Why a text was left out, by step.
DUPLICATE = "duplicate"  # the same text as an earlier one, once normalised (`duplicate_of`)
NO_REPLY = "no_usable_reply"  # the model's replies stayed unusable, or the text was not sent
BELOW_THRESHOLD = "below_threshold"
OVER_CAP = "over_genre_cap"
NO_TASK = "no_fitting_task"
FLAGGED = "flagged"  # unsafe content or advertising (personal details are de-identified)


@dataclass(frozen=True)
class Rejection:
    """A text left out: at which step, a short code, the reason in words, and details."""

    text: CorpusText
    step: str
    code: str
    reason: str
    detail: dict[str, Any] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """A line of `rejected.jsonl`."""
        return {
            "id": self.text.id,
            "line": self.text.line,
            "source": self.text.source,
            "genre": self.text.genre_raw,
            "language": self.text.language,
            "step": self.step,
            "code": self.code,
            "reason": self.reason,
            **self.detail,
        }


class Ledger:
    """The fate of every text of a corpus, and what else the report tabulates."""

    def __init__(self, texts: Iterable[CorpusText]) -> None:
        self.texts: dict[str, CorpusText] = {t.id: t for t in texts}
        self.rejected: dict[str, Rejection] = {}
        self.items: dict[str, Item] = {}  # by text id
        self.quality: dict[str, int] = {}  # the filter's score by text id
        # near-duplicate pairs of kept texts, (first, second, ratio): reported, not rejected
        self.near: list[tuple[CorpusText, CorpusText, float]] = []
        # the personal details replaced in a kept item, by text id (kinds and counts only)
        self.deidentified: dict[str, list[Replacement]] = {}

    def reject(self, text: CorpusText, step: str, code: str, reason: str, **detail: Any) -> None:
        self.rejected[text.id] = Rejection(text, step, code, reason, detail)

    def keep(self, item: Item, replaced: list[Replacement] | None = None) -> None:
        self.items[item.text.id] = item
        if replaced:
            self.deidentified[item.text.id] = replaced

    def live(self, texts: Iterable[CorpusText]) -> list[CorpusText]:
        """The texts not rejected so far."""
        return [t for t in texts if t.id not in self.rejected]

    def check_complete(self) -> None:
        """Every corpus text is in exactly one place: an item or the rejected list."""
        both = self.items.keys() & self.rejected.keys()
        neither = self.texts.keys() - self.items.keys() - self.rejected.keys()
        if both or neither:
            raise RuntimeError(
                f"build accounting is broken: in an item and rejected: {sorted(both)[:5]}; "
                f"in neither: {sorted(neither)[:5]}"
            )
