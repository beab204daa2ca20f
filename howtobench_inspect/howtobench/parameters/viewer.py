"""How `inspect view` shows a writing task: the task's `ViewerConfig`, built from the
scorers it was given.

Left to its defaults, inspect's viewer lists a sample with a green check and nothing of
what a reader of a writing benchmark looks for: the writing's state is two clicks away,
scores are headed by their keys and coloured against the range the run happened to
reach, and a writing from any model is rendered as markdown, its images and links
fetched by the browser. Here each writing task says:

- **The sample list**: one line per writing, its id and its start, its state
  (`writing_state`: complete, cut, ...; a colour per state), then each scorer's scores
  headed in words (ToW's overall, its nodes, then its leaves in the tree's order), each
  coloured on its scale's fixed range (ToW's 0-10 whatever the run reached), sorted by
  the first scorer's headline ascending: the worst writings first. The prompt, the
  reference, tokens and time are in the column picker. The writer is the log's model
  (the title above the list, the log list's MODEL column); inspect 0.3.285's sample list
  has no column for sample metadata, so the genre is a filter (`metadata.genre ==
  "letters"`) and a mean per genre in the results.
- **A sample's scores**: a table in the scores' own order, for ToW the tree's.
- **Untrusted content**: writings come from arbitrary models, so the viewer shows every
  text of the log as plain text, media withheld and links inert (`trust_content=False`;
  docs/running.md, "In the viewer"). Rows are single lines: in inspect 0.3.285 an
  untrusted log's multi-line cells come out empty.
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
# The sample list's built-in columns: shown before the scores, then hidden (in the column
# picker; the prompt of every sample starts alike). inspect 0.3.285 shows every score:
# the picker hides one.
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
