"""The raw-label to canonical-genre mapping, and how well it fits the paper's Table 4."""

import itertools
import json
import math
from collections import Counter
from pathlib import Path

from howtobench.vocabulary.genres import CANONICAL_GENRES, RAW_TO_CANONICAL, canonical_genre
from support.paper import TABLE4_ALL, TABLE4_GENRES

TASKS = ("completion", "guide", "open")
# The genres a reader could accept for each raw label that has more than one; the others
# have one (议论文 argumentative, 诗歌 poem, 散文 prose, 小说 fiction, ...).
PLAUSIBLE: dict[str, tuple[str, ...]] = {
    "文章": ("comment", "prose", "argumentative", "others"),
    "纪实": ("prose", "fiction", "report", "others"),
    "申请类写作": ("letters", "others", "report"),
    "总结类写作": ("report", "others"),
    "教案": ("plan", "others"),
    "公文": ("others", "report", "regulation", "letters", "speech", "plan"),
    "通知": ("others", "report", "regulation", "speech"),
    "文秘知识": ("others", "report"),
    "介绍说明": ("others", "comment", "report"),
}


def published_labels(shared_data: Path) -> Counter[str]:
    """Items per raw label over the three tasks of the published data."""
    return Counter(
        json.loads(line)["sub_task"]
        for task in TASKS
        for line in (shared_data / task / "aligned.jsonl").open(encoding="utf-8")
    )


def table4_rmse(genre_counts: Counter[str]) -> float:
    """RMSE over the 10 models between the item-weighted mean of Table 4's genre rows and
    its All row: zero, up to rounding, when the genres partition the items as the paper's did."""
    total = sum(genre_counts.values())
    errors = [
        sum(genre_counts[g] * TABLE4_GENRES[g][m] for g in genre_counts) / total - TABLE4_ALL[m]
        for m in range(len(TABLE4_ALL))
    ]
    return math.sqrt(sum(e * e for e in errors) / len(errors))


def test_twelve_canonical_genres_all_reached() -> None:
    assert len(CANONICAL_GENRES) == 12
    assert set(RAW_TO_CANONICAL.values()) == set(CANONICAL_GENRES)


def test_mapping_examples() -> None:
    assert canonical_genre("议论文") == "argumentative"
    assert canonical_genre("文章") == "comment"
    assert canonical_genre("纪实") == "fiction"
    assert canonical_genre("公文") == "report"
    assert canonical_genre("通知") == "others"
    assert canonical_genre("实习报告") == "report"
    assert canonical_genre("教案") == "plan"
    assert canonical_genre(" Poem ") == "poem"
    assert canonical_genre("") == "others"
    assert canonical_genre("blog post") == "blog post"


def test_every_published_label_is_mapped(shared_data: Path) -> None:
    labels = set(published_labels(shared_data))
    assert len(labels) == 21
    assert labels == set(RAW_TO_CANONICAL)


def test_genre_counts_of_the_published_data(shared_data: Path) -> None:
    counts = Counter()
    for raw, n in published_labels(shared_data).items():
        counts[canonical_genre(raw)] += n
    assert counts == {
        "argumentative": 393,
        "comment": 98,
        "poem": 63,
        "prose": 190,
        "fiction": 195,
        "letters": 68,
        "others": 10,
        "speech": 27,
        "report": 193,
        "contract": 14,
        "plan": 40,
        "regulation": 11,
    }


def test_mapping_fits_table4(shared_data: Path) -> None:
    """Table 4's genre rows, weighted by the items of each genre, must give its All row.

    Rounding to two decimals alone leaves an RMSE of about 0.003; our mapping leaves 0.017
    (docs/reproduction.md), where 公文 under `others` left 0.111.
    """
    labels = published_labels(shared_data)
    ours: Counter[str] = Counter()
    for raw, n in labels.items():
        ours[canonical_genre(raw)] += n
    assert set(ours) == set(CANONICAL_GENRES)  # every Table 4 row has items
    assert sum(ours.values()) == 1302
    assert table4_rmse(ours) < 0.02
    official_as_others = Counter()
    for raw, n in labels.items():
        official_as_others["others" if raw == "公文" else canonical_genre(raw)] += n
    assert table4_rmse(official_as_others) > 0.09


def test_no_plausible_mapping_fits_table4_clearly_better(shared_data: Path) -> None:
    """Every plausible mapping (27,648; 13,464 leave no Table 4 row empty): the best fits
    within 0.001 of ours (0.0157 against 0.0166), below the 0.003 of rounding, so no
    other choice is supported by Table 4."""
    labels = published_labels(shared_data)
    assert set(PLAUSIBLE) <= set(labels)
    fixed: Counter[str] = Counter()
    for raw, n in labels.items():
        if raw not in PLAUSIBLE:
            fixed[canonical_genre(raw)] += n
    ours = Counter(fixed)
    for raw in PLAUSIBLE:
        assert canonical_genre(raw) in PLAUSIBLE[raw], raw
        ours[canonical_genre(raw)] += labels[raw]
    best = math.inf
    for choice in itertools.product(*PLAUSIBLE.values()):
        counts = Counter(fixed)
        for raw, genre in zip(PLAUSIBLE, choice, strict=True):
            counts[genre] += labels[raw]
        if len(counts) == len(CANONICAL_GENRES):
            best = min(best, table4_rmse(counts))
    assert best > table4_rmse(ours) - 0.002
