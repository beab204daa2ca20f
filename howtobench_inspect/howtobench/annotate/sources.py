"""The writings to rate, read from inspect logs of our tasks with the studies' reader, so
a log and its continuations count once; a writing is identified by the sample id and the
writer model, as in a ratings file.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalSample

from howtobench.studies.log_files import StudyError, log_files, read_log, runs
from howtobench.studies.runs import Run, writer_model
from howtobench.vocabulary.metadata import SampleKey, TaskKey

__all__ = ["Instruction", "read_instructions"]


@dataclass
class Instruction:
    """One instruction and the writings of it, by writer model."""

    infer_id: str
    task: str
    genre: str
    language: str
    instruction: str
    grounding: str
    reference: str
    writings: dict[str, str] = field(default_factory=dict)
    where: dict[str, str] = field(default_factory=dict)  # model -> the log it came from

    def same_item(self, other: Instruction) -> bool:
        """Whether two logs describe this instruction alike (else their ids clash)."""
        keys = ("task", "instruction", "grounding", "reference")
        return all(getattr(self, key) == getattr(other, key) for key in keys)


def _instruction(sample: EvalSample, path: str) -> Instruction:
    meta: dict[str, Any] = sample.metadata or {}
    if not isinstance(meta.get(SampleKey.INSTRUCTION), str):
        raise StudyError(
            f"{path}: sample {sample.id} has no instruction in its metadata, so it is no "
            "sample of a howtobench task this studio can show"
        )
    return Instruction(
        infer_id=str(sample.id),
        task=str(meta.get(SampleKey.TASK) or ""),
        genre=str(meta.get(SampleKey.GENRE) or "others"),
        language=str(meta.get(SampleKey.LANGUAGE) or "zh"),
        instruction=meta[SampleKey.INSTRUCTION],
        grounding=str(meta.get(SampleKey.GROUNDING) or ""),
        reference=str(meta.get(SampleKey.REFERENCE) or ""),
    )


def _first_epochs(run: Run) -> Iterable[tuple[str, EvalSample]]:
    """Each sample id once: its first epoch that ended without an error. A generated
    writing differs between epochs, and raters rate one of them."""
    chosen: dict[str, tuple[str, EvalSample]] = {}
    for path, sample in sorted(run.samples(), key=lambda entry: entry[1].epoch):
        if sample.error is None:
            chosen.setdefault(str(sample.id), (path, sample))
    return chosen.values()


def read_instructions(paths: Sequence[str | Path]) -> list[Instruction]:
    """The instructions of the logs (files or folders) with every writing of them; a log
    that cannot serve is a `StudyError` naming it."""
    found: dict[str, Instruction] = {}
    for header_run in runs(log_files(paths)):
        run = Run(tuple((path, read_log(path)) for path, _ in header_run.logs))
        log = run.newest
        perturb = (log.eval.metadata or {}).get(TaskKey.PERTURB)
        if perturb:
            raise StudyError(
                f"{run.path}: its writings were disturbed (perturb={perturb}); rate the "
                "writings of a clean run"
            )
        model = writer_model(log)
        for path, sample in _first_epochs(run):
            item = _instruction(sample, path)
            known = found.setdefault(item.infer_id, item)
            if not known.same_item(item):
                raise StudyError(
                    f"{path}: sample {item.infer_id} is another instruction than in "
                    f"{next(iter(known.where.values()))}; give logs of one dataset"
                )
            text = sample.output.completion if sample.output else ""
            if model in known.writings and known.writings[model] != text:
                raise StudyError(
                    f"{path}: {model}'s writing of {item.infer_id} differs from the one in "
                    f"{known.where[model]}; give one run per writer"
                )
            known.writings[model] = text
            known.where.setdefault(model, path)
    return list(found.values())
