"""The three HoWToBench tasks: completion, guided writing and open writing, and the
negotiation task that freezes their weights into a plan."""

from dataclasses import dataclass
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig, get_model
from inspect_ai.solver import Solver, generate

from howtobench._inspect import error_message, eval_running, writer_temperature
from howtobench.baselines.overlap import BLEU_TOKENIZE, TOKENIZATIONS
from howtobench.dataset import DataSource, open_source
from howtobench.dataset.fingerprint import fingerprint
from howtobench.dataset.records import DataError, WritingRecord, filter_genre, record_to_sample
from howtobench.judge.defaults import JUDGE_MAX_RETRIES
from howtobench.judge.models import grader
from howtobench.tasks import parameters
from howtobench.tasks.parameters import (
    Anchor,
    ParameterError,
    boolean,
    choice,
    integer,
    names,
    positive_integer,
    signature_of,
    temperature,
)
from howtobench.tasks.run_options import check_run_options
from howtobench.tasks.scorers import (
    JUDGE_SCORERS,
    ScorerOptions,
    build_scorers,
    check_names,
    check_taken,
)
from howtobench.tree.negotiation import instruction_only, negotiation
from howtobench.tree.plan import TREE_VERSION, Plan, PlanError, PlanFileMissing
from howtobench.tree.scorer import DEFAULT_FORMATTING, FORMATTINGS, weighting
from howtobench.tree.spec import tree_for
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.genres import canonical_genre
from howtobench.vocabulary.metadata import SampleKey, TaskKey
from howtobench.vocabulary.words import TASKS, replayed_writer
from howtobench.writing.perturb import Perturbation
from howtobench.writing.perturb import perturb as perturb_solver
from howtobench.writing.state import (
    ARTIFACT_POLICIES,
    CUT_POLICIES,
    DEFAULT_ARTIFACTS,
    DEFAULT_CUT,
)
from howtobench.writing.summary import listen
from howtobench.writing.writer import WRITER_MAX_TOKENS, final_writing, writer_prompt

# The writing tasks' version (CHANGELOG.md): 4 renamed `reference` to `anchor`; 5 names
# a replayed writer as the model (`--model replay/<writer>`) and rounds score values; 6
# quotes without ASCII quotes in the prompts, recovers a lone score from a broken reply,
# checks plans like replies and leaves unread prompts unscored; 7 judges the writer's
# final writing (reasoning removed, the completion artifacts stripped, `-T artifacts`),
# records each writing's state and flags or unscores a cut one (`-T cut`), gives a live
# writer a length limit and removes `-T replay` (the old form of a replayed writer).
TASK_VERSION = 7


@dataclass(frozen=True)
class WritingParameters:
    """A writing task's parameters, read once by `writing_parameters`."""

    source: DataSource  # the `dataset`, opened once
    genre: str | None
    scorers: tuple[str, ...]
    anchor: Anchor
    plan: Plan | None  # the plan file of `weights=`, read and checked
    perturbation: Perturbation | None
    perturb_seed: int
    cut: str  # what a cut writing gets: scored (flagged) or unscored
    artifacts: str  # the completion artifacts: strip (the fill alone) or keep
    options: ScorerOptions  # what reaches the scorers


