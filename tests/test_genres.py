"""The raw-label to canonical-genre mapping."""

import json
from pathlib import Path

from howtobench.genres import CANONICAL_GENRES, RAW_TO_CANONICAL, canonical_genre


def test_twelve_canonical_genres_all_reached() -> None:
    assert len(CANONICAL_GENRES) == 12
    assert set(RAW_TO_CANONICAL.values()) == set(CANONICAL_GENRES)


def test_mapping_examples() -> None:
    assert canonical_genre("议论文") == "argumentative"
    assert canonical_genre("文章") == "comment"
    assert canonical_genre("纪实") == "prose"
    assert canonical_genre("公文") == "others"
    assert canonical_genre("实习报告") == "report"
    assert canonical_genre("教案") == "plan"
    assert canonical_genre(" Poem ") == "poem"
    assert canonical_genre("") == "others"
    assert canonical_genre("blog post") == "blog post"


def test_every_published_label_is_mapped(shared_data: Path) -> None:
    labels = {
        json.loads(line)["sub_task"]
        for task in ("completion", "guide", "open")
        for line in (shared_data / task / "aligned.jsonl").open(encoding="utf-8")
    }
    assert len(labels) == 21
    assert labels == set(RAW_TO_CANONICAL)
