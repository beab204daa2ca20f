"""A reply store that cannot be written costs nothing but the keeping, over HTTP.

Three real causes: a full disk (a tmpfs of a few KB), a read-only mount of a store that
holds every answer (read without a single call, unlocked), and a folder in the way (no
mount needed, so it runs everywhere). The mounts need root; where that is not allowed
the two tests skip with the reason.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from howtobench import guide
from support.evals import run_eval, scores, store_blocked_by_files
from support.judges import Serve, llm_calls

pytestmark = pytest.mark.slow

STORE_LOGGER = "howtobench.judge.store"


def mount(*args: str) -> None:
    done = subprocess.run(["mount", *args], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount here ({done.stderr.strip() or done.returncode})")


@contextmanager
def mounted(target: Path, *args: str) -> Iterator[Path]:
    target.mkdir(parents=True, exist_ok=True)
    mount(*args, str(target))
    try:
        yield target
    finally:
        subprocess.run(["umount", "-l", str(target)], check=False)


def scored_everything(folder: Path) -> None:
    [log] = run_eval(
        guide(dataset="demo"), folder, "openai-api/sim/judge", model="replay/demo-writer-a"
    )
    assert log.status == "success"
    assert all(isinstance(s.value, dict) for s in scores(log).values()) and len(scores(log)) == 3


def warnings_about(caplog: pytest.LogCaptureFixture, store: Path) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == STORE_LOGGER and f"reply store {store}" in r.getMessage()
    ]


def test_a_full_disk_loses_no_sample(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    judge = serve()
    with mounted(tmp_path / "small", "-t", "tmpfs", "-o", "size=8k", "tmpfs") as small:
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(small))
        with caplog.at_level(logging.WARNING, logger=STORE_LOGGER):
            scored_everything(tmp_path / "logs")
        [warning] = warnings_about(caplog, small / "howtobench")
        assert "(No space left on device)" in warning
        assert not list(small.rglob("*.tmp"))  # no temporary file left behind
    assert sum(judge.calls.values()) == 3 + 3 * llm_calls("guide")  # every question once, none lost


def test_a_read_only_store_is_read_without_a_call(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    judge = serve()
    filled = tmp_path / "cache"
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(filled))
    scored_everything(tmp_path / "first")
    asked = sum(judge.calls.values())
    with mounted(tmp_path / "copy", "--bind", str(filled)) as copy:
        mount("-o", "remount,ro,bind", str(copy))
        monkeypatch.setenv("INSPECT_CACHE_DIR", str(copy))
        with caplog.at_level(logging.WARNING, logger=STORE_LOGGER):
            scored_everything(tmp_path / "second")
        assert sum(judge.calls.values()) == asked  # every answer read from the copy
        [warning] = warnings_about(caplog, copy / "howtobench")
        assert "(Read-only file system)" in warning


def test_a_store_that_cannot_hold_files_still_scores(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Files where the store's folders belong: every write fails with a real OSError."""
    judge = serve()
    cache = store_blocked_by_files(tmp_path, monkeypatch)
    with caplog.at_level(logging.WARNING, logger=STORE_LOGGER):
        scored_everything(tmp_path / "logs")
    warned = warnings_about(caplog, cache / "howtobench")
    # one line per cause: the questions' lock files and the replies both fail to open
    # for the file in their folder's place ("Not a directory")
    assert [w.split("(")[1].split(")")[0] for w in warned] == ["Not a directory"]
    assert all("cannot be written" in w and "asks them again" in w for w in warned)
    assert sum(judge.calls.values()) == 3 + 3 * llm_calls("guide")
    assert not list(cache.rglob("*.tmp"))