def writing_parameters(
    dataset: str | None = "hub",
    genre: str | None = None,
    scorers: str | list[str] | None = None,
    judges: str | list[str] | None = None,
    anchor: bool | str | None = "human",
    nodes: str | list[str] | None = None,
    judge_samples: int = 1,
    reuse_weights: bool = True,
    weights: str = "negotiated",
    judge_temperature: float | None = None,
    formatting: str = DEFAULT_FORMATTING,
    bleurt_checkpoint: str | None = None,
    bleu_tokenize: str = BLEU_TOKENIZE,
    perturb: str | None = None,
    perturb_seed: int = 0,
    cut: str = DEFAULT_CUT,
    artifacts: str = DEFAULT_ARTIFACTS,
    judge_system: bool = True,
    genre_line: bool = True,
    **unknown: Any,
) -> WritingParameters:
    """The parameters of the three writing tasks (`-T name=value`), read and checked.

    Every writing task takes exactly these; a mistake, an unknown name or a parameter
    that none of the chosen scorers uses stops the task with one line naming it.

    Args:
        dataset: `hub`, `demo`, a data folder (`<task>/aligned.jsonl`) or a JSONL file.
        genre: keep one canonical genre (e.g. `argumentative`).
        scorers: comma list of scorers (`tow`, `rubric`, `autoplan`, `rouge_l`, `bleu`,
            `bleurt`); default `tow`.
        judges: expert panel of the judge scorers (comma list of models); default the
            grader role.
        anchor: what the judges compare a writing with: `human` (the expert reference,
            the default), `none`, or the name of a model whose stored writing serves
            as the anchor (appendix B.3).
        nodes: Tree-of-Writing node ablation: the root nodes to keep (comma list).
        judge_samples: self-consistency: judge each writing this many times (mean).
        reuse_weights: negotiate weights once per instruction (false: every time).
        weights: `negotiated` (default), `uniform` (ToW w/o plan: equal weights in each
            group, no negotiator call), or a plan file (`howtobench plan export`) whose
            weights every writing is judged with, without a negotiator call.
        judge_temperature: the judges' sampling temperature; default the judge role's
            own, else 0 (0.7 with several judge samples). `--temperature` is the writer's.
        formatting: the rule of the Tree-of-Writing `formatting` leaf: `lenient` (ours,
            the default) or `paper` (the paper code's); recorded in the task and score
            metadata.
        bleurt_checkpoint: the BLEURT checkpoint (a path or hub id) of `scorers=bleurt`.
        bleu_tokenize: how `scorers=bleu` cuts Chinese: `char` (the default; characters,
            as the paper's Table 7 BLEU was) or `word` (jieba words).
        perturb: disturb the writing before scoring: drop, repeat, shuffle, inject,
            transfer:<comment|letter|official|poem>.
        perturb_seed: seed of the disturbances.
        cut: a writing the writer was stopped in (the length limit, the context; a stored
            writing that ends mid-sentence): `scored` as written and flagged (the
            default), or `unscored` with the reason.
        artifacts: the explanation blocks and generation tags of the paper's completion
            prompt: `strip` (the default) judges the fill alone, as appendix J's raters
            did; `keep` judges the writing as published, as the paper's ToW read it.
        judge_system: send the ToW experts our system prompt (true, the default), or the
            question alone, as the paper's code does (false).
        genre_line: show the ToW negotiator and experts the genre line from our label
            mapping (true, the default), or none, as the paper's code does (false).
        **unknown: refused with the nearest parameter name (inspect itself would only
            warn and run without it).

    Returns:
        The parameters as one value.
    """
    _refuse_unknown(unknown)
    chosen = check_names(names(scorers, "scorers"))
    shown = parameters.anchor(anchor)
    options = ScorerOptions(
        judges=names(judges, "judges"),
        anchor=shown.shown,
        nodes=names(nodes, "nodes") or None,
        judge_samples=positive_integer(judge_samples, "judge_samples"),
        reuse_weights=boolean(reuse_weights, "reuse_weights"),
        weights=_weights(weights),
        judge_temperature=temperature(judge_temperature, "judge_temperature"),
        formatting=choice(formatting, "formatting", tuple(FORMATTINGS)),
        bleurt_checkpoint=_text(bleurt_checkpoint, "bleurt_checkpoint"),
        bleu_tokenize=choice(bleu_tokenize, "bleu_tokenize", TOKENIZATIONS),
        judge_system=boolean(judge_system, "judge_system"),
        genre_line=boolean(genre_line, "genre_line"),
    )
    check_taken(chosen, options)
    if shown.model and not any(name in JUDGE_SCORERS for name in chosen):
        raise ParameterError(
            "anchor", f"only the judge scorers show an anchor; {', '.join(chosen)} do not"
        )
    seed = integer(perturb_seed, "perturb_seed")
    if perturb is None and seed != 0:
        raise ParameterError("perturb_seed", "it seeds perturb=, which is not set")
    plan = _plan(options.weights)
    if plan is not None and not options.reuse_weights:
        raise ParameterError(
            "reuse_weights",
            "a plan fixes each instruction's weights; false needs weights=negotiated",
        )
    return WritingParameters(
        source=open_source(dataset),
        genre=_text(genre, "genre"),
        scorers=chosen,
        anchor=shown,
        plan=plan,
        perturbation=_perturbation(perturb),
        perturb_seed=seed,
        cut=choice(cut, "cut", CUT_POLICIES),
        artifacts=choice(artifacts, "artifacts", ARTIFACT_POLICIES),
        options=options,
    )


