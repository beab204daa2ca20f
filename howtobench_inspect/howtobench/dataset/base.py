"""What every data source answers, whatever it reads: the records of a task, the writings
stored for them, and the checks that hold for all sources (a known task, one record per
id, a stored writing for every record a run scores). Each kind of source fills in the
abstract methods.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from howtobench.dataset.records import DataError, WritingRecord
from howtobench.vocabulary.words import TASKS

__all__ = ["DataSource"]


class DataSource(ABC):
    """One place the benchmark's records (and perhaps stored writings) come from."""

    # the field that holds a record's id, named when an id comes twice
    id_field: ClassVar[str]
    # whether the source can hold writings to replay (the hub cannot)
    stores_writings: ClassVar[bool] = True

    def __init__(self, name: str, location: str | None = None) -> None:
        self.name = name  # as the user gave it: for messages and the task's metadata
        # what `open_source` opens this source again from, in any folder (an absolute path)
        self.location = location or name
        self._records: dict[str, list[WritingRecord]] = {}  # by task, read and checked

    def records(self, task: str) -> list[WritingRecord]:
        """Every record of `task`, validated; a second record of an id is an error. Read
        and checked once per source: a task build asks again for its replayed and its
        anchor model's writings."""
        if task not in TASKS:
            raise ValueError(f"unknown task '{task}' (expected one of {', '.join(TASKS)})")
        if task not in self._records:
            self._records[task] = _unique(self._read(task), self.id_field)
        return list(self._records[task])

    def items(self) -> list[WritingRecord]:
        """Every record the source holds, each once (what the construction pipeline's
        screening reads): the records of each task it has."""
        return [record for task in self.tasks() for record in self.records(task)]

    def generations_for(
        self, task: str, model: str, records: Sequence[WritingRecord]
    ) -> dict[str, str]:
        """The stored writing of `model` for each of `records` (those a run scores, perhaps
        one genre's); a record without one is an error naming where it should be."""
        stored = self.generations(task, model)
        missing = next((record.id for record in records if record.id not in stored), None)
        if missing is not None:
            where, key = self._stored_at(task, model)
            raise DataError(where, f"no stored writing of '{model}' for '{missing}'", field=key)
        return {record.id: stored[record.id] for record in records}

    def provenance(self, task: str, model: str) -> dict[str, Any] | None:
        """What made `model`'s stored writings of `task` (the harness, the model's
        arguments, the generation settings), where the source keeps it; else None."""
        return None

    @abstractmethod
    def tasks(self) -> list[str]:
        """The tasks the source has records of, in the benchmark's order."""

    @abstractmethod
    def models(self, task: str) -> list[str]:
        """The models with writings of `task` stored, by name."""

    @abstractmethod
    def generations(self, task: str, model: str) -> dict[str, str]:
        """Every stored writing of `model` for `task`, by record id; a model with none
        stored is an error that lists the stored ones."""

    @abstractmethod
    def _read(self, task: str) -> list[WritingRecord]:
        """The records of `task` as read, in order (`records` checks their ids)."""

    @abstractmethod
    def _stored_at(self, task: str, model: str) -> tuple[str, str]:
        """Where `model`'s writings of `task` are: the file, and the field of a record's."""


def _unique(records: Iterable[WritingRecord], key: str) -> list[WritingRecord]:
    """The records, refusing a second record of an id (`key` is the id's field name)."""
    seen: dict[str, WritingRecord] = {}
    for record in records:
        if record.id in seen:
            first = seen[record.id].line
            raise DataError(
                record.source,
                f"duplicate id '{record.id}' (lines {first} and {record.line})",
                field=key,
            )
        seen[record.id] = record
    return list(seen.values())
