"""The corpus's duplicates, found before any model is asked, so that no paid call is spent
on a text the benchmark already has. Near-duplicates are reported and kept: a retelling
is not a copy, and only a person can say which to drop.
"""

from __future__ import annotations

import sys
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from rapidfuzz import fuzz

from howtobench.construct.corpus import CorpusText

if TYPE_CHECKING:
    import numpy as np
    from scipy import sparse

__all__ = ["NEAR_DUPLICATE", "Duplicates", "find_duplicates", "near_duplicates", "normalised"]

NEAR_DUPLICATE = 90.0  # `fuzz.ratio` of two normalised texts from which they are reported
_Q = 3  # the q-grams of the candidate filter (`_candidates`)
_BLOCK = 256  # texts compared at once with their length window
_BUCKETS = 23  # 2**23 hashed q-gram columns (`_qgram_matrix`)
_CELLS = 1 << 22  # at most this many pairs in one block's product (32 MB as float64)


@cache
def _dropped() -> np.ndarray:
    """What `normalised` drops, as a table over all of Unicode: whitespace, punctuation
    (P*) and format characters (Cf: zero-width spaces, soft hyphens, a stray BOM). A numpy
    mask over the code points is some twenty times faster than `re.sub` or `str.translate`
    on Chinese text."""
    import numpy as np  # here, as in the other users: loading the tasks must not load numpy

    table = np.zeros(sys.maxunicode + 1, dtype=bool)
    for code in range(sys.maxunicode + 1):
        char = chr(code)
        category = unicodedata.category(char)
        table[code] = char.isspace() or category[0] == "P" or category == "Cf"
    return table


def normalised(text: str) -> str:
    """The text as duplicates are compared: without whitespace, punctuation and format
    characters, in NFKC, case-folded, and again without what NFKC made punctuation (`⒈`
    is `1.`). Dropping first keeps it fast: NFKC is slow on full-width punctuation, and
    with it gone most texts are NFKC already."""
    kept = _drop(text)
    if not unicodedata.is_normalized("NFKC", kept):
        kept = unicodedata.normalize("NFKC", kept)
    return _drop(kept.casefold())


def _drop(text: str) -> str:
    import numpy as np

    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
    return str(codes[~_dropped()[codes]].tobytes().decode("utf-32-le"))


@dataclass(frozen=True)
class Duplicates:
    """The texts to keep, each dropped copy with the kept text it repeats, and the
    near-duplicate pairs among the kept texts, all in corpus order."""

    kept: list[CorpusText]
    copies: list[tuple[CorpusText, CorpusText]] = field(default_factory=list)
    near: list[tuple[CorpusText, CorpusText, float]] = field(default_factory=list)


def find_duplicates(texts: Sequence[CorpusText], threshold: float = NEAR_DUPLICATE) -> Duplicates:
    """Texts equal once `normalised` are one (one that normalises to nothing is compared
    as written): the first is kept. Kept pairs with a `fuzz.ratio` of at least
    `threshold` are near-duplicates."""
    first: dict[str, CorpusText] = {}
    forms: list[str] = []
    kept: list[CorpusText] = []
    copies: list[tuple[CorpusText, CorpusText]] = []
    for text in texts:
        form = normalised(text.text)
        key = form or "\0" + text.text  # never equal to a non-empty normalised form
        if key in first:
            copies.append((text, first[key]))
            continue
        first[key] = text
        kept.append(text)
        forms.append(form)
    near = [(kept[i], kept[j], score) for i, j, score in near_duplicates(forms, threshold)]
    return Duplicates(kept, copies, near)


