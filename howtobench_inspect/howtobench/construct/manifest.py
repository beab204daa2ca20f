"""`manifest.json`: what a build made, as facts for programs (`report` renders them for
people), following the paper's tables (the fields: docs/construction.md, "The output
folder"). No clock time, so equal builds give equal manifests.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import asdict
from statistics import fmean, median
from typing import Any

from howtobench.commandline.constants import HIGHEST, LOWEST
from howtobench.construct.deidentify import FIELDS
from howtobench.construct.duplicates import NEAR_DUPLICATE
from howtobench.construct.items import Item
from howtobench.construct.ledger import DUPLICATE, NO_REPLY, STEPS, Ledger
from howtobench.construct.options import BuildOptions
from howtobench.construct.prompts import placeholders
from howtobench.construct.runs import Runs
from howtobench.dataset.records import jsonl_text
from howtobench.vocabulary.words import TASKS

__all__ = ["NEAR_LISTED", "SCORES", "manifest"]

FORMAT = "howtobench-build/1"
NO_SOURCE = "(no source)"
UNKNOWN_GENRE = "(not classified)"
SCORES = tuple(str(s) for s in range(LOWEST, HIGHEST + 1))
NEAR_LISTED = 1000  # near-duplicate pairs the manifest names (all are counted)
DUPLICATE_RULE = (
    "Texts equal once normalised (whitespace, punctuation and format characters dropped, "
    "NFKC, case-folded) are one text: the first in the corpus is kept, the others are "
    f"rejected as {DUPLICATE} with the kept text's id in duplicate_of. Kept texts whose "
    f"normalised forms have a rapidfuzz fuzz.ratio of at least {NEAR_DUPLICATE:g} are "
    "near-duplicates: listed here, not rejected."
)

DEIDENTIFY_RULE = (
    "Each personal detail the screen step quoted (a private person's name; the places, "
    "ethnic group, years and dates of their life; their position, organisation and "
    "writings; their phone, e-mail, address, ID or account number) is replaced by its "
    "kind's placeholder, the form the published data masks that kind with ([具体姓名], "
    "[具体地名], [具体民族], [具体年份], XX, ...; [name], [place], ... in English), "
    "wherever it occurs in the item's instruction, "
    "grounding and reference; the item is kept. Only unsafe content and advertising get an "
    "item rejected. The step logs and work/ still hold the texts as given."
)

REFERENCE_CHECK = (
    "The paper's experts compared each reference with three models' writings for the same "
    "instruction and picked the best; 10.5% of references were replaced by the picked "
    "writing (section 4.6, appendix G). To do the same: run writer models on this folder "
    "(inspect eval howtobench/<task> -T dataset=DIR --model M), give their logs to the rating "
    "studio's pick mode with the reference among the candidates, and where a model's writing "
    "wins, put it in the item's `reference` field; items are keyed by `infer_id` in "
    "`<task>/aligned.jsonl` and `id` in `items.jsonl`, and the sample ids of the logs are the "
    "same."
)


def manifest(
    ledger: Ledger,
    options: BuildOptions,
    runs: Runs,
    corpus: dict[str, Any],
    model: str,
) -> dict[str, Any]:
    """The build's facts (deterministic: no clock times), with paths relative to DIR."""
    items = [ledger.items[i] for i in ledger.texts if i in ledger.items]
    by_task = {task: [item for item in items if item.task == task] for task in TASKS}
    return {
        "format": FORMAT,
        "corpus": corpus,
        "options": {"model": model, **asdict(options), "tasks": list(options.tasks)},
        "outputs": {
            **{task: f"{task}/aligned.jsonl" for task in TASKS if by_task[task]},
            "items": "items.jsonl",
            "rejected": "rejected.jsonl",
            "summary": "summary.md",
        },
        "counts": {
            "texts": len(ledger.texts),
            "items": {task: len(by_task[task]) for task in TASKS},
            "rejected": len(ledger.rejected),
            "deidentified": len(ledger.deidentified),
        },
        "steps": _steps(ledger, runs),
        "genres": _genres(ledger),
        "quality": _quality(ledger, options.threshold),
        "duplicates": _duplicates(ledger),
        "deidentified": {
            "rule": DEIDENTIFY_RULE,
            "by_kind": _by_kind(ledger),
            "items": {
                ledger.items[text_id].infer_id: [r.record() for r in replaced]
                for text_id, replaced in ledger.deidentified.items()
            },
        },
        "lengths": {task: _lengths(chosen) for task, chosen in by_task.items() if chosen},
        "reference_check": {
            "status": "pending",
            "how": REFERENCE_CHECK,
            "items": {
                task: [i.infer_id for i in chosen] for task, chosen in by_task.items() if chosen
            },
        },
        "items_sha256": hashlib.sha256(
            jsonl_text(item.aligned() for item in items).encode("utf-8")
        ).hexdigest(),
    }


