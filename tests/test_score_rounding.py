"""Every scorer stores its numbers rounded to 6 decimals, and its explanation agrees.

inspect's viewer shows a stored float digit by digit, so the binary error of a weighted
sum (5.410125000000001) would sit beside the explanation's 5.41. The judges here are
scripted so that the unrounded numbers are long: a panel of three (or three judge
samples) averages to thirds, a renormalised weight is a long fraction, ROUGE-L, BLEU and
BLEURT are ratios. Each test also checks that its exact numbers need the rounding, so
it fails if the scorer stores them unrounded. The expected numbers are computed here
with exact fractions from the scripted answers, not with the package's arithmetic.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, task_with
from inspect_ai.scorer import Score

from howtobench import autoplan, open_writing, rubric, tree_of_writing
from howtobench.baselines import bleurt as bleurt_module
from howtobench.baselines.overlap import bleu, rouge_l_f1, tokenize
from howtobench.tasks import negotiate
from howtobench.tree.spec import tree_for
from support.data import write_jsonl
from support.evals import run_eval
from support.judges import (
    WEIGHTS,
    Asked,
    Reply,
    ScriptedJudge,
    experts,
    rubric_reply,
    weights_for,
)

# Three judges' answers per question: column j is judge j's (or judge sample j's); a
# leaf added to the tree since these were written answers (6, 6, 7) and weighs 0.
ANSWERS: dict[str, tuple[float, float, float]] = dict.fromkeys(experts(), (6, 6, 7)) | {
    "opening_ending": (7, 8, 8),
    "rhetoric": (6, 6, 7),
    "logic": (8, 9, 9),
    "emotion": (5, 5, 6),
    "plots": (3, 8, 9),
    "paragraphing": (2, 3, 3),
    "impression": (7, 7, 8),
    "rubric": (5, 6, 6),
    "autoplan": (7.2, 6.1, 6),
}
# The leaf scale of the stepped leaves, written out (docs/tree-of-writing.md's table).
PLOTS = {1: 0, 2: 0, 3: 0, 4: 5, 5: 5, 6: 5, 7: 5, 8: 10, 9: 10, 10: 10}
PARAGRAPHING = {1: 0, 2: 5, 3: 10}
TREE = tree_for("guide")
CONTENT = TREE.negotiated["content"]
FORMAT = TREE.negotiated["format"]
WRITER = "replay/demo-writer-a"  # the model `judge_task` is run with


def answer_of(kind: str, column: int, question: Asked) -> Reply:
    if kind == "negotiator":
        return weights_for(question, WEIGHTS)
    given = ANSWERS[kind][column]
    if kind == "rubric":
        return rubric_reply(question, int(given))
    if kind == "autoplan":
        plan = [{"name": n, "weight": 1, "score": 5} for n in ("a", "b", "c")]
        return {"dimensions": plan, "overall": given, "reason": "scripted"}
    return {"score": given, "reason": f"scripted {kind}"}


def panel_judge(column: int) -> ScriptedJudge:
    return ScriptedJudge(lambda q: answer_of(q.kind, column, q), name=f"judge{column}")


def sampled_judge() -> ScriptedJudge:
    """One judge asked the same question three times: it hands out the three columns in
    turn per kind. The means below do not depend on which sample got which."""
    handed: dict[str, int] = {}
    lock = threading.Lock()

    def answer(question: Asked) -> Reply:
        with lock:
            column = handed.get(question.kind, 0)
            handed[question.kind] = column + 1
        return answer_of(question.kind, column % 3, question)

    return ScriptedJudge(answer)


def mapped(kind: str, given: float) -> Fraction:
    table = {"plots": PLOTS, "paragraphing": PARAGRAPHING}.get(kind)
    return Fraction(table[int(given)] if table else Fraction(str(given)))


def mean(values: list[Fraction]) -> Fraction:
    return sum(values, Fraction(0)) / len(values)


def tree_of(leaves: Mapping[str, Fraction]) -> dict[str, Fraction]:
    """The tree's numbers, exactly: weighted nodes, and the root by leaf counts (4:3:1
    on the paper's tree, §3.3)."""
    weight = {k: Fraction(str(w)) for k, w in WEIGHTS.items()}
    content = sum((weight[k] * leaves[k] for k in CONTENT), Fraction(0))
    form = sum((weight[k] * leaves[k] for k in FORMAT), Fraction(0))
    impression = leaves["impression"]
    nodes = {"content": content, "format": form, "impression": impression}
    root = TREE.root_weights
    overall = sum((w * nodes[n] for n, w in root.items()), Fraction(0)) / sum(root.values())
    return {
        "overall": overall,
        "content": content,
        "format": form,
        "impression": impression,
        **leaves,
    }


