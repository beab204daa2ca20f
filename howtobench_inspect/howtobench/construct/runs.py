"""Running one build step as an inspect eval set, and reading what each text got.

Each step has its own log folder, so a rerun reuses a finished step's log and retries an
unfinished one. A step's input is named by its content: another threshold, seed or cap
changes the task arguments of later steps, so inspect runs them anew instead of taking
an old log for the new input.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from inspect_ai import Task, eval_set
from inspect_ai.log import read_eval_log_sample_summaries, read_eval_log_samples_by_id
from inspect_ai.model import Model, get_model

from howtobench._inspect import error_message
from howtobench.dataset.records import jsonl_text
from howtobench.vocabulary.errors import UserError

__all__ = ["BuildIncomplete", "EvalOptions", "Runs"]

# Only the scores are read back, a chunk of samples at a time: a step's log of 10,000
# texts holds every prompt and reply in its events, which the build does not need in
# memory. (inspect's one-by-one reader parses the zip directory again for every sample,
# which grows with the square of the log; a chunk shares one parse.)
_NOT_READ = {"events", "messages", "attachments", "store"}
_CHUNK = 500


class BuildIncomplete(RuntimeError):
    """A step's eval did not finish; rerunning the same build resumes it."""


@dataclass(frozen=True)
class Outcome:
    """What one text got from a step: the checked answer, or the reason it has none."""

    value: dict[str, Any] | None
    error: str | None
    from_store: bool


@dataclass(frozen=True)
class EvalOptions:
    """How the steps' evals run: the model and inspect's options for it."""

    model: str | Model
    model_base_url: str | None = None
    max_connections: int | None = None
    max_retries: int | None = None
    retry_attempts: int = 2
    display: str | None = None  # inspect's display (`none` in tests); None: its default

    def check(self) -> None:
        """The model must resolve before any step runs: a wrong name stops the build in
        one line, not a traceback."""
        if isinstance(self.model, Model):
            return
        try:
            get_model(self.model, base_url=self.model_base_url)
        except Exception as error:  # inspect raises several kinds; each means "unusable"
            raise UserError(f"--model: cannot use '{self.model}': {error_message(error)}") from None


@dataclass
class Runs:
    """The steps run so far in one build folder, with their logs and timings."""

    out: Path
    evals: EvalOptions
    logs: dict[str, str] = field(default_factory=dict)
    seconds: dict[str, float] = field(default_factory=dict)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)

    def input(self, step: str, rows: Iterable[Mapping[str, Any]]) -> Path:
        """The step's input file, named by its content (written once)."""
        text = jsonl_text(rows)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:12]
        path = self.out / "work" / f"{step}-{digest}.jsonl"
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return path

    def run(self, step: str, task: Task) -> dict[str, Outcome]:
        """Run (or resume, or reuse) the step's eval; each sample's outcome by sample id."""
        options = self.evals
        connections = options.max_connections
        start = time.perf_counter()
        success, logs = eval_set(
            [task],
            log_dir=str(self.out / "logs" / step),
            log_dir_allow_dirty=True,
            model=options.model,
            model_base_url=options.model_base_url,
            retry_attempts=options.retry_attempts,
            max_retries=options.max_retries,
            max_connections=connections,
            # more samples than connections keep every connection busy while inspect
            # does each sample's own work
            max_samples=2 * connections if connections else None,
            display=options.display,  # type: ignore[arg-type]
            # no live metrics: inspect would recompute them over every finished sample
            # each time one finishes, which grows with the square of the step's texts
            score_display=False,
            # no live sample buffer for the viewer: it costs each sample several database
            # writes, and a resumed step loses nothing without it (a sample not yet in
            # the log is run again, its question answered from the reply store)
            log_realtime=False,
        )
        [log] = logs
        if not success:
            reason = log.error.message if log.error else log.status
            raise BuildIncomplete(
                f"step {step} did not finish ({' '.join(str(reason).split())[:300]}); "
                f"its log is {log.location}. Run the same build again to resume: "
                "answered questions are not asked again."
            )
        self.seconds[step] = time.perf_counter() - start
        self.logs[step] = str(_local(log.location).relative_to(self.out.resolve()))
        outcomes = _outcomes(log.location)
        self.counts[step] = {
            "asked": len(outcomes),
            "failed": sum(1 for o in outcomes.values() if o.value is None),
            "answered_from_store": sum(1 for o in outcomes.values() if o.from_store),
        }
        return outcomes


def _local(location: str) -> Path:
    """A log's path: inspect gives a reused log's location as a `file://` URI."""
    return Path(
        unquote(urlsplit(location).path) if location.startswith("file:") else location
    ).resolve()


def _outcomes(location: str) -> dict[str, Outcome]:
    """Each sample's outcome, read from the scores of a step's log."""
    keys = [(s.id, s.epoch) for s in read_eval_log_sample_summaries(location)]
    outcomes: dict[str, Outcome] = {}
    for start in range(0, len(keys), _CHUNK):
        chunk = keys[start : start + _CHUNK]
        for sample in read_eval_log_samples_by_id(location, chunk, exclude_fields=_NOT_READ):
            record = next(iter((sample.scores or {}).values())).metadata or {}
            outcomes[str(sample.id)] = Outcome(
                record.get("value"), record.get("error"), bool(record.get("from_store"))
            )
    return outcomes
