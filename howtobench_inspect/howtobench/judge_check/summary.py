"""What a check's logs say about the judge, read the way the scorer wrote them (logs
only, so it can be tested without an endpoint). The rule is `RULE`: one failure in four
is allowed because a single timeout or odd reply on a small sample says little.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.model import ModelUsage

from howtobench.judge.prices import batched_roles
from howtobench.judge_check.role import ROLE
from howtobench.judge_check.text import one_line
from howtobench.tree.spec import LEAVES, tree_for
from howtobench.vocabulary.metadata import ScoreKey, TaskKey
from howtobench.vocabulary.words import replayed_writer

__all__ = ["NEGOTIATOR", "RULE", "Summary", "USABLE_SHARE", "summarize", "verdict"]

NEGOTIATOR = "negotiator"
KINDS: tuple[str, ...] = (NEGOTIATOR, *(leaf.id for leaf in LEAVES if leaf.judge == "llm"))
USABLE_SHARE = 0.75  # of a kind's asks that must end in a usable reply
RULE = (
    f"every kind of question usable, at once or after re-asks, in at least "
    f"{USABLE_SHARE:.0%} of its asks; every eval finished"
)


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
    latencies: list[float] = field(default_factory=list)  # seconds the server took, per call
    waits: list[float] = field(default_factory=list)  # seconds waited in the client, per call
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
    def median_wait(self) -> float | None:
        return statistics.median(self.waits) if self.waits else None

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
    ran_out: str | None = None  # the check stopped at its --time-limit (`summarize`)
    cut_prompts: str | None = None  # the long probe's prompt was cut to the context

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


def summarize(logs: Sequence[EvalLog], ran_out: str | None = None) -> Summary:
    """Per kind of question: how its asks went, and each call's latency and tokens, found
    by the span of the question it was made in, since a writing's calls run concurrently.
    With `ran_out` (the time limit), unfinished writings are the part not run, not errors.
    """
    expected = {
        leaf.id for log in logs for leaf in tree_for(_task_of(log)).leaves if leaf.judge == "llm"
    }
    if _negotiates(logs):
        expected.add(NEGOTIATOR)
    kinds = {k: Kind(k) for k in KINDS if k in expected}
    summary = Summary(kinds, ran_out=ran_out)
    instructions: set[tuple[str, str]] = set()
    for log in logs:
        task = _task_of(log)
        if log.status != "success" and not (ran_out and log.status == "cancelled"):
            message = one_line(log.error.message) if log.error else log.status
            if log.error and _is_outage(log.error.message, log.error.traceback):
                summary.outage = message
            else:
                summary.errors.append(f"the {task} eval ended with status {log.status}: {message}")
        summary.usage += _judge_usage(log)
        summary.batched = summary.batched or any(role == ROLE for role, _ in batched_roles(log))
        for sample in log.samples or []:
            calls = _calls_by_kind(sample, summary)
            if sample.error is not None:
                if ran_out and "CancelledError" in sample.error.message:
                    continue
                summary.errors.append(
                    f"{task} {sample.id}: the sample ended in an error: "
                    f"{one_line(sample.error.message)[:200]}"
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


def _negotiates(logs: Sequence[EvalLog]) -> bool:
    """Whether the judge's negotiator is asked: the tasks weight by negotiation (not
    `-T weights=uniform` or a plan); with no log, it is not known otherwise."""
    return not logs or any(
        (log.eval.metadata or {}).get(TaskKey.WEIGHTS, "negotiated") == "negotiated" for log in logs
    )


def _task_of(log: EvalLog) -> str:
    return log.eval.task.rpartition("/")[2]


def _is_outage(message: str, traceback: str | None) -> bool:
    """Whether an eval stopped because the judge answered nothing (`JudgeUnavailable`)."""
    return "JudgeUnavailable" in (traceback or "") or "did not answer" in message


def _judge_usage(log: EvalLog) -> ModelUsage:
    if log.stats.role_usage and ROLE in log.stats.role_usage:
        return log.stats.role_usage[ROLE]
    return sum(log.stats.model_usage.values(), ModelUsage())  # the replayed writer's are zero


def _judge_call(event: ModelEvent) -> bool:
    """A call of the judge role (or of no role: a panel's models), not the replayed
    writer's answer (`replay/<writer>`, the evaluated model)."""
    return event.role == ROLE or (event.role is None and not replayed_writer(event.model))


def _calls_by_kind(sample: EvalSample, summary: Summary) -> dict[str, int]:
    """How many calls each question of a writing took (adding their times and tokens)."""
    spans: dict[str, tuple[str, str | None]] = {}
    counts: Counter[str] = Counter()
    for event in sample.events:
        if isinstance(event, SpanBeginEvent):
            spans[event.id] = (event.name, event.parent_id)
        elif isinstance(event, ModelEvent) and _judge_call(event):
            summary.calls += 1
            kind = _kind_of(event.span_id, spans)
            if kind is None or kind not in summary.kinds:
                summary.unattributed += 1
                continue
            counts[kind] += 1
            record = summary.kinds[kind]
            record.latencies.append(_latency(event))
            record.waits.append(_wait(event))
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
    """The time the server took (inspect's working time), else the call's whole time."""
    if event.working_time is not None:
        return float(event.working_time)
    if event.completed is not None:
        return (event.completed - event.timestamp).total_seconds()
    return float("nan")


def _wait(event: ModelEvent) -> float:
    """The time the call spent in the client before its answering request: waiting for
    a connection slot, and failed attempts with their backoff."""
    if event.completed is None:
        return float("nan")
    span = (event.completed - event.timestamp).total_seconds()
    return max(0.0, span - _latency(event))


def _count_questions(metadata: Mapping[str, Any], calls: Mapping[str, int], s: Summary) -> None:
    negotiator = metadata.get(ScoreKey.NEGOTIATOR)
    if (
        NEGOTIATOR in s.kinds
        and isinstance(negotiator, dict)
        and not negotiator.get(ScoreKey.REUSED)
    ):
        weighted = metadata.get(ScoreKey.WEIGHTS) is not None
        _count(s.kinds[NEGOTIATOR], negotiator, weighted, calls)
    for leaf, record in (metadata.get(ScoreKey.LEAVES) or {}).items():
        if not isinstance(record, dict) or record.get("judged_by") != "llm" or leaf not in s.kinds:
            continue
        for judge in record.get("judges") or []:
            _count(s.kinds[leaf], judge, judge.get("score") is not None, calls)


def _count(kind: Kind, exchange: Mapping[str, Any], usable: bool, calls: Mapping[str, int]) -> None:
    """One question, from the scorer's record of it and the calls seen in its span (a
    refused call leaves no reply)."""
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
        kind.reasons[one_line(str(exchange.get("error") or "no usable reply"))] += 1
    elif tries > 1:
        kind.after_reask += 1
    else:
        kind.at_once += 1


def verdict(summary: Summary) -> list[str]:
    """Why the judge cannot serve ToW, one line each; empty when it can."""
    if summary.outage:
        return [summary.outage]
    reasons = [summary.ran_out] if summary.ran_out else []
    reasons += summary.errors
    if summary.cut_prompts:
        reasons.append(summary.cut_prompts)
    for kind in summary.kinds.values():
        if kind.asked == 0:
            if kind.from_store == 0:
                reasons.append(f"{kind.name}: never asked")
            continue
        if not kind.passes:
            why = "; ".join(f"{r} ({n})" for r, n in kind.reasons.most_common(2))
            served = kind.name == NEGOTIATOR and _experts_pass(summary)
            reasons.append(
                f"{kind.name}: usable in {kind.usable} of {kind.asked} asks"
                + (f": {why}" if why else "")
                + (f"; {EXPERTS_ONLY}" if served else "")
            )
    return reasons


# What a judge whose experts serve and whose negotiator does not can do: the weights
# are the negotiator's (paper, Figure 1), and Table 3's "Average scoring (ToW w/o plan)"
# does without them.
EXPERTS_ONLY = (
    "its experts are usable, so it can serve without negotiating: with `-T "
    "weights=uniform` (every leaf weighted alike), or with the weights of a stronger judge "
    '(`howtobench plan export`, docs/large-runs.md, "Scale out"); check it so with '
    "`--weights uniform` or `--weights PLAN`"
)


def _experts_pass(summary: Summary) -> bool:
    experts = [k for k in summary.kinds.values() if k.name != NEGOTIATOR and k.asked]
    return bool(experts) and all(k.passes for k in experts)
