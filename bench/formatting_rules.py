"""The formatting leaf's two rules on the published writings, and what the choice does
to the writers' overall scores. Reads the data, prints Markdown tables; no judge call.

    python bench/formatting_rules.py --data ../shared/howtobench-data

Parts:
- distribution: how many writings each rule (`lenient`, ours; `paper`, the paper code's
  `score_formatting`) scores 0, 5 and 10, per task, over the 10 models' non-empty
  writings and over the human references.
- writers, per task with a format node (guide, open) and over both: each writer's mean
  overall under each rule, with every LLM leaf held at a fixed verdict (6 on the 1-10
  scales, 2 on paragraphing's 1-3), the uniform weights of ToW w/o plan and the tree's
  formula (`tree/aggregate.py`); the difference and the writers' ranks. Empty writings
  get every leaf's lowest score, as the scorer gives them. With uniform weights the
  formatting leaf is 1/3 of the format node and the format node 3/8 of the overall, so
  the difference must be the mean change of the leaf / 8 whatever the fixed verdicts:
  the script checks it.
- genres: per genre, the share of guide and open writings (models' and references')
  that each rule scores below 10.
- table4: the paper's Table 4 *All* row (section 5.4) shifted by each writer's mean
  difference over all its writings (completion changes by 0): whether the choice of
  rule could reorder the paper's ranking.
"""

from __future__ import annotations

import argparse
import math
from collections import Counter
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from bench import table
from howtobench.dataset import open_source
from howtobench.judge.inputs import clean_text
from howtobench.tree.aggregate import aggregate
from howtobench.tree.negotiator import fixed_weights
from howtobench.tree.spec import tree_for
from howtobench.tree.writing_score import FORMATTINGS

RULES = tuple(FORMATTINGS)
TASKS = ("completion", "guide", "open")
# The fixed expert verdict of every LLM leaf, on its judged scale.
FIXED_VERDICT = {10: 6, 3: 2}
HUMAN = "human reference"
# Table 4's All row as printed (section 5.4), by the stored model each column names.
TABLE4_ALL = {
    "deepseek-r1": 6.10,
    "o3-mini-2025-01-31": 5.86,
    "gpt-4o-2024-11-20": 5.81,
    "claude-3-5-sonnet-20241022": 5.58,
    "gemini-2.0-flash": 5.43,
    "deepseek-chat": 5.42,
    "doubao-pro-32k-241215": 5.34,
    "glm-4-plus-250111": 5.34,
    "claude-3-haiku-20240307": 5.01,
    "Llama-3.3-70B-Instruct": 4.59,
}


Writings = dict[str, dict[str, list[str]]]  # task -> writer -> writings, in record order


def writings(data: Path, task: str) -> tuple[dict[str, list[str]], list[str]]:
    """Each model's stored writings of `task` and the human references, as the scorer
    reads them (`clean_text`), empty ones included; and each record's genre."""
    source = open_source(str(data))
    records = source.records(task)
    found = {}
    for model in source.models(task):
        stored = source.generations_for(task, model, records)
        found[model] = [clean_text(stored[r.id])[0] for r in records]
    found[HUMAN] = [clean_text(r.reference)[0] for r in records]
    return found, [r.genre for r in records]


@cache
def verdict(rule: str, writing: str) -> int:
    """The rule's score of a writing, computed once (the tables read each many times)."""
    return FORMATTINGS[rule](writing).score


def overall(task: str, writing: str, rule: str) -> float:
    """The tree's overall with the LLM leaves at their fixed verdicts and uniform weights."""
    tree = tree_for(task)
    weights = fixed_weights(tree, "uniform").value
    assert weights is not None
    if not writing.strip():
        leaves = {leaf.id: leaf.minimum for leaf in tree.leaves}
    else:
        leaves = {
            leaf.id: (
                float(verdict(rule, writing))
                if leaf.judge == "rule"
                else leaf.map(FIXED_VERDICT[leaf.high])
            )
            for leaf in tree.leaves
        }
    return aggregate(tree, weights.values, leaves).value["overall"]


def distribution(data: Writings) -> list[dict[str, object]]:
    rows = []
    for who in ("models", HUMAN):
        for rule in RULES:
            row: dict[str, object] = {"writings": who, "rule": rule}
            total: Counter[int] = Counter()
            for task in TASKS:
                texts = [
                    t
                    for name, found in data[task].items()
                    if (name == HUMAN) == (who == HUMAN)
                    for t in found
                    if t.strip()
                ]
                counts = Counter(verdict(rule, t) for t in texts)
                total += counts
                row[task] = " / ".join(f"{counts[s]:,}" for s in (0, 5, 10))
            row["all: 0 / 5 / 10"] = " / ".join(f"{total[s]:,}" for s in (0, 5, 10))
            rows.append(row)
    return rows


