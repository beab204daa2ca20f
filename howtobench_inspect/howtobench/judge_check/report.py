"""What `judge-check` found (`Report`): for a terminal (`render`, at most `WIDTH`
columns) or as one JSON object for scripts (`as_json`). Reads no endpoint, so it can be
tested and reused without one."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from howtobench.judge.unread import prompt_tokens
from howtobench.judge_check.agreement import Agreement, agreement_json, render_agreement
from howtobench.judge_check.probes import NEEDED_FOR, Probe
from howtobench.judge_check.quality import Quality
from howtobench.judge_check.quality_report import quality_json, render_quality
from howtobench.judge_check.summary import NEGOTIATOR, RULE, USABLE_SHARE, Summary, verdict
from howtobench.judge_check.text import many, shorten, wrap

__all__ = ["Report", "as_json", "render"]


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
    quality: Quality | None = None  # `--quality`: does the judge see damage?
    agreement: Agreement | None = None  # `--against`: with a reference judge's logs

    @property
    def where(self) -> str:
        return f"{self.judge} at {self.endpoint or 'its default endpoint'}"

    @property
    def usability_reasons(self) -> list[str]:
        """Why the judge cannot serve ToW at all; empty when it can."""
        if self.stopped:
            return [self.stopped]
        return verdict(self.summary) if self.summary else ["nothing was judged"]

    @property
    def reasons(self) -> list[str]:
        """Every reason for exit status 1: the usability reasons, then the quality verdict
        of a judge that does not see quality (`--quality`)."""
        found = self.usability_reasons
        if self.quality is not None and not self.quality.passes:
            found.append(self.quality.verdict)
        return found

    @property
    def ok(self) -> bool:
        return not self.reasons


def render(report: Report) -> str:
    """The report for a terminal: at most `WIDTH` columns."""
    lines = [shorten(f"judge {report.where}")]
    summary = report.summary
    if summary is not None:
        lines.append(
            shorten(
                f"ran {', '.join(report.tasks)} on {report.dataset}, replaying {report.replay}, "
                f"up to {many(report.limit, 'writing')} per task:"
            )
        )
        lines.append(
            f"{many(summary.writings, 'writing')}, "
            f"{many(summary.instructions, 'instruction')}, {many(summary.calls, 'judge call')}"
            + (f" ({summary.unattributed} in no question's span)" if summary.unattributed else "")
        )
        lines += ["", *_table(summary)]
        for kind in summary.kinds.values():
            for reason, n in kind.reasons.most_common(3):
                lines += wrap(f"{kind.name}, {n} unusable: {reason}", "  ")
        lines += ["", *_tokens(report, summary)]
    if report.probes:
        lines += ["", "probes, by what the server did:"]
        for p in report.probes:
            lines.append(shorten(f"  {p.label:<36} {p.state}"))
            if not p.accepted and p.name in NEEDED_FOR:
                lines.append(shorten(f"  {'':<36} (ToW uses it for {NEEDED_FOR[p.name]})"))
    lines += [""]
    lines += [f"log: {path}" for path in report.log_files]
    reasons = report.usability_reasons
    if not reasons:
        lines.append(
            f"verdict: can serve Tree-of-Writing (every kind of question usable in "
            f">= {USABLE_SHARE:.0%} of its asks)"
        )
    elif summary is not None and summary.ran_out:
        lines.append("verdict: not known, the check ran out of time:")
    else:
        lines.append("verdict: the judge cannot serve Tree-of-Writing:")
        for reason in reasons:
            lines += wrap(reason, "  ")
    if report.agreement is not None:
        lines += ["", *wrap(render_agreement(report.agreement))]
    if report.quality is not None:  # its verdict last
        lines += ["", *render_quality(report.quality)]
    return "\n".join(lines)


def _table(summary: Summary) -> list[str]:
    head = (
        f"{'question':<15}{'asked':>6}{'at once':>9}{'re-asked':>10}{'unusable':>10}"
        f"{'median s':>10}{'waited s':>10}{'prompt tok':>12}{'reply tok':>11}"
    )
    rows = [head]
    for kind in summary.kinds.values():
        calls = max(kind.calls, 1)
        median, wait = kind.median_latency, kind.median_wait
        rows.append(
            f"{kind.name:<15}{kind.asked:>6}{kind.at_once:>9}{kind.after_reask:>10}"
            f"{kind.unusable:>10}{'-' if median is None else f'{median:.2f}':>10}"
            f"{'-' if wait is None else f'{wait:.2f}':>10}"
            f"{prompt_tokens(kind.usage) / calls:>12,.0f}{kind.usage.output_tokens / calls:>11,.0f}"
            + (f"  ({kind.from_store} from store)" if kind.from_store else "")
        )
    return rows


def _tokens(report: Report, summary: Summary) -> list[str]:
    each = summary.per_writing()
    parts = [f"{each.input_tokens:,} input"]
    if each.input_tokens_cache_write:
        parts.append(f"{each.input_tokens_cache_write:,} cache-write")
    if each.input_tokens_cache_read:
        parts.append(f"{each.input_tokens_cache_read:,} cache-read")
    lines = [shorten(f"per writing: {', '.join(parts)} and {each.output_tokens:,} output tokens")]
    if NEGOTIATOR in summary.kinds:
        lines.append(
            "  (the negotiator counted once per writing: a full run asks it once per instruction)"
        )
    if report.dollars_per_writing is not None:
        lines.append(f"cost per writing: ${report.dollars_per_writing:.4f} (estimated)")
    elif report.price_note:
        lines.append(shorten(f"cost per writing: unknown, {report.price_note}"))
    if summary.unscored:
        lines.append(f"{summary.unscored} of {many(summary.writings, 'writing')} left unscored")
    return lines


def as_json(report: Report) -> dict[str, Any]:
    """The report as one JSON object for scripts."""
    summary = report.summary
    each = summary.per_writing() if summary else None
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
            "median_wait_s": k.median_wait,
            "input_tokens": k.usage.input_tokens,
            "cache_read_tokens": k.usage.input_tokens_cache_read or 0,
            "cache_write_tokens": k.usage.input_tokens_cache_write or 0,
            "output_tokens": k.usage.output_tokens,
            "passes": k.passes,
        }
        for k in (summary.kinds.values() if summary else [])
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
                "state": p.state,
                "answered": p.answered,
                "cut": p.cut,
                "status": p.status,
                "message": p.message,
            }
            for p in report.probes
        },
        "logs": report.log_files,
        "quality": quality_json(report.quality) if report.quality is not None else None,
        "agreement": agreement_json(report.agreement) if report.agreement is not None else None,
    }
