"""`howtobench judge-check --quality` against the judge simulator over HTTP: a judge that
sees each damage and the swap passes with discrimination 1, a judge that scores at random
fails with exit status 1, and so does a judge that recognises the demo's writings word
for word (it beats every damage, and ties the swap); on the published sample, a judge
that sees repetition only and one that reads length only each fail, on the damages they
cannot see and the swap; a judge whose negotiator never answers usably is measured with
uniform weights, asked once per instruction, or checked with `--weights uniform`; a judge
that leaves a leaf unjudged gets "not known", and one pair per damage "too few pairs".
Read back from `--json` and the text report; the Wilson interval; the pair read on the
judge's leaves, the rule leaf held; the swap's partner.

The scripted judges read only the prompt: the writing between its fences, and the task
and reference before it (the judge that sees shuffling also knows how the demo's stored
writings go, as a reader who knows a text does). What they were asked (how many
writings, which of them damaged, which asked twice) is counted by the scripts themselves
and set against the demo file, not against the check's own reading of its logs.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterable
from itertools import count, pairwise
from pathlib import Path
from typing import Any, NamedTuple

import pytest
from scipy.stats import binomtest

from howtobench.cli import main
from howtobench.dataset.jsonl import DEMO_FILE
from howtobench.dataset.records import WritingRecord
from howtobench.judge.defaults import TRIES
from howtobench.judge_check.judged import Comparison, Judging, compare
from howtobench.judge_check.quality import wilson
from howtobench.judge_check.quality_report import TELLS
from howtobench.judge_check.report import Report, render
from howtobench.judge_check.swap import SWAP, partner
from howtobench.judge_check.writings import CHECKED, RETEST_EPOCHS
from howtobench.simulator import Asked, JudgeSimulator, valid_weights
from howtobench.tree.spec import LEAVES, tree_for
from howtobench.writing.damages import LOWERING, NAMED, Tell, sentences
from support.judges import Serve, hashed, llm_calls

JUDGE = "grader=openai-api/sim/judge"
_LEAVES = {leaf.id: leaf for leaf in LEAVES}
_REFERENCE = re.compile(r"<reference>\n(.*?)\n</reference>", re.S)
_SENTENCE = re.compile(r"[^。！？!?\n]+")
# The share of a writing's character pairs that the task and reference it was asked for
# hold, below which it does not answer the request: on the demo, each stored writing
# shares 18% or more with its own, and at most 8% with another instruction's.
ON_TOPIC = 0.15
# Staggered offsets for the leaves, so that the sum of the content leaves' floors moves
# with the share in steps of a fifth of a point rather than one (Hermite's identity).
_OFFSETS = {
    "opening_ending": 0.0,
    "rhetoric": 0.2,
    "logic": 0.4,
    "emotion": 0.6,
    "impression": 0.8,
    "plots": 0.1,
    "paragraphing": 0.5,
}
Reply = dict[str, object] | None


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run `howtobench judge-check ARGS`: (exit status, stdout, stderr)."""
    status = main(["judge-check", *args])
    out, err = capsys.readouterr()
    return status, out, err


def repeated_sentences(writing: str) -> int:
    """Sentences that occur again later in the writing."""
    sentences = [s.strip() for s in _SENTENCE.findall(writing) if len(s.strip()) > 1]
    return len(sentences) - len(set(sentences))


def reading_order(writing: str) -> list[str]:
    """The writing's sentences in reading order, line by line (as `shuffle` cuts them)."""
    return [s.strip() for line in writing.splitlines() for s in sentences(line.strip())]


class SentenceOrder:
    """Where each sentence of some stored writings stands in its writing: what a reader
    who knows how those texts go notices when their sentences come out of order."""

    def __init__(self, writings: Iterable[str]) -> None:
        self.places: dict[str, tuple[int, int]] = {}
        for n, writing in enumerate(writings):
            for place, sentence in enumerate(reading_order(writing)):
                self.places.setdefault(sentence, (n, place))

    def disorder(self, writing: str) -> int:
        """How often a sentence comes right after one it follows in its own writing."""
        places = [self.places.get(s) for s in reading_order(writing)]
        return sum(1 for a, b in pairwise(places) if a and b and a[0] == b[0] and b[1] < a[1])


DEMO_WRITINGS = [
    text
    for line in DEMO_FILE.read_text(encoding="utf-8").splitlines()
    for text in json.loads(line)["generations"].values()
]
DEMO_ORDER = SentenceOrder(DEMO_WRITINGS)


