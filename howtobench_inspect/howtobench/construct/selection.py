"""Which kept texts a build uses, and for which task: the per-genre cap and the task
assignment, both seeded. The paper does not say how its texts were shared among the
tasks; here every text goes to exactly one, so no writer sees a reference twice.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from howtobench.construct.completion import Gap
from howtobench.construct.corpus import CorpusText

__all__ = ["assign_tasks", "cap_per_genre"]


def _by_genre(texts: Sequence[CorpusText]) -> dict[str, list[CorpusText]]:
    groups: dict[str, list[CorpusText]] = defaultdict(list)
    for text in texts:
        groups[text.genre].append(text)
    return groups


def cap_per_genre(
    texts: Sequence[CorpusText], limit: int, seed: int
) -> tuple[list[CorpusText], list[CorpusText]]:
    """(kept, left out): at most `limit` texts of each genre, drawn at random (seeded per
    genre, so one genre's draw does not depend on another's texts)."""
    chosen: set[str] = set()
    for genre, group in _by_genre(texts).items():
        random.Random(f"{seed}/cap/{genre}").shuffle(group)
        chosen.update(t.id for t in group[:limit])
    return [t for t in texts if t.id in chosen], [t for t in texts if t.id not in chosen]


def assign_tasks(
    texts: Sequence[CorpusText],
    tasks: Sequence[str],
    seed: int,
    gaps: Mapping[str, Gap | str],
) -> tuple[dict[str, str], dict[str, str]]:
    """(task by text id, reason by text id for a text that fits none of `tasks`); `gaps`:
    each text's completion gap, or why it has none."""
    assigned: dict[str, str] = {}
    unfit: dict[str, str] = {}
    totals: Counter[str] = Counter()
    for genre, group in sorted(_by_genre(texts).items()):
        random.Random(f"{seed}/assign/{genre}").shuffle(group)
        counts: Counter[str] = Counter()
        for text in group:
            fitting = [t for t in tasks if t != "completion" or isinstance(gaps.get(text.id), Gap)]
            if not fitting:
                unfit[text.id] = f"only completion was asked for, and {gaps[text.id]}"
                continue
            task = min(fitting, key=lambda t: (counts[t], totals[t], tasks.index(t)))
            counts[task] += 1
            totals[task] += 1
            assigned[text.id] = task
    return assigned, unfit
