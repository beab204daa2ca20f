"""ROUGE-L and BLEU on hand-checked examples, and against the libraries the paper used."""

import math
import random
from pathlib import Path

import jieba
import pytest
from rouge_chinese import Rouge
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU

from howtobench.baselines.overlap import bleu, rouge_l_f1, tokenize
from howtobench.dataset import open_source


def test_tokenize_chinese_words_and_english_13a() -> None:
    assert tokenize("我爱北京天安门") == ("我", "爱", "北京", "天安门")
    assert tokenize("第一段。\n\n第二段。") == ("第一段", "。", "第二段", "。")
    assert tokenize("Hello, world!", "en") == ("Hello", ",", "world", "!")


def test_rouge_l_hand_checked() -> None:
    # LCS(a b c d, a c d e f) = a c d = 3 -> F1 = 2*3/(4+5)
    assert rouge_l_f1(tuple("abcd"), tuple("acdef")) == pytest.approx(6 / 9)
    # 我 爱 北京 天安门 vs 我 爱 北京: LCS 3 -> 2*3/(4+3)
    assert rouge_l_f1(tokenize("我爱北京天安门"), tokenize("我爱北京")) == pytest.approx(6 / 7)
    assert rouge_l_f1((), tuple("ab")) == 0.0
    assert rouge_l_f1(tuple("ab"), tuple("ab")) == 1.0


def test_bleu_1_with_brevity_penalty() -> None:
    # 2 of 4 unigrams match, writing longer than reference: no penalty.
    assert bleu(tuple("abcd"), tuple("abe"))[0] == pytest.approx(0.5)
    # all unigrams match, writing half as long: BP = exp(1 - 4/2).
    assert bleu(tuple("ab"), tuple("abcd"))[0] == pytest.approx(math.exp(-1))
    # no unigram matches at all: 0, as sacrebleu gives it
    assert bleu(tuple("xyz"), tuple("abc"))[0] == 0.0


def test_bleu_1_equals_a_separate_bleu_1_run() -> None:
    """BLEU-1 read off the BLEU-4 statistics must equal sacrebleu's own BLEU-1."""
    rng = random.Random(5)
    bleu_1 = BLEU(tokenize="none", max_ngram_order=1, effective_order=True)
    for _ in range(200):
        hypothesis = tuple(rng.choice("abcdefg") for _ in range(rng.randint(1, 12)))
        reference = tuple(rng.choice("abcdefg") for _ in range(rng.randint(1, 12)))
        expected = bleu_1.sentence_score(" ".join(hypothesis), [" ".join(reference)]).score / 100
        assert bleu(hypothesis, reference)[0] == pytest.approx(expected)


def test_bleu_4_plain_and_smoothed() -> None:
    # p1..p4 = 4/5, 3/4, 2/3, 1/2, same length.
    assert bleu(tuple("abcde"), tuple("abcdf"))[1] == pytest.approx(
        (0.8 * 0.75 * (2 / 3) * 0.5) ** 0.25
    )
    # p1 = 3/4, p2 = 1/3, no 3- or 4-gram match: smoothed to 1/(2*2) and 1/(4*1).
    assert bleu(tuple("abxc"), tuple("abyc"))[1] == pytest.approx(
        (0.75 * (1 / 3) * 0.25 * 0.25) ** 0.25
    )
    assert bleu((), tuple("abc")) == (0.0, 0.0)


class _Given:
    """rouge-score tokenizer that splits on spaces, so both sides see the same tokens."""

    def tokenize(self, text: str) -> list[str]:
        return text.split()


def test_rouge_l_equals_rouge_score_library() -> None:
    scorer = rouge_scorer.RougeScorer(["rougeL"], tokenizer=_Given())
    pairs = [
        (
            "The cat sat on the mat , and the dog slept .",
            "A cat was on the mat while the dog slept .",
        ),
        ("城市 的 公园 让 生活 更 美好", "公园 让 城市 生活 更加 美好"),
    ]
    for hypothesis, reference in pairs:
        expected = scorer.score(reference, hypothesis)["rougeL"].fmeasure
        assert rouge_l_f1(tuple(hypothesis.split()), tuple(reference.split())) == pytest.approx(
            expected
        )


def _first_paragraph(text: str) -> str:
    return next(p for p in text.split("\n") if p.strip())


def test_rouge_l_agrees_with_the_paper_code_on_real_writings(shared_data: Path) -> None:
    """The paper's code: rouge-chinese ROUGE-L F over space-joined jieba words.

    On single paragraphs the two agree to 1e-6. Across blank lines the paper's code
    also counts empty "words" made by its sentence splitter, which we do not (README).
    """
    source = open_source(str(shared_data))
    records = source.records("guide")[:12]
    outputs = source.generations_for("guide", "gpt-4o-2024-11-20", records)
    paper = Rouge()
    for record in records:
        writing, reference = (
            _first_paragraph(outputs[record.id]),
            _first_paragraph(record.reference),
        )
        expected = paper.get_scores(" ".join(jieba.cut(writing)), " ".join(jieba.cut(reference)))
        ours = rouge_l_f1(tokenize(writing), tokenize(reference))
        assert ours == pytest.approx(expected[0]["rouge-l"]["f"], abs=1e-6)
