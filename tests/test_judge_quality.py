"""`howtobench judge-check --quality` against the judge simulator over HTTP: a judge that
sees damage passes with discrimination 1, a judge that scores at random fails with exit
status 1, both read back from `--json`; the text report; the Wilson interval.

The scripted judges read only the prompt: the writing between its fences and the
reference it quotes. What they were asked (how many writings, which of them damaged,
which asked twice) is counted by the scripts themselves and set against the demo file,
not against the check's own reading of its logs.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from scipy.stats import binomtest

from howtobench.cli import main
from howtobench.judge_check.quality import pairs_for_width, wilson
from howtobench.simulator import Asked, valid_weights
from howtobench.tree.spec import LEAVES
from support.judges import Serve, hashed, llm_calls

JUDGE = "grader=openai-api/sim/judge"
_LEAVES = {leaf.id: leaf for leaf in LEAVES}
_REFERENCE = re.compile(r"<reference>\n(.*?)\n</reference>", re.S)
_SENTENCE = re.compile(r"[^。！？!?\n]+")
# Staggered offsets for the 1-10 leaves, so that their sum of floors moves with the
# writing's length in steps of a fifth of a point rather than one (Hermite's identity).
_OFFSETS = {"opening_ending": 0.0, "rhetoric": 0.2, "logic": 0.4, "emotion": 0.6, "impression": 0.8}
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


def sees_damage(question: Asked) -> Reply:
    """A judge that reads what damage does: a writing short of its reference's length
    loses marks (dropped text), and each repeated sentence costs half the scale
    (repeated text). Every leaf falls, or stays, when a writing is damaged."""
    if question.kind not in _LEAVES:  # the negotiator, the probes
        return valid_weights(question) if question.kind == "negotiator" else None
    leaf = _LEAVES[question.kind]
    writing = question.writing or ""
    reference = _REFERENCE.search(question.text)
    fullness = min(len(writing) / len(reference.group(1)), 1.0) if reference else 1.0
    share = max(fullness - 0.5 * repeated_sentences(writing), 0.0)
    raw = leaf.low + (leaf.high - leaf.low) * share + _OFFSETS.get(leaf.id, 0.0)
    return {"score": min(math.floor(raw), leaf.high), "reason": "sees damage"}


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


def recording(judge: Callable[[Asked], Reply], seen: Counter[str]) -> Callable[[Asked], Reply]:
    """The judge, counting each writing the impression leaf was asked about."""
    lock = threading.Lock()

    def answer(question: Asked) -> Reply:
        if question.kind == "impression" and question.attempt == 1:
            with lock:
                seen[question.writing or ""] += 1
        return judge(question)

    return answer


@pytest.mark.slow
def test_a_judge_that_sees_damage_passes_with_discrimination_near_1(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    seen: Counter[str] = Counter()
    simulator = serve(script=recording(sees_damage, seen))
    status, out, err = check(capsys, "--model-role", JUDGE, "--quality", "--json")
    assert status == 0, err
    report = json.loads(out)
    quality = report["quality"]
    # the demo's first two writings of each task: 6 originals, each asked twice (the
    # retest), and 12 damaged copies, each different from its original, asked once
    assert sorted(seen.values()) == [1] * 12 + [2] * 6
    assert simulator.calls["negotiator"] == 6  # the weights are not asked again
    assert quality["pairs"] == 12 and quality["unchanged_copies"] == quality["unscored_pairs"] == 0
    assert quality["discrimination"] == 1.0
    assert quality["interval"][0] > 0.5 and quality["interval"][1] == 1.0
    assert quality["interval_method"] == "Wilson score, 95%"
    for damage in ("drop", "repeat"):
        per = quality["perturbations"][damage]
        assert per["pairs"] == 6 and per["discrimination"] == 1.0 and per["ties"] == 0
        assert per["changes"]["overall"] < 0 and per["changes"]["content"] < 0
        assert per["paper_gpt4o"]["overall"] in (-0.36, -0.49)
    assert quality["retest"] == {
        "writings": 6,
        "mean_abs_difference": 0.0,  # this judge answers a question the same every time
        "sd": 0.0,
        "epoch": 2,
    }
    assert quality["effect"] == -quality["changes"]["overall"] > 0
    assert quality["passes"] is True and quality["reasons"] == []
    assert quality["verdict"].startswith("quality: sees damage: discrimination 1.00 (")
    assert report["ok"] is True and report["exit_status"] == 0 and report["reasons"] == []


@pytest.mark.slow
def test_a_judge_that_scores_at_random_fails_with_status_1(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    judge = RandomJudge("random-judge")
    serve(script=judge)
    status, out, err = check(capsys, "--model-role", JUDGE, "--quality", "--json")
    assert status == 1
    report = json.loads(out)
    quality = report["quality"]
    [line] = err.splitlines()
    assert line == f"howtobench judge-check: {quality['verdict']}"
    assert line.startswith("howtobench judge-check: quality: does not see damage: ")
    # usable in every reply: it is the quality verdict alone that fails the judge
    assert all(kind["passes"] for kind in report["kinds"].values())
    assert report["ok"] is False and report["exit_status"] == 1
    assert report["reasons"] == [quality["verdict"]]
    assert quality["passes"] is False and quality["reasons"]
    assert quality["pairs"] == 12 and 0.0 <= quality["discrimination"] <= 1.0
    retest = quality["retest"]
    assert retest["writings"] == 6 and retest["mean_abs_difference"] > 0 and retest["sd"] > 0
    # each original's questions were drawn twice: the retest reached the judge
    originals = [text for text, n in judge.asked.items() if n == 2]
    # 2 completion writings (5 expert calls on the paper's tree), 4 guide/open (7)
    assert len(originals) == 2 * llm_calls("completion") + 4 * llm_calls("guide")


@pytest.mark.slow
def test_the_text_report_ends_with_the_quality_verdict(
    serve: Serve, capsys: pytest.CaptureFixture[str]
) -> None:
    serve(script=sees_damage)
    status, out, err = check(
        capsys, "--model-role", JUDGE, "--quality", "--tasks", "guide", "--limit", "2"
    )
    assert status == 0, err
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    rows = {line.split()[0]: line.split() for line in lines if line.split()[:1]}
    assert rows["drop"][1:4] == ["2", "1.00", "0.34-1.00"]
    assert rows["repeat"][1:4] == ["2", "1.00", "0.34-1.00"]
    assert rows["both"][1:4] == ["4", "1.00", "0.51-1.00"]
    assert "verdict: can serve Tree-of-Writing" in out
    verdict = "quality: sees damage: discrimination 1.00 (0.51-1.00, 4 pairs) > 0.5; retest 0.00 <"
    assert lines[-1].startswith(verdict)


@pytest.mark.parametrize(("k", "n"), [(0, 5), (3, 12), (12, 12), (41, 60)])
def test_the_interval_is_wilsons(k: int, n: int) -> None:
    expected = binomtest(k, n).proportion_ci(0.95, method="wilson")
    low, high = wilson(k / n, n)
    assert low == pytest.approx(expected.low) and high == pytest.approx(expected.high)


def test_pairs_for_an_interval_width() -> None:
    """±0.1 around one half takes 93 pairs; the count is the first with that width."""
    n = pairs_for_width(0.1)
    assert n == 93
    assert (wilson(0.5, n)[1] - wilson(0.5, n)[0]) / 2 <= 0.1
    assert (wilson(0.5, n - 1)[1] - wilson(0.5, n - 1)[0]) / 2 > 0.1


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
