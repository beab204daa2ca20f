"""The shell blocks of the README and of docs/*.md, run the way a reader pastes them.

`RUN` names the blocks that run (with each one's time limit), `LINES_NOT_RUN` the single
commands left out of them; `tests/test_doc_commands.py` lists every other block with the
reason it does not run, and checks the lists against the pages. A page's blocks run in
order in one `bash -euo pipefail` in a fresh folder (`run_page`); `Pages` runs the pages a
session wants, two at a time, beside the tests that wait for them. A page runs once per
test run: its own test (`test_page_runs_as_written`) checks that it runs through, and a
test marked `reads_page(page)` checks what its commands wrote, in `Pages.outputs(page)`,
instead of running the same command again. Under pytest-xdist the first worker to need a
page runs them all, and the other workers read each page's result from the run's shared
temporary folder (`Pages(shared=...)`) rather than running the pages again.
"""

from __future__ import annotations

import json
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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from importlib.util import find_spec
from pathlib import Path
from typing import TypeVar

import pytest
from filelock import FileLock, Timeout
from markdown_it import MarkdownIt  # rich's parser, which inspect-ai installs

from support.data import SHARED_DATA

ROOT = Path(__file__).resolve().parents[2]
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
    ("README.md", "python -m pytest -q -ra -n 2"): (
        "the whole suite, this test included (about 7 minutes on two idle cores)"
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


def runs(block: Block) -> str:
    """The text of the block that runs: each line of LINES_NOT_RUN becomes a no-op that
    says why (`:`), so the shell's line numbers stay the page's."""
    lines = []
    for line in block.text.splitlines():
        reason = LINES_NOT_RUN.get((block.page, line.strip()))  # whole commands only (below)
        lines.append(f": left out by the doc test: {shlex.quote(reason)}" if reason else line)
    return "\n".join(lines) + "\n"


def page_steps(page: str) -> list[tuple[Block, str, float]]:
    """The page's blocks that run, in page order: each block, the text run and its limit."""
    steps = [
        (block, runs(block), limit)
        for (listed, piece), limit in RUN.items()
        if listed == page
        for block in matching(page, piece)
    ]
    return sorted(steps, key=lambda step: step[0].line)


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
    folder: Path | None = None  # where its blocks ran

    @property
    def ran_through(self) -> bool:
        return self.outcome is not None and self.outcome.status == 0 and self.outcome.block is None

    def to_json(self) -> str:
        folder = str(self.folder) if self.folder else None
        return json.dumps({**asdict(self), "left": sorted(self.left), "folder": folder})

    @classmethod
    def from_json(cls, text: str) -> PageResult:
        data = json.loads(text)
        outcome = Outcome(**data["outcome"]) if data["outcome"] else None
        folder = Path(data["folder"]) if data["folder"] else None
        return cls(outcome, set(data["left"]), data["problem"], folder)


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
    return PageResult(outcome, wait_for_ports(ports, 10), folder=cwd)


class Pages:
    """Runs the selected pages LANES at a time, those that other tests read first, then the
    longest first, never two that bind a port at once: one page after another takes the
    sum of their times, most of it the imports of each inspect process on one core. The
    lanes hold a lock file while they run, so that another test session on the machine
    waits for them.

    With `shared` (a folder of the test run's, under pytest-xdist), the pages run once
    for all workers: the first worker to get here claims the folder and runs them,
    writing each page's result there as it ends; in the other workers `result` waits for
    that file. The runner's `close` then lets the pages run out, since a test of another
    worker may still wait for one, unless the run was interrupted."""

    def __init__(
        self, pages: list[str], root: Path, shared: Path | None = None, first: Iterable[str] = ()
    ) -> None:
        self.root = root
        self.shared = shared
        self.runs_here = shared is None or claim(shared)
        read = set(first)
        self.pending = sorted(
            pages, key=lambda p: (p not in read, -sum(x for _, _, x in page_steps(p)))
        )
        self.results: dict[str, PageResult] = {}
        self.done = {page: threading.Event() for page in pages}
        self.busy: set[int] = set()  # the ports of the pages running
        self.changed = threading.Condition()
        self.cancel = threading.Event()
        self.main = threading.Thread(target=self.run, daemon=True)
        if self.runs_here:
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
            for page in self.done:
                if page not in self.results:
                    self.finish(page, PageResult(problem=problem))

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
            folder = self.root / slug(page)
            try:
                result = run_page(page, folder, self.cancel)
            except Exception as err:  # reported by the page's test
                result = PageResult(problem=f"the runner failed: {err!r}")
            finally:
                with self.changed:
                    self.busy -= page_ports(page)
                    self.changed.notify_all()
            self.finish(page, result)

    def finish(self, page: str, result: PageResult) -> None:
        """The page's result, for this worker's tests and, through `shared`, the others'."""
        self.results[page] = result
        if self.shared is not None:
            publish(self.shared, page, result)
        self.done[page].set()

    def result(self, page: str) -> PageResult:
        if self.runs_here:
            self.done[page].wait()
            return self.results[page]
        assert self.shared is not None
        return published(self.shared, page)

    def outputs(self, page: str) -> Path:
        """The folder `page` ran in, once it ran through, for a test (`reads_page`) that
        checks what its commands wrote; skipped where the page cannot run here, failed
        where it did not run through (its own test says why)."""
        if reason := skip_reason(page):
            pytest.skip(reason)
        result = self.result(page)
        if not result.ran_through or result.folder is None:
            pytest.fail(f"{page} did not run through: see {PAGE_TEST}[{page}] ({result.problem})")
        return result.folder

    def close(self, interrupted: bool = False) -> None:
        """At the session's end: stop what still runs (a test that gave up waiting), or,
        where other workers read the pages and the run was not interrupted, let it end."""
        if not self.runs_here:
            return
        if self.shared is None or interrupted:
            self.cancel.set()
            with self.changed:
                self.changed.notify_all()
            self.main.join(timeout=60)
        else:
            self.main.join(timeout=SESSION_LIMIT)


def slug(page: str) -> str:
    return re.sub(r"\W+", "-", page)


RUNNER = "runner.pid"


def claim(shared: Path) -> bool:
    """Whether this process is the first to claim `shared` (made here) for the pages."""
    try:
        shared.mkdir()
    except FileExistsError:
        return False
    (shared / "runner.partial").write_text(str(os.getpid()), encoding="utf-8")
    (shared / "runner.partial").replace(shared / RUNNER)
    return True


def publish(shared: Path, page: str, result: PageResult) -> None:
    """Write the page's result for the other workers, whole or not at all (they poll)."""
    partial = shared / f"{slug(page)}.partial"
    partial.write_text(result.to_json(), encoding="utf-8")
    partial.replace(shared / f"{slug(page)}.json")


def published(shared: Path, page: str) -> PageResult:
    """The page's result as the worker running the pages wrote it, once it did; a problem
    if that worker ended first."""
    path = shared / f"{slug(page)}.json"
    while not path.exists():
        try:
            runner = int((shared / RUNNER).read_text(encoding="utf-8"))
        except FileNotFoundError:
            runner = None  # claimed a moment ago: the file follows
        if runner is not None and not running(runner) and not path.exists():
            return PageResult(problem=f"the worker running the pages (pid {runner}) ended first")
        time.sleep(0.5)
    return PageResult.from_json(path.read_text(encoding="utf-8"))


RUN_PAGES = sorted({page for page, _ in RUN})
# Pages whose blocks take over a minute: run in the nightly mode (`.ci/run --nightly`)
NIGHTLY_PAGES = {"docs/construction.md"}  # a whole build of a benchmark, 70-100 s
# pytest-timeout's limit of a test that waits for a page, its turn too: every block's
# limit, the lock and the ports; a backstop, since each block has its own
SESSION_LIMIT = sum(RUN.values()) + LOCK_WAIT + 120
PAGE_TEST = "test_page_runs_as_written"


def read(items: Iterable[pytest.Item]) -> set[str]:
    """The pages whose outputs a test of the session reads (`reads_page`)."""
    return {mark.args[0] for item in items for mark in item.iter_markers("doc_page")}


def wanted(items: Iterable[pytest.Item]) -> list[str]:
    """The pages the session's tests run or read, in test order: a page's own test and
    the tests marked `reads_page`; a test skipped by a mark (a nightly one outside the
    nightly mode) wants no page, so its page is not run for nobody."""
    pages = []
    for item in items:
        if item.get_closest_marker("skip"):
            continue
        callspec = getattr(item, "callspec", None)
        if getattr(item, "originalname", "") == PAGE_TEST and callspec is not None:
            pages.append(callspec.params["page"])
        pages += [mark.args[0] for mark in item.iter_markers("doc_page")]
    return list(dict.fromkeys(pages))


Test = TypeVar("Test", bound=Callable[..., object])


def reads_page(page: str) -> Callable[[Test], Test]:
    """Mark a test that checks what `page`'s commands wrote (`Pages.outputs`): the
    session runs the page once, for its own test and this one; the test may wait for it."""
    assert page in RUN_PAGES, f"{page} has no block that runs"

    def mark(test: Test) -> Test:
        return pytest.mark.doc_page(page)(pytest.mark.timeout(SESSION_LIMIT)(test))

    return mark
