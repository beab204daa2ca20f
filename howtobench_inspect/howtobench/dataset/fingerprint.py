"""The published benchmark pinned by content, since its hub repository has no tags.

`datasets.load_dataset` reads the hub at `main`, which its owners may change at any time,
and a score compares only on the same items: so the hub source checks each task's
records against the fingerprint of the data published with the paper (the count, and one
hash over every record's id, instruction and reference in id order). A mismatch is
logged, not refused: the data may have been fixed on purpose.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

from howtobench.dataset.records import WritingRecord

__all__ = ["Fingerprint", "PUBLISHED", "difference", "fingerprint"]

# Separators that do not occur in the text: between the fields of a record, between records.
_FIELD, _RECORD = "\x1f", "\x1e"


@dataclass(frozen=True)
class Fingerprint:
    """How many records a task has, and the SHA-256 of their ids, instructions and references."""

    count: int
    sha256: str


def fingerprint(records: Iterable[WritingRecord]) -> Fingerprint:
    """The fingerprint of one task's records (any order)."""
    rows = sorted((r.id, r.instruction, r.reference) for r in records)
    text = "".join(_FIELD.join(row) + _RECORD for row in rows)
    return Fingerprint(len(rows), hashlib.sha256(text.encode("utf-8")).hexdigest())


# Computed once from the paper repository's data/ (commit efe51d9) with
# `fingerprint(open_source(<data folder>).records(task))` (`howtobench.dataset`); tests
# recompute them from that copy.
PUBLISHED: dict[str, Fingerprint] = {
    "completion": Fingerprint(
        379, "3f5d36e7deb713c00d7f6395ee9320df145d34c15b9d1fac36b7874e69cbf843"
    ),
    "guide": Fingerprint(456, "92e7a21be12ffd9a3ffe1b384e9286ebe178346edb2abf063f8cf2e7fa1b17dc"),
    "open": Fingerprint(467, "32e791cccc4dd9896a1132938ccbf2df8602e851c7168e56297f6746d154ea35"),
}


def difference(task: str, records: Iterable[WritingRecord]) -> str | None:
    """What differs between `records` and the published `task`, in a few words, or None."""
    expected = PUBLISHED[task]
    got = fingerprint(records)
    if got.count != expected.count:
        return f"{got.count} {task} records, the published benchmark has {expected.count}"
    if got.sha256 != expected.sha256:
        return (
            f"the {got.count} {task} records differ from the published ones in ids, instructions "
            f"or references (content hash {got.sha256[:12]}, published {expected.sha256[:12]})"
        )
    return None
