"""What a board's writers wrote: each writer's writings by state, what cut them, and why a
writer has no mean. A mean hides what it is a mean of, so a writer often cut or often
stripped is marked, and one with no mean keeps a line saying why (docs/studies.md, "Every
writer is counted").
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pandas as pd

from howtobench.studies.logs import scopes
from howtobench.writing.state import CUT, STATES, STORED, count_states

__all__ = [
    "COUNTS",
    "LARGE_CUT_SHARE",
    "cut_note",
    "marks",
    "no_mean",
    "stripped_note",
    "unranked",
    "writing_states",
]

# The share of cut (or `heavy_strip`) writings that marks a writer: 5 % moves a mean by
# more than its interval; the stored writers are at most 2.1 % or 30-37 % (docs/data.md).
LARGE_CUT_SHARE = 0.05
# The writings table's counts (docs/studies.md, "Every writer is counted").
COUNTS = ("writings", "scored", *STATES, "reasoning", "artifacts", "heavy_strip")
_COLUMNS = [
    "task",
    "writer",
    *COUNTS,
    "cut_share",
    "stripped_share",
    "cut_unscored",
    "cut_by",
    "cut_policy",
]
# The ranking's marks: the share that earns each, and its word.
_MARKS = (("cut_share", "cut"), ("stripped_share", "stripped"))
# What cut a live writer's writing, by its stop reason.
_STOPPED = {
    "max_tokens": "by the writer's length limit (max_tokens)",
    "model_length": "by the writer's context (model_length)",
}
_MARKED = " (marked [cut] in the ranking)"
_STORED = "when stored (they end mid-sentence)"


def _stored_limit(provenance: Any) -> str | None:
    """The length limit that made imported writings (lm-eval's `max_gen_toks`, from the
    provenance `howtobench lm-eval import` wrote beside them), or None."""
    if not isinstance(provenance, dict) or provenance.get("harness") != "lm-evaluation-harness":
        return None
    limit = (provenance.get("generation_kwargs") or {}).get("max_gen_toks")
    return f"by lm-eval's max_gen_toks={limit}" if limit is not None else None


def _cause(row: pd.Series) -> str:
    """What cut one writing (a row of the samples' frame whose writing was cut)."""
    stop = row["writing_state"].get("stop_reason")
    if stop in _STOPPED:
        return _STOPPED[stop]
    return (stop == STORED and _stored_limit(row.get("writer_provenance"))) or _STORED


def writing_states(frame: pd.DataFrame, metric: str, writers: list[str]) -> pd.DataFrame:
    """The writings table (`_COLUMNS`) per task (and all tasks) and writer, `scored` being
    the writings with a value of `metric`: `writers` first, then those without a mean, from
    each writing's first sample (its state is the same in every epoch and scorer's log)."""
    if "writing_state" not in frame:  # a frame built without the column
        return pd.DataFrame(columns=_COLUMNS)
    writing = ["model", "task", "id"]
    scored = frame.groupby(writing, sort=False)[metric].agg(lambda values: values.notna().any())
    known = frame[frame["writing_state"].notna()].drop_duplicates(writing)
    known = known.assign(scored=scored.reindex(pd.MultiIndex.from_frame(known[writing])).values)
    everyone = [*writers, *(w for w in dict.fromkeys(known["model"]) if w not in writers)]
    rows = []
    for scope in scopes(known["task"]):
        part = known if scope == "all" else known[known["task"] == scope]
        for writer in everyone:
            mine = part[part["model"] == writer]
            counts = count_states(mine["writing_state"])
            if not counts["writings"]:
                continue
            cuts = mine[mine["writing_state"].map(lambda record: record.get("state") == CUT)]
            causes = Counter(_cause(row) for _, row in cuts.iterrows())
            policies = mine.get("cut_policy", pd.Series(dtype=object)).dropna()
            row: dict[str, Any] = {"task": scope, "writer": writer}
            row |= {column: counts[column] for column in COUNTS if column != "scored"}
            row["scored"] = int(mine["scored"].sum())
            row["cut_share"] = counts[CUT] / counts["writings"]
            row["stripped_share"] = counts["heavy_strip"] / counts["writings"]
            row["cut_unscored"] = int((~cuts["scored"].astype(bool)).sum())
            row["cut_by"] = "; ".join(cause for cause, _ in causes.most_common())
            row["cut_policy"] = ", ".join(sorted(set(policies))) or None
            rows.append(row)
    return pd.DataFrame(rows, columns=_COLUMNS)


def marks(states: pd.DataFrame, task: str, writer: str) -> str:
    """What follows a writer's name in a ranking row: ` [cut 27%]`, ` [stripped 6%]` (mostly
    the paper's prompt artifacts) where that share of its writings in the task is large."""
    if states.empty:
        return ""
    mine = states[(states["task"] == task) & (states["writer"] == writer)].head(1)
    return "".join(
        f" [{word} {row[share]:.0%}]"
        for _, row in mine.iterrows()
        for share, word in _MARKS
        if row[share] >= LARGE_CUT_SHARE
    )


def unranked(states: pd.DataFrame) -> pd.DataFrame:
    """The rows of writers without a mean in a task: writings, none of them scored."""
    if states.empty:
        return states
    return states[states["scored"] == 0]


def _left_unscored(row: pd.Series) -> str:
    """How the cut writings left unscored were left so: the run's choice, when it was."""
    return "left unscored (-T cut=unscored)" if row["cut_policy"] == "unscored" else "left unscored"


def no_mean(row: pd.Series) -> str:
    """Why a writer has no mean in a task (a row of `unranked`), in a few words (what cut
    them is in the writings table and the notes)."""
    n, cut = int(row["writings"]), int(row["cut_unscored"])
    if cut == n:
        return f"no mean: all {n} writings cut, {_left_unscored(row)}"
    parts = [f"{cut} cut, {_left_unscored(row)}"] if cut else []
    parts.append(f"{n - cut} unscored by the scorer")
    return f"no mean: none of its {n} writings scored ({'; '.join(parts)})"


def stripped_note(row: pd.Series) -> str:
    """The report's note on a writer many of whose writings were mostly artifacts."""
    return (
        f"{row['writer']}: {row['heavy_strip']} of {row['writings']} writings were mostly the "
        f"paper's prompt artifacts ({row['stripped_share']:.0%}), judged on what was left "
        "(marked [stripped] in the ranking)"
    )


def cut_note(row: pd.Series) -> str:
    """The report's note on a writer with many cut writings (a row of `writing_states`):
    how many, what cut them, and what its mean is then."""
    n, cut, unscored = int(row["writings"]), int(row["cut"]), int(row["cut_unscored"])
    said = f"{row['writer']}: {cut} of {n} writings cut ({row['cut_share']:.0%}) {row['cut_by']}"
    if _STORED in row["cut_by"]:
        said += ", no stop reason recorded: a live rerun of this model is not comparable"
    if unscored < cut:  # some cut writings are in the mean
        scored = (
            "scored as written"
            if not unscored
            else f"{cut - unscored} scored as written, {unscored} {_left_unscored(row)}"
        )
        return f"{said}; {scored}, so its mean is not that of whole writings{_MARKED}"
    if not row["scored"]:
        return f"{said}; {_left_unscored(row)}: it has no mean{_MARKED}"
    return (
        f"{said}; {_left_unscored(row)}: its mean is that of its whole writings only, "
        f"{row['scored']} of {n}{_MARKED}"
    )