def leaf_reply(leaf_id: str, share: float, reason: str) -> Reply:
    """A leaf's score at `share` (0-1) of its scale, staggered per leaf (`_OFFSETS`)."""
    leaf = _LEAVES[leaf_id]
    raw = leaf.low + (leaf.high - leaf.low) * share + _OFFSETS.get(leaf.id, 0.0)
    return {"score": min(math.floor(raw), leaf.high), "reason": reason}


def reference_length(question: Asked) -> int | None:
    reference = _REFERENCE.search(question.text)
    return len(reference.group(1)) if reference else None


def character_pairs(text: str) -> set[str]:
    compact = "".join(text.split())
    return {compact[i : i + 2] for i in range(len(compact) - 1)}


def answers_the_request(question: Asked) -> bool:
    """Whether the writing shares `ON_TOPIC` of its character pairs with what the prompt
    says before it: the task (instruction, grounding) and the reference."""
    writing = character_pairs(question.writing or "")
    asked = character_pairs(question.text.partition("<writing>")[0])
    return not writing or len(writing & asked) / len(writing) >= ON_TOPIC


def sees_damage(question: Asked) -> Reply:
    """A judge that reads what damage does: a writing short of its reference's length
    loses marks (dropped text), and each repeated sentence and each sentence out of its
    order costs half the scale (repeated or shuffled text); a writing about something
    other than the request (another instruction's) gets the bottom. Every leaf falls, or
    stays, when a writing is damaged or swapped."""
    if question.kind not in _LEAVES:  # the negotiator, the probes
        return valid_weights(question) if question.kind == "negotiator" else None
    if not answers_the_request(question):
        return leaf_reply(question.kind, 0.0, "does not answer the request")
    writing = question.writing or ""
    reference = reference_length(question)
    fullness = min(len(writing) / reference, 1.0) if reference else 1.0
    faults = repeated_sentences(writing) + DEMO_ORDER.disorder(writing)
    return leaf_reply(question.kind, max(fullness - 0.5 * faults, 0.0), "sees damage")


def sees_repetition_only(question: Asked) -> Reply:
    """The top of every scale, unless a sentence repeats: then the bottom."""
    if question.kind not in _LEAVES:
        return valid_weights(question) if question.kind == "negotiator" else None
    leaf = _LEAVES[question.kind]
    repeats = repeated_sentences(question.writing or "")
    return {"score": leaf.low if repeats else leaf.high, "reason": "repetition only"}


def reads_length_only(question: Asked) -> Reply:
    """Longer is better, on every leaf, and a repeated sentence gets the bottom: what
    drop and repeat reward, and what shuffling (the same characters) cannot move."""
    if question.kind not in _LEAVES:
        return valid_weights(question) if question.kind == "negotiator" else None
    writing = question.writing or ""
    if repeated_sentences(writing):
        return leaf_reply(question.kind, 0.0, "repeats")
    share = len(writing) / (len(writing) + (reference_length(question) or 1000))
    return leaf_reply(question.kind, share, "length only")


class RandomJudge:
    """Scores drawn at random per question: a hash of the question's text and of how
    often that same text was asked before, so that asking again draws again (as a
    judge sampled at a temperature would), whatever the order of the calls."""

    def __init__(self, salt: str) -> None:
        self.salt = salt
        self.asked: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, question: Asked) -> Reply:
        if question.kind not in _LEAVES:  # the negotiator, the probes
            return valid_weights(question) if question.kind == "negotiator" else None
        with self.lock:
            nth = self.asked[question.text]
            self.asked[question.text] += 1
        leaf = _LEAVES[question.kind]
        draw = hashed(self.salt, question.text, str(nth)) % (leaf.high - leaf.low + 1)
        return {"score": leaf.low + draw, "reason": "random"}


def memorising(published: Iterable[str]) -> Callable[[Asked], Reply]:
    """A judge that has seen `published` and reads nothing: the top of every scale for a
    writing it finds among them word for word, the bottom for any other."""
    known = {text.strip() for text in published}

    def answer(question: Asked) -> Reply:
        if question.kind not in _LEAVES:
            return valid_weights(question) if question.kind == "negotiator" else None
        leaf = _LEAVES[question.kind]
        if (question.writing or "").strip() in known:
            return {"score": leaf.high, "reason": "seen word for word"}
        return {"score": leaf.low, "reason": "never seen"}

    return answer


