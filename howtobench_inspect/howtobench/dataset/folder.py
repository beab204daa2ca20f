"""A folder laid out like the paper repository's `data/`: `<task>/aligned.jsonl` (one
record per instruction) and `<task>/inferences/<model>.jsonl` (each model's writings, as
`infer_id` and `output`), which is also what `howtobench build` writes and
`howtobench lm-eval import` writes, adding beside a writer's file what made its writings
(`<model>.provenance.json`), which the tasks record in the log."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from howtobench.dataset.base import DataSource
from howtobench.dataset.records import (
    DataError,
    WritingRecord,
    parse_benchmark_record,
    parse_inference,
    read_jsonl,
)
from howtobench.vocabulary.credentials import without_credentials
from howtobench.vocabulary.words import TASKS

__all__ = ["FolderSource", "PROVENANCE"]

PROVENANCE = ".provenance.json"
"""The suffix of the file beside `<model>.jsonl` that says what made its writings."""


class FolderSource(DataSource):
    id_field = "infer_id"

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(name, str(path))
        self.path = path

    def tasks(self) -> list[str]:
        return [task for task in TASKS if (self.path / task / "aligned.jsonl").is_file()]

    def items(self) -> list[WritingRecord]:
        if not self.tasks():
            raise DataError(str(self.path), "the folder has no <task>/aligned.jsonl")
        return super().items()

    def models(self, task: str) -> list[str]:
        return sorted(path.stem for path in (self.path / task / "inferences").glob("*.jsonl"))

    def generations(self, task: str, model: str) -> dict[str, str]:
        path = self._writer_file(task, model, ".jsonl")
        if not path.is_file():
            stored = ", ".join(self.models(task)) or "none"
            raise DataError(str(path), f"no stored writings of '{model}' (stored: {stored})")
        outputs: dict[str, str] = {}
        lines: dict[str, int] = {}
        for line, obj in read_jsonl(path):
            infer_id, output = parse_inference(obj, str(path), line)
            if infer_id in outputs:
                raise DataError(
                    str(path),
                    f"second generation for '{infer_id}' (lines {lines[infer_id]} and {line})",
                    field="infer_id",
                )
            outputs[infer_id], lines[infer_id] = output, line
        return outputs

    def provenance(self, task: str, model: str) -> dict[str, Any] | None:
        path = self.provenance_path(task, model)
        if not path.is_file():
            return None
        try:
            # one written by an earlier import may hold credentials: the log gets none
            found = without_credentials(json.loads(path.read_text("utf-8")))
        except (OSError, ValueError, RecursionError) as err:
            raise DataError(str(path), f"not a JSON object ({err})") from None
        if not isinstance(found, dict):
            raise DataError(str(path), "not a JSON object")
        return found

    def provenance_path(self, task: str, model: str) -> Path:
        return self._writer_file(task, model, PROVENANCE)

    def _read(self, task: str) -> list[WritingRecord]:
        path = self.path / task / "aligned.jsonl"
        records = []
        for line, obj in read_jsonl(path):
            record = parse_benchmark_record(obj, str(path), line)
            if record.task != task:
                raise DataError(
                    str(path), f"task '{record.task}' in the {task} folder", line, "task_type"
                )
            records.append(record)
        return records

    def _stored_at(self, task: str, model: str) -> tuple[str, str]:
        return str(self._writer_file(task, model, ".jsonl")), "infer_id"

    def _writer_file(self, task: str, model: str, suffix: str) -> Path:
        """A writer's file in `<task>/inferences/`; a name that would lead out of that
        folder (`replay/../..`) is refused."""
        folder = self.path / task / "inferences"
        if any(mark in model for mark in ("/", "\\", "\0")):
            raise DataError(
                str(folder),
                f"'{model}' is no writer's name in a data folder: a writer's writings are "
                "<name>.jsonl in this folder, and a name holding '/' or '\\' would lead out of it",
            )
        return folder / f"{model}{suffix}"