def writing_task(task_type: str, given: WritingParameters) -> Task:
    """One HoWToBench task on a data source, writing live or replaying stored writings.

    What depends on the task type is checked here (the nodes of its tree, the data and
    the plan's coverage), still before anything runs.
    """
    check_run_options()
    listen()  # the run's last lines on its cut, filtered and empty writings
    options = given.options
    if options.nodes:
        _check_nodes(task_type, options.nodes)
    if options.formatting != DEFAULT_FORMATTING:
        _check_formatting(task_type, options.nodes)
    _check_judges(options.judges)
    judged = [name for name in given.scorers if name in JUDGE_SCORERS]
    if judged and ("tow" in judged or not options.judges):
        _check_grader()
    replayed = _replayed()
    if replayed:
        _check_no_writer_temperature()
    records = given.source.records(task_type)
    data = fingerprint(records)  # of the whole source, so that shards share it
    try:
        records = filter_genre(records, given.genre)
    except ValueError as error:
        raise ParameterError("genre", str(error)) from None
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
            TaskKey.DATA: {task_type: {"count": data.count, "sha256": data.sha256}},
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
    )


def _samples(
    task_type: str, given: WritingParameters, records: list[WritingRecord]
) -> list[Sample]:
    """The records' samples, each with its source's location (where a replay model finds
    its writing); with a model's writing as the anchor, its text is each sample's anchor
    (the human reference stays the target)."""
    samples = [record_to_sample(record, writer_prompt(record)) for record in records]
    for sample in samples:
        assert sample.metadata is not None
        sample.metadata[SampleKey.DATASET] = given.source.location
    model = given.anchor.model
    if model is None:
        return samples
    stored = given.source.models(task_type)
    if model not in stored:  # said in anchor's words, not as a replay's data error
        raise UserError(
            f"-T anchor={model}: the data has no stored writings of {model}; stored writers"
            f" are: {', '.join(stored) or 'none'} (or give anchor=human or anchor=none)"
        )
    anchors = given.source.generations_for(task_type, model, records)
    for sample in samples:
        assert sample.metadata is not None
        sample.metadata[SampleKey.ANCHOR] = anchors[str(sample.id)]
        sample.metadata[SampleKey.ANCHOR_SOURCE] = model
    return samples


def _solvers(given: WritingParameters) -> list[Solver]:
    """The writer (the evaluated model: a live writer, or `replay/<writer>`), its final
    writing, then the disturbance."""
    solvers = [generate(), final_writing(given.cut, given.artifacts)]
    if given.perturbation:
        solvers.append(perturb_solver(given.perturbation.name, given.perturb_seed))
    return solvers


def _replayed() -> str | None:
    """The writer whose stored writings the task replays, when it is known as the task
    is built: the evaluated model `replay/<writer>` under `inspect eval` (built from Python
    before `eval()`, the model is not known yet, and the replay model checks each sample
    as it answers)."""
    evaluated = _evaluated_model()
    return replayed_writer(evaluated) if evaluated else None


def _evaluated_model() -> str | None:
    """The evaluated model's name while an eval builds the task, else None."""
    if not eval_running():
        return None
    try:
        return str(get_model())
    except Exception:  # no model in context
        return None


def _refuse_unknown(unknown: dict[str, Any]) -> None:
    """Refuse the first parameter no writing task takes, with the nearest known name, or
    the new name of one renamed in task version 4 (`reference`, now `anchor`), or the new
    form of one removed (`replay`, removed in task version 7); the scorers' `-S` names
    are refused by the same helper."""
    parameters.refuse_unknown(unknown, writing_parameters, "the writing tasks", ParameterError)


