"""`howtobench lm-eval import OUTPUT_PATH --writer NAME --out DIR`: lm-eval's writings as a
data folder for the ToW judge.

The folder is the paper repository's layout (`howtobench.dataset.folder`): for each task
lm-eval answered, `<task>/aligned.jsonl` holds the items it answered (from the samples'
`doc`s, which carry the whole record), `<task>/inferences/<writer>.jsonl` its writings,
and `<task>/inferences/<writer>.provenance.json` what lm-eval says made them, which the
inspect task records in its log (`writer_provenance`). `inspect eval howtobench/<task>
-T dataset=DIR --model replay/<writer>` then judges exactly those items, with the same
writer prompt lm-eval sent, and names the writer in the log.

A second writer's output may go into the same folder when it answered the same items;
anything else there is refused rather than overwritten.
"""

from __future__ import annotations

import json
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
    """Write the data folder; the lines to print (what was written, and the inspect
    command that judges it)."""
    answered = read_output(output)
    name = writer or _default_writer(answered)
    if not WRITER_NAME.fullmatch(name) or name.endswith(".provenance"):
        raise OutputError(
            f"--writer {name!r}: a writer's name is letters, digits, '.', '_' and '-' "
            "(it names a file and the model replay/<name>)"
        )
    folder = FolderSource(out.absolute(), str(out))
    planned = [(found, _aligned(found)) for found in answered]
    for found, aligned in planned:  # every check before any file is written
        _check_free(folder, found.task, name, aligned)
    lines = []
    for found, aligned in planned:
        _write(folder, found, name, aligned)
        lines.append(
            f"{found.task}: {len(found.docs)} writings of {name} ({found.run.model}) "
            f"in {out / found.task}"
        )
    tasks = " ".join(f"howtobench/{found.task}" for found in answered)
    command = "eval" if len(answered) == 1 else "eval-set"
    lines.append(
        f"judge them: inspect {command} {tasks} -T dataset={out} --model {replay_model(name)} "
        "--model-role grader=<judge>" + (" --log-dir <dir>" if len(answered) > 1 else "")
    )
    return lines


def _default_writer(answered: list[Answered]) -> str:
    """lm-eval's own name of the model (`model_name_sanitized`, e.g. `Qwen__Qwen2.5-7B`)."""
    name = str(answered[0].run.results.get("model_name_sanitized") or "")
    if not name:
        raise OutputError("lm-eval's output names no model: give --writer NAME")
    return name


def _aligned(found: Answered) -> str:
    """The items as `aligned.jsonl` text, each checked as the folder will read it."""
    where = str(found.run.samples_path(found.task))
    rows = []
    for number, doc in enumerate(found.docs, start=1):
        row = {field: doc.get(field, "") for field in ALIGNED_FIELDS}
        parse_benchmark_record(row, where, number)  # a bad item is refused now, not in inspect
        rows.append(row)
    return jsonl_text(rows)


def _check_free(folder: FolderSource, task: str, writer: str, aligned: str) -> None:
    """The task's items may already be there (another writer's import of the same
    items); other items, or this writer's writings, are refused."""
    items = folder.path / task / "aligned.jsonl"
    if items.is_file() and items.read_text("utf-8") != aligned:
        raise DataError(
            str(items),
            "holds other items than lm-eval answered: import into a new --out folder",
        )
    writings = folder.path / task / "inferences" / f"{writer}.jsonl"
    if writings.exists():
        raise DataError(
            str(writings), f"{writer}'s writings are already there: remove them or give --writer"
        )


def _write(folder: FolderSource, found: Answered, writer: str, aligned: str) -> None:
    inferences = folder.path / found.task / "inferences"
    inferences.mkdir(parents=True, exist_ok=True)
    (folder.path / found.task / "aligned.jsonl").write_text(aligned, "utf-8")
    outputs = [
        {"infer_id": doc["infer_id"], "output": writing}
        for doc, writing in zip(found.docs, found.writings, strict=True)
    ]
    (inferences / f"{writer}.jsonl").write_text(jsonl_text(outputs), "utf-8")
    provenance: dict[str, Any] = {"writer": writer, **found.run.provenance(found.task)}
    folder.provenance_path(found.task, writer).write_text(
        json.dumps(provenance, ensure_ascii=False, indent=2) + "\n", "utf-8"
    )
