"""The HoWToBench tasks: completion, guided writing and open writing, built from their
parameters (`howtobench.parameters.writing`) on a data source, writing live or replaying
stored writings; and the negotiation task that freezes their weights into a plan."""

from dataclasses import asdict
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.solver import Solver, generate

from howtobench.dataset import open_source
from howtobench.dataset.fingerprint import fingerprint
from howtobench.dataset.records import (
    DataError,
    WritingRecord,
    data_note,
    filter_genre,
    record_to_sample,
)
from howtobench.judge.defaults import JUDGE_MAX_RETRIES
from howtobench.parameters.preflight import evaluated_model, preflight
from howtobench.parameters.run_options import check_run_options
from howtobench.parameters.scorers import JUDGE_SCORERS, build_scorers
from howtobench.parameters.viewer import writing_viewer
from howtobench.parameters.writing import (
    WritingParameters,
    check_grader,
    check_judges,
    check_no_writer_temperature,
    check_tree,
    writing_parameters,
)
from howtobench.tree.negotiation import instruction_only, negotiation
from howtobench.tree.plan import TREE_VERSION, PlanError
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.metadata import SampleKey, TaskKey
from howtobench.vocabulary.parameter_values import ParameterError, names, signature_of, temperature
from howtobench.vocabulary.words import TASKS, replayed_writer
from howtobench.writing.perturb import perturb as perturb_solver
from howtobench.writing.writer import WRITER_MAX_TOKENS, final_writing, writer_prompt

__all__ = ["TASK_VERSION", "completion", "guide", "negotiate", "open_writing", "writing_task"]

# The writing tasks' version; what each version changed is in CHANGELOG.md.
TASK_VERSION = 8


def writing_task(task_type: str, given: WritingParameters) -> Task:
    """One HoWToBench task on a data source, writing live or replaying stored writings.

    What depends on the task type is checked here (the nodes of its tree, the data and
    the plan's coverage), still before anything runs.
    """
    check_run_options()
    options = given.options
    check_tree(task_type, options.nodes, options.formatting)
    check_judges(options.judges)
    judged = [name for name in given.scorers if name in JUDGE_SCORERS]
    graded = bool(judged) and ("tow" in judged or not options.judges)
    if graded:
        check_grader()
    # the writer of `replay/<writer>`, known here under `inspect eval` (built from Python
    # before `eval()` it is not, and the replay model checks each sample as it answers)
    evaluated = evaluated_model()
    replayed = replayed_writer(str(evaluated)) if evaluated else None
    if replayed:
        check_no_writer_temperature()
    transfer = given.perturbation is not None and given.perturbation.kind == "transfer"
    preflight(graded=graded, judges=options.judges, rewrites=transfer)
    records = given.source.records(task_type)
    data = fingerprint(records)  # of the whole source, so that shards share it
    records = _of_genre(records, given.genre)
    if replayed:  # every sample has its writing, before anything runs
        given.source.generations_for(task_type, replayed, records)
    if given.plan is not None:
        try:
            given.plan.check_data(task_type, data)
            given.plan.check_covers(task_type, [r.id for r in records])
        except PlanError as error:
            raise ParameterError("weights", str(error)) from None
    return Task(
        dataset=MemoryDataset(_samples(task_type, given, records), name=f"howtobench-{task_type}"),
        setup=data_note(),  # run whatever solver replaces ours
        solver=_solvers(given),
        scorer=build_scorers(given.scorers, options),
        metadata={
            TaskKey.HOWTOBENCH_TASK: task_type,
            TaskKey.DATASET: given.source.name,
            TaskKey.REPLAY: replayed,
            TaskKey.PROVENANCE: given.source.provenance(task_type, replayed) if replayed else None,
            TaskKey.GENRE: given.genre,
            TaskKey.ANCHOR: given.anchor.source,
            TaskKey.PERTURB: given.perturbation.name if given.perturbation else None,
            TaskKey.DATA: {task_type: asdict(data)},
            TaskKey.TREE: TREE_VERSION,
            TaskKey.WEIGHTS: "plan" if given.plan is not None else options.weights,
            TaskKey.PLAN: given.plan.digest if given.plan is not None else None,
            TaskKey.FORMATTING: options.formatting,
            TaskKey.CUT: given.cut,
            TaskKey.ARTIFACTS: given.artifacts,
        },
        # bounded retries (inspect's default is to retry forever): a dead judge or
        # writer ends the run in about a minute; --max-retries overrides it. The length
        # limit reaches the evaluated model only (inspect gives the roles their own), and
        # --max-tokens overrides it.
        config=GenerateConfig(max_retries=JUDGE_MAX_RETRIES, max_tokens=WRITER_MAX_TOKENS),
        version=TASK_VERSION,
        viewer=writing_viewer(given.scorers, task_type, options.nodes),
    )


