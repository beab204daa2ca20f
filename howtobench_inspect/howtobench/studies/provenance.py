"""What a leaderboard stands on: the runs' metadata, versions, judges, plans and weights,
so that two boards can be told apart (what the writers wrote is `writings`)."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from howtobench.studies.log_files import StudyError, read_header
from howtobench.studies.logs import Samples
from howtobench.vocabulary.metadata import TaskKey

__all__ = ["provenance"]


def _listed(values: Iterable[Any]) -> list[Any]:
    """The distinct values given (None and NaN left out), sorted."""
    return sorted({v for v in values if v is not None and v == v}, key=str)


def provenance(samples: Samples, metric: str, panel: Iterable[str]) -> dict[str, Any]:
    """Where the board's scores came from: the runs' task metadata and versions (read
    again from the headers), the judges, the plans and the weights. Runs whose header
    cannot be read (samples put together in memory, a log removed since) go in `unread`."""
    frame = samples.frame
    headers, unread = [], []
    for run in dict.fromkeys(frame["run"]):
        try:
            headers.append(read_header(run))
        except StudyError:
            unread.append(run)
    meta = [h.eval.metadata or {} for h in headers]
    data: dict[str, list[dict[str, Any]]] = {}
    for task_data in (m.get(TaskKey.DATA) or {} for m in meta):
        for task, print_ in task_data.items():
            if print_ not in data.setdefault(task, []):
                data[task].append(print_)
    versions: dict[str, set[int | str]] = {}
    packages: dict[str, set[str]] = {}
    for h in headers:
        versions.setdefault(h.eval.task, set()).add(h.eval.task_version)
        for name, version in (h.eval.packages or {}).items():
            packages.setdefault(name, set()).add(version)
    # samples put together by hand may lack the newer score metadata
    prints = frame.reindex(columns=["task", "id", "weights_fingerprint"]).dropna()
    lines = sorted(set(prints["task"] + "/" + prints["id"] + " " + prints["weights_fingerprint"]))
    return {
        "metric": metric,
        "logs": len(headers),
        "unread": unread,
        "judges": _listed(frame["grader"]),
        "panel": list(panel),
        "data": data,
        "tree": _listed(m.get("tree") for m in meta),
        "weights": _listed(m.get("weights") for m in meta),
        "plan": _listed([*(m.get("plan") for m in meta), *frame.get("plan", [])]),
        # one digest over every instruction's weights fingerprint: equal boards were
        # judged with equal weights
        "weights_digest": hashlib.sha256("\n".join(lines).encode()).hexdigest()[:16]
        if lines
        else None,
        "task_versions": {task: sorted(v) for task, v in sorted(versions.items())},
        "packages": {name: sorted(v) for name, v in sorted(packages.items())},
    }
