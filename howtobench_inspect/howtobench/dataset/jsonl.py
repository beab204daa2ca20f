"""One JSONL file of the user's own writing tasks (`dataset.records.parse_user_record`),
with stored writings under `generations`; `demo` is this source on the small file
shipped in the package. The file is read once, on first use, for every task asked of it.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path
from typing import Any

from howtobench.dataset.base import DataSource
from howtobench.dataset.records import DataError, WritingRecord, parse_user_record, read_jsonl
from howtobench.vocabulary.words import TASKS

__all__ = ["DEMO_FILE", "JsonlSource"]

DEMO_FILE = Path(__file__).parent / "demo" / "demo.jsonl"


class JsonlSource(DataSource):
    id_field = "id"

    def __init__(self, path: Path, name: str) -> None:
        super().__init__(name, name if path == DEMO_FILE else str(path))
        self.path = path

    @cached_property
    def _lines(self) -> list[tuple[int, dict[str, Any]]]:
        return list(read_jsonl(self.path))

    def _parsed(self, task: str) -> list[WritingRecord]:
        """Every record, one without `task` taken as of `task`."""
        where = str(self.path)
        return [
            parse_user_record(obj, where, line, f"{self.path.stem}_{line}", task)
            for line, obj in self._lines
        ]

    def tasks(self) -> list[str]:
        """The tasks its records name; all of them if a record names none. (A record's
        bad `task` is refused when its records are read, with its line.)"""
        named = {str(obj.get("task") or "") for _, obj in self._lines}
        return [task for task in TASKS if task in named or "" in named]

    def items(self) -> list[WritingRecord]:
        """Every record once, one without `task` counted as open writing."""
        return self._parsed("open")

    def models(self, task: str) -> list[str]:
        return sorted({model for record in self.records(task) for model in record.generations})

    def generations(self, task: str, model: str) -> dict[str, str]:
        found = {r.id: r.generations[model] for r in self.records(task) if model in r.generations}
        if not found:
            stored = ", ".join(self.models(task)) or "none"
            raise DataError(
                str(self.path),
                f"no stored writings of '{model}' (stored: {stored})",
                field="generations",
            )
        return found

    def _read(self, task: str) -> list[WritingRecord]:
        """The file's records of `task`; a file with records of other tasks only is an
        error (inspect would only say that the dataset is empty)."""
        records = self._parsed(task)
        kept = [r for r in records if r.task == task]
        if not kept:
            others = ", ".join(sorted({r.task for r in records}))
            raise DataError(
                str(self.path),
                f"no records of task '{task}' (its records are of: {others})",
                field="task",
            )
        return kept

    def _stored_at(self, task: str, model: str) -> tuple[str, str]:
        return str(self.path), f"generations.{model}"
