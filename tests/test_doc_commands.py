"""The shell blocks of the README and of docs/*.md run as written.

Every ```bash block is run, offline and non-interactively, or listed with the reason it
is not. A reader pastes a page's blocks into one shell, in order (a later block reads the
logs an earlier one wrote, or talks to the server it started), so a page runs that way:
one `bash -euo pipefail` per page in a fresh folder, stdin from /dev/null (a command that
would ask at a terminal fails here, as in a script or CI: `inspect score` without
`--action` and `--overwrite` stops with `Aborted!`), this interpreter's bin first on
PATH, an empty inspect cache, no INSPECT_/HOWTOBENCH_ settings of the caller's, and a
time limit per block. What a block starts in the background (the simulator, the studio)
lives until the page ends; then the shell's process group is killed and the page's ports
must be free again. Two pages run at a time, never two that bind the same port. From the
folder, `../shared/howtobench-data` is the published data where there is some.

Each block is named by its page and a piece of its text that no other block of the page
has, in `RUN`, `SAME_AS` (a copy of a block that runs) or `NOT_RUN` (with why);
`LINES_NOT_RUN` leaves single commands out of blocks that run (the test suite itself, a
server in the foreground). `test_every_block_is_listed`, in the quick loop, fails for a
block in none of them, an entry that names no block or several, a line left out that is
gone and a copy that is no longer one, so the lists cannot rot.

What runs, and how, is `support.doc_pages` (`RUN`, the runner); a page runs once per
session, for its test here and for the tests that check what its commands wrote
(`reads_page`), such as the README's first command's log.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from support.doc_pages import (
    BIN,
    BLOCKS,
    LINES_NOT_RUN,
    NIGHTLY_PAGES,
    PAGES,
    RUN,
    RUN_PAGES,
    RUNNER,
    SESSION_LIMIT,
    Block,
    Outcome,
    PageResult,
    Pages,
    block_env,
    claim,
    matching,
    page_steps,
    publish,
    run_blocks,
    running,
    runs,
    skip_reason,
)

# Blocks not run because a block that runs has the same commands (once LINES_NOT_RUN are
# left out of both), which the listing test checks: (page, piece) -> (page, piece) in RUN.
SAME_AS: dict[tuple[str, str], tuple[str, str]] = {
    ("docs/simulator.md", "--model-role grader=towsim/judge"): (
        "README.md",
        "python -m pytest -q -ra",
    ),
}

NETWORK = "needs the network (git clone or pip install from the package index)"
API_KEYS = "needs API keys of real models (OpenAI, Anthropic)"
REAL_JUDGE = "needs a real judge server at 127.0.0.1:8000"
REAL_WRITER = "needs a real model on a llama.cpp server at 127.0.0.1:8088 (minutes a writing)"
PAPER_DATA = "needs the paper's data folder (a git clone)"

# Blocks that are not run: (page, a piece of the block) -> why.
NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "git clone"): NETWORK,
    ("README.md", "openai-api/vllm/Qwen"): (
        "needs a real model on an OpenAI-compatible server at 127.0.0.1:8000 and an OpenAI API key"
    ),
    ("README.md", "ACL2026-Tree-of-Writing/data"): (
        f"{PAPER_DATA} and a real judge server at 127.0.0.1:8001"
    ),
    ("docs/install.md", 'pip install ".[bleurt]"'): NETWORK + " (torch is a large download)",
    ("docs/running.md", "--model openai/gpt-4o"): API_KEYS,
    ("docs/writers.md", "--model openai/o3-mini"): API_KEYS,
    ("docs/writers.md", "openai-api/llama/qwen2.5-0.5b"): REAL_WRITER,
    ("docs/running.md", "inspect eval howtobench/guide -T dataset=../shared"): REAL_JUDGE,
    ("docs/running.md", "inspect eval-set"): REAL_JUDGE,
    ("docs/benchmarks.md", "# all parts, ~8 minutes"): (
        "skipped for time: the whole benchmark takes about 8 minutes (its judges part "
        "alone over 30 s), and its numbers mean something only on an idle machine"
    ),
    ("docs/benchmarks.md", "bench/client_bench.py"): (
        f"{NETWORK} (inspect-evals, the peer), and skipped for time: the client's runs "
        "take minutes (the whole benchmark about 20), and their numbers mean something "
        "only on an idle machine"
    ),
    ("docs/benchmarks.md", "bench/annotate_bench.py"): (
        "skipped for time: 36 client threads saving as fast as they can, then with a "
        "pause (over a minute), and its numbers mean something only on an idle machine"
    ),
    ("docs/judges.md", "howtobench judge-check"): REAL_JUDGE,
    ("docs/large-runs.md", "--retry-attempts 5"): API_KEYS,
    ("docs/large-runs.md", "# Anthropic"): API_KEYS + " and their batch APIs",
    ("docs/large-runs.md", "howtobench plan export"): (
        "needs the Hugging Face hub, a real judge and an S3 bucket"
    ),
    ("docs/large-runs.md", "INSPECT_EVAL_SET_CAPTURE"): (
        "needs worker hosts, a judge at 10.0.0.5:8000 and an S3 bucket "
        "(tests/test_scale_out.py runs these steps with two simulators and moto)"
    ),
    ("docs/reproduction.md", "HOWTOBENCH_FULL_REPRODUCTION=1"): (
        "skipped for time: the two full-size reproduction tests take 12 minutes or more"
    ),
    ("docs/testing.md", 'pip install ".[test]"'): (
        NETWORK + ", and then the whole suite, this test included (about 9 minutes)"
    ),
    ("docs/lm-eval.md", 'pip install ".[lm-eval]"'): NETWORK,
    ("docs/lm-eval.md", "--model vllm"): (
        "needs a GPU with vLLM and a model from the Hugging Face hub, and a real judge server "
        "at 127.0.0.1:8000"
    ),
    ("docs/testing.md", "HOWTOBENCH_NIGHTLY=1 python -m pytest"): (
        NETWORK + " (torch), and then the whole suite with the nightly tests (about 15 minutes)"
    ),
}


def whole_commands(block: Block) -> list[str]:
    """The block's lines that hold a whole command: neither continued from the line before
    nor onto the next (only such a line can be left out)."""
    lines = block.text.splitlines()
    return [
        this.strip()
        for before, this in zip(["", *lines], lines, strict=False)
        if not before.endswith("\\") and not this.endswith("\\")
    ]


def commands(block: Block) -> list[str]:
    """What the block runs, compared for SAME_AS: continued lines joined, spaces
    collapsed; comment lines, blank lines and LINES_NOT_RUN left out."""
    lines = re.sub(r"\\\n", " ", runs(block)).splitlines()
    return [" ".join(x.split()) for x in lines if x.strip() and x.lstrip()[0] not in "#:"]


def listing_problems() -> list[str]:
    """Why the lists and the pages disagree: a block in no list or in two, an entry that
    names no block or several, a line left out that is gone, a SAME_AS that differs."""
    problems = []
    named: dict[Block, list[str]] = {}
    for page, piece in [*RUN, *SAME_AS, *NOT_RUN]:
        found = matching(page, piece)
        if len(found) != 1:
            problems.append(f"{page}: {piece!r} matches {len(found)} blocks, not 1")
        for block in found:
            named.setdefault(block, []).append(piece)
    for page in PAGES:
        for block in BLOCKS[page]:
            pieces = named.get(block, [])
            if not pieces:
                problems.append(
                    f"{page}:{block.line} ({block.first!r}) is new: add it to RUN, or to "
                    "NOT_RUN with the reason it cannot run"
                )
            elif len(pieces) > 1:
                problems.append(f"{page}:{block.line} is named twice: {pieces}")
    for page, line in LINES_NOT_RUN:
        count = sum(
            whole_commands(block).count(line)
            for listed in [*RUN, *SAME_AS]
            if listed[0] == page
            for block in matching(*listed)
        )
        if count < 1:
            problems.append(f"{page}: the line left out, {line!r}, is in no block that runs")
    for copy, original in SAME_AS.items():
        if original not in RUN:
            problems.append(f"SAME_AS {copy} -> {original}: the original is not in RUN")
        copies, originals = matching(*copy), matching(*original)
        if len(copies) == len(originals) == 1 and commands(copies[0]) != commands(originals[0]):
            problems.append(
                f"{copy[0]}:{copies[0].line} no longer runs what {original[0]}:"
                f"{originals[0].line} runs: run it (RUN), or list why not (NOT_RUN)"
            )
    return problems


def test_every_block_is_listed() -> None:
    assert sum(len(b) for b in BLOCKS.values()) >= len(RUN) + len(SAME_AS) + len(NOT_RUN)
    problems = listing_problems()
    assert not problems, "\n".join(problems)


def test_no_block_replays_in_the_old_form() -> None:
    """A stored writer is a model, `--model replay/<writer>`; `-T replay=<writer> --model
    none` was removed in task version 7 (refused in one line), so no page should show it."""
    old = [f"{b.page}:{b.line}" for p in PAGES for b in BLOCKS[p] if "-T replay=" in b.text]
    assert not old, f"blocks on the old form, -T replay= (use --model replay/<writer>): {old}"


def test_the_listing_check_sees_a_new_block_a_gone_one_and_a_changed_copy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    copy = matching("docs/simulator.md", "--model-role grader=towsim/judge")[0]
    changed = Block(copy.page, copy.line, copy.text.replace("demo-writer-a", "demo-writer-b"))
    new = Block("README.md", 999, "curl -O https://example.org/data.zip\n")
    blocks = [changed if b == copy else b for b in BLOCKS["docs/simulator.md"]]
    monkeypatch.setitem(BLOCKS, "docs/simulator.md", blocks)
    monkeypatch.setitem(BLOCKS, "README.md", [*BLOCKS["README.md"], new])
    monkeypatch.setitem(NOT_RUN, ("docs/studio.md", "howtobench annotate gone"), "gone")
    problems = "\n".join(listing_problems())
    assert "README.md:999 ('curl -O https://example.org/data.zip') is new" in problems
    assert "docs/studio.md: 'howtobench annotate gone' matches 0 blocks, not 1" in problems
    assert f"docs/simulator.md:{copy.line} no longer runs what README.md:" in problems


@pytest.mark.slow
@pytest.mark.timeout(SESSION_LIMIT)
@pytest.mark.parametrize(
    "page",
    [pytest.param(p, marks=pytest.mark.nightly) if p in NIGHTLY_PAGES else p for p in RUN_PAGES],
)
def test_page_runs_as_written(page: str, doc_pages: Pages) -> None:
    assert (BIN / "inspect").exists(), f"no inspect beside {sys.executable}"
    if reason := skip_reason(page):
        pytest.skip(reason)
    result = doc_pages.result(page)
    assert result.outcome is not None, f"{page}: {result.problem}"
    outcome, steps = result.outcome, page_steps(page)
    timings = ", ".join(
        f"{b.line}: {s:.1f} s" for (b, _, _), s in zip(steps, outcome.seconds, strict=False)
    )
    print(f"{page}: {timings}")
    if not result.ran_through:
        block, _, limit = steps[outcome.block if outcome.block is not None else -1]
        why = (
            f"exited {outcome.status}"
            if outcome.status is not None
            else f"ran out of its {limit:.0f} s"
        )
        pytest.fail(f"{page}:{block.line} ({block.first!r}) {why}:\n{outcome.tail()}")
    assert not result.left, f"{page} left ports {sorted(result.left)} taken after it stopped"


def test_the_runner_closes_stdin_and_stops_what_a_block_left_running(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    outcome = run_blocks(
        [
            "sleep 300 &\necho $! > sleeper",
            "if read -r line; then echo read; else echo no input; fi",
        ],
        [10, 10],
        cwd,
        block_env(tmp_path / "cache"),
    )
    assert (outcome.status, outcome.block, len(outcome.seconds)) == (0, None, 2)
    assert outcome.output == "no input\n"
    assert not running(int((cwd / "sleeper").read_text()))


def test_the_runner_names_the_block_that_failed_or_ran_out_of_time(tmp_path: Path) -> None:
    cwd = tmp_path / "work"
    cwd.mkdir()
    env = block_env(tmp_path / "cache")
    failed = run_blocks(["true", "false\necho not reached"], [10, 10], cwd, env)
    assert (failed.status, failed.block, failed.output) == (1, 1, "")
    slow = run_blocks(["echo started", "sleep 60"], [10, 0.5], cwd, env)
    assert (slow.status, slow.block, slow.output) == (None, 1, "started\n")


def test_workers_share_one_run_of_the_pages(tmp_path: Path) -> None:
    """Under pytest-xdist the first worker to claim the run's folder runs the pages and
    the others read each page's result from it (`publish`) instead of running the page
    again; a reader whose runner has ended gets a problem, not a wait without end."""
    shared = tmp_path / "shared"
    assert claim(shared) and not claim(shared)
    assert int((shared / RUNNER).read_text("utf-8")) == os.getpid()
    reader = Pages(["README.md", "docs/scorers.md"], tmp_path / "reader", shared)
    assert not reader.runs_here and not reader.main.is_alive()  # runs nothing itself
    ran = PageResult(Outcome(0, None, [0.5], "ran"), {8765}, folder=tmp_path / "README-md")
    failed = PageResult(problem="ports [8765] are held by another process")
    publish(shared, "README.md", ran)
    publish(shared, "docs/scorers.md", failed)
    assert reader.result("README.md") == ran and reader.result("docs/scorers.md") == failed
    assert reader.outputs("README.md") == tmp_path / "README-md"
    ended = subprocess.Popen(["true"])
    ended.wait()  # its pid now names no process
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / RUNNER).write_text(str(ended.pid), "utf-8")
    orphan = Pages(["README.md"], tmp_path / "orphan", tmp_path / "other")
    assert "ended first" in orphan.result("README.md").problem