def recording(judge: Callable[[Asked], Reply], seen: Counter[str]) -> Callable[[Asked], Reply]:
    """The judge, counting each question of the impression leaf (a writing read against
    its task) it was asked."""
    lock = threading.Lock()

    def answer(question: Asked) -> Reply:
        if question.kind == "impression" and question.attempt == 1:
            with lock:
                seen[question.text] += 1
        return judge(question)

    return answer


def quality_of(
    capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, object], dict[str, Any], str]:
    """`judge-check --quality --json ARGS`: (exit status, report, its quality, stderr)."""
    status, out, err = check(capsys, "--model-role", JUDGE, "--quality", "--json", *args)
    report = json.loads(out)
    return status, report, report["quality"], err


class Checked(NamedTuple):
    """One `judge-check --quality --json` run: what the command printed and returned, the
    report it printed, and what the scripted judge counted."""

    status: int
    out: str
    err: str
    report: Report
    seen: Counter[str]  # each question of the impression leaf, first asks
    negotiator_calls: int


@pytest.fixture(scope="module")
def sees_each_damage() -> Checked:
    """The default check (the demo's first two writings of each task) of a judge that
    sees each damage and the swap, run once for the JSON test and the text test: the command's run,
    with the report it built kept beside what it printed."""
    from howtobench.judge_check import check as module

    seen: Counter[str] = Counter()
    kept: list[Report] = []
    judge_check = module.judge_check

    def keeping(*args: Any, **kwargs: Any) -> Report:
        kept.append(judge_check(*args, **kwargs))
        return kept[-1]

    out, err = io.StringIO(), io.StringIO()
    with (
        JudgeSimulator(script=recording(sees_damage, seen)) as simulator,
        pytest.MonkeyPatch.context() as patch,
    ):
        patch.setenv("SIM_BASE_URL", simulator.base_url)
        patch.setenv("SIM_API_KEY", "none")
        patch.setattr(module, "judge_check", keeping)
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["judge-check", "--model-role", JUDGE, "--quality", "--json"])
        negotiator_calls = simulator.calls["negotiator"]
    [report] = kept
    return Checked(status, out.getvalue(), err.getvalue(), report, seen, negotiator_calls)


@pytest.mark.slow
def test_a_judge_that_sees_each_damage_passes_with_discrimination_near_1(
    sees_each_damage: Checked,
) -> None:
    status, seen, err = sees_each_damage.status, sees_each_damage.seen, sees_each_damage.err
    report = json.loads(sees_each_damage.out)
    quality = report["quality"]
    assert status == 0, err
    # the demo's first two writings of each task: 6 originals, each asked twice (the
    # retest), and a copy of each per damage and a swap, each different from the
    # others, asked once
    copies = 6 * len(CHECKED)
    assert sorted(seen.values()) == [1] * copies + [2] * 6
    assert sees_each_damage.negotiator_calls == 6  # the weights are not asked again
    assert quality["interval_method"] == "Wilson score, 95%"
    assert quality["fewest_pairs"] == 4
    assert list(quality["perturbations"]) == [*LOWERING, SWAP]
    for damage, per in quality["perturbations"].items():
        assert per["tell"] == TELLS[damage] == (NAMED[damage].tell if damage in NAMED else "topic")
        assert per["pairs"] == 6 and per["unchanged_copies"] == per["unscored_pairs"] == 0
        assert per["discrimination"] == 1.0 and per["ties"] == 0, damage
        assert per["interval"][0] > 0.5 and per["interval"][1] == 1.0
        assert per["changes"]["overall"] < 0 and per["changes"]["content"] < 0
        assert per["effect"] == -per["changes"]["overall"] > 0
        assert per["verdict"] == "sees" and per["reasons"][0].startswith("discrimination 1.00")
    assert quality["perturbations"]["drop"]["paper_gpt4o"]["overall"] == -0.36
    assert "paper_gpt4o" not in quality["perturbations"]["shuffle"]  # not in the paper
    assert quality["pooled"]["pairs"] == 6 * len(LOWERING)  # the damages', not the swap's
    assert quality["retest"] == {
        "writings": 6,
        "mean_abs_difference": 0.0,  # this judge answers a question the same every time
        "sd": 0.0,
        "epoch": 2,
    }
    assert quality["weights"] == "negotiated" and quality["uniform_instructions"] == 0
    assert quality["passes"] is True and quality["reasons"] == []
    assert quality["verdict"].startswith(
        "quality: sees each damage and the swap: drop 1.00 (0.61-1.00, 6 pairs"
    )
    assert report["ok"] is True and report["exit_status"] == 0 and report["reasons"] == []


