"""Reference-overlap baselines: ROUGE-L F1 on word tokens, BLEU-1/BLEU-4 on characters
(the default) or word tokens.

Chinese words come from jieba, characters from sacrebleu's `zh` tokenizer, other
languages from its 13a; the longest common subsequence comes from rapidfuzz and BLEU from
sacrebleu, so no n-gram or LCS code is written here. ROUGE-L is the token LCS F1 that
the paper's code computes. BLEU is on characters by default because that reproduces the
paper's Table 7, which the paper's own code (jieba words) does not
(docs/reproduction.md, "Overlap scorers against the paper's code").
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Any

from inspect_ai.scorer import Score, Scorer, Target, Value, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState

from howtobench.judge.guards import excerpt, incomparable, noted
from howtobench.vocabulary.errors import OneLineError
from howtobench.vocabulary.metadata import SampleKey
from howtobench.vocabulary.parameter_values import refuses_unknown
from howtobench.vocabulary.rounding import rounded

if TYPE_CHECKING:
    from sacrebleu.metrics.bleu import BLEU

__all__ = [
    "BLEU_TOKENIZE",
    "Measure",
    "TOKENIZATIONS",
    "bleu",
    "bleu_scorer",
    "compared",
    "overlap_values",
    "reference_scorer",
    "rouge_l",
    "rouge_l_f1",
    "tokenize",
    "tokenizer",
]

# jieba, sacrebleu and rapidfuzz are imported when a text is first cut or compared, not
# with this module: inspect imports it (through our entry point) at the start of every
# eval, most of which never score an overlap (tests/test_startup.py).


@cache
def _jieba() -> Any:
    """jieba, quiet (its dictionary is loaded on the first cut, with a log line)."""
    import jieba

    jieba.setLogLevel(60)
    return jieba


@cache
def _sacrebleu_tokenizer(name: str) -> Any:
    """sacrebleu's `13a` or `zh` tokenizer, one of each."""
    if name == "zh":
        from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

        return TokenizerZh()  # type: ignore[no-untyped-call]  # sacrebleu has no hints
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    return Tokenizer13a()  # type: ignore[no-untyped-call]


# What `-T bleu_tokenize` / `-S tokenize` take: Chinese cut into characters or words.
TOKENIZATIONS = ("char", "word")
BLEU_TOKENIZE = "char"


@cache
def _bleu_metric() -> BLEU:
    """sacrebleu's BLEU-4, one for the process; it is handed each reference with its
    writing. Kept references would save a third of a millisecond a writing, at about
    0.9 MB of n-gram counts each: 1.2 GB for the benchmark's 1,302 (docs/benchmarks.md)."""
    from sacrebleu.metrics.bleu import BLEU

    return BLEU(tokenize="none", max_ngram_order=4, smooth_method="exp", effective_order=True)


def tokenizer(language: str, unit: str) -> str:
    """The tokenizer that `tokenize` uses, as the score metadata names it."""
    if language != "zh":
        return "13a"
    return "zh" if unit == "char" else "jieba"


@lru_cache(maxsize=4096)
def reference_tokens(text: str, language: str, unit: str) -> tuple[str, ...]:
    """A reference's tokens, kept: a reference is scored once per writer (ten times over
    the benchmark, and jieba is most of the cost), a writing once, so writings are cut
    by `tokenize` and not kept (the 1,302 references in both units: about 90 MB)."""
    return tokenize(text, language, unit)


def tokenize(text: str, language: str = "zh", unit: str = "word") -> tuple[str, ...]:
    """Tokens without whitespace.

    `unit` is `word` (jieba words for Chinese) or `char` (sacrebleu's `zh` tokenizer);
    it changes only Chinese, the benchmark's language: other languages get 13a words.
    """
    used = tokenizer(language, unit)
    if used == "jieba":
        return _interned(" ".join(_jieba().cut(text)))
    from sacrebleu.tokenizers.tokenizer_re import TokenizerRegexp

    cut = _sacrebleu_tokenizer(used)
    tokens = _interned(cut(text))
    # sacrebleu's tokenizers keep the last 65,536 lines each, sized for MT sentences; on
    # pages of text that is hundreds of MB beside ours, so theirs are emptied
    kind: Any = type(cut)  # sacrebleu's class, whose `__call__` is an lru_cache
    kind.__call__.cache_clear()
    TokenizerRegexp.__call__.cache_clear()
    return tokens


def _interned(spaced: str) -> tuple[str, ...]:
    """The tokens of a space-separated text, each string shared with its repeats: a
    cached page of characters holds pointers, not a string object per character."""
    return tuple(map(sys.intern, spaced.split()))


def rouge_l_f1(hypothesis: tuple[str, ...], reference: tuple[str, ...]) -> float:
    """ROUGE-L F1 of two token sequences (0 when either is empty)."""
    if not hypothesis or not reference:
        return 0.0
    from rapidfuzz.distance import LCSseq

    lcs = LCSseq.similarity(hypothesis, reference)
    return 2 * lcs / (len(hypothesis) + len(reference))


