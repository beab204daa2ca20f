"""BLEU on Chinese characters or jieba words: the tokens, the values (worked out by hand
here, not with the code under test), the refusals, and the `-T`/`-S` forms through real
inspect runs, each score saying in its metadata how the text was cut."""

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai import score
from inspect_ai.log import read_eval_log

from howtobench import open_writing
from howtobench.baselines.overlap import bleu, bleu_scorer, tokenize
from howtobench.vocabulary.errors import OneLineError
from howtobench.vocabulary.parameter_values import ParameterError
from support.data import write_jsonl
from support.evals import run_eval

WRITING, REFERENCE = "城市需要公园。", "公园让城市更宜居。"
# Worked by hand. Characters: writing 城 市 需 要 公 园 。 (7), reference
# 公 园 让 城 市 更 宜 居 。 (9); unigrams 城 市 公 园 。 match (5/7), bigrams 城市 公园
# (2/6), no trigram (smoothed 1/(2*5)) or 4-gram (1/(4*4)); brevity penalty exp(1 - 9/7).
CHAR_BP = math.exp(1 - 9 / 7)
CHAR = {"bleu_1": CHAR_BP * 5 / 7, "bleu_4": CHAR_BP * (5 / 7 * 2 / 6 * 1 / 10 * 1 / 16) ** 0.25}
# jieba words: 城市 需要 公园 。 (4) against 公园 让 城市 更 宜居 。 (6); unigrams 3/4, no
# bigram (1/(2*3)), trigram (1/(4*2)) or 4-gram (1/(8*1)); brevity penalty exp(1 - 6/4).
WORD_BP = math.exp(1 - 6 / 4)
WORD = {"bleu_1": WORD_BP * 3 / 4, "bleu_4": WORD_BP * (3 / 4 * 1 / 6 * 1 / 8 * 1 / 8) ** 0.25}


def test_char_tokens_split_chinese_and_keep_latin_words_and_numbers() -> None:
    """sacrebleu's `zh` tokenizer: each CJK character and full-width punctuation mark is
    a token, Latin words and numbers stay whole, ASCII punctuation is cut off as 13a does.
    Its range table also takes U+2000-U+2A6D for Chinese, so “ ” — … are tokens of
    their own even when attached to a word."""
    text = "“你好”——他说，在2024年用GPT-4o写了3.5页! Hello, world."
    assert tokenize(text, unit="char") == (
        *("“", "你", "好", "”", "—", "—", "他", "说", "，", "在", "2024", "年", "用"),
        *("GPT-4o", "写", "了", "3.5", "页", "!", "Hello", ",", "world", "."),
    )
    assert tokenize("第一段。\n\n第二段。", unit="char") == tuple("第一段。第二段。")
    # the unit changes only Chinese: other languages are 13a words either way
    assert tokenize("Hello, world!", "en", "char") == ("Hello", ",", "world", "!")
    assert tokenize(WRITING) == ("城市", "需要", "公园", "。")  # the word default


def test_bleu_on_characters_and_on_words_hand_computed() -> None:
    chars = bleu(tokenize(WRITING, unit="char"), tokenize(REFERENCE, unit="char"))
    words = bleu(tokenize(WRITING, unit="word"), tokenize(REFERENCE, unit="word"))
    assert chars == pytest.approx(tuple(CHAR.values()))
    assert words == pytest.approx(tuple(WORD.values()))


@pytest.fixture
def one_writing(tmp_path: Path) -> Path:
    return write_jsonl(
        tmp_path / "one.jsonl",
        [
            {
                "instruction": "写一段关于城市公园的话。",
                "reference": REFERENCE,
                "generations": {"m": WRITING},
            }
        ],
    )


