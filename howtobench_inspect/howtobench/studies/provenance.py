"""What a leaderboard stands on: the runs' metadata, versions, judges, plans and weights
(`provenance`, so that two boards can be told apart), and each writer's writings by
state (`writing_states`: a writer whose writings were often cut is marked).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

import pandas as pd

from howtobench.studies.log_files import StudyError, read_header
from howtobench.studies.logs import Samples, scopes
from howtobench.vocabulary.metadata import TaskKey
from howtobench.writing.state import COMPLETE, CUT, EMPTY, FILTERED, REFUSED, count_states

__all__ = ["LARGE_CUT_SHARE", "STATE_COLUMNS", "provenance", "writing_states"]

# A writer with at least this share of cut writings in a row is marked in the ranking:
# the seven stored writers whose writings are whole have at most 2.1 % in a task, the
# three cut ones 30-37 % in guide and open (docs/data.md); a share of 5 % moves a mean by
# more than its interval does. The same share of writings that were mostly artifacts
# (`heavy_strip`) is marked too.
LARGE_CUT_SHARE = 0.05
STATE_COLUMNS = (
    "writings",
    COMPLETE,
    CUT,
    FILTERED,
    EMPTY,
    REFUSED,
    "reasoning",
    "artifacts",
    "heavy_strip",
)


def writing_states(frame: pd.DataFrame, writers: list[str]) -> pd.DataFrame:
    """Per task (and all tasks) and writer: its writings by state, those with reasoning
    removed, with the paper's prompt artifacts and mostly artifacts, and the shares cut
    and mostly artifacts (`stripped_share`); from each writing's first
    sample (its state is the same in every epoch and scorer's log). Logs without states
    (task version 6 and earlier) give no rows."""
    columns = ["task", "writer", *STATE_COLUMNS, "cut_share", "stripped_share"]
    if "writing_state" not in frame:  # a frame built without the column
        return pd.DataFrame(columns=columns)
    known = frame[frame["writing_state"].notna()].drop_duplicates(["model", "task", "id"])
    rows = []
    for scope in scopes(known["task"]):
        part = known if scope == "all" else known[known["task"] == scope]
        for writer in writers:
            counts = count_states(part.loc[part["model"] == writer, "writing_state"])
            if counts["writings"]:
                row: dict[str, Any] = {"task": scope, "writer": writer}
                row |= {column: counts[column] for column in STATE_COLUMNS}
                row["cut_share"] = counts[CUT] / counts["writings"]
                row["stripped_share"] = counts["heavy_strip"] / counts["writings"]
                rows.append(row)
    return pd.DataFrame(rows, columns=columns)


def _listed(values: Iterable[Any]) -> list[Any]:
    """The distinct values given (None and NaN left out), sorted."""
    return sorted({v for v in values if v is not None and v == v}, key=str)


def provenance(samples: Samples, metric: str, panel: Iterable[str]) -> dict[str, Any]:
    """Where the board's scores came from: the runs' task metadata and versions (read
    again from the logs' headers), the judges (the `panel`'s too), the plans and the
    weights judged with. Runs whose header cannot be read again (samples put together in
    memory, a log removed since) are listed under `unread`, their metadata missing."""
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
    for h in headers:
        versions.setdefault(h.eval.task, set()).add(h.eval.task_version)
    packages: dict[str, set[str]] = {}
    for h in headers:
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
