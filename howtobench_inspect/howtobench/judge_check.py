"""`howtobench judge-check`: can this judge serve Tree-of-Writing? Asked before money is spent.

A judge fails ToW in ways no model card states: it refuses a system message or a
temperature, answers prose instead of JSON, or answers one leaf's criterion and not
another's. Hand-made test questions would miss what our own prompts provoke, so the check
runs the real thing, small: the ToW eval of our tasks on a few stored writings
(`replay`, so no writer is called), with a fresh reply store so that every question
really goes to the judge, and then reads the log the way the scorer wrote it. Before
that, a handful of tiny direct calls (a few tokens each, no cache) say which request
shapes the endpoint refuses; the first of them also tells an endpoint that answers
nothing from one that answers badly, in seconds rather than after a run's retries.

The rule (`USABLE_SHARE`): the judge can serve ToW when every kind of question (the
negotiator, and each LLM leaf of the tasks run) got a usable reply, at once or after
re-asks, in at least 75% of its asks (3 of 4, 5 of 6), every eval finished, and no
writing ended in an error. One failure in four is allowed because a single timeout or
odd reply on a small sample says little; a kind that fails more often will leave a
matching share of a large run's writings unscored. The probes are reported, not ruled
on: what ToW needs from them (a system message for the negotiator, temperature 0 for
judging, 0.7 for re-asks) the eval has already exercised.

Exit status, through `cli.main`: 0 when the judge can serve; 1 when it cannot
(`JudgeCannotServe`, with the reasons; an endpoint that answers nothing is one line
saying what to check); 2 on bad input (`UserError`, `StudyError`).

The summary functions (`summarize`, `verdict`, `render`, `as_json`) read logs only, so
they can be tested and reused without an endpoint.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import sys
import tempfile
import textwrap
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from inspect_ai import Task, eval
from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalLog, EvalSample, read_eval_log
from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    ContentText,
    GenerateConfig,
    Model,
    ModelUsage,
    compute_model_cost,
    get_model,
)
from pydantic import ValidationError

from howtobench._inspect import endpoint
from howtobench.constants import DEFAULT_LIMIT, DEFAULT_TASKS
from howtobench.construct.runs import BuildIncomplete
from howtobench.dataset import DEMO_FILE, DataError, load_records, resolve_source
from howtobench.errors import UserError
from howtobench.judge.calls import server_message, status_of
from howtobench.metadata import ScoreKey
from howtobench.studies.cost import batched_roles, load_prices
from howtobench.tasks import completion, guide, open_writing
from howtobench.tree.spec import LEAVES, tree_for
from howtobench.vocabulary import TASKS

ROLE = "grader"
NEGOTIATOR = "negotiator"
KINDS: tuple[str, ...] = (NEGOTIATOR, *(leaf.id for leaf in LEAVES if leaf.judge == "llm"))
DEMO_WRITER = "demo-writer-a"
# The share of a kind's asks that must end in a usable reply (module docstring).
USABLE_SHARE = 0.75
RULE = (
    f"every kind of question usable, at once or after re-asks, in at least "
    f"{USABLE_SHARE:.0%} of its asks; every eval finished"
)
WIDTH = 100  # the report fits a terminal this wide
_BUILDERS = {"completion": completion, "guide": guide, "open": open_writing}
_MARKUP = re.compile(r"\[/?[a-z ]+\]")  # rich markup in inspect's messages
# The probes: (name, what it asks the endpoint to accept). The prompt names the probe,
# so a scripted test server can refuse one by its text.
PROBES: tuple[tuple[str, str], ...] = (
    ("plain", "a plain user message"),
    ("text_parts", "content as a list of text parts"),
    ("system", "a system message"),
    ("temperature_0", "temperature 0"),
    ("temperature_0.7", "temperature 0.7"),
)
# What ToW uses each probe's feature for, said beside a refusal.
_NEEDED_FOR = {
    "text_parts": "the prompt-cache breakpoint (joined into one string where the API allows)",
    "system": "the negotiator's system prompt",
    "temperature_0": "every first ask (ToW judges at temperature 0 unless set)",
    "temperature_0.7": "re-asks after an unusable reply, and -T judge_samples",
}
_PROBE_CONFIG = GenerateConfig(max_tokens=16, max_retries=1, timeout=60, attempt_timeout=30)


class JudgeCannotServe(BuildIncomplete):
    """The judge cannot serve ToW (or did not answer): exit status 1 with the reason.

    A `BuildIncomplete` because that is what `cli.main` turns into status 1 with the
    message on one line; nothing is to be resumed.
    """


# --- the judge, as `--model-role grader=...` names it ------------------------------------


@dataclass(frozen=True)
class JudgeSpec:
    """A judge model as the role names it: its name, generate settings and model args.

    Kept as a recipe, not a `Model`: the probes and the eval run in different event
    loops, and an SDK client made in one must not be used in the other.
    """

    name: str
    config: GenerateConfig = field(default_factory=GenerateConfig)
    args: Mapping[str, Any] = field(default_factory=dict)

    def model(self) -> Model:
        """A new model for this judge; a name inspect cannot use is a `UserError`."""
        try:
            return get_model(self.name, config=self.config, memoize=False, **self.args)
        except Exception as error:  # inspect raises several kinds; each means "unusable"
            detail = _MARKUP.sub("", " ".join(str(getattr(error, "message", error)).split()))
            raise UserError(f"--model-role {ROLE}: cannot use '{self.name}': {detail}") from None


def parse_role(roles: Sequence[str]) -> JudgeSpec:
    """The judge of `--model-role grader=VALUE`, read as inspect reads the option.

    VALUE is a model name or inline YAML/JSON (`{model: ..., temperature: 0.7,
    model_args: {...}}`). inspect's parser (`parse_model_role_cli_args`) lives in its
    private `_cli` package in 0.3.285, so its rules are repeated here: the text after
    the first `=` is YAML, a mapping names the model and its settings. A list (a panel)
    is refused: the check is of one judge.
    """
    judge: JudgeSpec | None = None
    for text in roles:
        role, equals, raw = text.partition("=")
        role = role.strip().replace("-", "_")
        if not equals or not raw.strip():
            raise UserError(f"--model-role {text!r}: give {ROLE}=MODEL")
        if role != ROLE:
            raise UserError(f"--model-role {role}: judge-check checks the {ROLE} role only")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as error:
            raise UserError(
                f"--model-role {ROLE}: not a model name or YAML/JSON ({_one_line(str(error))})"
            ) from None
        judge = _spec(value)
    if judge is None:
        raise UserError(f"give the judge with --model-role {ROLE}=MODEL")
    return judge


def _spec(value: Any) -> JudgeSpec:
    if isinstance(value, str) and "," not in value:
        return JudgeSpec(value.strip())
    if isinstance(value, dict):
        settings = dict(value)
        name = settings.pop("model", None)
        args = settings.pop("model_args", {})
        if not isinstance(name, str) or not name.strip():
            raise UserError(f"--model-role {ROLE}: the mapping needs `model: <name>`")
        if not isinstance(args, dict):
            raise UserError(f"--model-role {ROLE}: model_args must be a mapping")
        try:
            config = GenerateConfig(**settings)
        except ValidationError as error:
            said = "; ".join(
                ".".join(str(part) for part in e["loc"])
                + (": " if e["loc"] else "")
                + str(e["msg"]).removeprefix("Value error, ")
                for e in error.errors()
            )
            raise UserError(f"--model-role {ROLE}: {_one_line(said)}") from None
        return JudgeSpec(name.strip(), config, args)
    if isinstance(value, list) or (isinstance(value, str) and "," in value):
        raise UserError(f"--model-role {ROLE}: judge-check checks one judge, not a list")
    raise UserError(f"--model-role {ROLE}: {value!r} is not a model name")


# --- what the eval runs on ---------------------------------------------------------------


_NO_STORED_WRITINGS = (
    "--dataset hub has no stored writings to replay: give demo, a data folder "
    "(<task>/inferences/<model>.jsonl) or a JSONL file with 'generations'"
)


def present_tasks(dataset: str, tasks: Sequence[str]) -> list[str]:
    """The tasks among `tasks` that the data has records of (a data folder or JSONL file
    need not hold all three); none is a `UserError`."""
    unknown = [t for t in tasks if t not in TASKS]
    if unknown or not tasks:
        raise UserError(
            f"--tasks: unknown task {', '.join(unknown) or '(none)'} "
            f"(give a comma list of {', '.join(TASKS)})"
        )
    source = resolve_source(dataset)
    if source == "hub":  # before the hub is asked for data that could not be used
        raise UserError(_NO_STORED_WRITINGS)
    kept = []
    for task in tasks:
        if isinstance(source, Path) and source.is_dir():
            if (source / task / "aligned.jsonl").is_file():
                kept.append(task)
            continue
        try:
            load_records(dataset, task)
        except DataError as error:
            if "no records of task" not in str(error):
                raise
            continue
        kept.append(task)
    if not kept:
        raise UserError(f"--dataset {dataset}: no records of {', '.join(tasks)}")
    return kept


def default_replay(dataset: str, tasks: Sequence[str]) -> str:
    """The stored writer the check replays: the demo's first writer, else the first
    model (by name) stored for every task run."""
    source = resolve_source(dataset)
    if source == DEMO_FILE:
        return DEMO_WRITER
    if source == "hub":
        raise UserError(_NO_STORED_WRITINGS)
    stored: list[set[str]] = []
    for task in tasks:
        if isinstance(source, Path) and source.is_dir():
            stored.append({p.stem for p in (source / task / "inferences").glob("*.jsonl")})
        else:
            records = load_records(dataset, task)
            stored.append(set.intersection(*(set(r.generations) for r in records)))
    common = sorted(set.intersection(*stored)) if stored else []
    if not common:
        raise UserError(
            f"--dataset {dataset}: no model has stored writings for every task run "
            f"({', '.join(tasks)}): give --replay MODEL or --tasks"
        )
    return common[0]


def build_tasks(dataset: str, replay: str, tasks: Sequence[str]) -> list[Task]:
    """The ToW tasks of the check; a bad parameter is the task's own one-line error."""
    return [_BUILDERS[task](dataset=dataset, replay=replay) for task in tasks]


