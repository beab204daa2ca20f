"""The log contract: the metadata keys real runs write are exactly the named ones, and
a log written with the old literal keys (task version 3 and before) reads back."""

from __future__ import annotations

from pathlib import Path

import pytest
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import ModelOutput
from inspect_ai.scorer import Score, Target
from inspect_ai.solver import TaskState

from howtobench import guide
from howtobench.judge.inputs import JudgeInput
from howtobench.studies.logs import load_samples
from howtobench.vocabulary.metadata import (
    SampleKey,
    ScoreKey,
    SelfConsistencyKey,
    TaskKey,
    current,
    keys,
)
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
    "writing",
    "data_note",
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
    "recovered",
    "self_consistency",
    "writing",
}
SELF_CONSISTENCY_KEYS = {
    "n",
    "scored",
    "needed",
    "values",
    "unscored_reasons",
    "std",
    "samples_metadata",
}
TASK_KEYS = {
    "howtobench_task",
    "dataset",
    "replay",
    "writer_provenance",
    "genre",
    "anchor",
    "perturb",
    "data",
    "tasks",
    "tree",
    "weights",
    "plan",
    "formatting",
    "cut",
    "artifacts",
}


def test_the_named_keys_are_the_strings_of_the_log_format() -> None:
    assert keys(SampleKey) == SAMPLE_KEYS
    assert keys(ScoreKey) == SCORE_KEYS
    assert keys(TaskKey) == TASK_KEYS
    assert keys(SelfConsistencyKey) == SELF_CONSISTENCY_KEYS


def test_a_replay_run_writes_exactly_the_named_sample_and_task_keys(tmp_path: Path) -> None:
    # a rule-based perturbation, and overlap scorers that need no judge
    task = guide(dataset="demo", perturb="drop", scorers="rouge_l,bleu")
    [log] = run_eval(task, tmp_path, model="replay/demo-writer-a")
    assert log.samples
    # the anchor keys come with a model's anchor only, unscorable with a failed perturbation
    for sample in log.samples:
        assert set(sample.metadata) == keys(SampleKey) - {
            SampleKey.ANCHOR,
            SampleKey.ANCHOR_SOURCE,
            SampleKey.UNSCORABLE,
            SampleKey.DATA_NOTE,
        }
    assert log.eval.metadata is not None
    assert set(log.eval.metadata) == keys(TaskKey) - {TaskKey.TASKS}


@pytest.mark.parametrize("judge_samples", [1, 2])
def test_a_tow_run_writes_only_named_score_keys(
    tmp_path: Path, serve: Serve, judge_samples: int
) -> None:
    # another model's writing as the anchor: its sample keys are written too
    task = guide(dataset="demo", anchor="demo-writer-b", judge_samples=judge_samples)
    [log] = run_eval(task, tmp_path, serve(), model="replay/demo-writer-a")
    assert log.samples
    # shares is autoplan's; by_judge needs a panel; writing_cleaned a writing with
    # control characters, writing one that is not simply whole: none of them in this run;
    # self_consistency comes with `-T judge_samples=2` and lists the judge samples' other
    # records
    judged_keys = keys(ScoreKey) - {
        ScoreKey.SHARES,
        ScoreKey.BY_JUDGE,
        ScoreKey.WRITING_CLEANED,
        ScoreKey.WRITING,
        ScoreKey.SELF_CONSISTENCY,
    }
    for sample in log.samples:
        assert set(sample.metadata) == keys(SampleKey) - {
            SampleKey.PERTURBATION,
            SampleKey.UNSCORABLE,
            SampleKey.DATA_NOTE,
        }
        assert sample.metadata[SampleKey.ANCHOR_SOURCE] == "demo-writer-b"
        meta = (sample.scores or {})["tow"].metadata
        assert meta is not None
        records = [meta]
        if judge_samples > 1:
            record = meta.pop(ScoreKey.SELF_CONSISTENCY)
            assert set(record) == keys(SelfConsistencyKey)  # a scored writing: all of them
            assert record[SelfConsistencyKey.N] == record[SelfConsistencyKey.SCORED] == 2
            assert len(record[SelfConsistencyKey.VALUES]) == 2
            records += record[SelfConsistencyKey.SAMPLES_METADATA]
        assert len(records) == judge_samples
        for judged in records:
            # reused and recovered are inside the negotiator's and each judge's record
            assert set(judged) | {ScoreKey.REUSED, ScoreKey.RECOVERED} == judged_keys
            assert isinstance(judged[ScoreKey.NEGOTIATOR][ScoreKey.REUSED], bool)
            assert judged[ScoreKey.LEAVES]["logic"]["judges"][0][ScoreKey.RECOVERED] is None
            assert judged[ScoreKey.ANCHOR] == "demo-writer-b"


def test_an_old_log_reads_back_through_the_readers(tmp_path: Path) -> None:
    # a real log, rewritten as task version 3 wrote one: the anchor source under
    # `reference`, and the literal keys of the records the studies read
    logs = tmp_path / "logs"
    [log] = run_eval(
        guide(dataset="demo", scorers="rouge_l"), logs, model="replay/demo-writer-a", limit=1
    )
    old = read_eval_log(log.location)
    assert old.eval.metadata is not None and old.samples
    old.eval.metadata = {k: v for k, v in old.eval.metadata.items() if k != "anchor"}
    old.eval.metadata["reference"] = "demo-writer-b"
    [sample] = old.samples
    sample.metadata = {"task": "guide", "genre": "speech", "input_length": 42, "perturbation": "p"}
    weights = {"logic": 0.5, "plots": 0.5}
    sample.scores = {
        **(sample.scores or {}),
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
                "self_consistency": {"n": 2, "values": [{"overall": 7.5}, {"overall": 6.5}]},
            },
        ),
        "autoplan": Score(value=6.0, metadata={"shares": {"clarity": 1.0}}),
    }
    write_eval_log(old, log.location)
    samples = load_samples([logs])
    [row] = samples.frame.to_dict("records")
    assert (row["task"], row["genre"], row["input_length"]) == ("guide", "speech", 42)
    assert row["anchor"] == "demo-writer-b" and row["perturbation"] == "p"
    assert (row["tow.overall"], row["autoplan"]) == (7.0, 6.0)
    assert row["weights"] == weights and row["by_judge"] == {"a": 6.0, "b": 8.0}
    assert row["clipped"] == {"plots": 11.0} and row["weights_fingerprint"] == "abc123"
    assert row["formatting"] == "lenient" and row["reused"] is True
    assert row["shares"] == {"clarity": 1.0}
    assert row["judge_runs"] == {"tow.overall": [7.5, 6.5]}


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
