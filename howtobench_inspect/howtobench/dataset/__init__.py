"""Where the benchmark's records and stored writings come from: the `dataset` parameter,
resolved once into a `DataSource` (`hub`, the default; a folder in the paper
repository's layout; a user's JSONL file; `demo`). A new source is one module with a
`DataSource` subclass, one line in `open_source`, and its test (docs/data.md, "Adding a
data source").
"""

from __future__ import annotations

from pathlib import Path

from howtobench.dataset.base import DataSource
from howtobench.dataset.folder import FolderSource
from howtobench.dataset.hub import HubSource
from howtobench.dataset.jsonl import DEMO_FILE, JsonlSource
from howtobench.dataset.records import DataError

__all__ = ["DataSource", "open_source"]


def open_source(dataset: str | None) -> DataSource:
    """The source `dataset` names: `hub` (also when empty), `demo`, or the path of a data
    folder or a JSONL file, which must exist. A path is made absolute here, so the source
    reads the same files wherever it is asked from."""
    if not dataset or dataset == "hub":
        return HubSource()
    if dataset == "demo":
        return JsonlSource(DEMO_FILE, "demo")
    path = Path(dataset).expanduser()
    if not path.exists():
        raise DataError(
            str(path),
            "dataset not found: give 'hub', 'demo', a data folder "
            "(<task>/aligned.jsonl) or a JSONL file",
        )
    source = FolderSource if path.is_dir() else JsonlSource
    return source(path.absolute(), dataset)