# --- reading the log ---------------------------------------------------------------------


@dataclass
class Kind:
    """One kind of question (the negotiator or a leaf): how its asks went."""

    name: str
    asked: int = 0  # questions sent to the judge (not answered from the store)
    at_once: int = 0  # the first reply was usable
    after_reask: int = 0  # usable after one or more re-asks
    unusable: int = 0  # no usable reply after every try
    from_store: int = 0  # answered from the reply store: no call, not ruled on
    reasons: Counter[str] = field(default_factory=Counter)  # why unusable, from `error`
    latencies: list[float] = field(default_factory=list)  # seconds, one per call
    usage: ModelUsage = field(default_factory=ModelUsage)  # every call's tokens

    @property
    def usable(self) -> int:
        return self.at_once + self.after_reask

    @property
    def calls(self) -> int:
        return len(self.latencies)

    @property
    def median_latency(self) -> float | None:
        return statistics.median(self.latencies) if self.latencies else None

    @property
    def passes(self) -> bool:
        return self.asked > 0 and self.usable >= USABLE_SHARE * self.asked


@dataclass
class Summary:
    """What a check's logs say about the judge."""

    kinds: dict[str, Kind]  # every kind the tasks ask, negotiator first, in tree order
    writings: int = 0  # samples judged (scored or not)
    instructions: int = 0  # distinct (task, sample id)
    unscored: int = 0  # writings left unscored
    errors: list[str] = field(default_factory=list)  # unfinished evals, samples in error
    outage: str | None = None  # an eval stopped because the judge answered nothing
    usage: ModelUsage = field(default_factory=ModelUsage)  # the judge's, over all logs
    calls: int = 0  # judge calls in the logs
    unattributed: int = 0  # judge calls in no question's span
    batched: bool = False  # the judge ran in batch mode (priced at batch rates)

    def per_writing(self) -> ModelUsage:
        """The judge's tokens per writing judged (the negotiator once per writing here,
        since every writing of the check is its own instruction)."""
        n = max(self.writings, 1)
        return ModelUsage(
            input_tokens=round(self.usage.input_tokens / n),
            output_tokens=round(self.usage.output_tokens / n),
            total_tokens=round(self.usage.total_tokens / n),
            input_tokens_cache_write=round((self.usage.input_tokens_cache_write or 0) / n),
            input_tokens_cache_read=round((self.usage.input_tokens_cache_read or 0) / n),
        )