def expected_tree(formatting: float, columns: range = range(3)) -> dict[str, Fraction]:
    """Each leaf the mean of its mapped answers (the rule's formatting as it came)."""
    leaves = {kind: mean([mapped(kind, ANSWERS[kind][j]) for j in columns]) for kind in experts()}
    return tree_of({**leaves, "formatting": Fraction(formatting)})


def six(exact: Fraction) -> float:
    """The exact number rounded to 6 decimals, as a float."""
    return float(round(exact, 6))


def numbers(value: Any) -> dict[str, float]:
    """Every number of a score value, by key ('' for a single number)."""
    if isinstance(value, Mapping):
        return {k: v for k, v in value.items() if isinstance(v, int | float)}
    return {"": value}


def assert_stored_rounded(score: Score) -> None:
    found = numbers(score.value)
    assert found, score.value
    for key, number in found.items():
        assert number == round(number, 6), (key, number)


def assert_needs_rounding(exact: Mapping[str, Fraction]) -> None:
    """At least one number has more than 6 decimals, so an unrounded score would fail."""
    assert any(float(v) != six(v) for v in exact.values()), exact


def shown(explanation: str) -> dict[str, Fraction]:
    """The numbers the ToW explanation shows: the root, each node and each leaf."""
    found = {}
    for line in explanation.splitlines():
        if match := re.match(r"overall (\d+\.\d\d) = ", line):
            found["overall"] = Fraction(match[1])
        elif match := re.match(r"[├└]─ (\w+) (\d+\.\d\d)", line):
            found[match[1]] = Fraction(match[2])
        elif match := re.search(r"─ (\w+)  w=\d+\.\d\d  (\d+\.\d\d)", line):
            found[match[1]] = Fraction(match[2])
    return found


def assert_shown_agrees(shown_value: Fraction, exact: Fraction, decimals: int) -> None:
    """A number shown to `decimals` places is the exact one rounded there."""
    assert abs(shown_value - exact) <= Fraction(1, 2 * 10**decimals), (shown_value, exact)


def judge_task(how: str) -> tuple[Task, ScriptedJudge, list[ScriptedJudge]]:
    """The demo's speech writing scored by tow, rubric and autoplan, by a panel of three
    judges (`judges`) or by one judge sampled three times (`judge_samples`); returns the
    task, the grader (the negotiator) and the judges; the task is run with `WRITER`."""
    speech = open_writing(dataset="demo", genre="speech")
    if how == "judge_samples":
        judge = sampled_judge()
        options: dict[str, Any] = {"judge_samples": 3}
        grader, judges = judge, [judge]
    else:
        judges = [panel_judge(j) for j in range(3)]
        options = {"judges": [judge.model() for judge in judges]}
        grader = ScriptedJudge(lambda q: answer_of(q.kind, 0, q), name="negotiator")
    scorers = [tree_of_writing(**options), rubric(**options), autoplan(**options)]
    return task_with(speech, scorer=scorers), grader, judges


@pytest.mark.parametrize("how", ["judges", "judge_samples"])
def test_judge_scorers_store_six_decimals(how: str, tmp_path: Path) -> None:
    task, grader, judges = judge_task(how)
    [log] = run_eval(task, tmp_path, grader, model=WRITER)
    assert sum(len(j.questions) for j in judges) >= 3 * 9  # every judge answered everything
    scores = log.samples[0].scores
    tow, rubric_score, plan_score = scores["tow"], scores["rubric"], scores["autoplan"]
    for score in (tow, rubric_score, plan_score):
        assert_stored_rounded(score)
    exact = expected_tree(tow.value["formatting"])
    assert tow.value["formatting"] in (0, 5, 10)
    assert_needs_rounding(exact)
    assert tow.value == {key: six(number) for key, number in exact.items()}
    overalls = {
        kind: mean([Fraction(str(v)) for v in ANSWERS[kind]]) for kind in ("rubric", "autoplan")
    }
    assert_needs_rounding(overalls)
    assert rubric_score.value == six(overalls["rubric"])
    assert plan_score.value == six(overalls["autoplan"])
    if how == "judge_samples":
        record = tow.metadata["self_consistency"]
        assert record["scored"] == 3
        assert all(v == round(v, 6) for v in record["std"].values())
        return
    # the panel's explanations show the stored tree and overall, rounded
    tree_shown = shown(tow.explanation)
    assert set(tree_shown) == set(exact)
    for key, number in tree_shown.items():
        assert_shown_agrees(number, Fraction(tow.value[key]), 2)
    for score in (rubric_score, plan_score):
        head = re.match(r"overall (\d+\.\d\d) = mean of 3 judges", score.explanation)
        assert head, score.explanation
        assert_shown_agrees(Fraction(head[1]), Fraction(score.value), 2)
    # the metadata's copies of the tree's numbers are the stored ones
    leaves = tow.metadata["leaves"]
    assert all(leaves[k]["score"] == tow.value[k] for k in leaves)
    for j, judge in enumerate(judges):
        own = {k: mapped(k, ANSWERS[k][j]) for k in experts()}
        alone = tree_of({**own, "formatting": Fraction(tow.value["formatting"])})
        assert tow.metadata["by_judge"][f"mockllm/{judge.name}"] == six(alone["overall"])