def _steps(ledger: Ledger, runs: Runs) -> dict[str, dict[str, Any]]:
    """Per step: texts in, rejections by code, texts out, an LLM step's log and counts."""
    steps: dict[str, dict[str, Any]] = {}
    reached = len(ledger.texts)
    for step in STEPS:
        codes = Counter(r.code for r in ledger.rejected.values() if r.step == step)
        entry: dict[str, Any] = {"in": reached, "rejected": dict(codes)}
        entry["out"] = reached - sum(codes.values())
        if step in runs.logs:
            entry.update(runs.counts[step], log=runs.logs[step])
        steps[step] = entry
        reached = entry["out"]
    return steps


def _duplicates(ledger: Ledger) -> dict[str, Any]:
    """The second copies dropped, and the near-duplicate pairs kept (`NEAR_LISTED` named)."""
    copies = sum(1 for r in ledger.rejected.values() if r.code == DUPLICATE)
    return {
        "rule": DUPLICATE_RULE,
        "copies_rejected": copies,
        "near": {
            "threshold": NEAR_DUPLICATE,
            "count": len(ledger.near),
            "pairs": [
                {"first": a.id, "second": b.id, "ratio": ratio}
                for a, b, ratio in ledger.near[:NEAR_LISTED]
            ],
        },
    }


def _by_kind(ledger: Ledger) -> dict[str, dict[str, Any]]:
    """Per kind of detail replaced, in the placeholder files' order: its placeholders,
    items, details and occurrences in each field."""
    table: dict[str, dict[str, Any]] = {}
    for text_id, replaced in ledger.deidentified.items():
        for r in replaced:
            entry = table.setdefault(
                r.kind,
                {"placeholders": [], "items": set(), "details": 0, **dict.fromkeys(FIELDS, 0)},
            )
            if r.placeholder not in entry["placeholders"]:
                entry["placeholders"].append(r.placeholder)
            entry["items"].add(text_id)
            entry["details"] += 1
            for field in FIELDS:
                entry[field] += r.counts[field]
    order = list(placeholders("en"))
    return {
        kind: {**table[kind], "items": len(table[kind]["items"])}
        for kind in sorted(table, key=order.index)
    }


def _genres(ledger: Ledger) -> dict[str, dict[str, int]]:
    """Items per genre and task, and the texts of each genre left out."""
    table: dict[str, Counter[str]] = {}
    for item in ledger.items.values():
        table.setdefault(item.text.genre, Counter())[item.task] += 1
    for rejection in ledger.rejected.values():
        table.setdefault(rejection.text.genre or UNKNOWN_GENRE, Counter())["rejected"] += 1
    return {
        genre: {key: counts[key] for key in (*TASKS, "rejected")}
        for genre, counts in sorted(table.items())
    }


def _quality(ledger: Ledger, threshold: int) -> dict[str, Any]:
    """The filter's scores by source (Table 13's layout), and the texts it could not rate."""
    by_source: dict[str, Counter[str]] = {}
    for text_id, score in ledger.quality.items():
        by_source.setdefault(ledger.texts[text_id].source or NO_SOURCE, Counter())[str(score)] += 1
    for rejection in ledger.rejected.values():
        if rejection.step == "quality" and rejection.code == NO_REPLY:
            by_source.setdefault(rejection.text.source or NO_SOURCE, Counter())["failed"] += 1
    keys = [*SCORES, "failed"]
    return {
        "threshold": threshold,
        "by_source": {
            source: {key: counts[key] for key in keys}
            for source, counts in sorted(by_source.items())
        },
    }


def _lengths(items: list[Item]) -> dict[str, float]:
    """Characters of instruction, grounding and reference, as Table 2 measures them."""
    references = [len(i.reference) for i in items]
    return {
        "n": len(items),
        "instruction_chars": round(fmean(len(i.instruction) for i in items), 1),
        "grounding_chars": round(fmean(len(i.grounding) for i in items), 1),
        "reference_chars_mean": round(fmean(references), 1),
        "reference_chars_median": float(median(references)),
    }
