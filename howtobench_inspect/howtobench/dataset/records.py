"""Writing records, what every data source shares: their type, the two record formats (the
published `aligned.jsonl` and a user's JSONL), validated, and inspect samples.

Every record passes one validation path; a bad record raises `DataError` naming the file,
the line and the field. Nothing is skipped silently.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample
from inspect_ai.solver import Generate, Solver, TaskState, solver

from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.genres import canonical_genre
from howtobench.vocabulary.metadata import SampleKey
from howtobench.vocabulary.words import FILL_MARKER, TASKS, detect_language

__all__ = [
    "DataError",
    "LONGEST_FIELD",
    "WritingRecord",
    "data_note",
    "filter_genre",
    "jsonl_text",
    "logger",
    "parse_benchmark_record",
    "parse_inference",
    "parse_user_record",
    "read_jsonl",
    "record_to_sample",
    "told_language",
]

logger = logging.getLogger(__name__)


class DataError(UserError):
    """A record or file that cannot be used, with where it is and what is wrong (inspect
    prints it as one line, without a traceback)."""

    def __init__(
        self, source: str, message: str, line: int | None = None, field: str | None = None
    ):
        where = source if line is None else f"{source}, line {line}"
        if field is not None:
            where += f", field '{field}'"
        super().__init__(f"{where}: {message}")
        self.source, self.line, self.field = source, line, field


@dataclass(frozen=True)
class WritingRecord:
    """One writing instruction with its grounding and human reference."""

    id: str
    task: str
    genre_raw: str
    instruction: str
    grounding: str
    reference: str
    language: str
    bench_id: str = ""
    source: str = ""
    line: int = 0  # where in `source` the record is, for errors about two records
    generations: Mapping[str, str] = field(default_factory=dict)
    note: str = ""  # what is odd about a record that is kept: said when its sample runs

    @property
    def genre(self) -> str:
        return canonical_genre(self.genre_raw)


# Characters of the longest text a record may hold (instruction, grounding, reference):
# about five times the longest published one (a reference of 10,423 characters; the
# longest information is 8,999, instruction 3,003). Each goes into every judge request
# of its sample, so a longer one is refused when the data is read, before any call.
LONGEST_FIELD = 50_000


def jsonl_text(rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows as JSONL text, one object a line, non-ASCII kept as is (what `read_jsonl`
    reads back)."""
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line; a malformed line, bytes that are not
    UTF-8 (each line decoded alone, so the error names it) or a file without any record
    raise `DataError`. A UTF-8 byte order mark and CRLF line ends are accepted.
    """
    if not path.is_file():
        raise DataError(str(path), "file not found")
    records = 0
    with path.open("rb") as f:
        for number, raw in enumerate(f, start=1):
            if number == 1 and raw.startswith((b"\xff\xfe", b"\xfe\xff")):
                raise DataError(str(path), "the file is UTF-16: save it as UTF-8", number)
            line = _decoded(raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw, path, number)
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as err:
                raise DataError(str(path), f"malformed JSON ({err.msg})", number) from err
            except RecursionError:
                raise DataError(
                    str(path), "the record is nested too deep to read as JSON", number
                ) from None
            if not isinstance(obj, dict):
                raise DataError(str(path), "a record must be a JSON object", number)
            records += 1
            yield number, obj
    if not records:
        raise DataError(
            str(path), "the file is empty (or only blank lines): it needs one JSON object per line"
        )


def _decoded(raw: bytes, path: Path, number: int) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise DataError(
            str(path),
            f"not valid UTF-8 (byte 0x{raw[err.start]:02x} at byte {err.start + 1} of the line): "
            "save the file as UTF-8",
            number,
        ) from err


def _text(
    obj: Mapping[str, Any],
    key: str,
    source: str,
    line: int,
    *,
    required: bool,
    non_empty: bool = False,
) -> str:
    if key not in obj or obj[key] is None:
        if required:
            raise DataError(source, "missing", line, key)
        return ""
    value = obj[key]
    if not isinstance(value, str):
        raise DataError(source, f"must be a string, got {type(value).__name__}", line, key)
    if len(value) > LONGEST_FIELD:
        raise DataError(
            source,
            f"has {len(value):,} characters, more than the {LONGEST_FIELD:,} a record's text "
            "may have (every judge request carries it): shorten it",
            line,
            key,
        )
    if non_empty and not value.strip():
        raise DataError(source, "is empty", line, key)
    return value


def _check_task(task: str, source: str, line: int, key: str) -> str:
    if task not in TASKS:
        raise DataError(
            source, f"unknown task '{task}' (expected one of {', '.join(TASKS)})", line, key
        )
    return task


def _check_marker(
    task: str, instruction: str, grounding: str, source: str, line: int, key: str
) -> str:
    """A completion record must show the gap: the marker in its text (or, as two published
    records do, at least in its instruction; those are kept, with a note that the run
    says when it writes the record's sample, `data_note`)."""
    if task != "completion" or FILL_MARKER in grounding:
        return ""
    if FILL_MARKER not in instruction:
        raise DataError(source, f"a completion record needs the {FILL_MARKER} marker", line, key)
    return (
        f"line {line} of {Path(source).name}: its {FILL_MARKER} marker is only in the "
        "instruction, not in the text"
    )


def parse_benchmark_record(obj: Mapping[str, Any], source: str, line: int) -> WritingRecord:
    """A record of the published `aligned.jsonl` (paper repository or hub: Chinese), or of
    a folder that `howtobench build` wrote, which adds each item's `language`."""
    task = _check_task(
        _text(obj, "task_type", source, line, required=True), source, line, "task_type"
    )
    instruction = _text(obj, "basic_instruction", source, line, required=True, non_empty=True)
    grounding = _text(obj, "information", source, line, required=True)
    note = _check_marker(task, instruction, grounding, source, line, "information")
    return WritingRecord(
        id=_text(obj, "infer_id", source, line, required=True, non_empty=True),
        bench_id=_text(obj, "bench_id", source, line, required=False),
        task=task,
        genre_raw=_text(obj, "sub_task", source, line, required=True),
        instruction=instruction,
        grounding=grounding,
        reference=_text(obj, "reference", source, line, required=True),
        language=_text(obj, "language", source, line, required=False) or "zh",
        source=source,
        line=line,
        note=note,
    )


def parse_user_record(
    obj: Mapping[str, Any], source: str, line: int, default_id: str, task: str
) -> WritingRecord:
    """A record of a user's own JSONL file (its fields: docs/data.md); a record without
    `task` belongs to whichever task is run.
    """
    record_task = _text(obj, "task", source, line, required=False) or task
    _check_task(record_task, source, line, "task")
    instruction = _text(obj, "instruction", source, line, required=True, non_empty=True)
    grounding = _text(obj, "grounding", source, line, required=False)
    note = _check_marker(record_task, instruction, grounding, source, line, "grounding")
    generations = obj.get("generations") or {}
    if not isinstance(generations, dict):
        raise DataError(source, "must be an object of model name -> writing", line, "generations")
    for model, text in generations.items():
        if not isinstance(text, str):
            raise DataError(source, "must be a string", line, f"generations.{model}")
    return WritingRecord(
        id=_text(obj, "id", source, line, required=False) or default_id,
        task=record_task,
        genre_raw=_text(obj, "genre", source, line, required=False),
        instruction=instruction,
        grounding=grounding,
        reference=_text(obj, "reference", source, line, required=False),
        language=_text(obj, "language", source, line, required=False)
        or told_language(instruction + grounding, source, line, "instruction"),
        source=source,
        line=line,
        generations=generations,
        note=note,
    )


def told_language(text: str, source: str, line: int, field: str) -> str:
    """The language of a record that does not say it (`vocabulary.detect_language`); a
    script that does not tell it is refused, asking for the record's `language`."""
    language = detect_language(text)
    if not language:
        raise DataError(
            source,
            "its script does not tell the language: give the record a 'language' field"
            " (zh, en, or the language's code)",
            line,
            field,
        )
    return language


def parse_inference(obj: Mapping[str, Any], source: str, line: int) -> tuple[str, str]:
    """A line of the published `inferences/<model>.jsonl`: the record's `infer_id` and the
    model's `output` for it (an empty output is a writing too, and is kept)."""
    infer_id = _text(obj, "infer_id", source, line, required=True, non_empty=True)
    return infer_id, _text(obj, "output", source, line, required=True)


def record_to_sample(record: WritingRecord, prompt: str) -> Sample:
    """A sample whose input is the writer prompt and whose target is the human reference;
    a record's note goes with it (`data_note` says it)."""
    sample = Sample(
        id=record.id,
        input=prompt,
        target=record.reference,
        metadata={
            SampleKey.BENCH_ID: record.bench_id,
            SampleKey.TASK: record.task,
            SampleKey.GENRE: record.genre,
            SampleKey.GENRE_RAW: record.genre_raw,
            SampleKey.LANGUAGE: record.language,
            SampleKey.INSTRUCTION: record.instruction,
            SampleKey.GROUNDING: record.grounding,
            SampleKey.REFERENCE: record.reference,
            SampleKey.INPUT_LENGTH: len(record.instruction) + len(record.grounding),
        },
    )
    if record.note:
        assert sample.metadata is not None
        sample.metadata[SampleKey.DATA_NOTE] = record.note
    return sample


@solver
def data_note() -> Solver:
    """Say a sample's data note (`WritingRecord.note`) as its run writes it, in its first
    epoch: once per run, and only for the items the run uses (not for every record read,
    whatever `--limit` keeps). The line is in the sample's transcript too."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        note = state.metadata.get(SampleKey.DATA_NOTE)
        if note and state.epoch == 1:
            logger.warning(note)  # inspect's display names the sample and epoch
        return state

    return solve


def filter_genre(records: list[WritingRecord], genre: str | None) -> list[WritingRecord]:
    """Records of one canonical genre; an unknown genre is an error that lists the known."""
    if not genre:
        return records
    wanted = canonical_genre(genre)
    kept = [r for r in records if r.genre == wanted]
    if not kept:
        known = sorted({r.genre for r in records})
        raise ValueError(f"no records of genre '{genre}' (genres here: {', '.join(known)})")
    return kept
