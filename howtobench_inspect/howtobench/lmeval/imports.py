"""`howtobench lm-eval import`: lm-eval's writings as a data folder for the ToW judge, in
the paper repository's layout (docs/lm-eval.md, "The import").

A second writer's output may join the folder when it answered the same items; anything
else there is refused rather than overwritten, and a failed import leaves the folder as
it found it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from pathlib import Path
from typing import Any

from howtobench.dataset.folder import FolderSource
from howtobench.dataset.records import DataError, jsonl_text, parse_benchmark_record
from howtobench.lmeval.outputs import Answered, OutputError, read_output
from howtobench.vocabulary.words import replay_model

__all__ = ["ALIGNED_FIELDS", "WRITER_NAME", "import_output"]

# The published `aligned.jsonl` fields (`dataset.parse_benchmark_record`), and `language`.
ALIGNED_FIELDS = (
    "infer_id",
    "bench_id",
    "task_type",
    "sub_task",
    "basic_instruction",
    "information",
    "reference",
    "language",
)
# A writer's name is a file name in the folder and a model name (`replay/<writer>`).
WRITER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def import_output(output: Path, writer: str | None, out: Path) -> list[str]:
    """Write the data folder; the lines to print, the last the command that judges it."""
    answered = read_output(output)
    # by default lm-eval's own name of the model (`model_name_sanitized`)
    name = writer or str(answered[0].run.results.get("model_name_sanitized") or "")
    if not name:
        raise OutputError("lm-eval's output names no model: give --writer NAME")
    if not WRITER_NAME.fullmatch(name) or name.endswith(".provenance"):
        raise OutputError(
            f"--writer {name!r}: a writer's name is letters, digits, '.', '_' and '-' "
            "(it names a file and the model replay/<name>)"
        )
    if out.exists() and not out.is_dir():
        raise OutputError(f"--out {out}: a file, not a folder: give the folder to write")
    folder = FolderSource(out.absolute(), str(out))
    files: dict[Path, str] = {}
    for found in answered:  # every check before any file is written
        files.update(_files(folder, found, name, _aligned(found)))
    _write_all(out, files)
    lines = [
        f"{found.task}: {len(found.docs)} writings of {name} ({found.run.model}) "
        f"in {out / found.task}"
        for found in answered
    ]
    tasks = " ".join(f"howtobench/{found.task}" for found in answered)
    command = "eval" if len(answered) == 1 else "eval-set"
    lines.append(
        f"judge them: inspect {command} {tasks} -T dataset={out} --model {replay_model(name)} "
        "--model-role grader=<judge>" + (" --log-dir <dir>" if len(answered) > 1 else "")
    )
    return lines


def _aligned(found: Answered) -> str:
    """The items as `aligned.jsonl` text, each checked as the folder will read it."""
    where = str(found.run.samples_path(found.task))
    rows = []
    for number, doc in enumerate(found.docs, start=1):
        row = {field: doc.get(field, "") for field in ALIGNED_FIELDS}
        parse_benchmark_record(row, where, number)  # a bad item is refused now, not in inspect
        rows.append(row)
    return jsonl_text(rows)


def _files(folder: FolderSource, found: Answered, writer: str, aligned: str) -> dict[Path, str]:
    """The files of one task and their text. The same items may be there (another
    writer's import); other items, or this writer's writings, are refused."""
    items = folder.path / found.task / "aligned.jsonl"
    if items.is_file() and items.read_text("utf-8") != aligned:
        raise DataError(
            str(items),
            "holds other items than lm-eval answered: import into a new --out folder",
        )
    writings = folder.path / found.task / "inferences" / f"{writer}.jsonl"
    if writings.exists():
        raise DataError(
            str(writings), f"{writer}'s writings are already there: remove them or give --writer"
        )
    outputs = [
        {"infer_id": doc["infer_id"], "output": writing}
        for doc, writing in zip(found.docs, found.writings, strict=True)
    ]
    provenance: dict[str, Any] = {"writer": writer, **found.run.provenance(found.task)}
    files = {} if items.is_file() else {items: aligned}
    files[writings] = jsonl_text(outputs)
    files[folder.provenance_path(found.task, writer)] = (
        json.dumps(provenance, ensure_ascii=False, indent=2) + "\n"
    )
    return files


def _write_all(out: Path, files: dict[Path, str]) -> None:
    """Write every file or none: on a failure what this import wrote is removed (none of
    the files was there before: `_files`)."""
    folders: list[Path] = []
    temporary = {path: path.with_name(f".{path.name}.{os.getpid()}.tmp") for path in files}
    try:
        for path in files:
            missing = [p for p in (path.parent, *path.parent.parents) if not p.exists()]
            for folder in reversed(missing):
                folder.mkdir()
                folders.append(folder)
        for path, text in files.items():
            temporary[path].write_text(text, "utf-8")
        for path in files:
            os.replace(temporary[path], path)
    except OSError as error:
        for path in [*files, *temporary.values()]:
            with contextlib.suppress(OSError):
                path.unlink()
        for folder in reversed(folders):
            with contextlib.suppress(OSError):
                folder.rmdir()
        raise OutputError(
            f"--out {out}: cannot write {error.filename or out} "
            f"({error.strerror or error}); nothing was imported"
        ) from None
