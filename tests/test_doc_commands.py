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
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

import pytest
from filelock import FileLock, Timeout
from markdown_it import MarkdownIt  # rich's parser, which inspect-ai installs

from support.data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[1]
PAGES = ["README.md", *(f"docs/{p.name}" for p in sorted((ROOT / "docs").glob("*.md")))]
SHELL_FENCES = {"bash", "sh", "shell"}
SHARED = "../shared/howtobench-data"
# the interpreter running the tests is the one with the package installed (.venv here,
# the fresh environment of .ci/run in CI): its inspect, howtobench and python
BIN = Path(sys.executable).parent
# ports the blocks bind (the simulator's --port, the studio's address)
PORT = re.compile(r"(?:--port[ =]|127\.0\.0\.1:)(\d+)")
# held while pages run, so that two test sessions on one machine never share a port
LOCK = Path(tempfile.gettempdir()) / "howtobench-doc-commands.lock"
LOCK_WAIT = 600  # seconds: another session's pages, run as here
LANES = 2  # pages run at once: the machine's two cores

# Blocks that run: (page, a piece of the block) -> the block's time limit in seconds, set
# for a busy 2-core machine (an idle one needs a third to a half of it).
RUN: dict[tuple[str, str], float] = {
    ("README.md", "python -m pytest -q -ra"): 90,
    ("docs/construction.md", "howtobench build $CORPUS"): 240,
    ("docs/scorers.md", "inspect score"): 120,
    ("docs/simulator.md", "SIM_BASE_URL"): 120,
    ("docs/simulator.md", "model_args: {profile: vllm"): 120,
    ("docs/simulator.md", "ANTHROPIC_BASE_URL"): 120,
    ("docs/studies.md", "howtobench metaeval demo-logs"): 300,
    ("docs/studio.md", "--log-dir studio-logs"): 120,
    ("docs/studio.md", "howtobench annotate new"): 60,
    ("docs/studio.md", "links.json"): 60,
    ("docs/studio.md", "howtobench annotate export"): 60,
    ("docs/lm-eval.md", "--tasks howtobench_open --limit 2"): 120,
}

# Single commands left out of blocks that run: (page, the whole line) -> why.
LINES_NOT_RUN: dict[tuple[str, str], str] = {
    ("README.md", "python -m pytest -q -ra"): (
        "the whole suite, this test included (about 11 and a half minutes)"
    ),
}

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


@dataclass(frozen=True)
class Block:
    page: str
    line: int  # where its first line of code is, counted from 1
    text: str

    @property
    def first(self) -> str:
        """The first command, to name the block in messages."""
        lines = [x for x in self.text.splitlines() if x.strip() and not x.startswith("#")]
        return (lines or [""])[0].strip()


def shell_blocks(page: str) -> list[Block]:
    """The page's shell fences, found by a Markdown parser: it sees fences inside list
    items (indented, which it strips) and never mistakes a fence inside another one."""
    tokens = MarkdownIt("commonmark").parse((ROOT / page).read_text(encoding="utf-8"))
    return [
        Block(page, t.map[0] + 2 if t.map else 0, t.content)
        for t in tokens
        if t.type == "fence" and t.info.split()[:1] and t.info.split()[0] in SHELL_FENCES
    ]


BLOCKS = {page: shell_blocks(page) for page in PAGES}


def matching(page: str, piece: str) -> list[Block]:
    return [b for b in BLOCKS.get(page, []) if piece in b.text]


def whole_commands(block: Block) -> list[str]:
    """The block's lines that hold a whole command: neither continued from the line before
    nor onto the next (only such a line can be left out)."""
    lines = block.text.splitlines()
    return [
        this.strip()
        for before, this in zip(["", *lines], lines, strict=False)
        if not before.endswith("\\") and not this.endswith("\\")
    ]


def runs(block: Block) -> str:
    """The text of the block that runs: each line of LINES_NOT_RUN becomes a no-op that
    says why (`:`), so the shell's line numbers stay the page's."""
    lines = []
    for line in block.text.splitlines():
        reason = LINES_NOT_RUN.get((block.page, line.strip()))  # whole commands only (below)
        lines.append(f": left out by the doc test: {shlex.quote(reason)}" if reason else line)
    return "\n".join(lines) + "\n"


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


def page_steps(page: str) -> list[tuple[Block, str, float]]:
    """The page's blocks that run, in page order: each block, the text run and its limit."""
    steps = [
        (block, runs(block), limit)
        for (listed, piece), limit in RUN.items()
        if listed == page
        for block in matching(page, piece)
    ]
    return sorted(steps, key=lambda step: step[0].line)


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


