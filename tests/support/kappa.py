"""Cohen's kappa worked as the textbook writes it, to check the package's against (the
studies' rater agreement, the studio's summary): a loop over the pairs, no shared code."""

from __future__ import annotations

import numpy as np


def kappa_by_hand(a: list[int], b: list[int], categories: list[int], quadratic: bool) -> float:
    """1 - sum(w * observed) / sum(w * expected) over the confusion matrix, with w the
    squared distance in points (quadratic) or 1 off the diagonal (Cohen's plain kappa)."""
    k = len(categories)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[categories.index(x), categories.index(y)] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    weights = np.array(
        [[(x - y) ** 2 if quadratic else float(x != y) for y in categories] for x in categories]
    )
    return float(1 - (weights * observed).sum() / (weights * expected).sum())