def _weights(weights: object) -> str:
    if not isinstance(weights, str) or not weights.strip():
        raise ParameterError(
            "weights", f"expected negotiated, uniform or a plan file, got {weights!r}"
        )
    return weights.strip()


def _plan(weights: str) -> Plan | None:
    """The plan named by `weights`, read and checked; None for negotiated or uniform."""
    try:
        found = weighting(weights)
    except PlanFileMissing:
        raise ParameterError(
            "weights",
            f"expected negotiated, uniform or a plan file, got {weights!r} (no such file)",
        ) from None
    except PlanError as error:
        raise ParameterError("weights", str(error)) from None
    return found if isinstance(found, Plan) else None


def _text(value: object, name: str) -> str | None:
    if value is None or isinstance(value, str):
        return value or None
    raise ParameterError(name, f"expected a path or a name, got {value!r}")


def _perturbation(perturb: str | None) -> Perturbation | None:
    if perturb is None:
        return None
    try:
        return Perturbation.parse(str(perturb))
    except ValueError as error:
        raise ParameterError("perturb", str(error)) from None


def _check_nodes(task_type: str, nodes: tuple[str, ...]) -> None:
    try:
        tree_for(task_type, nodes)
    except ValueError as error:
        raise ParameterError("nodes", str(error)) from None


def _check_formatting(task_type: str, nodes: tuple[str, ...] | None) -> None:
    """A formatting rule needs the format node, which completion has not (nor an
    ablation that drops it): the rule would change nothing, so it is refused."""
    if "format" not in tree_for(task_type, nodes).nodes:
        kept = "the kept nodes have" if nodes else f"the {task_type} tree has"
        raise ParameterError(
            "formatting", f"{kept} no format node, so no formatting leaf to apply it to"
        )


def _check_judges(judges: tuple[str, ...]) -> None:
    """Each panel model must resolve (a known provider, its key or base URL set), and
    judge: a replay model only gives back stored writings."""
    for judge in judges:
        if replayed_writer(judge):
            raise ParameterError(
                "judges", f"{judge} replays stored writings and cannot judge; name judge models"
            )
        try:
            get_model(judge)
        except Exception as error:
            raise ParameterError(
                "judges", f"cannot use model '{judge}': {error_message(error)}"
            ) from None


def _check_no_writer_temperature() -> None:
    """`--temperature` is the evaluated model's, and inspect never passes it to the judge
    roles; a replay run has no evaluated model, so it would be ignored: refuse it."""
    if writer_temperature() is not None:
        raise UserError(
            "--temperature: it sets the writer's temperature, and a replay run has no "
            "writer; set the judges' with -T judge_temperature=..."
        )


def _check_grader() -> None:
    """A judge scorer needs the grader role; in `inspect eval` the roles are known while
    the task is built, so a run that would fail at its first sample stops here.
    (Built from Python before `eval()`, no model is known yet: the scorer checks then.)"""
    try:
        grader()
    except UserError as error:
        raise ParameterError("scorers", str(error)) from None
    except ValueError:
        return


# The writing tasks: their parameters are `writing_parameters`' (documented there once),
# given to each by `signature_of`.


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

    Returns:
        The task: one sample per instruction, and the negotiation scorer.
    """
    check_run_options()
    chosen = names(tasks, "tasks") or TASKS
    unknown = [t for t in chosen if t not in TASKS]
    if unknown:
        raise ParameterError(
            "tasks", f"unknown task(s) {', '.join(unknown)} (expected {', '.join(TASKS)})"
        )
    _check_grader()
    data: dict[str, dict[str, object]] = {}
    records: list[WritingRecord] = []
    source = open_source(dataset)
    for task_type in chosen:
        found = source.records(task_type)
        prints = fingerprint(found)
        data[task_type] = {"count": prints.count, "sha256": prints.sha256}
        records += [r for r in found if not genre or r.genre == canonical_genre(genre)]
    if not records:
        raise ParameterError("genre", f"no instruction of genre '{genre}' in {', '.join(chosen)}")
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
