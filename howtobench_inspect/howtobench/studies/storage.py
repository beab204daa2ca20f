"""Where logs live: a local path, or any fsspec URL that inspect takes for `--log-dir`.

inspect writes and reads its logs through fsspec, so the studies must find and read them
there too. A plain path stays with `pathlib` (its messages, and how a file named twice
through a link is recognised, stay the same); a URL goes to fsspec, with credentials from
the filesystem library's usual places, as for inspect's own writer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import fsspec
from fsspec.core import split_protocol

__all__ = ["first_line", "head", "identity", "is_url", "kind"]


def is_url(name: str) -> bool:
    """Whether `name` names its filesystem by a protocol (`s3://...`, `file://...`). A
    Windows path (`C:\\logs`) is none: fsspec wants more than one letter before `://`."""
    return split_protocol(name)[0] is not None


def first_line(err: BaseException) -> str:
    """An error in one line: botocore's and fsspec's messages may run over several."""
    text = str(err).strip()
    return text.splitlines()[0] if text else type(err).__name__


def kind(name: str) -> Literal["file", "folder"] | None:
    """A file, a folder (on object storage a prefix or a bucket), or None for a missing
    object; any other failure propagates, so that it is not reported as a missing file."""
    if not is_url(name):
        path = Path(name)
        return "folder" if path.is_dir() else "file" if path.is_file() else None
    fs, where = fsspec.core.url_to_fs(name)
    # fsspec caches listings per filesystem instance and process: a long-lived process
    # (the rating studio, a notebook) must see objects written after its last look
    fs.invalidate_cache(where)
    try:
        info = fs.info(where)
    except FileNotFoundError:
        return None
    return "folder" if info.get("type") == "directory" else "file"


def identity(name: str) -> str:
    """One key per stored file, however it was named: a local file by its resolved path
    (links followed, `file://` dropped), a remote one by its normalised URL."""
    protocol, rest = split_protocol(name)
    if protocol is None or protocol == "file":
        return str(Path(rest).resolve())
    fs, where = fsspec.core.url_to_fs(name)
    return str(fs.unstrip_protocol(where))


def head(name: str, size: int = 4) -> bytes:
    """The first `size` bytes of a file (to tell why it is no log)."""
    with fsspec.open(name, "rb") as file:
        return bytes(file.read(size))