@pytest.mark.slow
def test_a_judge_that_scores_at_random_fails_with_status_1(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = RandomJudge("random-judge")
    serve(script=judge)
    status, report, quality, err = quality_of(capsys)
    assert status == 1
    [line] = err.splitlines()
    assert line == f"howtobench judge-check: {quality['verdict']}"
    assert line.startswith("howtobench judge-check: quality: does not see ")
    # usable in every reply: it is the quality verdict alone that fails the judge
    assert all(kind["passes"] for kind in report["kinds"].values())
    assert report["ok"] is False and report["exit_status"] == 1
    assert report["reasons"] == [quality["verdict"]]
    assert quality["passes"] is False and quality["reasons"]
    failed = [d for d, per in quality["perturbations"].items() if per["verdict"] == "fails"]
    assert failed and all(f" {d} " in quality["verdict"] for d in failed)
    assert (
        quality["pooled"]["pairs"] == 6 * len(LOWERING)
        and 0.0 <= quality["pooled"]["discrimination"] <= 1.0
    )
    retest = quality["retest"]
    assert retest["writings"] == 6 and retest["mean_abs_difference"] > 0 and retest["sd"] > 0
    # each original's questions were drawn twice: the retest reached the judge
    originals = [text for text, n in judge.asked.items() if n == 2]
    # 2 completion writings (5 expert calls on the paper's tree), 4 guide/open (7)
    assert len(originals) == 2 * llm_calls("completion") + 4 * llm_calls("guide")


@pytest.mark.slow
def test_a_judge_that_recognises_published_text_fails_on_the_swap(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """It has seen every stored writing of the demo: each damaged copy is text it never
    saw, so it beats every damage, but a swapped writing is stored too, so it ties
    every swap (4 writings, completion and guide)."""
    serve(script=memorising(DEMO_WRITINGS))
    status, report, quality, err = quality_of(capsys, "--tasks", "completion,guide", "--limit", "2")
    assert status == 1
    [line] = err.splitlines()
    assert line == f"howtobench judge-check: {quality['verdict']}"
    assert all(kind["passes"] for kind in report["kinds"].values())
    per = quality["perturbations"]
    for damage in LOWERING:
        assert per[damage]["verdict"] == "sees" and per[damage]["discrimination"] == 1.0
    swap = per[SWAP]
    assert swap["verdict"] == "fails" and swap["pairs"] == swap["ties"] == 4
    low, high = wilson(0.5, 4)
    assert quality["verdict"].startswith(
        f"quality: does not see swap: swap 0.50 ({low:.2f}-{high:.2f}, 4 pairs) not above 0.5, "
        "overall did not move, a writing was not told from another instruction's: the judge "
        "may score text it recognises, not how it answers the instruction; sees drop 1.00"
    )


@pytest.mark.slow
def test_one_pair_per_damage_is_too_few_pairs(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """One writing: a judge that wins every pair could not pass on one (it would need
    the check's `fewest_pairs`, 4), so each is "too few pairs", not "does not see"."""
    serve(script=sees_damage)
    status, _, quality, _ = quality_of(capsys, "--tasks", "guide", "--limit", "1")
    assert status == 1
    assert wilson(1.0, 3)[0] <= 0.5 < wilson(1.0, quality["fewest_pairs"])[0]
    for per in quality["perturbations"].values():
        assert per["pairs"] == 1 and per["discrimination"] == 1.0
        assert per["verdict"] == "too few pairs" and per["reasons"] == ["1 pair"]
    assert quality["verdict"] == (
        "quality: too few pairs for drop 1 pair, repeat 1 pair, shuffle 1 pair, swap 1 pair: "
        "even an original that won every pair passes from 4 pairs on; give more writings "
        "(--limit)"
    )


def record(id: str, genre: str, language: str = "zh") -> WritingRecord:
    return WritingRecord(id, "open", genre, "写。", "", "参考。", language)


def test_the_swap_takes_the_nearest_writing_of_the_genre_else_of_the_task() -> None:
    records = [
        record("a", "诗歌"),
        record("b", "诗歌"),
        record("c", "诗歌"),
        record("d", "演讲稿"),
        record("e", "诗歌", "en"),
        record("f", "诗歌"),
    ]
    writings = {"a": "甲" * 100, "b": "乙" * 40, "c": "丙" * 130, "d": "丁" * 99, "e": "e" * 100}
    writings["f"] = writings["a"]  # the same text is no swap
    nearest = {r.id: getattr(partner(r, records, writings), "id", None) for r in records}
    assert nearest == {"a": "c", "b": "a", "c": "a", "d": "a", "e": None, "f": "c"}


@pytest.mark.slow
def test_the_text_report_ends_with_the_quality_verdict(sees_each_damage: Checked) -> None:
    """The JSON test's run, its report as the command prints it without `--json`."""
    out = render(sees_each_damage.report)
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    rows = {line.split()[0]: line.split() for line in lines if line.split()[:1]}
    each = "{:.2f}-{:.2f}".format(*wilson(1.0, 6))  # the demo's 6 writings, all won
    for damage in CHECKED:
        assert rows[damage][1:4] == ["6", "1.00", each], damage
    pooled = 6 * len(LOWERING)  # the damages' pairs, not the swap's
    assert rows["pooled"][1:4] == [
        str(pooled),
        "1.00",
        "{:.2f}-{:.2f}".format(*wilson(1.0, pooled)),
    ]
    # the rule leaf's own change, apart from the judge's nodes
    assert rows["damage"][-5:] == ["Δoverall", "Δcontent", "Δformat", "Δimpression", "Δformatting"]
    assert "verdict: can serve Tree-of-Writing" in out
    assert "weights: negotiated" in lines
    start = next(i for i, line in enumerate(lines) if line.startswith("quality: sees each"))
    verdict = " ".join(line.strip() for line in lines[start:])
    seen = ", ".join(f"{damage} 1.00 ({each}, 6 pairs)" for damage in CHECKED)
    assert verdict == (
        f"quality: sees each damage and the swap: {seen}; retest 0.00 below the smallest "
        f"effect {-max(float(rows[d][4]) for d in CHECKED):.2f}"
    )


@pytest.mark.slow
@pytest.mark.parametrize(
    ("judge", "notices"),
    [
        pytest.param(
            sees_repetition_only,
            {"repetition"},
            id="repetition only",
            marks=pytest.mark.nightly(
                "in CI the length-only case of this test runs the same path: a judge blind "
                "to a damage fails on the published sample, naming it"
            ),
        ),
        pytest.param(reads_length_only, {"length", "repetition"}, id="length only"),
    ],
)
def test_a_judge_blind_to_a_damage_fails_on_the_published_sample_naming_it(
    judge: Callable[[Asked], Reply],
    notices: set[Tell],
    serve: Serve,
    capsys: pytest.CaptureFixture[str],
    shared_data: Path,
) -> None:
    """The published writings (2 a task: docs/judges.md's figures are of 10, the sample it
    recommends, with the same outcome). Pooled, both judges win most pairs; damage by
    damage, each ties every pair of a damage whose tell it does not notice, and fails on
    that one."""
    blind_to = [d for d in LOWERING if NAMED[d].tell not in notices]
    sees = [d for d in LOWERING if d not in blind_to]
    failed = [*blind_to, SWAP]  # neither reads what a writing is about
    serve(script=judge)
    status, report, quality, err = quality_of(capsys, "--dataset", str(shared_data), "--limit", "2")
    assert status == 1
    [line] = err.splitlines()
    assert line == f"howtobench judge-check: {quality['verdict']}"
    assert all(kind["passes"] for kind in report["kinds"].values())
    assert quality["pooled"]["discrimination"] > 0.5
    per = quality["perturbations"]
    for damage in blind_to:
        pairs = per[damage]["pairs"]
        assert per[damage]["verdict"] == "fails", damage
        assert pairs == per[damage]["ties"] >= 4  # every pair a tie
        assert per[damage]["discrimination"] == 0.5
        low, high = wilson(0.5, pairs)
        said = f"{damage} 0.50 ({low:.2f}-{high:.2f}, {pairs} pairs) not above 0.5, overall did not move"
        assert said in quality["verdict"]
    assert per[SWAP]["verdict"] == "fails"
    named = f"{', '.join(failed[:-1])} or {failed[-1]}"
    assert quality["verdict"].startswith(f"quality: does not see {named}: ")
    for damage in sees:
        assert per[damage]["verdict"] == "sees", damage
    assert per["repeat"]["discrimination"] > 0.9  # both punish a repeated sentence


def fails_to_negotiate(question: Asked) -> Reply | str:
    """Experts that see damage, and a negotiator that never answers with weights."""
    return "权重无法给出。" if question.kind == "negotiator" else sees_damage(question)


@pytest.mark.slow
def test_a_failing_negotiator_is_asked_once_per_instruction_and_read_with_uniform_weights(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four instructions, each judged twice (two epochs) and once per damage: the
    negotiator's question is asked once each, with its re-asks, and every pair is read
    with equal weights, which the verdict says."""
    asks: Counter[int] = Counter()  # negotiator questions by attempt

    def script(question: Asked) -> Reply | str:
        if question.kind == "negotiator":
            asks[question.attempt] += 1
        return fails_to_negotiate(question)

    simulator = serve(script=script)
    status, report, quality, err = quality_of(capsys, "--tasks", "guide,open", "--limit", "2")
    assert status == 1  # the negotiator cannot serve
    assert asks == Counter(dict.fromkeys(range(1, TRIES + 1), 4))
    assert simulator.calls["negotiator"] == 4 * TRIES
    negotiator = report["kinds"]["negotiator"]
    assert negotiator["asked"] == negotiator["unusable"] == 4
    assert any(r.startswith("negotiator: usable in 0 of 4 asks") for r in report["reasons"])
    assert "--weights uniform" in report["reasons"][0]
    assert quality["uniform_instructions"] == quality["instructions"] == 4
    assert quality["passes"] is True
    assert quality["verdict"].startswith("quality: sees each damage and the swap: ")
    assert quality["verdict"].endswith(
        "; read with uniform weights for 4 of 4 instructions: the negotiator gave no usable weights"
    )


@pytest.mark.slow
def test_weights_uniform_checks_a_judge_without_its_negotiator(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    simulator = serve(script=fails_to_negotiate)
    status, report, quality, err = quality_of(
        capsys, "--tasks", "guide,open", "--limit", "2", "--weights", "uniform"
    )
    assert status == 0, err
    assert simulator.calls["negotiator"] == 0 and "negotiator" not in report["kinds"]
    assert quality["weights"] == "uniform" and quality["uniform_instructions"] == 0
    assert quality["passes"] is True and quality["verdict"].startswith("quality: sees each damage")


@pytest.mark.slow
def test_nothing_measured_is_not_known_and_says_why(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    def script(question: Asked) -> Reply | str:
        return "无法评分。" if question.kind == "emotion" else sees_damage(question)

    serve(script=script)
    status, report, quality, err = quality_of(capsys, "--tasks", "guide", "--limit", "1")
    assert status == 1
    assert quality["passes"] is False and quality["pooled"]["pairs"] == 0
    assert all(per["verdict"] == "not known" for per in quality["perturbations"].values())
    judgings = RETEST_EPOCHS + len(CHECKED)  # the one writing, twice, once per damage, swapped
    assert quality["verdict"] == (
        "quality: not known, nothing was measured: no pair had a verdict on every leaf on "
        f"both sides (emotion had no usable verdict in {judgings} of {judgings} judgings (the "
        "reply holds no JSON object))"
    )


def judging(damage: str | None, formatting: float, logic: float, weights: bool) -> Judging:
    """A guide writing judged 6 on every leaf but `logic`, the rule giving `formatting`."""
    leaves = {leaf.id: 6.0 for leaf in tree_for("guide").leaves}
    leaves.update(formatting=formatting, logic=logic)
    given = {  # the negotiator's equal weights within each node
        i: 1 / len(ids) for ids in tree_for("guide").negotiated.values() for i in ids
    }
    return Judging("guide", "g1", 1, damage, True, leaves, {}, given if weights else None)


def test_a_pair_is_read_on_the_judges_leaves_with_the_rule_held() -> None:
    """The rule alone moved (formatting 10 to 0): no change. The judge lowered logic by
    4: content falls by logic's weight in it, overall by content's share of the root (in
    the paper's tree a quarter of 4, then half of that: content weighs 4 leaves of 8)."""
    tree = tree_for("guide")
    content = -4 / len(tree.negotiated["content"])
    overall = content * tree.root_weights["content"] / sum(tree.root_weights.values())
    original = judging(None, 10, 8, weights=True)
    assert compare(original, judging("drop", 0, 8, weights=True)) == Comparison(
        dict.fromkeys(("overall", "content", "format", "impression"), 0.0),
        {"formatting": -10.0},
        uniform=False,
    )
    lowered = compare(original, judging("drop", 0, 4, weights=True))
    assert lowered is not None and lowered.changes["content"] == pytest.approx(content)
    assert lowered.changes["overall"] == pytest.approx(overall)
    # without negotiated weights on either side: equal ones, said
    unweighted = compare(judging(None, 10, 8, False), judging("drop", 10, 4, False))
    assert unweighted is not None and unweighted.uniform
    assert unweighted.changes["content"] == pytest.approx(content)
    # a leaf without a verdict on either side: no pair
    broken = Judging("guide", "g1", 1, "drop", True, {}, {"logic": "no JSON"}, None)
    assert compare(original, broken) is None


@pytest.mark.parametrize(("k", "n"), [(0, 5), (3, 12), (12, 12), (41, 60)])
def test_the_interval_is_wilsons(k: int, n: int) -> None:
    expected = binomtest(k, n).proportion_ci(0.95, method="wilson")
    low, high = wilson(k / n, n)
    assert low == pytest.approx(expected.low) and high == pytest.approx(expected.high)


def half_width(share: float, n: int) -> float:
    low, high = wilson(share, n)
    return (high - low) / 2


def test_the_docs_pairs_for_an_interval_width_are_wilsons() -> None:
    """docs/judges.md's "How many writings": the fewest pairs whose Wilson interval around
    each share is at most each half-width (±0.1 around one half takes 93 pairs)."""
    docs = (Path(__file__).parents[1] / "docs" / "judges.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| ±(0\.\d+) \| (\d+) \| (\d+) \| (\d+) \|$", docs, re.M)
    assert len(rows) == 4 and rows[2][:2] == ("0.10", "93")
    for width, *pairs in rows:
        fewest = [
            next(n for n in count(1) if half_width(share, n) <= float(width))
            for share in (0.5, 0.75, 0.9)
        ]
        assert fewest == [int(n) for n in pairs], width


@pytest.mark.slow
@pytest.mark.nightly
def test_agreement_with_a_reference_judges_logs(
    serve: Serve, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The reference is a plain check's logs kept with --log-dir: the same judge agrees
    with it perfectly, a judge scoring at random does not."""
    reference = tmp_path / "reference"
    serve(script=sees_damage)
    status, _, err = check(capsys, "--model-role", JUDGE, "--log-dir", str(reference))
    assert status == 0, err
    status, out, err = check(
        capsys, "--model-role", JUDGE, "--quality", "--against", str(reference), "--json"
    )
    assert status == 0, err
    same = json.loads(out)["agreement"]
    assert same["reference"] == ["openai-api/sim/judge"] and same["writings"] == 6
    assert same["pearson"] == same["kendall"] == 1.0 and same["mean_difference"] == 0.0
    serve(script=RandomJudge("another-judge"))
    status, out, err = check(capsys, "--model-role", JUDGE, "--against", str(reference), "--json")
    assert status == 0, err  # agreement is reported, not ruled on
    other = json.loads(out)["agreement"]
    assert other["writings"] == 6 and other["pearson"] is not None and other["pearson"] < 0.9
    assert json.loads(out)["quality"] is None


def bad_reference(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, reference: str
) -> str:
    """The one line of a check whose --against logs cannot serve (status 2, no request)."""
    monkeypatch.setenv("SIM_BASE_URL", "http://127.0.0.1:9/v1")  # never reached
    monkeypatch.setenv("SIM_API_KEY", "none")
    status, out, err = check(capsys, "--model-role", JUDGE, "--against", reference)
    assert status == 2 and out == ""
    [line] = err.splitlines()
    assert line.startswith("howtobench judge-check: error: ")
    return line


def test_missing_reference_logs_are_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "--against: no-such-logs: no such file or folder" in bad_reference(
        capsys, monkeypatch, "no-such-logs"
    )


@pytest.mark.slow
def test_reference_logs_of_other_writings_are_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, writers_logs: Path
) -> None:
    line = bad_reference(capsys, monkeypatch, str(writers_logs))
    assert "--against: no undamaged writing of demo-writer-a (guide, open, completion)" in line
    assert "give the --replay and --tasks of that run" in line