def _samples(
    task_type: str, given: WritingParameters, records: list[WritingRecord]
) -> list[Sample]:
    """The records' samples, each with its source's location (where a replay model finds
    its writing); with a model's writing as the anchor, its text is each sample's anchor
    (the human reference stays the target)."""
    model = given.anchor.model
    if model is not None:
        stored = given.source.models(task_type)
        if model not in stored:  # said in anchor's words, not as a replay's data error
            raise UserError(
                f"-T anchor={model}: the data has no stored writings of {model}; stored writers"
                f" are: {', '.join(stored) or 'none'} (or give anchor=human or anchor=none)"
            )
        anchors = given.source.generations_for(task_type, model, records)
    samples = [record_to_sample(record, writer_prompt(record)) for record in records]
    for sample in samples:
        assert sample.metadata is not None
        sample.metadata[SampleKey.DATASET] = given.source.location
        if model is not None:
            sample.metadata[SampleKey.ANCHOR] = anchors[str(sample.id)]
            sample.metadata[SampleKey.ANCHOR_SOURCE] = model
    return samples


def _of_genre(records: list[WritingRecord], genre: str | None) -> list[WritingRecord]:
    try:
        return filter_genre(records, genre)
    except ValueError as error:
        raise ParameterError("genre", str(error)) from None


def _solvers(given: WritingParameters) -> list[Solver]:
    """The writer (the evaluated model: a live writer, or `replay/<writer>`), its final
    writing, then the disturbance."""
    solvers = [generate(), final_writing(given.cut, given.artifacts)]
    if given.perturbation:
        solvers.append(perturb_solver(given.perturbation.name, given.perturb_seed))
    return solvers


@task
@signature_of(writing_parameters)
def completion(**given: Any) -> Task:
    """Level I, completion: write the passage missing from a text (379 instructions).

    The grounding is the text with one passage cut out and marked `[fill in the blank]`;
    the reference is the removed passage (paper section 4.5). Parameters: see
    `writing_parameters`.
    """
    return writing_task("completion", writing_parameters(**given))


@task
@signature_of(writing_parameters)
def guide(**given: Any) -> Task:
    """Level II, guided writing: write from an instruction and an outline (456 instructions).

    The model gets an instruction and an outline drawn from the reference; the
    reference is the whole text (paper section 4.5). Parameters: see
    `writing_parameters`.
    """
    return writing_task("guide", writing_parameters(**given))


@task(name="open")
@signature_of(writing_parameters)
def open_writing(**given: Any) -> Task:
    """Level III, open writing: write from a one-sentence instruction (467 instructions).

    The model gets one sentence built from the reference's summary and theme, nothing
    more; the reference is the whole text (paper section 4.5). Parameters: see
    `writing_parameters`.
    """
    return writing_task("open", writing_parameters(**given))


@task
def negotiate(
    dataset: str | None = "hub",
    genre: str | None = None,
    judge_temperature: float | None = None,
    tasks: str | list[str] | None = None,
) -> Task:
    """The negotiator alone: one sample per instruction, scored by its weights.

    Its log is the record of the weights, and `howtobench plan export` turns it into a
    plan file that every worker scores with (`-T weights=PLAN.jsonl`). Bind the judge
    with `--model-role grader=...` and run with `--model none`.

    Args:
        dataset: `hub`, `demo`, a data folder (`<task>/aligned.jsonl`) or a JSONL file.
        genre: keep one canonical genre (e.g. `argumentative`).
        judge_temperature: the negotiator's sampling temperature; default the judge
            role's own, else 0.
        tasks: comma list of the tasks whose instructions are negotiated
            (`completion,guide,open`, the default).
    """
    check_run_options()
    chosen = names(tasks, "tasks") or TASKS
    unknown = [t for t in chosen if t not in TASKS]
    if unknown:
        raise ParameterError(
            "tasks", f"unknown task(s) {', '.join(unknown)} (expected {', '.join(TASKS)})"
        )
    check_grader()
    preflight(graded=True)
    source = open_source(dataset)
    read = {task_type: source.records(task_type) for task_type in chosen}
    data = {task_type: asdict(fingerprint(found)) for task_type, found in read.items()}
    records = _of_genre([record for found in read.values() for record in found], genre)
    seen: dict[str, str] = {}
    for record in records:
        if record.id in seen:
            raise DataError(
                source.name,
                f"id '{record.id}' is used by a {seen[record.id]} and a {record.task} "
                "record; negotiate the tasks one at a time (-T tasks=...)",
            )
        seen[record.id] = record.task
    return Task(
        dataset=MemoryDataset(
            [record_to_sample(r, r.instruction) for r in records], name="howtobench-negotiate"
        ),
        solver=instruction_only(),
        scorer=negotiation(judge_temperature=temperature(judge_temperature, "judge_temperature")),
        metadata={
            TaskKey.HOWTOBENCH_TASK: "negotiate",
            TaskKey.DATASET: source.name,
            TaskKey.GENRE: genre,
            TaskKey.TASKS: list(chosen),
            TaskKey.DATA: data,
            TaskKey.TREE: TREE_VERSION,
        },
        config=GenerateConfig(max_retries=JUDGE_MAX_RETRIES),
        version=1,
    )
