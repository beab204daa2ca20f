"""The completion rule: which paragraphs are cut out, seeded, and the round trip: the
grounding with the reference put back at the marker is the original text."""

from __future__ import annotations

import random

import pytest
from build_support import DEMO_CORPUS, restored

from howtobench.construct.completion import (
    MAX_GAP,
    Gap,
    choose_gap,
    cut,
    gap_size,
    paragraphs,
)
from howtobench.construct.corpus import read_corpus
from howtobench.vocabulary.words import FILL_MARKER


def _random_text(rng: random.Random, count: int) -> str:
    """Paragraphs of random length and indentation, separated by blank lines of random
    whitespace, with stray spaces at both ends."""
    words = ["河水", "秋天", "the", "city", "灯", "light", "，", "。", "walks"]
    parts = []
    for _ in range(count):
        body = "".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
        parts.append(rng.choice(["", "　　", "  "]) + body)
    separators = ["\n\n", "\n \n", "\r\n\r\n", "\n\n\n", "\n\t\n  "]
    text = parts[0]
    for part in parts[1:]:
        text += rng.choice(separators) + part
    return rng.choice(["", " ", "\n"]) + text + rng.choice(["", "\n", "  \n"])


@pytest.mark.parametrize("seed", range(40))
def test_round_trip_and_the_rule_on_random_texts(seed: int) -> None:
    rng = random.Random(seed)
    text = _random_text(rng, rng.randint(3, 80))
    gap = choose_gap(text, seed, f"t{seed}")
    if isinstance(gap, str):  # no run qualified: said why, nothing cut
        assert "paragraph" in gap
        return
    grounding, reference = cut(text, gap)
    assert restored(grounding, reference) == text
    assert grounding.count(FILL_MARKER) == 1 and reference.strip() == reference != ""
    spans = paragraphs(text)
    assert 1 <= gap.first and gap.first + gap.count <= len(spans) - 1  # never first or last
    assert gap.count == gap_size(len(spans)) <= MAX_GAP


def test_every_demo_text_that_fits_round_trips_for_several_seeds() -> None:
    fitting = 0
    for text in read_corpus(DEMO_CORPUS):
        for seed in range(5):
            gap = choose_gap(text.text, seed, text.id)
            if isinstance(gap, Gap):
                fitting += 1
                assert restored(*cut(text.text, gap)) == text.text
    assert fitting >= 5 * 18  # all but the two one-paragraph texts (and one more at most)


def test_paragraphs_follow_blank_lines_else_line_breaks() -> None:
    stanzas = "第一行\n第二行\n\n第三行\n第四行\n\n第五行"
    assert [stanzas[a:b] for a, b in paragraphs(stanzas)] == [
        "第一行\n第二行",
        "第三行\n第四行",
        "第五行",
    ]
    lines = "  第一段。\n第二段。\n\t第三段。 "
    assert [lines[a:b] for a, b in paragraphs(lines)] == ["第一段。", "第二段。", "第三段。"]


def test_sizes_ten_paragraphs_at_most_and_a_sixth_of_the_text() -> None:
    assert [gap_size(n) for n in (3, 8, 9, 30, 60, 200)] == [1, 1, 2, 5, 10, 10]


def test_a_heading_never_begins_or_ends_the_gap() -> None:
    body = "这一段的内容足够长，足以作为补写的对象。"
    text = "\n\n".join(["标题", body, "一", body, "二", body, "三", body])
    for seed in range(30):
        gap = choose_gap(text, seed, "x")
        assert isinstance(gap, Gap)
        assert text[gap.start : gap.end] == body


def test_the_gap_is_seeded_and_the_seed_matters() -> None:
    text = "\n\n".join(f"第{i}段的内容，长度都差不多。" for i in range(20))
    assert choose_gap(text, 7, "a") == choose_gap(text, 7, "a")
    assert len({choose_gap(text, seed, "a") for seed in range(20)}) > 1
    assert len({choose_gap(text, 7, name) for name in "abcdefghij"}) > 1


def test_a_text_too_short_is_refused_with_why() -> None:
    assert choose_gap("第一段。\n\n第二段。", 0, "x") == (
        "2 paragraph(s): a completion item needs at least 3"
    )
