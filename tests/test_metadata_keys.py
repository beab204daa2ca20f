"""The log contract: the metadata keys real runs write are exactly the named ones, and
a log written with the old literal keys (task version 3 and before) reads back."""

from __future__ import annotations

from pathlib import Path

from inspect_ai.log import EvalSample
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score, Target
from inspect_ai.solver import TaskState

from howtobench import guide
from howtobench.judge.inputs import JudgeInput
from howtobench.metadata import SampleKey, ScoreKey, TaskKey, current, keys
from howtobench.studies.logs import _sample_row
from support.evals import run_eval
from support.judges import Serve

# The keys as task version 4 spells them: a rename here changes the log format, and
# needs a task version and an entry in `metadata.RENAMED` for the studies to read both.
SAMPLE_KEYS = {
    "bench_id",
    "task",
    "genre",
    "genre_raw",
    "language",
    "instruction",
    "grounding",
    "reference",
    "input_length",
    "anchor",
    "anchor_source",
    "perturbation",
    "unscorable",
    "dataset",
}
SCORE_KEYS = {
    "task",
    "anchor",
    "empty_writing",
    "writing_cleaned",
    "weights",
    "weights_fingerprint",
    "negotiator",
    "reused",
    "leaves",
    "clipped",
    "by_judge",
    "plan",
    "formatting",
    "shares",
}
TASK_KEYS = {
    "howtobench_task",
    "dataset",
    "replay",
    "genre",
    "anchor",
    "perturb",
    "data",
    "tasks",
    "tree",
    "weights",
    "plan",
    "formatting",
}


def test_the_named_keys_are_the_strings_of_the_log_format() -> None:
    assert keys(SampleKey) == SAMPLE_KEYS
    assert keys(ScoreKey) == SCORE_KEYS
    assert keys(TaskKey) == TASK_KEYS


def test_a_replay_run_writes_exactly_the_named_sample_and_task_keys(tmp_path: Path) -> None:
    # a rule-based perturbation, and overlap scorers that need no judge
    task = guide(dataset="demo", replay="demo-writer-a", perturb="drop", scorers="rouge_l,bleu")
    [log] = run_eval(task, tmp_path)
    assert log.samples
    # the anchor keys come with a model's anchor only, unscorable with a failed perturbation
    for sample in log.samples:
        assert set(sample.metadata) == keys(SampleKey) - {
            SampleKey.ANCHOR,
            SampleKey.ANCHOR_SOURCE,
            SampleKey.UNSCORABLE,
        }
    assert log.eval.metadata is not None
    assert set(log.eval.metadata) == keys(TaskKey) - {TaskKey.TASKS}


def test_a_tow_run_writes_only_named_score_keys(tmp_path: Path, serve: Serve) -> None:
    # another model's writing as the anchor: its sample keys are written too
    task = guide(dataset="demo", anchor="demo-writer-b")
    [log] = run_eval(task, tmp_path, serve(), model="replay/demo-writer-a")
    assert log.samples
    # shares is autoplan's; by_judge needs a panel; writing_cleaned a writing with
    # control characters: none of them in this run
    tow_keys = keys(ScoreKey) - {ScoreKey.SHARES, ScoreKey.BY_JUDGE, ScoreKey.WRITING_CLEANED}
    for sample in log.samples:
        assert set(sample.metadata) == keys(SampleKey) - {
            SampleKey.PERTURBATION,
            SampleKey.UNSCORABLE,
        }
        assert sample.metadata[SampleKey.ANCHOR_SOURCE] == "demo-writer-b"
        meta = sample.scores["tow"].metadata
        assert meta is not None
        assert set(meta) | {ScoreKey.REUSED} == tow_keys
        assert isinstance(meta[ScoreKey.NEGOTIATOR][ScoreKey.REUSED], bool)
        assert meta[ScoreKey.ANCHOR] == "demo-writer-b"


def test_an_old_log_reads_back_through_the_readers() -> None:
    weights = {"logic": 0.5, "plots": 0.5}
    sample = EvalSample(
        id="g1",
        epoch=1,
        input="写一篇演讲稿",
        target="参考",
        metadata={"task": "guide", "genre": "speech", "input_length": 42, "perturbation": "p"},
        scores={
            "tow": Score(
                value={"overall": 7.0},
                metadata={
                    "weights": weights,
                    "by_judge": {"a": 6.0, "b": 8.0},
                    "clipped": {"plots": 11.0},
                    "weights_fingerprint": "abc123",
                    "plan": None,
                    "formatting": "lenient",
                    "negotiator": {"reused": True},
                },
            ),
            "autoplan": Score(value=6.0, metadata={"shares": {"clarity": 1.0}}),
        },
    )
    row = _sample_row(sample, {"task": "open"}, set())
    assert (row["task"], row["genre"], row["input_length"]) == ("guide", "speech", 42)
    assert row["perturbation"] == "p"
    assert row["weights"] == weights and row["by_judge"] == {"a": 6.0, "b": 8.0}
    assert row["clipped"] == {"plots": 11.0} and row["weights_fingerprint"] == "abc123"
    assert row["formatting"] == "lenient" and row["reused"] is True
    assert row["shares"] == {"clarity": 1.0}


def test_old_sample_metadata_reaches_the_judges() -> None:
    state = TaskState(
        model="none",  # type: ignore[arg-type]
        sample_id="g1",
        epoch=1,
        input="the prompt",
        messages=[],
        output=ModelOutput.from_content("none", "my writing"),
        metadata={
            "task": "guide",
            "genre": "speech",
            "genre_raw": "演讲稿",
            "language": "zh",
            "instruction": "写一篇演讲稿",
            "grounding": "材料",
            "reference": "人写的参考",
            "anchor": "另一个模型的文章",
            "anchor_source": "model-b",
        },
    )
    seen = JudgeInput.from_state(state, Target("target"))
    assert (seen.task, seen.genre, seen.genre_raw, seen.language) == (
        "guide",
        "speech",
        "演讲稿",
        "zh",
    )
    assert (seen.instruction, seen.grounding, seen.reference) == (
        "写一篇演讲稿",
        "材料",
        "人写的参考",
    )
    assert (seen.anchor, seen.anchor_source) == ("另一个模型的文章", "model-b")
    assert seen.seen(True) == {"anchor": "model-b"}


def test_metadata_of_task_version_3_reads_under_the_new_names() -> None:
    old = {"task": "guide", "reference": "none", "formatting": "lenient"}
    assert current(old) == {"task": "guide", "anchor": "none", "formatting": "lenient"}
    assert current({"anchor": "m", "reference": "stale"})["anchor"] == "m"  # new wins
    assert current(None) == {}
