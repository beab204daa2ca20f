"""The vectorised bootstrap equals the coefficients of each resample written out in full."""

import numpy as np
import pytest
from scipy import stats

from howtobench.studies.bootstrap import Resampler, interval


def data(seed: int = 3) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """30 writings of 10 instructions by 3 models; integer scores, so with many ties."""
    rng = np.random.default_rng(seed)
    clusters = np.repeat([f"i{k}" for k in range(10)], 3)
    models = np.tile(["a", "b", "c"], 10)
    x = rng.integers(1, 6, 30).astype(float)
    y = x + rng.integers(-2, 3, 30)
    return x, y, clusters, models


def expanded(counts: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """Row indices of a resample in which instruction k appears counts[k] times."""
    names = list(dict.fromkeys(clusters))
    return np.concatenate(
        [
            np.flatnonzero(clusters == name)
            for name, c in zip(names, counts, strict=True)
            for _ in range(c)
        ]
    )


def scipy_three(x: np.ndarray, y: np.ndarray) -> list[float]:
    return [
        stats.pearsonr(x, y).statistic,
        stats.kendalltau(x, y).statistic,
        stats.spearmanr(x, y).statistic,
    ]


def test_sample_level_matches_the_expanded_resamples() -> None:
    x, y, clusters, _ = data()
    counts = np.random.default_rng(0).multinomial(10, np.full(10, 0.1), size=25)
    got = Resampler(x, y, clusters).coefficients(counts)
    for row, c in zip(got, counts, strict=True):
        rows = expanded(c, clusters)
        assert row == pytest.approx(scipy_three(x[rows], y[rows]))


def test_system_level_matches_model_means_of_the_expanded_resamples() -> None:
    x, y, clusters, models = data()
    models = np.where(np.arange(30) % 7 == 0, "d", models)  # four models, d on few writings
    counts = np.random.default_rng(1).multinomial(10, np.full(10, 0.1), size=25)
    got = Resampler(x, y, clusters, models).coefficients(counts)
    for row, c in zip(got, counts, strict=True):
        rows = expanded(c, clusters)
        names = sorted(set(models[rows]))
        mx = [x[rows][models[rows] == m].mean() for m in names]
        my = [y[rows][models[rows] == m].mean() for m in names]
        assert row == pytest.approx(scipy_three(np.array(mx), np.array(my)), nan_ok=True)


def test_the_interval_is_seeded() -> None:
    x, y, clusters, _ = data()
    first = interval(x, y, clusters, resamples=300, seed=5)
    assert np.array_equal(first, interval(x, y, clusters, resamples=300, seed=5))
    assert not np.array_equal(first, interval(x, y, clusters, resamples=300, seed=6))
    assert np.all(first[:, 0] <= first[:, 1])
    assert np.isnan(interval(x, y, clusters, resamples=0, seed=5)).all()
    assert np.isnan(interval(x[:3], y[:3], clusters[:3], resamples=50, seed=5)).all()
