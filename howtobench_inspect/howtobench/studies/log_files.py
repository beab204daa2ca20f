"""Finding and reading inspect logs, and the error of input a study cannot use.

Apart from the samples table because the studio, the plan export and the cost study read
logs too, and each bad file is one line (`StudyError`) saying why. Logs are read with
inspect's own reader, from a local path or any fsspec URL (`storage`), without the
transcript, which no study needs and which dominates a log's size.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from howtobench.studies import storage
from howtobench.studies.runs import Run, group_runs
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.words import TASK_PREFIX

__all__ = ["StudyError", "log_files", "read_header", "read_log", "runs"]

_SKIP_FIELDS = {"messages", "events", "store", "attachments"}


class StudyError(UserError):
    """Input a study cannot use; the message names the input and what is wrong with it
    (a user error: printed as one line, by our commands and by inspect)."""


def log_files(paths: Iterable[str | Path]) -> list[str]:
    """The log files named or found (recursively) in the folders named, in order; a URL
    (`s3://b/logs`) is kept as given (`Path` would fold `s3://` into `s3:/`)."""
    found: list[str] = []
    for given in paths:
        name = str(given) if storage.is_url(str(given)) else str(Path(given))
        try:
            what = storage.kind(name)
            infos = list_eval_logs(name, descending=False) if what == "folder" else []
        except Exception as err:  # credentials, endpoint, protocol: each store says it its way
            raise StudyError(f"{name}: cannot reach it: {storage.first_line(err)}") from err
        if what == "folder":
            if not infos:
                raise StudyError(f"{name}: no inspect logs in this folder")
            # list_eval_logs names a local file by its file:// URL, a remote one by its URL
            found += sorted(info.name.removeprefix("file://") for info in infos)
        elif what == "file":
            found.append(name)
        else:
            raise StudyError(f"{name}: no such file or folder")
    if not found:
        raise StudyError("no logs given")
    unique: dict[str, str] = {}  # a file named twice (or through a link) is read once
    for name in found:
        unique.setdefault(storage.identity(name), name)
    return list(unique.values())


def _unreadable(path: str, err: Exception) -> StudyError:
    """Why a file is no log, in words (inspect's reader says e.g. "EOCD not found")."""
    try:
        head = storage.head(path)
    except Exception as error:  # OSError, or a remote store's own (botocore: credentials)
        why = getattr(error, "strerror", None) or storage.first_line(error)
        return StudyError(f"{path}: cannot read it: {why}")
    if not head:
        why = "the file is empty"
    elif path.endswith(".eval") and not head.startswith(b"PK"):
        why = "an .eval log is a zip archive and this file is not one"
    elif path.endswith(".eval") and "EOCD" in str(err):
        why = "the zip archive is cut short (an incomplete copy or write)"
    else:
        why = storage.first_line(err)
    return StudyError(f"{path}: cannot read it as an inspect log: {why}")


def read_header(path: str) -> EvalLog:
    """A log's header (no samples), any task."""
    try:
        return read_eval_log(path, header_only=True)
    except Exception as err:  # the reader raises many kinds; all mean "not a usable log"
        raise _unreadable(path, err) from err


def read_log(path: str) -> EvalLog:
    """A log of one of our tasks, with its samples but without their transcripts."""
    try:
        log = read_eval_log(path, exclude_fields=_SKIP_FIELDS)
    except Exception as err:  # the reader raises many kinds; all mean "not a usable log"
        raise _unreadable(path, err) from err
    if not log.eval.task.startswith(TASK_PREFIX):
        raise StudyError(f"{path}: a log of task '{log.eval.task}', not of a howtobench task")
    if not log.samples and log.status == "success":
        raise StudyError(f"{path}: the log holds no samples")
    return log


def runs(paths: Iterable[str]) -> list[Run]:
    """The runs of the log files, from their headers (a header is quick to read)."""
    return group_runs((path, read_header(path)) for path in paths)
