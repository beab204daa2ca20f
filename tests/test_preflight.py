"""A first hour without noise: a judge or writer with nothing listening, and the hub out of
reach, each stop `inspect eval` at once with one line and a non-zero status; a live
writer's run says its length limit at the start when it is the task's default.

Each runs `inspect eval` as a user types it, in a fresh process (the hub's client reads
its address when imported), without a terminal; `COLUMNS` is wide so that rich does not
wrap the line the test reads.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from howtobench.vocabulary.reachable import unreachable
from support.local_http import closed_port
from support.writers import writer_server


def _inspect_eval(folder: Path, *args: str, **env: str) -> tuple[int, list[str]]:
    """`inspect eval ARGS` in `folder` with `env` added (the hub's offline mode left out):
    its exit status and the lines it printed."""
    folder.mkdir(parents=True, exist_ok=True)
    offline = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "eval", *args, "--log-dir", str(folder / "logs")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=folder,
        env={**{k: v for k, v in os.environ.items() if k not in offline}, "COLUMNS": "400", **env},
    )
    printed = (done.stdout + done.stderr).splitlines()
    return done.returncode, [line for line in printed if line.strip()]


def test_an_address_nothing_listens_on_is_said_in_words() -> None:
    assert unreachable(f"http://127.0.0.1:{closed_port()}/v1") == "connection refused"
    assert unreachable("http://no-such-host.invalid/v1") == "the host name does not resolve"
    assert unreachable("towsim://judge") is None  # not an http(s) address: not ours to judge
    with writer_server() as (_, url):  # it answers GET with 501: an answer all the same
        assert unreachable(url) is None


@pytest.mark.slow
@pytest.mark.parametrize(
    ("role", "args"),
    [
        (
            "grader",
            (
                "howtobench/guide",
                "--model",
                "replay/demo-writer-a",
                "--model-role",
                "grader=openai-api/dead/m",
            ),
        ),
        ("writer", ("howtobench/open", "-T", "scorers=rouge_l", "--model", "openai-api/dead/m")),
    ],
)
def test_a_dead_endpoint_stops_the_run_in_one_line(
    role: str, args: tuple[str, ...], tmp_path: Path
) -> None:
    """Nothing listens at the role's base URL: one line naming the role, the model and the
    URL, before any sample (no log), exit status 1; no traceback, no retries."""
    url = f"http://127.0.0.1:{closed_port()}/v1"
    status, printed = _inspect_eval(
        tmp_path, *args, "-T", "dataset=demo", DEAD_BASE_URL=url, DEAD_API_KEY="none"
    )
    assert status == 1, printed
    assert printed == [
        f"the {role} openai-api/dead/m at {url} does not answer (connection refused): start "
        "it, or correct its base URL; nothing has run"
    ]
    assert not list((tmp_path / "logs").rglob("*.eval"))


@pytest.mark.slow
def test_the_hub_out_of_reach_is_one_line(tmp_path: Path) -> None:
    """The default `dataset=hub` with the hub's address taking no connection (offline mode
    not asked for): one line saying what works offline, before the hub's client retries."""
    url = f"http://127.0.0.1:{closed_port()}"
    status, printed = _inspect_eval(
        tmp_path,
        *("howtobench/guide", "-T", "scorers=rouge_l", "--model", "mockllm/model", "--limit", "1"),
        HF_ENDPOINT=url,
        HF_HOME=str(tmp_path / "hf"),
    )
    assert status == 1, printed
    [line] = printed
    assert line.startswith(
        f"hf://andrewzhuoerfeng/HowToBench@main: cannot reach the hub at {url} (connection "
        "refused); without network access run -T dataset=demo"
    )
    assert line.endswith("or read a copy already downloaded with HF_HUB_OFFLINE=1")


@pytest.mark.slow
def test_a_live_writer_says_its_default_length_limit_once(tmp_path: Path) -> None:
    """The task's 16,384 tokens are said at the start, in one line; `--max-tokens` says
    nothing, since the user chose it."""
    said = "writer openai-api/writer/whole: up to 16,384 tokens a writing (the default; --max-tokens sets it)"
    args = ("howtobench/open", "-T", "dataset=demo", "-T", "scorers=rouge_l", "--limit", "2")
    with writer_server() as (server, url):
        env = {"WRITER_BASE_URL": url, "WRITER_API_KEY": "none"}
        default = _inspect_eval(
            tmp_path / "default", *args, "--model", "openai-api/writer/whole", **env
        )
        chosen = _inspect_eval(
            tmp_path / "chosen",
            *args,
            "--model",
            "openai-api/writer/whole",
            "--max-tokens",
            "500",
            **env,
        )
    assert default[0] == chosen[0] == 0, (default, chosen)
    assert [line for line in default[1] if "tokens a writing" in line] == [
        line for line in default[1] if said in line
    ]
    assert len([line for line in default[1] if said in line]) == 1
    assert not [line for line in chosen[1] if "tokens a writing" in line]
    assert {body["max_tokens"] for body in server.bodies} == {16_384, 500}
