"""Pearson, Kendall (tau-b) and Spearman with their two-sided p-values.

Fewer than three pairs, or a side without variation, gives NaN rather than a number
that means nothing (two points always correlate perfectly).
"""

from __future__ import annotations

import warnings

import numpy as np

__all__ = ["METHODS", "MIN_PAIRS", "correlate"]

METHODS: tuple[str, ...] = ("pearson", "kendall", "spearman")
MIN_PAIRS = 3


def correlate(x: np.ndarray, y: np.ndarray) -> dict[str, float]:
    """`<method>` and `<method>_p` (two-sided) for the three methods."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if not (len(x) >= MIN_PAIRS and np.ptp(x) > 0 and np.ptp(y) > 0):  # NaN: unusable too
        return {k: np.nan for m in METHODS for k in (m, f"{m}_p")}
    # scipy (the studies extra) here: the rating studio reads `MIN_PAIRS` and no p-value
    from scipy import stats

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = [stats.pearsonr(x, y), stats.kendalltau(x, y), stats.spearmanr(x, y)]
    return {
        key: float(value)
        for method, result in zip(METHODS, results, strict=True)
        for key, value in ((method, result.statistic), (f"{method}_p", result.pvalue))
    }
