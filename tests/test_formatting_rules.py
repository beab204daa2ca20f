"""The formatting leaf's two rules: the paper code's (`-T formatting=paper`) on texts that
take each of its branches, the parameter's checks, a ToW run over the judge simulator,
and the paper rule's counts on the published writings.

The expected scores of the paper rule were worked out by reading `score_formatting` in
the paper repository's `code/tow/evaluation/format_node.py`, not by running our module.
"""

import json
from pathlib import Path
from statistics import fmean

import pytest

from howtobench import completion, guide, tree_of_writing
from howtobench.tree.formatting_paper import paper_formatting_verdict
from howtobench.tree.headings import formatting_verdict
from howtobench.tree.spec import tree_for
from howtobench.vocabulary.parameter_values import ParameterError
from support.data import write_jsonl
from support.evals import run_eval, scores
from support.judges import Serve, llm_calls

PROSE = "春风拂过河岸，柳枝轻摇，行人放慢了脚步。" * 25  # 500 characters, no title
assert len(PROSE) == 500

PAPER_CASES = {
    # no title: 10 under 500 characters of the text as given, 5 from 500 on
    "short prose": ("春天来了。\n\n花开了，草绿了。", 10),
    "499 characters": (PROSE[:499], 10),
    "500 characters": (PROSE, 5),
    "blank lines count toward the 500": (PROSE[:498] + "\n\n", 5),
    "bullets are no title": ("- 甲\n- 乙\n" + PROSE, 5),
    "a `1)` item is no title": ("1) 甲\n" + PROSE, 5),
    "`#` without a space is no title": ("#标题\n" + PROSE, 5),
    "seven `#` are no title": ("####### 标题\n" + PROSE, 5),
    "a bare `一、` is no title": ("一、\n" + PROSE, 5),
    # any title, of either kind, and levels that step by one: 10
    "one markdown title": ("## 标题\n" + PROSE, 10),
    "an indented title": ("   ## 标题\n" + PROSE, 10),
    "a Chinese section": ("一、总体要求\n" + PROSE, 10),
    "a chapter": ("第三章 归来\n" + PROSE, 10),
    "a numbered line": ("1. 第一点\n" + PROSE, 10),
    "a number with a decimal point": ("1.5亿元的投入让小城变了样。\n" + PROSE, 10),
    "a full-width digit": ("１．第一点\n" + PROSE, 10),
    "a numbering gap": ("一、甲\n正文\n三、丙\n正文", 10),
    "deeper one level at a time": ("# 甲\n## 乙\n### 丙\n正文", 10),
    "a first title deeper than the next": ("### 甲\n# 乙\n## 丙\n正文", 10),
    "going back up, then down one": ("# 甲\n## 乙\n### 丙\n# 丁\n## 戊", 10),
    # a markdown title two levels or more below the markdown title before it: 0
    "a level jump": ("# 甲\n### 乙\n正文", 0),
    "a jump after going back up": ("# 甲\n## 乙\n# 丙\n### 丁", 0),
    "sections between do not count": ("# 甲\n一、乙\n1. 丙\n### 丁", 0),
    "a jump in a short text": ("## 甲\n#### 乙", 0),
}


@pytest.mark.parametrize(("text", "expected"), PAPER_CASES.values(), ids=PAPER_CASES.keys())
def test_paper_rule_on_each_branch(text: str, expected: int) -> None:
    assert paper_formatting_verdict(text).score == expected


def test_paper_rule_says_why() -> None:
    assert paper_formatting_verdict(PROSE).reason == (
        "no title in 500 characters (500 or more want one)"
    )
    assert paper_formatting_verdict("正文\n# 甲\n### 乙").reason == (
        "line 3: markdown title 2 levels below the one before"
    )
    assert paper_formatting_verdict("短文。").reason == "no title, under 500 characters"
    assert paper_formatting_verdict("# 甲\n1. 乙").reason == (
        "2 titles, markdown levels deepen one at a time"
    )
    assert paper_formatting_verdict("一、甲").reason == (
        "one title, markdown levels deepen one at a time"
    )


GUIDE = {"dataset": "demo"}


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (
            lambda: guide(**GUIDE, formatting="strict"),
            "-T formatting: expected one of lenient, paper, got 'strict'",
        ),
        (
            lambda: guide(**GUIDE, formatting=3),
            "-T formatting: expected one of lenient, paper, got 3",
        ),
        (
            lambda: completion(**GUIDE, formatting="paper"),
            "-T formatting: the completion tree has no format node, so no formatting leaf "
            "to apply it to",
        ),
        (
            lambda: guide(**GUIDE, nodes="content,impression", formatting="paper"),
            "-T formatting: the kept nodes have no format node, so no formatting leaf "
            "to apply it to",
        ),
        (
            lambda: guide(**GUIDE, scorers="rouge_l", formatting="paper"),
            "-T formatting: none of the chosen scorers (rouge_l) uses it; it applies to tow",
        ),
        (
            lambda: tree_of_writing(formatting="Paper"),
            "-T formatting: expected one of lenient, paper, got 'Paper'",
        ),
    ],
    ids=["unknown", "not text", "completion", "ablation", "no tow", "scorer"],
)
def test_a_bad_formatting_is_refused_in_one_line(build, message: str) -> None:
    with pytest.raises(ParameterError) as refused:
        build()
    assert str(refused.value) == message


