"""The writing tasks' parameters (`-T name=value`), read and checked once, at the task
boundary: `writing_parameters` is their one signature (the three tasks take it through
`signature_of`, and the README's parameter table is generated from it), and the checks
that need the task type or the run's models (`check_nodes`, `check_grader`, ...) live
beside it, so a mistake stops the task with one line before anything runs."""

from dataclasses import dataclass
from typing import Any

from inspect_ai.model import get_model

from howtobench._inspect import error_message, writer_temperature
from howtobench.baselines.overlap import BLEU_TOKENIZE, TOKENIZATIONS
from howtobench.dataset import DataSource, open_source
from howtobench.judge.models import grader
from howtobench.parameters.scorers import JUDGE_SCORERS, ScorerOptions, check_names, check_taken
from howtobench.tree.plan import Plan, PlanError, PlanFileMissing
from howtobench.tree.scorer import weighting
from howtobench.tree.spec import tree_for
from howtobench.tree.writing_score import DEFAULT_FORMATTING, FORMATTINGS
from howtobench.vocabulary import parameter_values as parameters
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.parameter_values import (
    Anchor,
    ParameterError,
    boolean,
    choice,
    integer,
    names,
    positive_integer,
    temperature,
)
from howtobench.vocabulary.words import replayed_writer
from howtobench.writing.perturb import Perturbation
from howtobench.writing.state import ARTIFACT_POLICIES, CUT_POLICIES, DEFAULT_ARTIFACTS, DEFAULT_CUT

__all__ = [
    "WritingParameters",
    "check_grader",
    "check_judges",
    "check_no_writer_temperature",
    "check_tree",
    "writing_parameters",
]


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
        artifacts: what the paper's prompts had writers add: `strip` (the default)
            judges the completion's first answer without its explanations and tags, as
            appendix J's raters did, and the guide and open writings without their
            frame tags (docs/data.md); `keep` judges the writing as published, as the
            paper's ToW read it.
        judge_system: send the ToW negotiator and experts our system prompts (true, the
            default), or the questions alone, as the paper's code does (false).
        genre_line: show the ToW negotiator and experts the task-type line and the genre
            line from our label mapping (true, the default), or neither, as the paper's
            code does (false).
    """
    parameters.refuse_unknown(unknown, writing_parameters, "the writing tasks", ParameterError)
    chosen = check_names(names(scorers, "scorers"))
    shown = parameters.anchor(anchor)
    options = ScorerOptions(
        judges=names(judges, "judges"),
        anchor=shown.source != "none",
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


def check_tree(task_type: str, nodes: tuple[str, ...] | None, formatting: str) -> None:
    """The kept `nodes` must be the task's; a formatting rule needs the format node, which
    completion has not (nor an ablation that drops it): the rule would change nothing, so
    it is refused."""
    try:
        tree = tree_for(task_type, nodes)
    except ValueError as error:
        raise ParameterError("nodes", str(error)) from None
    if formatting != DEFAULT_FORMATTING and "format" not in tree.nodes:
        kept = "the kept nodes have" if nodes else f"the {task_type} tree has"
        raise ParameterError(
            "formatting", f"{kept} no format node, so no formatting leaf to apply it to"
        )


def check_judges(judges: tuple[str, ...]) -> None:
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


def check_no_writer_temperature() -> None:
    """`--temperature` is the evaluated model's, and inspect never passes it to the judge
    roles; a replay run has no evaluated model, so it would be ignored: refuse it."""
    if writer_temperature() is not None:
        raise UserError(
            "--temperature: it sets the writer's temperature, and a replay run has no "
            "writer; set the judges' with -T judge_temperature=..."
        )


def check_grader() -> None:
    """A judge scorer needs the grader role; in `inspect eval` the roles are known while
    the task is built, so a run that would fail at its first sample stops here.
    (Built from Python before `eval()`, no model is known yet: the scorer checks then.)"""
    try:
        grader()
    except UserError as error:
        raise ParameterError("scorers", str(error)) from None
    except ValueError:
        return