def near_duplicates(
    forms: Sequence[str], threshold: float = NEAR_DUPLICATE
) -> list[tuple[int, int, float]]:
    """Every pair `(i, j, ratio)`, i < j, of `forms` with `fuzz.ratio >= threshold` (empty
    forms are left out), in order. Checking every pair with rapidfuzz would take hours
    on 10,000 texts of a thousand characters (about 47 microseconds a pair); two filters
    that cannot drop a pair that reaches the threshold leave few pairs to check:

    - lengths: `ratio` is at most `200 * shorter / (shorter + longer)`, so only texts
      whose lengths are within `threshold / (200 - threshold)` (9/11 at 90) are compared;
    - shared q-grams: `ratio >= threshold` means at most `d = (1 - threshold / 100) *
      (la + lb)` insertions and deletions, each of which destroys at most q of the
      q-grams (Ukkonen's q-gram lemma), so the two share at least `max(la, lb) - q + 1 -
      q * d` q-grams (counted as a multiset). The shared count is at most the dot product
      of the square roots of the q-gram counts (`min(x, y) <= sqrt(x * y)`), which
      sparse matrix products give for a whole block of texts at once.
    """
    order = [i for i in sorted(range(len(forms)), key=lambda i: len(forms[i])) if forms[i]]
    if len(order) < 2:
        return []
    import numpy as np

    ordered = [forms[i] for i in order]
    lengths = np.array([len(f) for f in ordered], dtype=np.int64)
    grams = _qgram_matrix(ordered)
    keep = threshold / (200.0 - threshold)  # shorter / longer at least this
    slack = 1.0 - threshold / 100.0
    found: list[tuple[int, int, float]] = []
    start = 0
    while start < len(ordered):
        stop = min(start + _BLOCK, len(ordered))
        # the window: every text not shorter than the block's first, and not too long
        # for the block's longest (lengths are sorted); fewer rows when it is wide
        end = int(np.searchsorted(lengths, lengths[stop - 1] / keep, side="right"))
        if (stop - start) * (end - start) > _CELLS:
            stop = start + max(1, _CELLS // (end - start))
            end = int(np.searchsorted(lengths, lengths[stop - 1] / keep, side="right"))
        shared = (grams[start:stop] @ grams[start:end].T).toarray()
        la = lengths[start:stop, None]
        lb = lengths[None, start:end]
        longer = np.maximum(la, lb)
        edits = np.floor(slack * (la + lb) + 1e-9)
        need = longer - _Q + 1 - _Q * edits
        rows = np.arange(start, stop)[:, None]
        cols = np.arange(start, end)[None, :]
        maybe = (
            (cols > rows) & (np.minimum(la, lb) >= keep * longer - 1e-9) & (shared >= need - 1e-6)
        )
        for r, c in zip(*np.nonzero(maybe), strict=True):
            a, b = ordered[start + r], ordered[start + c]
            score = fuzz.ratio(a, b, score_cutoff=threshold)
            if score:
                i, j = sorted((order[start + r], order[start + c]))
                found.append((i, j, round(score, 1)))
        start = stop
    return sorted(found)


def _qgram_matrix(forms: Sequence[str]) -> sparse.csr_matrix:
    """One row per form: the square roots of its q-gram counts (a form shorter than q
    counts as its one q-gram), made with numpy, not a Python loop over every q-gram. A
    q-gram's column is a hash of its code points (21 bits each, packed into 64), in
    `2**_BUCKETS` columns: two q-grams that share a column only raise a pair's product
    (`sqrt(x1 + x2) * sqrt(y1 + y2) >= sqrt(x1 * y1) + sqrt(x2 * y2)`), so the filter
    stays safe, and hashing is much faster than sorting the q-grams into a vocabulary."""
    import numpy as np
    from scipy import sparse  # here: loading the tasks must not load scipy

    keys: list[np.ndarray] = []
    for form in forms:
        codes = np.frombuffer(form.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
        if len(codes) < _Q:
            codes = np.concatenate([codes, np.full(_Q - len(codes), 0x1FFFFF, np.uint64)])
        key = codes[: len(codes) - _Q + 1].copy()
        for shift in range(1, _Q):
            key = (key << np.uint64(21)) | codes[shift : len(codes) - _Q + 1 + shift]
        keys.append(key)
    rows = np.repeat(np.arange(len(forms)), [len(k) for k in keys])
    # Fibonacci hashing: the top bits of the key times 2**64 / golden ratio
    columns = (np.concatenate(keys) * np.uint64(0x9E3779B97F4A7C15)) >> np.uint64(64 - _BUCKETS)
    counts = sparse.coo_matrix(
        (np.ones(len(rows)), (rows, columns.astype(np.int64))), shape=(len(forms), 1 << _BUCKETS)
    ).tocsr()
    counts.sum_duplicates()
    # a q-gram of one text only adds nothing to any pair's product: its column goes, and
    # the others are numbered anew, so that the products' transposes stay small
    used = np.bincount(counts.indices, minlength=1 << _BUCKETS) >= 2
    shared = used[counts.indices]
    renumbered = (np.cumsum(used) - 1)[counts.indices[shared]]
    rows_start = np.concatenate([[0], np.cumsum(shared)])[counts.indptr]
    return sparse.csr_matrix(
        (np.sqrt(counts.data[shared]), renumbered, rows_start),
        shape=(len(forms), max(int(used.sum()), 1)),
    )