def test_the_default_rule_is_recorded_for_completion_too() -> None:
    task = completion(**GUIDE)
    assert task.metadata is not None and task.metadata["formatting"] == "lenient"


# Writings whose formatting the two rules score apart, with (paper, lenient) as worked out
# by hand from each rule's text.
WRITINGS = {
    "untitled": (PROSE, (5, 10)),
    "jump": ("# 社区花园\n\n### 缘起\n\n大家一起种花。", (0, 0)),
    "gap": ("一、缘起\n\n大家一起种花。\n\n三、收获\n\n收获了友谊。", (10, 0)),
}


def _data(path: Path) -> Path:
    rows = [
        {
            "id": name,
            "task": "guide",
            "genre": "散文",
            "instruction": "请写一篇关于社区花园的文章。",
            "grounding": "- 缘起\n- 做法\n- 收获",
            "reference": "社区花园让邻里走近。",
            "generations": {"m": text},
        }
        for name, (text, _) in WRITINGS.items()
    ]
    return write_jsonl(path, rows)


@pytest.mark.slow
def test_tow_over_the_simulator_scores_with_the_rule_chosen(serve: Serve, tmp_path: Path) -> None:
    simulator = serve()
    data = str(_data(tmp_path / "garden.jsonl"))
    runs, calls = {}, {}
    for rule in ("paper", "lenient"):
        [runs[rule]] = run_eval(
            guide(dataset=data, weights="uniform", formatting=rule),
            tmp_path / rule,
            simulator,
            model="replay/m",
        )
        calls[rule] = sum(simulator.calls.values())
    # an expert per LLM leaf and writing (7 on the paper's tree); the second run took every
    # verdict from the reply store, so the two runs differ in the formatting rule alone
    expected = llm_calls("guide") * len(WRITINGS)
    assert calls == {"paper": expected, "lenient": expected}
    assert runs["paper"].eval.metadata is not None
    assert runs["paper"].eval.metadata["formatting"] == "paper"
    assert runs["lenient"].eval.metadata["formatting"] == "lenient"
    found = {rule: scores(log) for rule, log in runs.items()}
    tree = tree_for("guide")
    for name, (text, (paper, lenient)) in WRITINGS.items():
        score, other = found["paper"][name], found["lenient"][name]
        value = score.value
        assert value["formatting"] == paper and other.value["formatting"] == lenient
        assert score.metadata["formatting"] == "paper"
        assert other.metadata["formatting"] == "lenient"
        leaf = score.metadata["leaves"]["formatting"]
        assert leaf["rule"] == "paper" and leaf["judged_by"] == "rule"
        assert leaf["reason"] == paper_formatting_verdict(text).reason
        assert other.metadata["leaves"]["formatting"]["reason"] == formatting_verdict(text).reason
        assert f"(paper rule: {leaf['reason']})" in score.explanation
        # uniform weights: format = the mean of its leaves, and only the formatting leaf
        # differs between the runs, so the overall moves by its change / 8 (a third of it
        # in format, at 3 of the root's 8 on the paper's tree)
        format_leaves = tree.negotiated["format"]
        assert value["format"] == pytest.approx(fmean(value[i] for i in format_leaves))
        for leaf_id in ("plots", "paragraphing", "impression", "content"):
            assert value[leaf_id] == other.value[leaf_id]
        share = tree.root_weights["format"] / sum(tree.root_weights.values())
        moved = (paper - lenient) / len(format_leaves) * share
        # each overall is stored to 6 decimals (exact at /8, not at every root's total)
        assert value["overall"] - other.value["overall"] == pytest.approx(moved, abs=2e-6)


def test_paper_rule_counts_on_the_published_guide_writings(shared_data: Path) -> None:
    """The counts `bench/formatting_rules.py` measured, which are also the fidelity
    review's (it ran the paper code itself): models 0 / 2,332 / 2,197, references
    0 / 333 / 123."""
    counts = {"models": [0, 0, 0], "references": [0, 0, 0]}
    texts = [
        ("models", json.loads(line)["output"])
        for path in sorted((shared_data / "guide" / "inferences").glob("*.jsonl"))
        for line in path.open(encoding="utf-8")
    ]
    texts += [
        ("references", json.loads(line)["reference"])
        for line in (shared_data / "guide" / "aligned.jsonl").open(encoding="utf-8")
    ]
    for who, text in texts:
        if text.strip():
            counts[who][paper_formatting_verdict(text).score // 5] += 1
    assert counts == {"models": [0, 2332, 2197], "references": [0, 333, 123]}