def summarize(logs: Sequence[EvalLog]) -> Summary:
    """Per kind of question: how many asks were usable at once, after re-asks, or not
    (with the scorer's recorded reason); each call's latency and tokens, found by the
    span of the question it was made in (`negotiator`, or the leaf's id under
    `experts`), since a writing's calls run concurrently."""
    expected = {
        leaf.id for log in logs for leaf in tree_for(_task_of(log)).leaves if leaf.judge == "llm"
    }
    kinds = {k: Kind(k) for k in KINDS if k == NEGOTIATOR or k in expected}
    summary = Summary(kinds)
    instructions: set[tuple[str, str]] = set()
    for log in logs:
        task = _task_of(log)
        if log.status != "success":
            message = _one_line(log.error.message) if log.error else log.status
            if log.error and _is_outage(log.error.message, log.error.traceback):
                summary.outage = message
            else:
                summary.errors.append(f"the {task} eval ended with status {log.status}: {message}")
        summary.usage += _judge_usage(log)
        summary.batched = summary.batched or any(role == ROLE for role, _ in batched_roles(log))
        for sample in log.samples or []:
            calls = _calls_by_kind(sample, summary)
            if sample.error is not None:
                summary.errors.append(
                    f"{task} {sample.id}: the sample ended in an error: "
                    f"{_one_line(sample.error.message)[:200]}"
                )
                continue
            score = (sample.scores or {}).get("tow")
            if score is None or score.metadata is None:
                continue
            summary.writings += 1
            instructions.add((task, str(sample.id)))
            if not isinstance(score.value, dict):
                summary.unscored += 1
            _count_questions(score.metadata, calls, summary)
    summary.instructions = len(instructions)
    return summary