def test_the_task_scores_either_way_and_the_score_says_which(
    one_writing: Path, tmp_path: Path
) -> None:
    """Characters by default (Table 7's BLEU); ROUGE-L stays on jieba words."""
    default, word = run_eval(
        [
            open_writing(dataset=str(one_writing), scorers="bleu,rouge_l"),
            open_writing(dataset=str(one_writing), scorers="bleu", bleu_tokenize="word"),
        ],
        tmp_path / "logs",
        model="replay/m",
    )
    scores = default.samples[0].scores
    assert scores["bleu"].value == pytest.approx(CHAR, abs=1e-6)
    assert scores["bleu"].metadata == {"tokenize": "char", "tokenizer": "zh"}
    assert scores["rouge_l"].metadata == {"tokenize": "word", "tokenizer": "jieba"}
    scores = word.samples[0].scores
    assert scores["bleu"].value == pytest.approx(WORD, abs=1e-6)
    assert scores["bleu"].metadata == {"tokenize": "word", "tokenizer": "jieba"}


def test_unknown_or_unused_tokenisations_are_refused(one_writing: Path) -> None:
    data = str(one_writing)
    with pytest.raises(
        ParameterError, match="^-T bleu_tokenize: expected one of char, word, got 'chars'$"
    ):
        open_writing(dataset=data, scorers="bleu", bleu_tokenize="chars")
    with pytest.raises(
        ParameterError, match="^-T bleu_tokenize: none of the chosen scorers \\(rouge_l\\)"
    ):
        open_writing(dataset=data, scorers="rouge_l", bleu_tokenize="word")
    # the scorer's own argument; not a ValueError, which inspect's scorer loader would
    # report as an unknown scorer instead of this line
    with pytest.raises(
        OneLineError, match="^-S tokenize: expected one of char, word, got 7$"
    ) as err:
        bleu_scorer(tokenize=7)  # type: ignore[arg-type]
    assert not isinstance(err.value, ValueError)


def test_rescoring_a_log_with_word_tokens(one_writing: Path, tmp_path: Path) -> None:
    """inspect's `score()` on a log scored with ROUGE-L alone: the scorer's own argument."""
    [log] = run_eval(
        open_writing(dataset=str(one_writing), scorers="rouge_l"), tmp_path, model="replay/m"
    )
    scored = score(log, [bleu_scorer(tokenize="word")], action="append", display="none")
    [sample] = scored.samples or []
    assert sample.scores is not None and set(sample.scores) == {"rouge_l", "writing_state", "bleu"}
    assert sample.scores["bleu"].value == pytest.approx(WORD, abs=1e-6)
    assert sample.scores["bleu"].metadata == {"tokenize": "word", "tokenizer": "jieba"}


def _inspect_score(log: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "inspect_ai", "score", log, "--scorer", "howtobench/bleu", *args],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "COLUMNS": "300"},
    )


@pytest.mark.slow
def test_inspect_score_takes_the_tokenisation_as_a_scorer_argument(
    one_writing: Path, tmp_path: Path
) -> None:
    """`inspect score LOG --scorer howtobench/bleu -S tokenize=word`."""
    [log] = run_eval(
        open_writing(dataset=str(one_writing), scorers="rouge_l"), tmp_path, model="replay/m"
    )
    out = tmp_path / "scored.eval"
    done = _inspect_score(
        log.location, "-S", "tokenize=word", "--action", "append", "--output-file", str(out)
    )
    assert done.returncode == 0, done.stderr
    sample = read_eval_log(str(out)).samples[0]
    assert sample.scores["bleu"].value == pytest.approx(WORD, abs=1e-6)
    assert sample.scores["bleu"].metadata == {"tokenize": "word", "tokenizer": "jieba"}


@pytest.mark.slow
@pytest.mark.nightly(
    "in CI test_unknown_or_unused_tokenisations_are_refused gives this message, and "
    "test_options.py's test_inspect_score_refuses_a_wrong_scorer_name_in_one_line prints "
    "a refused -S from `inspect score` in one line"
)
def test_inspect_score_refuses_a_wrong_tokenisation_in_one_line(
    one_writing: Path, tmp_path: Path
) -> None:
    [log] = run_eval(
        open_writing(dataset=str(one_writing), scorers="rouge_l"), tmp_path, model="replay/m"
    )
    refused = _inspect_score(log.location, "-S", "tokenize=chars", "--action", "append")
    assert refused.returncode == 1
    assert "-S tokenize: expected one of char, word, got 'chars'" in refused.stdout + refused.stderr
