"""The names of the metadata keys that one module writes and another reads back.

The log is a contract between the tasks and scorers that write it and the studies that
read it; naming each key once here keeps the two sides from drifting apart (inspect_evals'
`mask` names its keys the same way). Plain `str` constants rather than an `Enum`, since
metadata goes through pydantic and JSON and 3.10 has no `StrEnum`. Task version 4 renamed
`reference` to `anchor`; `RENAMED` lets the studies read a log of either version.
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["RENAMED", "SampleKey", "ScoreKey", "SelfConsistencyKey", "TaskKey", "current", "keys"]


class SampleKey:
    """Sample metadata: written by `dataset.record_to_sample`, the task (its anchors
    and source) and the perturbation solver; read by the judges (`JudgeInput.from_state`) and the
    studies."""

    BENCH_ID: Final = "bench_id"
    TASK: Final = "task"
    GENRE: Final = "genre"
    GENRE_RAW: Final = "genre_raw"
    LANGUAGE: Final = "language"
    INSTRUCTION: Final = "instruction"
    GROUNDING: Final = "grounding"
    REFERENCE: Final = "reference"  # the human reference text
    INPUT_LENGTH: Final = "input_length"
    ANCHOR: Final = "anchor"  # the text judges compare with, when it is not the reference
    ANCHOR_SOURCE: Final = "anchor_source"  # "human" or the model that wrote the anchor
    PERTURBATION: Final = "perturbation"
    UNSCORABLE: Final = "unscorable"  # why the writing under test cannot be judged
    # the writing's state (`writing.state.WritingState.record`): complete, cut, filtered,
    # empty or refused, the reasoning removed and the artifacts found; written by
    # `writer.final_writing`
    WRITING: Final = "writing"
    # the sample's data source, as a `-T dataset=` value that opens it again (an absolute
    # path, `demo` or `hub`): where `--model replay/<writer>` finds the stored writing
    DATASET: Final = "dataset"
    # what is odd about a record that is kept (`WritingRecord.note`), said when it runs
    DATA_NOTE: Final = "data_note"


class ScoreKey:
    """Score metadata: written by the ToW scorer (and its negotiator and judge input) and
    the autoplan baseline; read by the studies."""

    TASK: Final = "task"
    ANCHOR: Final = "anchor"  # the anchor the judges saw: "human", a model, "none"
    EMPTY_WRITING: Final = "empty_writing"
    # the writing's state when it is not simply whole (`SampleKey.WRITING`'s record)
    WRITING: Final = "writing"
    WRITING_CLEANED: Final = "writing_cleaned"
    WEIGHTS: Final = "weights"
    WEIGHTS_FINGERPRINT: Final = "weights_fingerprint"
    NEGOTIATOR: Final = "negotiator"
    REUSED: Final = "reused"  # inside NEGOTIATOR: the weights came from an earlier call
    LEAVES: Final = "leaves"
    CLIPPED: Final = "clipped"
    BY_JUDGE: Final = "by_judge"
    PLAN: Final = "plan"
    FORMATTING: Final = "formatting"
    SHARES: Final = "shares"  # autoplan's dimension shares
    # in a judge's record (and the transcript): the parse error of the broken answer
    # object its score was read from, None when the reply parsed (`Form.salvage`)
    RECOVERED: Final = "recovered"
    # self-consistency (`-T judge_samples=N`): the record `SelfConsistencyKey` names
    SELF_CONSISTENCY: Final = "self_consistency"


class SelfConsistencyKey:
    """Inside a judge score's `ScoreKey.SELF_CONSISTENCY` record: written by
    `judge.sampling.self_consistent` when a writing is judged several times; read by the
    studies (`studies.logs.judge_runs`: each judge sample's value, for their spread)."""

    N: Final = "n"  # the judge samples asked for
    SCORED: Final = "scored"  # how many of them were usable
    NEEDED: Final = "needed"  # the fewest usable for a score (`enough_samples`)
    VALUES: Final = "values"  # each usable sample's score value, in judge-sample order
    UNSCORED_REASONS: Final = "unscored_reasons"  # why each unusable sample was unscored
    # a scored writing only: the spread (population standard deviation per score key)
    # and the metadata of every usable sample after the first (the score carries the first's)
    STD: Final = "std"
    SAMPLES_METADATA: Final = "samples_metadata"


class TaskKey:
    """Task metadata (`log.eval.metadata`): written by `tasks.writing_task`; read by
    the studies to tell runs apart and check they can be compared."""

    HOWTOBENCH_TASK: Final = "howtobench_task"
    DATASET: Final = "dataset"
    REPLAY: Final = "replay"  # the writer of `--model replay/<writer>`, when known at build
    # what made the replayed writer's writings, where its data folder says (`howtobench
    # lm-eval import`: the harness, the model's arguments, the generation settings)
    PROVENANCE: Final = "writer_provenance"
    GENRE: Final = "genre"
    ANCHOR: Final = "anchor"  # the anchor source: "human", a model, or "none"
    PERTURB: Final = "perturb"
    DATA: Final = "data"
    TASKS: Final = "tasks"  # the negotiate task: the task types it negotiated
    TREE: Final = "tree"
    WEIGHTS: Final = "weights"
    PLAN: Final = "plan"
    FORMATTING: Final = "formatting"
    CUT: Final = "cut"  # what a cut writing gets: scored (as written, flagged) or unscored
    ARTIFACTS: Final = "artifacts"  # the completion artifacts: strip or keep


# Keys of task versions 1 to 3 and their task version 4 names (score and task metadata).
RENAMED: dict[str, str] = {"reference": "anchor"}


def current(metadata: dict[str, Any] | None) -> dict[str, Any]:
    """Score or task metadata under today's key names, whichever task version wrote it."""
    found = dict(metadata or {})
    for old, new in RENAMED.items():
        if old in found and new not in found:
            found[new] = found.pop(old)
    return found


def keys(names: type) -> frozenset[str]:
    """Every key a class above names, for checks that a log carries no unnamed key."""
    return frozenset(
        value for name, value in vars(names).items() if name.isupper() and isinstance(value, str)
    )
