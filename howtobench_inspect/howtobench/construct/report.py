"""`summary.md`: a build's manifest (`manifest`) as Markdown tables, for people; rendered
from the manifest alone, so that the summary says nothing the facts do not.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tabulate import tabulate

from howtobench.construct.deidentify import FIELDS
from howtobench.construct.manifest import NEAR_LISTED, SCORES
from howtobench.vocabulary.words import TASKS

__all__ = ["summary"]

NEAR_SHOWN = 10  # near-duplicate pairs the summary shows


def summary(facts: dict[str, Any]) -> str:
    """The manifest as Markdown tables."""
    options = facts["options"]
    counts = facts["counts"]
    made = ", ".join(
        f"{task} {n}" for task, n in counts["items"].items() if task in options["tasks"]
    )
    parts = [
        "# Benchmark build",
        f"Corpus `{facts['corpus']['path']}`: {counts['texts']} texts. Model `{options['model']}`; "
        f"tasks {', '.join(options['tasks'])}; quality threshold {options['threshold']}; "
        f"per genre {options['per_genre'] or 'no cap'}; seed {options['seed']}.",
        f"Items: {made} ({counts['deidentified']} de-identified). Rejected: "
        f"{counts['rejected']} (`rejected.jsonl` gives each one's step and reason).",
        "## Steps",
        _steps_table(facts["steps"]),
        "## Duplicates",
        _duplicates_text(facts["duplicates"]),
        "## De-identified",
        _deidentified_text(facts["deidentified"]),
        "## Items per genre and task",
        _table(
            [[genre, *row.values(), sum(row.values())] for genre, row in facts["genres"].items()],
            ["genre", *TASKS, "rejected", "texts"],
        ),
        "## Quality scores by source (like Table 13)",
        _quality_table(facts["quality"]),
        "## Lengths in characters (like Table 2)",
        _lengths_table(facts["lengths"]),
        "## Reference check",
        "Pending for every item (`manifest.json`, `reference_check.items`). "
        + facts["reference_check"]["how"],
    ]
    return "\n\n".join(parts) + "\n"


def _table(rows: list[list[Any]], headers: list[str]) -> str:
    return str(tabulate(rows, headers=headers, tablefmt="github"))


def _lengths_table(lengths: dict[str, dict[str, float]]) -> str:
    """Table 2's columns per task; a build that made no item says so."""
    if not lengths:
        return "No items were made, so there are no lengths to give."
    rows = [[task, *row.values()] for task, row in lengths.items()]
    headers = ["task", "n", "instruction", "grounding", "reference (mean)", "reference (median)"]
    return _table(rows, headers)


def _steps_table(steps: dict[str, dict[str, Any]]) -> str:
    rows = [
        [
            step,
            entry["in"],
            entry.get("asked", "-"),
            entry.get("answered_from_store", "-"),
            ", ".join(f"{code} {n}" for code, n in entry["rejected"].items()) or "-",
            entry["out"],
            entry.get("log", "-"),
        ]
        for step, entry in steps.items()
    ]
    headers = ["step", "texts in", "asked", "from store", "rejected", "texts out", "log"]
    return _table(rows, headers)


def _duplicates_text(duplicates: dict[str, Any]) -> str:
    near = duplicates["near"]
    parts = [
        duplicates["rule"],
        f"Second copies rejected: {duplicates['copies_rejected']}. "
        f"Near-duplicate pairs (ratio >= {near['threshold']:g}), kept: {near['count']}"
        + ("." if not near["count"] else ", to look at:"),
    ]
    if near["count"]:
        shown = near["pairs"][:NEAR_SHOWN]
        rows = [[p["first"], p["second"], p["ratio"]] for p in shown]
        parts.append(_table(rows, ["text", "near-duplicate of it", "ratio"]))
        if near["count"] > len(shown):
            parts.append(
                f"... and {near['count'] - len(shown)} more "
                f"(`manifest.json`, `duplicates.near`, names the first {NEAR_LISTED})."
            )
    return "\n\n".join(parts)


def _deidentified_text(deidentified: dict[str, Any]) -> str:
    """The rule, then a table by kind, then one row per detail replaced."""
    by_kind = [
        [kind, ", ".join(k["placeholders"]), k["items"], k["details"], *(k[f] for f in FIELDS)]
        for kind, k in deidentified["by_kind"].items()
    ]
    rows = [
        [item, r["kind"], r["placeholder"], *(r[field] for field in FIELDS)]
        for item, replaced in deidentified["items"].items()
        for r in replaced
    ]
    if not rows:
        return f"{deidentified['rule']}\n\nNo personal details were found."
    kinds = _table(by_kind, ["kind", "placeholder", "items", "details", *FIELDS])
    table = _table(rows, ["item", "kind", "placeholder", *FIELDS])
    return f"{deidentified['rule']}\n\nBy kind:\n\n{kinds}\n\nBy item:\n\n{table}"


def _quality_table(quality: dict[str, Any]) -> str:
    threshold = quality["threshold"]
    keys = [*SCORES, "failed"]
    total: Counter[str] = Counter()
    rows = []
    for source, counts in quality["by_source"].items():
        total.update(counts)
        rows.append([source, *(counts[k] for k in keys), _kept(counts, threshold)])
    rows.append(["all", *(total[k] for k in keys), _kept(total, threshold)])
    headers = ["source", *SCORES, "no usable reply", f"kept (>= {threshold})"]
    return _table(rows, headers)


def _kept(counts: Counter[str] | dict[str, int], threshold: int) -> int:
    return sum(counts.get(score, 0) for score in SCORES if int(score) >= threshold)