def test_overlap_scorers_store_six_decimals(tmp_path: Path) -> None:
    [log] = run_eval(
        open_writing(dataset="demo", scorers="rouge_l,bleu"), tmp_path, model="replay/demo-writer-a"
    )
    raw_numbers = []
    for sample in log.samples:
        writing, reference = sample.output.completion, str(sample.target)
        language = sample.metadata["language"]
        words = tokenize(writing, language, "word"), tokenize(reference, language, "word")
        chars = tokenize(writing, language, "char"), tokenize(reference, language, "char")
        bleu_1, bleu_4 = bleu(*chars)
        raw = {"rouge_l": rouge_l_f1(*words), "bleu_1": bleu_1, "bleu_4": bleu_4}
        raw_numbers += raw.values()
        for name in ("rouge_l", "bleu"):
            assert_stored_rounded(sample.scores[name])
        stored = {"rouge_l": sample.scores["rouge_l"].value, **sample.scores["bleu"].value}
        assert stored == {key: round(number, 6) for key, number in raw.items()}
    assert any(number != round(number, 6) for number in raw_numbers)


@dataclass
class StandInBleurt:
    """Stands in for a loaded checkpoint: a score with many decimals, from the lengths."""

    checkpoint: str = "stand-in"
    max_tokens: int = 512

    def score(self, reference: str, candidate: str) -> tuple[float, int]:
        return len(candidate) / (7 * len(reference)) + 0.1, 100


def test_bleurt_stores_six_decimals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bleurt_module, "load", lambda checkpoint, batch_size: StandInBleurt())
    task = task_with(
        open_writing(dataset="demo", scorers="rouge_l"),
        scorer=bleurt_module.bleurt(checkpoint="stand-in"),
    )
    [log] = run_eval(task, tmp_path, model="replay/demo-writer-a")
    raw_numbers = []
    for sample in log.samples:
        raw, _ = StandInBleurt().score(str(sample.target), sample.output.completion)
        raw_numbers.append(raw)
        assert_stored_rounded(sample.scores["bleurt"])
        assert sample.scores["bleurt"].value == round(raw, 6)
    assert any(number != round(number, 6) for number in raw_numbers)


def test_negotiation_stores_six_decimals_and_keeps_the_weights(tmp_path: Path) -> None:
    logic = Fraction("0.255")  # content sums to 1.005: renormalised into long fractions
    sent = {**WEIGHTS, "opening_ending": 0.25, "rhetoric": 0.25, "emotion": 0.25, "logic": 0.255}

    def answer(question: Asked) -> Reply:
        return weights_for(question, sent)

    [log] = run_eval(negotiate(dataset="demo", tasks="open"), tmp_path, ScriptedJudge(answer))
    total = 3 * Fraction("0.25") + logic
    exact = {k: Fraction(str(v)) / (total if k in CONTENT else 1) for k, v in sent.items()}
    assert_needs_rounding(exact)
    for sample in log.samples:
        score = sample.scores["negotiation"]
        assert_stored_rounded(score)
        assert score.value == {k: six(v) for k, v in exact.items()}
        # the weights ToW judges with and a plan exports stay as negotiated
        assert score.metadata["weights"]["logic"] == pytest.approx(float(logic / total), rel=1e-12)
        assert score.metadata["weights"]["logic"] != score.value["logic"]
        for line in score.explanation.splitlines()[:-1]:
            leaf, weight = re.fullmatch(r"(\w+)  w=(\d\.\d{3})", line).groups()
            assert_shown_agrees(Fraction(weight), exact[leaf], 3)


def test_unscored_stays_unscored(tmp_path: Path) -> None:
    """A writing marked unusable keeps inspect's unscored value (NaN) in every scorer of
    its quality; its state (the writing itself is whole) is still counted."""
    rows = [{"instruction": "写一段话", "reference": "", "generations": {"m": "一段话。"}}]
    data = write_jsonl(tmp_path / "mine.jsonl", rows)
    [log] = run_eval(
        open_writing(dataset=str(data), scorers="rouge_l,bleu"), tmp_path, model="replay/m"
    )
    scores = dict(log.samples[0].scores or {})
    assert scores.pop("writing_state").value == "complete"
    assert sorted(scores) == ["bleu", "rouge_l"]
    for score in scores.values():
        assert score.reason == "scoring_failed"
        assert all(math.isnan(v) for v in numbers(score.value).values())