def bleu(hypothesis: tuple[str, ...], reference: tuple[str, ...]) -> tuple[float, float]:
    """Sentence BLEU-1 and BLEU-4 in [0, 1], with brevity penalty and exponential smoothing.

    One n-gram count serves both: BLEU-1 is the brevity penalty times the unigram
    precision, which sacrebleu's BLEU-4 smooths exactly as a BLEU-1 run would.
    """
    if not hypothesis or not reference:
        return 0.0, 0.0
    # one segment: the corpus score equals the sentence score
    result = _bleu_metric().corpus_score([" ".join(hypothesis)], [[" ".join(reference)]])
    return result.bp * result.precisions[0] / 100, result.score / 100


Measure = Callable[[tuple[str, ...], tuple[str, ...]], Value]


def compared(
    measure: Measure, unit: str, writing: str, reference: str, language: str
) -> tuple[Value, int, int]:
    """(rounded value, writing tokens, reference tokens) of one writing against its
    reference: what the overlap scorers store, and what `overlap_values` gives callers
    outside inspect (the lm-eval tasks), so that both report the same numbers."""
    hypothesis = tokenize(writing, language, unit)
    tokens = reference_tokens(reference, language, unit)  # a reference is read many times
    return rounded(measure(hypothesis, tokens)), len(hypothesis), len(tokens)


def overlap_values(
    writing: str, reference: str, language: str = "zh", bleu_tokenize: str = BLEU_TOKENIZE
) -> dict[str, float]:
    """ROUGE-L F1, BLEU-1 and BLEU-4 of one writing, as the `rouge_l` and `bleu` scorers
    store them (the lm-eval tasks report these, `howtobench.lmeval.tasks.hooks`)."""
    rouge, _, _ = compared(rouge_l_f1, "word", writing, reference, language)
    bleus, _, _ = compared(_bleu_value, bleu_tokenize, writing, reference, language)
    assert isinstance(rouge, float) and isinstance(bleus, dict)
    return {"rouge_l": rouge, **bleus}


# A writing's (value, explanation, metadata) against its reference, from the sample's state.
Comparison = Callable[[TaskState, str], Awaitable[tuple[Value, str, dict[str, Any]]]]


def reference_scorer(comparison: Comparison) -> Scorer:
    """A scorer of the writing against the human reference (the overlap scorers and
    `bleurt`); unscored (`scoring_failed`) without a reference or with a writing marked
    unusable."""

    async def score(state: TaskState, target: Target) -> Score:
        refused = incomparable(state, target.text)
        if refused is not None:
            return noted(state, refused)
        value, explanation, metadata = await comparison(state, target.text)
        score = Score(
            value=value, answer=excerpt(state), explanation=explanation, metadata=metadata
        )
        return noted(state, score)

    return score


def _overlap_scorer(measure: Measure, unit: str) -> Scorer:
    """A scorer comparing the writing's tokens with the reference's by `measure`. The
    metadata says how the text was cut, so a log tells word from character BLEU."""

    async def comparison(state: TaskState, reference: str) -> tuple[Value, str, dict[str, Any]]:
        language = state.metadata.get(SampleKey.LANGUAGE, "zh")
        value, written, referenced = compared(
            measure, unit, state.output.completion, reference, language
        )
        explanation = f"{written} writing tokens, {referenced} reference tokens"
        return value, explanation, {"tokenize": unit, "tokenizer": tokenizer(language, unit)}

    return reference_scorer(comparison)


@scorer(metrics=[mean(), stderr(), grouped(mean(), "genre")])
@refuses_unknown("rouge_l")
def rouge_l() -> Scorer:
    """ROUGE-L F1 between the writing and the human reference, on word tokens (as the
    paper's code, rouge-chinese over jieba words)."""
    return _overlap_scorer(rouge_l_f1, "word")


def _bleu_value(hypothesis: tuple[str, ...], reference: tuple[str, ...]) -> Value:
    bleu_1, bleu_4 = bleu(hypothesis, reference)
    return {"bleu_1": bleu_1, "bleu_4": bleu_4}


@scorer(
    name="bleu",
    metrics={
        "bleu_1": [mean(), stderr(), grouped(mean(), "genre")],
        "bleu_4": [mean(), stderr(), grouped(mean(), "genre")],
    },
)
@refuses_unknown("bleu")
def bleu_scorer(tokenize: str = BLEU_TOKENIZE) -> Scorer:
    """BLEU-1 and BLEU-4 between the writing and the human reference, Chinese cut into
    characters (`tokenize="char"`, as Table 7's BLEU was) or jieba words (`"word"`); the
    task sets it with `-T bleu_tokenize`, `inspect score` with `-S tokenize`."""
    if tokenize not in TOKENIZATIONS:
        # not a UserError: inspect's scorer loader takes any ValueError for "no such
        # scorer" and prints that instead of this line
        raise OneLineError(
            f"-S tokenize: expected one of {', '.join(TOKENIZATIONS)}, got {tokenize!r}"
        )
    return _overlap_scorer(_bleu_value, tokenize)
