"""What the build tests share: the demo corpus, small corpora written per test, and builds
against the judge simulator (in process, offline)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import howtobench
from howtobench.construct.options import BuildOptions
from howtobench.construct.pipeline import BuildResult, build_benchmark
from howtobench.construct.runs import EvalOptions
from howtobench.simulator import Asked, Fault, JudgeSimulator
from howtobench.vocabulary.words import FILL_MARKER

DEMO_CORPUS = Path(howtobench.__file__).parent / "dataset" / "demo" / "corpus.jsonl"
MODEL = "openai-api/sim/judge"


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    return path


def read_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def sim_evals(simulator: JudgeSimulator) -> EvalOptions:
    """The simulator as the steps' model: its own base URL (a memoized model of an earlier
    test's simulator is not reused), no retries, so an outage stops the build at once."""
    return EvalOptions(
        MODEL, model_base_url=simulator.base_url, display="none", max_retries=0, retry_attempts=0
    )


def run_build(
    corpus: Path, out: Path, simulator: JudgeSimulator, options: BuildOptions | None = None
) -> BuildResult:
    return build_benchmark(corpus, out, sim_evals(simulator), options or BuildOptions())


@dataclass
class Recorder:
    """A simulator script that notes every question (kind, text judged) and whether it
    was answered, and answers with `answer(question)` when that is not None."""

    answer: Callable[[Asked], str | dict[str, Any] | Fault | None] = lambda q: None
    asked: list[tuple[str, str, bool]] = field(default_factory=list)

    def __call__(self, question: Asked) -> str | dict[str, Any] | Fault | None:
        reply = self.answer(question)
        self.asked.append((question.kind, question.writing or question.text, reply is None))
        return reply

    def answered(self) -> set[tuple[str, str]]:
        return {(kind, text) for kind, text, ok in self.asked if ok}


def restored(grounding: str, reference: str) -> str:
    """A completion item's grounding with its reference put back at the marker: the
    original text, exactly, when the item was cut right."""
    return grounding.replace(FILL_MARKER, reference, 1)