def _task_of(log: EvalLog) -> str:
    return log.eval.task.rpartition("/")[2]


def _is_outage(message: str, traceback: str | None) -> bool:
    """Whether an eval stopped because the judge answered nothing (`JudgeUnavailable`)."""
    return "JudgeUnavailable" in (traceback or "") or "did not answer" in message


def _judge_usage(log: EvalLog) -> ModelUsage:
    if log.stats.role_usage and ROLE in log.stats.role_usage:
        return log.stats.role_usage[ROLE]
    total = ModelUsage()
    for usage in log.stats.model_usage.values():  # only the judge calls a replay run
        total += usage
    return total


def _calls_by_kind(sample: EvalSample, summary: Summary) -> dict[str, int]:
    """How many calls each question of a writing took; latencies and tokens are added
    to their kind as they are read."""
    spans: dict[str, tuple[str, str | None]] = {}
    counts: Counter[str] = Counter()
    for event in sample.events:
        if isinstance(event, SpanBeginEvent):
            spans[event.id] = (event.name, event.parent_id)
        elif isinstance(event, ModelEvent) and event.role in (ROLE, None):
            summary.calls += 1
            kind = _kind_of(event.span_id, spans)
            if kind is None or kind not in summary.kinds:
                summary.unattributed += 1
                continue
            counts[kind] += 1
            record = summary.kinds[kind]
            record.latencies.append(_latency(event))
            if event.output.usage is not None:
                record.usage += event.output.usage
    return dict(counts)


def _kind_of(span_id: str | None, spans: Mapping[str, tuple[str, str | None]]) -> str | None:
    seen = 0
    while span_id is not None and span_id in spans and seen < 64:
        name, parent = spans[span_id]
        if name in KINDS:
            return name
        span_id, seen = parent, seen + 1
    return None


def _latency(event: ModelEvent) -> float:
    """The call's own time: inspect's working time (without waiting for a connection
    slot), else from its start to its end."""
    if event.working_time is not None:
        return float(event.working_time)
    if event.completed is not None:
        return (event.completed - event.timestamp).total_seconds()
    return float("nan")


