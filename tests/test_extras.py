"""The core install (`pip install howtobench`) lacks the extras' libraries: every command
then either runs or stops in one line, status 2; one that needs an extra names the extra
and how to install it, before doing anything.

Each check runs in a fresh interpreter in which the libraries the core install lacks
(scipy, matplotlib) cannot be imported: `sys.modules[name] = None`, or a finder on
`sys.meta_path` that refuses them, as a package that is not installed is refused.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
from importlib.metadata import metadata
from pathlib import Path
from typing import Any

import pytest

from howtobench.cli import build_parser
from howtobench.commandline.extras import EXTRAS, install_command
from howtobench.tree.spec import tree_for
from support.judges import Serve

# what the core install does not bring (tabulate comes with sacrebleu, the studio's
# server with inspect-ai: blocking those would block the core itself)
NOT_IN_CORE = ("scipy", "matplotlib")

BLOCK_BY_NONE = f"""
import sys
for name in {NOT_IN_CORE!r}:
    sys.modules[name] = None
"""

BLOCK_BY_FINDER = f"""
import importlib.abc, sys

class NotInstalled(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {NOT_IN_CORE!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None

sys.meta_path.insert(0, NotInstalled())
"""

STUDIES = (
    "needs the studies extra (scipy, matplotlib not installed): pip install 'howtobench[studies]'"
)
CONSTRUCT = "needs the construct extra (scipy not installed): pip install 'howtobench[construct]'"

# One command line for every command of the parser (placeholders for what it reads), and
# what it says without the extras: the hint, or its own one-line error (it ran), or None
# for a command that needs no input and succeeds.
COMMANDS: dict[str, tuple[list[str], str | None]] = {
    "metaeval": (["nowhere", "--ratings", "ratings.csv"], STUDIES),
    "judges": (["nowhere"], STUDIES),
    "consistency": (["nowhere"], STUDIES),
    "robustness": (["nowhere", "nowhere"], STUDIES),
    "lengths": (["nowhere"], STUDIES),
    "report": (["nowhere"], STUDIES),
    "cost": (["nowhere"], STUDIES),
    "judge-check": (
        ["--model-role", "grader=mockllm/model", "--dataset", "nowhere"],
        "nowhere: dataset not found",
    ),
    "build": (["corpus.jsonl", "--out", "bench", "--model", "mockllm/model"], CONSTRUCT),
    "annotate new": (["c.db", "--logs", "nowhere"], "nowhere: no such file or folder"),
    "annotate links": (["nowhere.db"], "nowhere.db: no such campaign file"),
    "annotate serve": (["nowhere.db"], "nowhere.db: no such campaign file"),
    "annotate export": (["nowhere.db", "--out", "r.csv"], "nowhere.db: no such campaign file"),
    "plan export": (["nowhere", "--out", "plan.jsonl"], "nowhere: no such file or folder"),
    "check-logs": (["nowhere"], "nowhere: no such file or folder"),
    "shards split": (["nowhere.json", "--workers", "2", "--out", "w"], "nowhere.json"),
    "lm-eval path": ([], None),
    "lm-eval import": (["nowhere", "--out", "d"], "nowhere: not found"),
}


def leaf_commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[str]:
    """Every command the parser runs (`annotate new`, not `annotate`), read off it."""
    found = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += leaf_commands(sub, (*path, name))
    return found or [" ".join(path)]


def run_commands(block: str, commands: list[list[str]], cwd: Path) -> list[Any]:
    """Each command line through `howtobench.cli.main`, one after another in one fresh
    interpreter with `block` run first: its status and what it printed to stderr."""
    code = block + textwrap.dedent(
        f"""
        import contextlib, io, json
        from howtobench.cli import main

        seen = []
        for argv in {commands!r}:
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                status = main(argv)
            seen.append([status, err.getvalue()])
        print(json.dumps(seen))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, timeout=100
    )
    assert done.returncode == 0, done.stderr
    return list(json.loads(done.stdout.splitlines()[-1]))


def test_the_commands_here_are_the_parsers() -> None:
    assert sorted(leaf_commands(build_parser())) == sorted(COMMANDS)


def test_every_extra_named_is_one_of_the_installs() -> None:
    """The extras the commands name are extras of the installed package (its metadata,
    written from `pyproject.toml`), and `all` holds each of them."""
    installed = metadata("howtobench")
    assert set(EXTRAS) | {"all", "bleurt", "test"} == set(installed.get_all("Provides-Extra"))
    in_all = [r for r in installed.get_all("Requires-Dist") if r.endswith('extra == "all"')]
    assert sorted(r.split(";")[0].strip() for r in in_all) == sorted(
        f"howtobench[{extra}]" for extra in EXTRAS
    )
    assert install_command("studies") == "pip install 'howtobench[studies]'"


@pytest.mark.parametrize("block", [BLOCK_BY_NONE, BLOCK_BY_FINDER], ids=["none", "finder"])
def test_a_command_whose_extra_is_missing_says_what_to_install(block: str, tmp_path: Path) -> None:
    """`howtobench report somefolder` in the core install: one line, status 2; so too
    `judge-check --against`, the one option of a core command that needs an extra."""
    lines = [
        ["report", "somefolder"],
        ["build", *COMMANDS["build"][0]],
        ["judge-check", "--model-role", "grader=mockllm/model", "--against", "logs"],
    ]
    found = run_commands(block, lines, tmp_path)
    assert found == [
        [2, f"howtobench report: error: {STUDIES}\n"],
        [2, f"howtobench build: error: {CONSTRUCT}\n"],
        [2, f"howtobench judge-check: error: --against {STUDIES}\n"],
    ]
    assert list(tmp_path.iterdir()) == []  # stopped before doing anything


@pytest.mark.slow
def test_every_command_runs_or_says_why_in_one_line_without_the_extras(tmp_path: Path) -> None:
    """Every command of the parser, in an interpreter without scipy and matplotlib: a
    command that needs an extra names it; the others run (here to their own one-line
    error about the missing input), so none ends in a traceback."""
    names = sorted(COMMANDS)
    found = run_commands(
        BLOCK_BY_NONE, [[*name.split(), *COMMANDS[name][0]] for name in names], tmp_path
    )
    for name, (status, err) in zip(names, found, strict=True):
        if COMMANDS[name][1] is None:
            assert (status, err) == (0, ""), name
            continue
        assert status == 2, (name, err)
        assert err.count("\n") == 1 and err.startswith(f"howtobench {name}: error: "), (name, err)
        assert str(COMMANDS[name][1]) in err, (name, err)


@pytest.mark.slow
def test_judge_check_runs_whole_in_the_core_install(serve: Serve, tmp_path: Path) -> None:
    """The README sends every user to `judge-check` before a large run: in an interpreter
    without scipy and matplotlib it probes the judge (the simulator, over HTTP), runs its
    ToW eval and reports that the judge serves."""
    simulator = serve()
    check = ["--model-role", "grader=openai-api/sim/judge", "--tasks", "guide", "--limit", "1"]
    found = run_commands(BLOCK_BY_FINDER, [["judge-check", *check]], tmp_path)
    assert found == [[0, ""]]
    leaves = [leaf.id for leaf in tree_for("guide").leaves if leaf.judge == "llm"]
    asked = {kind: n for kind, n in simulator.calls.items() if kind != "writer"}  # no probe
    assert asked == dict.fromkeys(["negotiator", *leaves], 1)  # one writing, judged whole
