"""How `inspect view` shows a writing task: the task's `ViewerConfig`, built from the
scorers it was given.

Left to its defaults, inspect's viewer hides the writing's state, colours scores against
the range the run happened to reach, and renders a model's markdown, fetching its images.
Here the sample list shows each writing's state and scores on fixed ranges, worst first,
and every text is untrusted (docs/running.md, "In the viewer").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from inspect_ai.viewer import (
    SampleScoreView,
    ScoreColorScale,
    TaskSamplesColumn,
    TaskSamplesSort,
    TaskSamplesView,
    ViewerConfig,
)

from howtobench.tree.spec import tree_for
from howtobench.writing.state import COMPLETE, CUT, STATES
from howtobench.writing.summary import WRITING_STATE

__all__ = ["writing_viewer"]


@dataclass(frozen=True)
class Shown:
    """One score as a column of the sample list: its scorer, its name (the key of a dict
    score, else the scorer's), its header and the fixed range of its colours."""

    scorer: str
    name: str
    label: str
    low: float
    high: float


TOW_RANGE = (0.0, 10.0)  # every ToW score, overall, node or leaf, is on 0-10
JUDGED_RANGE = (1.0, 10.0)  # a single-call judge's overall
OVERLAP_RANGE = (0.0, 1.0)  # ROUGE-L, BLEU, BLEURT
# The scores of the scorers other than ToW, as each names them in its score's value.
BASELINES: dict[str, tuple[Shown, ...]] = {
    "rubric": (Shown("rubric", "rubric", "Rubric", *JUDGED_RANGE),),
    "autoplan": (Shown("autoplan", "autoplan", "Auto-Plan", *JUDGED_RANGE),),
    "rouge_l": (Shown("rouge_l", "rouge_l", "ROUGE-L", *OVERLAP_RANGE),),
    "bleu": (
        Shown("bleu", "bleu_1", "BLEU-1", *OVERLAP_RANGE),
        Shown("bleu", "bleu_4", "BLEU-4", *OVERLAP_RANGE),
    ),
    "bleurt": (Shown("bleurt", "bleurt", "BLEURT", *OVERLAP_RANGE),),
}
# A whole writing is good, a cut one a warning; any other state (nothing to judge, or
# nothing written) is bad.
Role = Literal["good", "bad", "warn", "info", "muted"]  # inspect's colours of a category
STATE_ROLES: dict[str, Role] = {COMPLETE: "good", CUT: "warn"}
# The sample list's built-in columns shown before the scores, and those in the picker
# (every sample's prompt starts alike).
SHOWN_FIRST = ("sampleStatus", "sampleId", "answer")
HIDDEN = ("input", "target", "tokens", "duration")


def writing_viewer(
    scorers: Sequence[str], task_type: str, nodes: Sequence[str] | None = None
) -> ViewerConfig:
    """The viewer configuration of a writing task scored by `scorers` (the names of
    `parameters.scorers.SCORERS`; `writing_state` follows them), ToW on the tree of
    `task_type` narrowed to `nodes`."""
    scores = [shown for name in scorers for shown in _scores_of(name, task_type, nodes)]
    headline = scores[0]
    return ViewerConfig(
        trust_content=False,
        task_samples_view=TaskSamplesView(
            name="Writings",
            columns=[
                *(TaskSamplesColumn(id=column) for column in SHOWN_FIRST),
                TaskSamplesColumn.score(WRITING_STATE),
                *(TaskSamplesColumn.score(s.scorer, s.name) for s in scores),
                *(TaskSamplesColumn(id=column, visible=False) for column in HIDDEN),
            ],
            sort=[TaskSamplesSort.score(headline.scorer, headline.name, dir="asc")],
            score_labels={WRITING_STATE: "Writing state", **{s.name: s.label for s in scores}},
            score_color_scales={
                WRITING_STATE: {state: STATE_ROLES.get(state, "bad") for state in STATES},
                **{
                    s.name: ScoreColorScale(palette="good-high", min=s.low, max=s.high)
                    for s in scores
                },
            },
            multiline=False,
            color_scales_enabled=True,
        ),
        sample_score_view=SampleScoreView(default="grid"),
    )


def _scores_of(scorer: str, task_type: str, nodes: Sequence[str] | None) -> tuple[Shown, ...]:
    """A scorer's columns; ToW's in the tree's order: overall, nodes, leaves (a node that
    is its own leaf, `impression`, once)."""
    if scorer != "tow":
        return BASELINES[scorer]
    tree = tree_for(task_type, tuple(nodes) if nodes else None)
    keys = [*tree.nodes, *(leaf.id for leaf in tree.leaves if leaf.id not in tree.nodes)]
    return (
        Shown("tow", "overall", "ToW overall", *TOW_RANGE),
        *(Shown("tow", key, _words(key), *TOW_RANGE) for key in keys),
    )


def _words(key: str) -> str:
    """A score's key as a header: `opening_ending` is `Opening & ending`."""
    return " & ".join(key.split("_")).capitalize()
