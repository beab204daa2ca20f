"""The writing tasks' viewer configuration as the log's header carries it: every score a
sample has is a column, labelled and coloured on a fixed range, the writing's state
among them, sorted worst first, and the content untrusted (`parameters/viewer.py`).
What the viewer makes of it in a browser: `test_viewer_browser.py`."""

from __future__ import annotations

import math
from pathlib import Path

from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.viewer import ScoreColorScale, TaskSamplesView, ViewerConfig

from howtobench import completion, guide, open_writing
from howtobench.parameters.scorers import SCORERS
from howtobench.parameters.viewer import writing_viewer
from howtobench.tree.spec import tree_for
from howtobench.writing.state import STATES
from support.evals import run_eval
from support.judges import ScriptedJudge, hashed_judge

STATE_COLUMN = "score__writing_state__writing_state"


def sample_list(viewer: ViewerConfig | None) -> TaskSamplesView:
    """The configured sample list (one view, not a list of them)."""
    assert viewer is not None
    view = viewer.task_samples_view
    assert isinstance(view, TaskSamplesView)
    return view


def score_columns(log: EvalLog) -> list[str]:
    """The score columns the viewer makes of the log's samples: one per scorer, or per
    key of a dict score (`score__<scorer>__<key>`), in the order the samples give them."""
    found: dict[str, None] = {}
    for sample in log.samples or []:
        for scorer, score in (sample.scores or {}).items():
            keys = score.value if isinstance(score.value, dict) else {scorer: None}
            found.update({f"score__{scorer}__{key}": None for key in keys})
    return list(found)


def test_the_header_names_a_labelled_column_for_every_score_the_samples_have(
    tmp_path: Path,
) -> None:
    judge = ScriptedJudge(hashed_judge("viewer"), name="viewer-judge")
    task = open_writing(dataset="demo", scorers="tow,rouge_l,bleu")
    run_eval(task, tmp_path, judge, model="replay/demo-writer-a", limit=2)
    log = read_eval_log(str(next(tmp_path.glob("*.eval"))))  # as stored, read back
    assert log.eval.viewer is not None
    assert log.eval.viewer.trust_content is False  # writings of any model: plain text
    assert log.eval.viewer.sample_score_view is not None
    assert log.eval.viewer.sample_score_view.default == "grid"
    view = sample_list(log.eval.viewer)
    columns = [c.id for c in view.columns or []]
    scores = [c for c in columns if c.startswith("score__")]
    # every score of the samples has its column, and no column waits for a score
    assert sorted(scores) == sorted(score_columns(log))
    # the state first, then ToW in the tree's order (overall, nodes, leaves), then the rest
    tree = tree_for("open")
    tow = ["overall", *tree.nodes, *(f.id for f in tree.leaves if f.id not in tree.nodes)]
    assert scores == [
        STATE_COLUMN,
        *(f"score__tow__{key}" for key in tow),
        "score__rouge_l__rouge_l",
        "score__bleu__bleu_1",
        "score__bleu__bleu_4",
    ]
    assert columns[: columns.index(STATE_COLUMN)] == ["sampleStatus", "sampleId", "answer"]
    hidden = {c.id for c in view.columns or [] if not c.visible}
    assert hidden == {"input", "target", "tokens", "duration"}
    # the worst writings first
    assert [(s.column, s.dir) for s in view.sort or []] == [("score__tow__overall", "asc")]
    # a header in words for every score, and its colours on a fixed range
    labels = view.score_labels or {}
    scales = view.score_color_scales or {}
    names = [c.rsplit("__", 1)[1] for c in scores]
    assert set(labels) == set(scales) == set(names)
    assert labels["overall"] == "ToW overall" and labels["writing_state"] == "Writing state"
    assert labels["opening_ending"] == "Opening & ending" and labels["bleu_4"] == "BLEU-4"
    for name in names[1:]:
        scale = scales[name]
        assert isinstance(scale, ScoreColorScale) and scale.palette == "good-high", name
        assert scale.min is not None and scale.max is not None, name
        low, high = (0, 10) if name in tow else (0, 1)
        assert (scale.min, scale.max) == (low, high), name
    # every state has a colour: whole is good, cut a warning, nothing to judge bad
    states = scales["writing_state"]
    assert isinstance(states, dict) and set(states) == set(STATES)
    assert states["complete"] == "good" and states["cut"] == "warn"
    assert states["empty"] == states["filtered"] == "bad"
    # the fixed ranges hold the values the samples have
    for sample in log.samples or []:
        for scorer, score in sample.scores.items():
            values = score.value if isinstance(score.value, dict) else {scorer: score.value}
            for name, value in values.items():
                scale = scales[name]
                if isinstance(scale, ScoreColorScale) and not math.isnan(value):
                    assert scale.min <= value <= scale.max, (sample.id, name, value)


def test_each_task_lists_its_own_tree_and_sorts_by_its_first_scorer() -> None:
    def scores(view: TaskSamplesView) -> list[str]:
        return [c.id.split("__")[2] for c in view.columns or [] if c.id.startswith("score__")]

    fill = sample_list(completion(dataset="demo").viewer)
    assert "format" not in scores(fill) and "plots" not in scores(fill)  # no format node
    ablated = sample_list(guide(dataset="demo", nodes="content").viewer)
    content = [leaf.id for leaf in tree_for("guide").leaves_of("content")]
    assert scores(ablated) == ["writing_state", "overall", "content", *content]
    overlap = sample_list(guide(dataset="demo", scorers="rouge_l,bleu").viewer)
    assert [s.column for s in overlap.sort or []] == ["score__rouge_l__rouge_l"]
    assert scores(overlap) == ["writing_state", "rouge_l", "bleu_1", "bleu_4"]
    # every scorer a task can be given has its columns, each with a header and colours
    every = sample_list(writing_viewer(tuple(SCORERS), "guide"))
    assert {c.id.split("__")[1] for c in every.columns or [] if c.id.startswith("score__")} == {
        *SCORERS,
        "writing_state",
    }
    assert (
        set(every.score_labels or {}) == set(every.score_color_scales or {}) == set(scores(every))
    )