def _count_questions(metadata: Mapping[str, Any], calls: Mapping[str, int], s: Summary) -> None:
    negotiator = metadata.get(ScoreKey.NEGOTIATOR)
    if isinstance(negotiator, dict) and not negotiator.get(ScoreKey.REUSED):
        weighted = metadata.get(ScoreKey.WEIGHTS) is not None
        _count(s.kinds[NEGOTIATOR], negotiator, weighted, calls)
    for leaf, record in (metadata.get(ScoreKey.LEAVES) or {}).items():
        if not isinstance(record, dict) or record.get("judged_by") != "llm" or leaf not in s.kinds:
            continue
        for judge in record.get("judges") or []:
            _count(s.kinds[leaf], judge, judge.get("score") is not None, calls)


def _count(kind: Kind, exchange: Mapping[str, Any], usable: bool, calls: Mapping[str, int]) -> None:
    """One question, from the scorer's record of it: its replies, last error, whether the
    store answered it, its re-asks (`reasked_at` where the scorer records them), and the
    calls seen in its span (a refused call leaves no reply)."""
    if exchange.get("from_store"):
        kind.from_store += 1
        return
    kind.asked += 1
    tries = max(
        calls.get(kind.name, 0),
        len(exchange.get("replies") or []),
        1 + len(exchange.get("reasked_at") or []),
    )
    if not usable:
        kind.unusable += 1
        kind.reasons[_one_line(str(exchange.get("error") or "no usable reply"))] += 1
    elif tries > 1:
        kind.after_reask += 1
    else:
        kind.at_once += 1


def verdict(summary: Summary) -> list[str]:
    """Why the judge cannot serve ToW, one line each; empty when it can."""
    if summary.outage:
        return [summary.outage]
    reasons = list(summary.errors)
    for kind in summary.kinds.values():
        if kind.asked == 0:
            if kind.from_store == 0:
                reasons.append(f"{kind.name}: never asked")
            continue
        if not kind.passes:
            why = "; ".join(f"{r} ({n})" for r, n in kind.reasons.most_common(2))
            reasons.append(
                f"{kind.name}: usable in {kind.usable} of {kind.asked} asks"
                + (f": {why}" if why else "")
            )
    return reasons


# --- the probes --------------------------------------------------------------------------


@dataclass(frozen=True)
class Probe:
    """One tiny request and whether the endpoint took it."""

    name: str
    label: str
    accepted: bool
    status: int | None = None  # the HTTP status of a refusal, where there was one
    message: str | None = None  # the endpoint's message (or the error) of a refusal
    answered: bool = True  # False: no answer at all (connection refused, timeout, 5xx)


def _probe_request(name: str) -> tuple[list[ChatMessage], GenerateConfig]:
    ask = f"judge-check probe ({name}): answer with the single word OK."
    messages: list[ChatMessage] = [ChatMessageUser(content=ask)]
    config = _PROBE_CONFIG
    if name == "text_parts":
        halves = ask.split(": ", 1)
        parts = [ContentText(text=halves[0] + ":"), ContentText(text=halves[1])]
        messages = [ChatMessageUser(content=list(parts))]
    elif name == "system":
        messages = [ChatMessageSystem(content="You are a careful judge."), *messages]
    elif name.startswith("temperature_"):
        temperature = float(name.removeprefix("temperature_"))
        config = config.merge(GenerateConfig(temperature=temperature))
    return messages, config


async def probe(model: Model) -> list[Probe]:
    """The probes, one after the other (tiny, uncached); stops after the plain one when
    it got no answer at all, since every other would wait out the same retries."""
    found = []
    own = model.config  # the role's own bounds, where it sets them, else the probes'
    bounds = GenerateConfig(max_retries=own.max_retries, attempt_timeout=own.attempt_timeout)
    for name, label in PROBES:
        messages, config = _probe_request(name)
        config = config.merge(bounds)
        try:
            await model.generate(messages, config=config, cache=False)
        except Exception as error:
            status, message, answered = _refusal(error)
            found.append(Probe(name, label, False, status, message, answered))
            if name == "plain" and not answered:
                break
        else:
            found.append(Probe(name, label, True))
    return found


def _refusal(error: BaseException) -> tuple[int | None, str, bool]:
    """(HTTP status, message, whether the endpoint answered) of a failed probe, read as
    the judge's calls read a failure (`status_of`, `server_message`). A retry that ran
    out is read through to its last attempt."""
    last = getattr(error, "last_attempt", None)
    if last is not None and last.exception() is not None:
        error = last.exception()
    if not isinstance(error, Exception):
        return None, type(error).__name__, False
    status = status_of(error)
    message = server_message(error) or type(error).__name__
    answered = status is not None and status < 500 and status != 429
    return status, message[:200], answered