def ranks(means: dict[str, float]) -> dict[str, int]:
    """1 for the highest mean; the human references are not ranked."""
    order = sorted((w for w in means if w != HUMAN), key=lambda w: -means[w])
    return {w: i for i, w in enumerate(order, start=1)}


def writer_rows(data: Writings, tasks: Iterable[str]) -> list[dict]:
    """Per writer: mean overall under each rule over the writings of `tasks`, difference
    and ranks; the difference checked against the leaf's change / 8."""
    tasks = tuple(tasks)
    means: dict[str, dict[str, float]] = {rule: {} for rule in RULES}
    counts: dict[str, int] = {}
    for writer in data[tasks[0]]:
        pairs = [(task, text) for task in tasks for text in data[task][writer]]
        counts[writer] = len(pairs)
        for rule in RULES:
            means[rule][writer] = math.fsum(overall(t, w, rule) for t, w in pairs) / len(pairs)
        leaf_change = math.fsum(
            (verdict("paper", w) - verdict("lenient", w)) / 8
            for t, w in pairs
            if w.strip() and t != "completion"
        ) / len(pairs)
        difference = means["paper"][writer] - means["lenient"][writer]
        assert math.isclose(difference, leaf_change, abs_tol=1e-12), (writer, difference)
    rank = {rule: ranks(means[rule]) for rule in RULES}
    return [
        {
            "writer": writer,
            "writings": counts[writer],
            "lenient": f"{means['lenient'][writer]:.3f}",
            "paper": f"{means['paper'][writer]:.3f}",
            "paper − lenient": f"{means['paper'][writer] - means['lenient'][writer]:+.3f}",
            "rank lenient": rank["lenient"].get(writer, "-"),
            "rank paper": rank["paper"].get(writer, "-"),
        }
        for writer in sorted(means["lenient"], key=lambda w: -means["lenient"][w])
    ]


def genre_rows(data: Writings, genres: dict[str, list[str]]) -> list[dict]:
    """Per genre, the share of guide and open writings (models, and human references)
    that each rule scores below 10: what the rule asks of each kind of text."""
    tally: dict[str, Counter[str]] = {}
    for task in ("guide", "open"):
        for writer, found in data[task].items():
            who = "human" if writer == HUMAN else "models"
            for genre, text in zip(genres[task], found, strict=True):
                if not text.strip():
                    continue
                count = tally.setdefault(genre, Counter())
                count[who] += 1
                for rule in RULES:
                    count[f"{who} {rule}"] += verdict(rule, text) < 10
    return [
        {
            "genre": genre,
            "model writings": count["models"],
            **{
                f"models < 10, {rule}": f"{count[f'models {rule}'] / count['models']:.1%}"
                for rule in RULES
            },
            "references": count["human"],
            **{
                f"references < 10, {rule}": f"{count[f'human {rule}'] / count['human']:.1%}"
                for rule in RULES
            },
        }
        for genre, count in sorted(tally.items(), key=lambda item: -item[1]["models"])
    ]


def table4_rows(data: Writings) -> list[dict]:
    """Table 4's All row, and the same with each writer's mean change over all tasks."""
    change = {}
    for writer in TABLE4_ALL:
        pairs = [(task, text) for task in TASKS for text in data[task][writer]]
        change[writer] = math.fsum(
            overall(t, w, "paper") - overall(t, w, "lenient") for t, w in pairs
        ) / len(pairs)
    printed = ranks(TABLE4_ALL)
    shifted = {w: TABLE4_ALL[w] - change[w] for w in TABLE4_ALL}
    moved = ranks(shifted)
    return [
        {
            "writer": writer,
            "Table 4 All": f"{TABLE4_ALL[writer]:.2f}",
            "paper − lenient, all tasks": f"{change[writer]:+.3f}",
            "All − (paper − lenient)": f"{shifted[writer]:.3f}",
            "rank printed": printed[writer],
            "rank shifted": moved[writer],
        }
        for writer in TABLE4_ALL
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, required=True, help="a data folder like the paper's data/"
    )
    args = parser.parse_args()
    read = {task: writings(args.data, task) for task in TASKS}
    data = {task: found for task, (found, _) in read.items()}
    genres = {task: kinds for task, (_, kinds) in read.items()}
    print("## Formatting leaf: writings scored 0 / 5 / 10 (non-empty)\n")
    print(table(distribution(data)))
    for title, tasks in (
        ("guide", ["guide"]),
        ("open", ["open"]),
        ("guide + open", ["guide", "open"]),
    ):
        print(f"\n## Mean overall, {title}: LLM leaves fixed, uniform weights\n")
        print(table(writer_rows(data, tasks)))
    print("\n## Guide and open writings scored below 10, by genre\n")
    print(table(genre_rows(data, genres)))
    print("\n## Table 4 All, if its formatting leaf had used the lenient rule (uniform weight)\n")
    print(table(table4_rows(data)))


if __name__ == "__main__":
    main()