@dataclass
class Outcome:
    status: int | None  # the shell's exit status; None when a block ran out of its time
    block: int | None  # the block running when the shell stopped; None after the last
    seconds: list[float]  # how long each block that finished took
    output: str

    def tail(self, lines: int = 60) -> str:
        return "\n".join(self.output.splitlines()[-lines:])


def block_env(cache: Path) -> dict[str, str]:
    """The caller's environment, without settings that would change what a command does
    (a log folder, a default model, a judge URL), plus this interpreter's bin first on
    PATH and an inspect cache of the run's own."""
    dropped = ("INSPECT_", "HOWTOBENCH_", "SIM_", "JUDGE_", "PYTEST_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["INSPECT_CACHE_DIR"] = str(cache)
    return env


def stat_fields(stat: Path) -> list[str]:
    """A process's /proc stat after its name: state, parent, process group, ...; none
    once it has ended."""
    try:
        return stat.read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return []


def running(pid: int) -> bool:
    """Whether the process runs; a zombie, left for the init process to reap, does not."""
    fields = stat_fields(Path(f"/proc/{pid}/stat"))
    return bool(fields) and fields[0] != "Z"


def group_alive(pgid: int) -> bool:
    """Whether a process of the group still runs; zombies do not count, which is why this
    reads /proc rather than asking os.killpg(pgid, 0)."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        fields = stat_fields(stat)
        if fields and fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


def stop_group(shell: subprocess.Popen[bytes]) -> None:
    """End the shell and all it started: SIGTERM to its process group, then SIGKILL to
    what is left after 10 s."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(shell.pid, sig)
        except ProcessLookupError:
            break  # nothing left
        deadline = time.monotonic() + 10
        while group_alive(shell.pid) and time.monotonic() < deadline:
            shell.poll()  # reap the shell, the group's leader
            time.sleep(0.1)
        if not group_alive(shell.pid):
            break
    shell.wait(timeout=10)


def run_blocks(
    texts: Sequence[str],
    limits: Sequence[float],
    cwd: Path,
    env: dict[str, str],
    cancel: threading.Event | None = None,
) -> Outcome:
    """Run the blocks in one non-interactive shell, in order, each within its limit. Before
    each block (and after the last) the script appends its number and the time to a
    marker file, which says which block runs and how long each took."""
    harness = Path(tempfile.mkdtemp(prefix="doc-shell-", dir=cwd.parent))
    marker, output, script = harness / "blocks", harness / "output", harness / "page.sh"
    lines = []
    for name, text in [*enumerate(texts), ("end", "")]:
        lines += [f'printf "%s %s\\n" {name} "$EPOCHREALTIME" >> {shlex.quote(str(marker))}']
        lines += [text.rstrip("\n")] if text else []
    script.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with output.open("wb") as out:
        shell = subprocess.Popen(
            ["bash", "-euo", "pipefail", str(script)],
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, stopped as a whole
        )
        try:
            while (status := shell.poll()) is None and not (cancel and cancel.is_set()):
                marks = read_marks(marker)
                if marks and marks[-1][0] != "end":
                    index, since = int(marks[-1][0]), marks[-1][1]
                    if time.time() - since > limits[index]:
                        break  # out of time: the status stays None
                time.sleep(0.2)
        finally:
            stop_group(shell)
    marks = read_marks(marker)
    seconds = [after - at for (_, at), (_, after) in zip(marks, marks[1:], strict=False)]
    block = None if not marks or marks[-1][0] == "end" else int(marks[-1][0])
    return Outcome(status, block, seconds, output.read_text(encoding="utf-8", errors="replace"))


def read_marks(marker: Path) -> list[tuple[str, float]]:
    """The marks written so far: (the block's number or `end`, the time it was reached)."""
    try:
        lines = marker.read_text().splitlines()
    except FileNotFoundError:
        return []
    return [(name, float(at)) for name, at in (x.split() for x in lines if len(x.split()) == 2)]


def port_free(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def wait_for_ports(ports: set[int], seconds: float) -> set[int]:
    """The ports still taken after waiting up to `seconds` for them."""
    deadline = time.monotonic() + seconds
    while True:
        taken = {p for p in ports if not port_free(p)}
        if not taken or time.monotonic() > deadline:
            return taken
        time.sleep(0.5)


def page_ports(page: str) -> set[int]:
    return {int(p) for _, text, _ in page_steps(page) for p in PORT.findall(text)}


def skip_reason(page: str) -> str:
    """Why the page is not run here: it reads the published data, which is absent, or
    runs lm-eval, which is not installed (the `lm-eval` extra)."""
    steps = [text for _, text, _ in page_steps(page)]
    if any(SHARED in text for text in steps) and not SHARED_DATA.is_dir():
        return f"{page} reads {SHARED}, which is not at {SHARED_DATA}"
    if any("lm_eval " in text for text in steps) and find_spec("lm_eval") is None:
        return f"{page} runs lm_eval, which is not installed (pip install '.[lm-eval]')"
    return ""


@dataclass
class PageResult:
    outcome: Outcome | None = None
    left: set[int] = field(default_factory=set)  # its ports still taken after it stopped
    problem: str = ""  # why it did not run


def run_page(page: str, folder: Path, cancel: threading.Event) -> PageResult:
    """The page's blocks in a fresh folder, once its ports are free; then its ports again."""
    cwd = folder / "work"
    cwd.mkdir(parents=True)
    if SHARED_DATA.is_dir():
        (folder / "shared").mkdir()
        (folder / "shared" / "howtobench-data").symlink_to(SHARED_DATA)
    ports = page_ports(page)
    taken = wait_for_ports(ports, 60)
    if taken:
        return PageResult(problem=f"ports {sorted(taken)} are held by another process")
    steps = page_steps(page)
    outcome = run_blocks(
        [text for _, text, _ in steps],
        [limit for _, _, limit in steps],
        cwd,
        block_env(folder / "inspect-cache"),
        cancel,
    )
    return PageResult(outcome, wait_for_ports(ports, 10))


class Pages:
    """Runs the selected pages LANES at a time, the longest first, never two that bind a
    port at once: one page after another takes the sum of their times, most of it the
    imports of each inspect process on one core. The lanes hold a lock file while they
    run, so that another test session on the machine waits for them."""

    def __init__(self, pages: list[str], root: Path) -> None:
        self.root = root
        self.pending = sorted(pages, key=lambda p: -sum(x for _, _, x in page_steps(p)))
        self.results: dict[str, PageResult] = {}
        self.done = {page: threading.Event() for page in pages}
        self.busy: set[int] = set()  # the ports of the pages running
        self.changed = threading.Condition()
        self.cancel = threading.Event()
        self.main = threading.Thread(target=self.run, daemon=True)
        self.main.start()

    def run(self) -> None:
        problem = "not run: the session ended first"
        try:
            with FileLock(str(LOCK), timeout=LOCK_WAIT):
                lanes = [threading.Thread(target=self.lane, daemon=True) for _ in range(LANES)]
                for lane in lanes:
                    lane.start()
                for lane in lanes:
                    lane.join()
        except Timeout:
            problem = f"{LOCK} stayed locked for {LOCK_WAIT} s (another session's pages)"
        except Exception as err:  # reported by the pages' tests
            problem = f"the runner failed: {err!r}"
        finally:
            for page, event in self.done.items():
                self.results.setdefault(page, PageResult(problem=problem))
                event.set()

    def take(self) -> str | None:
        """The next page whose ports are free of the running pages', once there is one."""
        with self.changed:
            while self.pending and not self.cancel.is_set():
                for page in self.pending:
                    if not page_ports(page) & self.busy:
                        self.pending.remove(page)
                        self.busy |= page_ports(page)
                        return page
                self.changed.wait()
            return None

    def lane(self) -> None:
        while (page := self.take()) is not None:
            folder = self.root / re.sub(r"\W+", "-", page)
            try:
                self.results[page] = run_page(page, folder, self.cancel)
            except Exception as err:  # reported by the page's test
                self.results[page] = PageResult(problem=f"the runner failed: {err!r}")
            finally:
                with self.changed:
                    self.busy -= page_ports(page)
                    self.changed.notify_all()
                self.done[page].set()

    def result(self, page: str) -> PageResult:
        self.done[page].wait()
        return self.results[page]

    def close(self) -> None:
        """At the session's end: stop what still runs (a test that gave up waiting)."""
        self.cancel.set()
        with self.changed:
            self.changed.notify_all()
        self.main.join(timeout=60)


RUN_PAGES = sorted({page for page, _ in RUN})
# Pages whose blocks take over a minute: run in the nightly mode (`.ci/run --nightly`)
NIGHTLY_PAGES = {"docs/construction.md"}  # a whole build of a benchmark, 70-100 s
# pytest-timeout's limit of a page's test, which waits for its page's turn too: every
# block's limit, the lock and the ports; a backstop, since each block has its own
SESSION_LIMIT = sum(RUN.values()) + LOCK_WAIT + 120


@pytest.fixture(scope="session")
def doc_pages(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Pages]:
    """The pages of the tests selected in this session, started together on first use
    (so pytest's durations of a page's test include its wait for its turn)."""
    selected = [
        item.callspec.params["page"]
        for item in request.session.items
        if getattr(item, "originalname", "") == "test_page_runs_as_written"
        and hasattr(item, "callspec")
    ]
    pages = Pages(
        [p for p in dict.fromkeys(selected) if not skip_reason(p)],
        tmp_path_factory.mktemp("doc-pages"),
    )
    yield pages
    pages.close()


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
    if outcome.status != 0 or outcome.block is not None:
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
