"""Reference-overlap baselines: ROUGE-L F1 and BLEU-1/BLEU-4 on word tokens.

Chinese is cut into words with jieba, other languages with sacrebleu's 13a tokenizer.
The longest common subsequence comes from rapidfuzz (compiled, bit-parallel) and BLEU
from sacrebleu, so no n-gram or LCS code is written here. ROUGE-L is the token LCS F1
that the paper's code computes (rouge-chinese over jieba words), which the tests check.
"""

from collections.abc import Callable
from functools import lru_cache

import jieba
from inspect_ai.scorer import Score, Scorer, Target, Value, grouped, mean, scorer, stderr
from inspect_ai.solver import TaskState
from rapidfuzz.distance import LCSseq
from sacrebleu.metrics import BLEU
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

from howtobench.judge.guards import excerpt, incomparable

jieba.setLogLevel(60)
_TOKENIZER_13A = Tokenizer13a()


@lru_cache(maxsize=4096)
def _bleu_against(reference: tuple[str, ...]) -> BLEU:
    """A BLEU-4 metric holding one reference's n-gram counts, which sacrebleu then reuses
    for every writing on that instruction instead of counting them again."""
    return BLEU(
        tokenize="none",
        max_ngram_order=4,
        smooth_method="exp",
        effective_order=True,
        references=[[" ".join(reference)]],
    )


@lru_cache(maxsize=8192)
def tokenize(text: str, language: str = "zh") -> tuple[str, ...]:
    """Word tokens without whitespace; cached, since a reference is scored many times."""
    if language == "zh":
        return tuple(" ".join(jieba.cut(text)).split())
    return tuple(_TOKENIZER_13A(text).split())


def rouge_l_f1(hypothesis: tuple[str, ...], reference: tuple[str, ...]) -> float:
    """ROUGE-L F1 of two token sequences (0 when either is empty)."""
    if not hypothesis or not reference:
        return 0.0
    lcs = LCSseq.similarity(hypothesis, reference)
    return 2 * lcs / (len(hypothesis) + len(reference))


def bleu(hypothesis: tuple[str, ...], reference: tuple[str, ...]) -> tuple[float, float]:
    """Sentence BLEU-1 and BLEU-4 in [0, 1], with brevity penalty and exponential smoothing.

    One n-gram count serves both: BLEU-1 is the brevity penalty times the unigram
    precision, which sacrebleu's BLEU-4 smooths exactly as a BLEU-1 run would.
    """
    if not hypothesis or not reference:
        return 0.0, 0.0
    # one segment: the corpus score over cached references equals the sentence score
    result = _bleu_against(reference).corpus_score([" ".join(hypothesis)], None)
    return result.bp * result.precisions[0] / 100, result.score / 100


def _overlap_scorer(
    measure: Callable[[tuple[str, ...], tuple[str, ...]], Value],
) -> Scorer:
    """A scorer comparing the writing's word tokens with the reference's by `measure`;
    unscored (`scoring_failed`) without a reference or with a writing marked unusable."""

    async def score(state: TaskState, target: Target) -> Score:
        reference = target.text
        refused = incomparable(state, reference)
        if refused is not None:
            return refused
        language = state.metadata.get("language", "zh")
        hypothesis, tokens = (
            tokenize(state.output.completion, language),
            tokenize(reference, language),
        )
        return Score(
            value=measure(hypothesis, tokens),
            answer=excerpt(state),
            explanation=f"{len(hypothesis)} writing tokens, {len(tokens)} reference tokens",
        )

    return score


@scorer(metrics=[mean(), stderr(), grouped(mean(), "genre")])
def rouge_l() -> Scorer:
    """ROUGE-L F1 between the writing and the human reference, on word tokens."""
    return _overlap_scorer(rouge_l_f1)


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
def bleu_scorer() -> Scorer:
    """BLEU-1 and BLEU-4 between the writing and the human reference, on word tokens."""
    return _overlap_scorer(_bleu_value)
