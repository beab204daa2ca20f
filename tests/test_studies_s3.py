"""The studies read logs on object storage as inspect writes them there (`--log-dir s3://`).

A real eval writes its logs to a moto S3 server (`support/s3.py`); the commands then read
the bucket and must print what they print for a local copy of the same logs, and refuse
missing, empty or broken objects and an unreachable store in the one line they use for
local files.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from howtobench import open_writing
from howtobench.annotate.sources import read_instructions
from howtobench.cli import main
from howtobench.studies.log_files import log_files, read_header
from support import s3
from support.evals import run_eval

WRITERS = ("demo-writer-a", "demo-writer-b")


@dataclass(frozen=True)
class Stored:
    """Logs of one eval on the server (`url`, a prefix) and a local copy of them (`local`)."""

    bucket: str
    url: str
    local: Path

    def names(self) -> list[str]:
        return sorted(path.name for path in self.local.glob("*.eval"))


@pytest.fixture
def on_s3(s3_server: s3.S3Server, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> s3.S3Server:
    """This test's inspect and studies talk to the session's S3 server."""
    s3_server.environment(monkeypatch, tmp_path / "no-aws-config")
    return s3_server


@pytest.fixture(scope="module")
def stored(s3_server: s3.S3Server, tmp_path_factory: pytest.TempPathFactory) -> Stored:
    """Two writers' open writings scored by the overlap scorers (no judge), written by
    inspect straight to `s3://<bucket>/logs`, then copied to a local folder."""
    folder = tmp_path_factory.mktemp("s3-eval")
    bucket = s3_server.bucket()
    url = f"{bucket}/logs"
    with pytest.MonkeyPatch.context() as patch:
        s3_server.environment(patch, folder / "no-aws-config")
        task = open_writing(dataset="demo", scorers="rouge_l,bleu")
        writers = [f"replay/{w}" for w in WRITERS]
        # run_eval hands `log_dir` to inspect as str(log_dir): a URL goes through as it is
        logs = run_eval(task, url, cache_dir=folder / "cache", model=writers)  # type: ignore[arg-type]
    assert all(log.location.startswith(f"{url}/") for log in logs)
    return Stored(bucket, url, s3_server.download(url, folder / "local"))


def command(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow
def test_report_on_s3_is_the_report_of_a_local_copy(
    stored: Stored, on_s3: s3.S3Server, capsys: pytest.CaptureFixture[str]
) -> None:
    code, remote, err = command(["report", stored.url, "--metric", "rouge_l"], capsys)
    assert code == 0, err
    assert "report: leaderboard" in remote and all(w in remote for w in WRITERS)
    assert command(["report", str(stored.local), "--metric", "rouge_l"], capsys)[1] == remote
    # the same logs named by a file:// URL, and the bucket's root (found recursively)
    local_url = f"file://{stored.local}"
    assert command(["report", local_url, "--metric", "rouge_l"], capsys)[1] == remote
    assert command(["report", stored.bucket, "--metric", "rouge_l"], capsys)[1] == remote


@pytest.mark.slow
def test_cost_on_s3_is_the_cost_of_a_local_copy(
    stored: Stored, on_s3: s3.S3Server, capsys: pytest.CaptureFixture[str]
) -> None:
    code, remote, err = command(["cost", stored.url], capsys)
    assert code == 0, err
    assert "cost: usage" in remote and all(name in remote for name in stored.names())
    assert command(["cost", str(stored.local)], capsys)[1] == remote


@pytest.mark.slow
def test_logs_on_s3_are_listed_by_url_and_read_once(stored: Stored, on_s3: s3.S3Server) -> None:
    urls = [f"{stored.url}/{name}" for name in stored.names()]
    assert log_files([stored.url]) == urls
    # a log named by itself and through its folder, or with a trailing slash, counts once
    assert log_files([urls[0], stored.url, f"{stored.url}/"]) == [urls[0], urls[1]]
    assert read_header(urls[0]).eval.task == "howtobench/open"
    local = [str(stored.local / name) for name in stored.names()]
    assert log_files([f"file://{stored.local}", *local]) == local


@pytest.mark.slow
def test_the_rating_studio_reads_writings_from_s3(stored: Stored, on_s3: s3.S3Server) -> None:
    def writings(source: str) -> dict[str, dict[str, str]]:
        return {item.infer_id: item.writings for item in read_instructions([source])}

    remote = writings(stored.url)
    assert remote == writings(str(stored.local))
    assert len(remote) == 4 and all(set(w) == set(WRITERS) for w in remote.values())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "study", "named", "reason"),
    [
        ("truncated", "cost", "file", "the zip archive is cut short (an incomplete copy or write)"),
        ("random", "report", "folder", "an .eval log is a zip archive and this file is not one"),
        ("empty", "report", "file", "the file is empty"),
    ],
)
@pytest.mark.slow
def test_objects_that_are_no_logs_end_the_command_with_one_line(
    stored: Stored,
    on_s3: s3.S3Server,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    study: str,
    named: str,
    reason: str,
) -> None:
    """Each broken object once, by one command, named alone or found in its folder beside
    a good log: a command takes ~1 s here, as inspect's reader makes an S3 client per log."""
    log = (stored.local / stored.names()[0]).read_bytes()
    data = {
        "truncated": log[: len(log) // 2],
        "random": zlib.compress(b"not a log" * 50),
        "empty": b"",
    }[kind]
    folder = f"{on_s3.bucket()}/logs"
    url = f"{folder}/{kind}.eval"
    on_s3.put(url, data)
    on_s3.put(f"{folder}/{stored.names()[0]}", log)
    code, _, err = command([study, url if named == "file" else folder], capsys)
    assert code == 2
    assert err == f"howtobench {study}: error: {url}: cannot read it as an inspect log: {reason}\n"


@pytest.mark.slow
def test_a_missing_prefix_or_bucket_and_a_folder_without_logs_in_one_line(
    on_s3: s3.S3Server, capsys: pytest.CaptureFixture[str]
) -> None:
    bucket = on_s3.bucket()
    on_s3.put(f"{bucket}/notes/readme.txt", b"no logs here")
    expected = {
        f"{bucket}/nowhere": "no such file or folder",
        f"{bucket}/logs/nowhere.eval": "no such file or folder",
        "s3://no-such-bucket-here/logs": "no such file or folder",
        f"{bucket}/notes": "no inspect logs in this folder",
    }
    for given, why in expected.items():
        code, out, err = command(["report", given, "--metric", "rouge_l"], capsys)
        assert (code, out, err) == (2, "", f"howtobench report: error: {given}: {why}\n")


@pytest.mark.slow
def test_an_unreachable_store_or_missing_credentials_in_one_line(
    on_s3: s3.S3Server,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    unused_port: int,
) -> None:
    given = f"{on_s3.bucket()}/logs"
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"AWS_ENDPOINT_URL": f"http://127.0.0.1:{unused_port}", "AWS_MAX_ATTEMPTS": "1"},
            "Could not connect to the endpoint URL",
        ),
        (
            {"AWS_ACCESS_KEY_ID": None, "AWS_SECRET_ACCESS_KEY": None},
            "Unable to locate credentials",
        ),
    ]
    for env, why in cases:
        with monkeypatch.context() as patch:
            for name, value in env.items():
                if value is None:
                    patch.delenv(name)
                else:
                    patch.setenv(name, value)
            s3.forget_filesystems()  # an S3 filesystem keeps the env it was made with
            code, _, err = command(["report", given], capsys)
        assert code == 2
        assert err.startswith(f"howtobench report: error: {given}: cannot reach it: {why}")
        assert err.count("\n") == 1
    s3.forget_filesystems()


@pytest.fixture
def unused_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then let go)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
