"""`howtobench plan export`: the negotiated weights of logs, frozen into a plan file.

Inputs that describe different instruments are refused (docs/large-runs.md); an
instruction negotiated differently in two logs (a sampling judge, or runs that shared no
reply store) by name, since a plan that picked one of them would hide the disagreement.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fsspec
from inspect_ai.log import EvalLog

from howtobench.studies.log_files import StudyError, log_files, read_log
from howtobench.tree.plan import PlanEntry, plan_text
from howtobench.vocabulary.metadata import SampleKey, ScoreKey, TaskKey

__all__ = ["export_plan"]

NEGOTIATE_TASK = "howtobench/negotiate"


@dataclass
class _Collected:
    """What the logs have said so far: each instruction's weights and where from, and
    the instrument (data, tree, judge, temperature) with the first log that named it."""

    entries: dict[tuple[str, str], tuple[PlanEntry, str]] = field(default_factory=dict)
    instrument: dict[str, tuple[Any, str]] = field(default_factory=dict)
    missing: set[tuple[str, str]] = field(default_factory=set)
    data: dict[str, dict[str, Any]] = field(default_factory=dict)  # task -> fingerprint

    def same(self, what: str, value: Any, path: str) -> None:
        """Refuse logs of different instruments."""
        first = self.instrument.setdefault(what, (value, path))
        if first[0] != value:
            raise StudyError(
                f"{path}: its {what} is {_shown(value)}, but {first[1]} has {_shown(first[0])}: "
                "a plan comes from one data source, tree, judge and temperature"
            )

    def add(self, entry: PlanEntry, path: str) -> None:
        key = (entry.task, entry.id)
        first = self.entries.setdefault(key, (entry, path))
        if first[0].fingerprint != entry.fingerprint:
            raise StudyError(
                f"{entry.task} instruction {entry.id} was negotiated differently in {first[1]} "
                f"(weights {first[0].fingerprint}) and {path} (weights {entry.fingerprint}): "
                "export from logs that agree, or negotiate once with howtobench/negotiate"
            )
        self.missing.discard(key)


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _scorer(log: EvalLog, path: str) -> str:
    """The scorer whose metadata holds the weights, after checking the log can give them."""
    if log.eval.task == NEGOTIATE_TASK:
        return "negotiation"
    metadata = log.eval.metadata or {}
    if metadata.get(TaskKey.WEIGHTS, "negotiated") != "negotiated":
        raise StudyError(
            f"{path}: scored with weights={metadata[TaskKey.WEIGHTS]}, not negotiated weights"
        )
    if not any(spec.name.split("/")[-1] == "tow" for spec in log.eval.scorers or []):
        raise StudyError(f"{path}: no tow scores, so no negotiated weights")
    return "tow"


def _collect(log: EvalLog, path: str, found: _Collected) -> None:
    metadata = log.eval.metadata or {}
    if TaskKey.DATA not in metadata or TaskKey.TREE not in metadata:
        raise StudyError(
            f"{path}: the log does not record its data fingerprint and tree version (it "
            "predates plans): negotiate again with howtobench/negotiate"
        )
    scorer = _scorer(log, path)
    found.same("tree version", metadata[TaskKey.TREE], path)
    for task, data in metadata[TaskKey.DATA].items():
        found.same(f"{task} data", (data.get("count"), data.get("sha256")), path)
        found.data[task] = {"count": data.get("count"), "sha256": data.get("sha256")}
    for sample in log.samples or []:
        score = (sample.scores or {}).get(scorer)
        meta = (score.metadata or {}) if score else {}
        task = str(meta.get(ScoreKey.TASK) or (sample.metadata or {}).get(SampleKey.TASK))
        weights = meta.get(ScoreKey.WEIGHTS)
        negotiator = meta.get(ScoreKey.NEGOTIATOR) or {}
        if not weights:
            found.missing.add((task, str(sample.id)))
            continue
        found.same("judge", negotiator.get("model"), path)
        found.same("temperature", negotiator.get("temperature"), path)
        entry = PlanEntry(task, str(sample.id), dict(weights), negotiator.get("explanation") or "")
        found.add(entry, path)


def export_plan(logs: Sequence[str | Path], out: str | Path) -> str:
    """Write the plan of the logs named (files or folders) to `out`; returns what was
    written, in one line (and a second when some instructions have no weights)."""
    found = _Collected()
    paths = log_files(logs)
    for path in paths:
        _collect(read_log(path), path, found)
    if not found.entries:
        raise StudyError("no negotiated weights in the logs (every negotiation failed?)")
    text = plan_text(
        (entry for entry, _ in found.entries.values()),
        {
            "judge": found.instrument["judge"][0],
            "temperature": found.instrument["temperature"][0],
            "data": found.data,
            "sources": [str(p) for p in paths],
        },
    )
    try:
        with fsspec.open(str(out), "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise StudyError(f"{out}: cannot write the plan: {error}") from None
    counts = Counter(task for task, _ in found.entries)
    digest = json.loads(text.partition("\n")[0])["digest"][:12]
    said = (
        f"wrote {out}: {len(found.entries)} instructions "
        f"({', '.join(f'{t} {n}' for t, n in sorted(counts.items()))}), judge "
        f"{found.instrument['judge'][0]} at temperature {found.instrument['temperature'][0]}, "
        f"digest {digest}"
    )
    if found.missing:
        example = sorted(found.missing)[0]
        said += (
            f"\nwarning: {len(found.missing)} instruction(s) have no weights (their negotiation "
            f"failed, e.g. {example[0]} {example[1]}): rerun howtobench/negotiate for them and "
            "export again, or scoring them from this plan is refused"
        )
    return said