# --- the whole check ---------------------------------------------------------------------


@dataclass
class Report:
    """Everything `judge-check` found, for the terminal or as JSON."""

    judge: str
    endpoint: str | None
    dataset: str
    replay: str | None
    tasks: list[str]
    limit: int
    probes: list[Probe] = field(default_factory=list)
    summary: Summary | None = None
    stopped: str | None = None  # why nothing more could be learned (outage, refused key)
    dollars_per_writing: float | None = None
    price_note: str | None = None
    log_files: list[str] = field(default_factory=list)

    @property
    def reasons(self) -> list[str]:
        if self.stopped:
            return [self.stopped]
        return verdict(self.summary) if self.summary else ["nothing was judged"]

    @property
    def ok(self) -> bool:
        return not self.reasons


def judge_check(
    roles: Sequence[str],
    dataset: str = "demo",
    limit: int = DEFAULT_LIMIT,
    tasks: Sequence[str] = DEFAULT_TASKS,
    replay: str | None = None,
    prices: Path | None = None,
    log_dir: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Check the judge: probes, then a small ToW eval, then the log's summary.

    Every input is checked before the first request (bad input is a `UserError` or,
    for the prices file, a `StudyError`). The eval runs with `INSPECT_CACHE_DIR` set to
    a new empty folder, so no reply store answers for the judge; its logs go to
    `log_dir`, or to a temporary folder removed afterwards.
    """
    if limit < 1:
        raise UserError(f"--limit {limit}: give how many writings per task, 1 or more")
    spec = parse_role(roles)
    rates = load_prices(prices) if prices is not None else None
    run = present_tasks(dataset, tasks)
    writer = replay or default_replay(dataset, run)
    evaluated = build_tasks(dataset, writer, run)
    model = spec.model()
    report = Report(str(model), endpoint(model), dataset, writer, run, limit)
    say = progress or (lambda text: None)
    say(f"probing {report.judge} at {report.endpoint or 'its default endpoint'} ...")
    report.probes = asyncio.run(probe(model))
    plain = report.probes[0]
    if not plain.accepted:
        report.stopped = _stopped(report, plain)
        return report
    say(f"judging up to {_many(limit, 'writing')} per task of {dataset} ({', '.join(run)}) ...")
    with tempfile.TemporaryDirectory(prefix="howtobench-judge-check-") as scratch:
        with _environment("INSPECT_CACHE_DIR", str(Path(scratch) / "cache")):
            logs = eval(
                evaluated,
                model="none",
                model_roles={ROLE: spec.model()},
                limit=limit,
                log_dir=log_dir or str(Path(scratch) / "logs"),
                display="none",
            )
        # inspect loads a log's samples lazily, from the file: read them before the
        # temporary folder goes
        summary = report.summary = summarize([read_eval_log(log.location) for log in logs])
    if log_dir:
        report.log_files = [log.location for log in logs]
    if summary.outage:
        report.stopped = _outage_line(report, summary.outage)
    if rates is not None and prices is not None:
        if report.judge in rates:
            chosen = rates[report.judge]
            cost = compute_model_cost(
                chosen.batch if summary.batched else chosen.standard, summary.usage
            )
            report.dollars_per_writing = cost / max(summary.writings, 1)
        else:
            report.price_note = f"no price for {report.judge} in {prices}"
    return report


@contextlib.contextmanager
def _environment(name: str, value: str) -> Iterator[None]:
    before = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def _stopped(report: Report, plain: Probe) -> str:
    """One line for a judge that did not take even the plainest request."""
    where = f"{report.judge} at {report.endpoint or 'its default endpoint'}"
    said = f"HTTP {plain.status}: {plain.message}" if plain.status else plain.message
    if not plain.answered and plain.status != 429:
        return _outage_line(report, said or "no answer")
    if plain.status == 429:
        return f"{where} is rate-limiting ({said}): wait and check again, or raise the limit"
    if plain.status in (401, 403):
        return f"{where} refused the key ({said}): check the API key variable of the provider"
    if plain.status == 404:
        return f"{where} answered 404 ({plain.message}): check the model name and the base URL"
    return f"{where} refused a plain one-message request ({said})"


def _outage_line(report: Report, detail: str) -> str:
    where = f"{report.judge} at {report.endpoint or 'its default endpoint'}"
    return (
        f"no answer from {where} ({_shorten(_one_line(detail), 120)}): check the base URL, "
        "the key, and that the server is running"
    )


# --- output ------------------------------------------------------------------------------


def render(report: Report) -> str:
    """The report for a terminal: at most `WIDTH` columns."""
    lines = [_shorten(f"judge {report.judge} at {report.endpoint or 'its default endpoint'}")]
    summary = report.summary
    if summary is not None:
        lines.append(
            _shorten(
                f"ran {', '.join(report.tasks)} on {report.dataset}, replaying {report.replay}, "
                f"up to {_many(report.limit, 'writing')} per task:"
            )
        )
        lines.append(
            f"{_many(summary.writings, 'writing')}, "
            f"{_many(summary.instructions, 'instruction')}, {_many(summary.calls, 'judge call')}"
            + (f" ({summary.unattributed} in no question's span)" if summary.unattributed else "")
        )
        lines += ["", *_table(summary)]
        for kind in summary.kinds.values():
            for reason, n in kind.reasons.most_common(3):
                lines += textwrap.wrap(
                    f"{kind.name}, {n} unusable: {reason}",
                    WIDTH,
                    initial_indent="  ",
                    subsequent_indent="    ",
                    break_on_hyphens=False,
                )
        lines += ["", *_tokens(report, summary)]
    if report.probes:
        lines += ["", "requests the endpoint accepts:"]
        for p in report.probes:
            state = "accepted" if p.accepted else _refused(p)
            lines.append(_shorten(f"  {p.label:<33} {state}"))
            if not p.accepted and p.name in _NEEDED_FOR:
                lines.append(_shorten(f"  {'':<33} (ToW uses it for {_NEEDED_FOR[p.name]})"))
    lines += [""]
    lines += [f"log: {path}" for path in report.log_files]
    reasons = report.reasons
    if not reasons:
        lines.append(
            f"verdict: can serve Tree-of-Writing (every kind of question usable in "
            f">= {USABLE_SHARE:.0%} of its asks)"
        )
    else:
        lines.append("verdict: the judge cannot serve Tree-of-Writing:")
        for reason in reasons:
            lines += textwrap.wrap(
                reason, WIDTH, initial_indent="  ", subsequent_indent="    ", break_on_hyphens=False
            )
    return "\n".join(lines)


def _table(summary: Summary) -> list[str]:
    head = (
        f"{'question':<15}{'asked':>6}{'at once':>9}{'re-asked':>10}{'unusable':>10}"
        f"{'median s':>10}{'prompt tok':>12}{'reply tok':>11}"
    )
    rows = [head]
    for kind in summary.kinds.values():
        calls = max(kind.calls, 1)
        median = kind.median_latency
        rows.append(
            f"{kind.name:<15}{kind.asked:>6}{kind.at_once:>9}{kind.after_reask:>10}"
            f"{kind.unusable:>10}{'-' if median is None else f'{median:.2f}':>10}"
            f"{_prompt_tokens(kind.usage) / calls:>12,.0f}{kind.usage.output_tokens / calls:>11,.0f}"
            + (f"  ({kind.from_store} from store)" if kind.from_store else "")
        )
    return rows


def _prompt_tokens(usage: ModelUsage) -> int:
    """A prompt's whole size: inspect counts cache reads and writes apart from input."""
    return (
        usage.input_tokens
        + (usage.input_tokens_cache_read or 0)
        + (usage.input_tokens_cache_write or 0)
    )


def _tokens(report: Report, summary: Summary) -> list[str]:
    each = summary.per_writing()
    parts = [f"{each.input_tokens:,} input"]
    if each.input_tokens_cache_write:
        parts.append(f"{each.input_tokens_cache_write:,} cache-write")
    if each.input_tokens_cache_read:
        parts.append(f"{each.input_tokens_cache_read:,} cache-read")
    lines = [
        _shorten(f"per writing: {', '.join(parts)} and {each.output_tokens:,} output tokens"),
        "  (the negotiator counted once per writing: a full run asks it once per instruction)",
    ]
    if report.dollars_per_writing is not None:
        lines.append(f"cost per writing: ${report.dollars_per_writing:.4f} (estimated)")
    elif report.price_note:
        lines.append(_shorten(f"cost per writing: unknown, {report.price_note}"))
    if summary.unscored:
        lines.append(f"{summary.unscored} of {_many(summary.writings, 'writing')} left unscored")
    return lines


def _refused(p: Probe) -> str:
    if not p.answered:
        return f"no answer ({p.message})"
    return f"refused (HTTP {p.status}: {p.message})" if p.status else f"refused ({p.message})"


def as_json(report: Report) -> dict[str, Any]:
    """The report as one JSON object for scripts."""
    summary = report.summary
    kinds = {}
    each = summary.per_writing() if summary else None
    if summary is not None:
        kinds = {
            k.name: {
                "asked": k.asked,
                "usable_at_once": k.at_once,
                "usable_after_reask": k.after_reask,
                "unusable": k.unusable,
                "from_store": k.from_store,
                "reasons": dict(k.reasons),
                "calls": k.calls,
                "median_latency_s": k.median_latency,
                "input_tokens": k.usage.input_tokens,
                "cache_read_tokens": k.usage.input_tokens_cache_read or 0,
                "cache_write_tokens": k.usage.input_tokens_cache_write or 0,
                "output_tokens": k.usage.output_tokens,
                "passes": k.passes,
            }
            for k in summary.kinds.values()
        }
    return {
        "judge": report.judge,
        "endpoint": report.endpoint,
        "dataset": report.dataset,
        "replay": report.replay,
        "tasks": report.tasks,
        "limit": report.limit,
        "ok": report.ok,
        "exit_status": 0 if report.ok else 1,
        "rule": RULE,
        "reasons": report.reasons,
        "stopped": report.stopped,
        "writings": summary.writings if summary else 0,
        "instructions": summary.instructions if summary else 0,
        "unscored": summary.unscored if summary else 0,
        "judge_calls": summary.calls if summary else 0,
        "kinds": kinds,
        "per_writing": {
            "input_tokens": each.input_tokens if each else None,
            "cache_read_tokens": each.input_tokens_cache_read if each else None,
            "cache_write_tokens": each.input_tokens_cache_write if each else None,
            "output_tokens": each.output_tokens if each else None,
            "dollars": report.dollars_per_writing,
        },
        "price_note": report.price_note,
        "probes": {
            p.name: {
                "label": p.label,
                "accepted": p.accepted,
                "answered": p.answered,
                "status": p.status,
                "message": p.message,
            }
            for p in report.probes
        },
        "logs": report.log_files,
    }


def run_command(args: argparse.Namespace) -> None:
    """`howtobench judge-check`: print the report (or its JSON); a judge that cannot
    serve raises `JudgeCannotServe`, which `cli.main` prints as one line, status 1."""
    report = judge_check(
        args.model_role,
        dataset=args.dataset,
        limit=args.limit,
        tasks=args.tasks,
        replay=args.replay,
        prices=args.prices,
        log_dir=args.log_dir,
        progress=_progress if sys.stderr.isatty() else None,
    )
    if args.json:
        print(json.dumps(as_json(report), ensure_ascii=False))
    elif not report.stopped:  # an outage is its one line, below
        print(render(report))
    if not report.ok:
        reasons = report.reasons
        first = reasons[0]
        more = f" (and {len(reasons) - 1} more reasons in the report)" if len(reasons) > 1 else ""
        raise JudgeCannotServe(
            first if report.stopped else f"the judge cannot serve Tree-of-Writing: {first}{more}"
        )


def _progress(text: str) -> None:
    """What the check is doing, for a person at a terminal (a real judge takes a while)."""
    print(f"howtobench judge-check: {text}", file=sys.stderr)


def _many(n: int, noun: str) -> str:
    return f"{n:,} {noun}" + ("" if n == 1 else "s")


def _shorten(text: str, width: int = WIDTH) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def _one_line(text: str) -> str:
    return " ".join(text.split())
