"""What starting up costs: `import howtobench`, the `howtobench` command's parser and every
`--help` load neither inspect-ai nor pandas, scipy or matplotlib; the shared vocabulary
loads nothing of ours; and inspect's entry point registers our tasks and scorers without
the construction, the studies, the studio, the simulator, the judge check, the workers
or the overlap scorers' libraries.

Each check runs in a fresh interpreter, since this one has loaded everything already.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

import pytest

HEAVY = ("inspect_ai", "pandas", "scipy", "matplotlib")

# The code's last line prints its finding as JSON; `loaded()` is the heavy modules loaded.
PRELUDE = f"""
import json, sys
def loaded():
    return sorted({{name.split(".")[0] for name in sys.modules}} & set({HEAVY!r}))
# whether each lazy name of `package` is its module's own object, and how `missing` fails
def lazy_facts(package, missing):
    import importlib
    same = all(
        getattr(package, name) is getattr(importlib.import_module(home), name)
        for name, home in package._HOMES.items()
    )
    try:
        getattr(package, missing)
        return same, ""
    except AttributeError as err:
        return same, str(err)
"""


def _run(code: str) -> Any:
    done = subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_package_loads_nothing_heavy() -> None:
    assert _run("import howtobench\nprint(json.dumps(loaded()))") == []


def test_every_help_loads_nothing_heavy() -> None:
    """`howtobench --help`, and `--help` of every command and action the parser has (read
    off the parser, so a new command is checked too), one after another in one process:
    a command whose help loads a heavy module is named with what it loaded."""
    found = _run(
        """
        import argparse, contextlib, io
        from howtobench.cli import build_parser, main

        def commands(parser, path=()):
            yield path
            for action in parser._actions:
                if isinstance(action, argparse._SubParsersAction):
                    for name, sub in action.choices.items():
                        yield from commands(sub, (*path, name))

        seen = {}
        for path in commands(build_parser()):
            shown = io.StringIO()
            with contextlib.redirect_stdout(shown), contextlib.suppress(SystemExit):
                main([*path, "--help"])
            seen[" ".join(path)] = (shown.getvalue().startswith("usage: howtobench"), loaded())
        print(json.dumps(seen))
        """
    )
    for command in ("", "report", "metaeval", "annotate new", "plan export", "build"):
        assert command in found  # the walk reached the commands' own parsers
    assert {command: shown for command, (shown, _) in found.items() if not shown} == {}
    assert {command: heavy for command, (_, heavy) in found.items() if heavy} == {}


@pytest.mark.slow
def test_the_public_names_load_on_first_use() -> None:
    """`from howtobench import completion` is the task itself (inspect then loads, which
    shows the checks above can fail), every name of `__all__` is its module's object, and
    `dir()` lists them before any is used."""
    found = _run(
        """
        import howtobench

        listed = sorted(howtobench.__all__) == sorted(howtobench._HOMES)
        listed = listed and set(howtobench.__all__) <= set(dir(howtobench))
        before = loaded()
        from howtobench import completion
        from inspect_ai.util import registry_info

        same, refused = lazy_facts(howtobench, "no_such_name")
        print(json.dumps([listed, before, registry_info(completion).name, loaded(), same, refused]))
        """
    )
    listed, before, task, after, same, refused = found
    assert listed and before == []
    assert task == "howtobench/completion"
    assert "inspect_ai" in after
    assert same
    assert refused == "module 'howtobench' has no attribute 'no_such_name'"


@pytest.mark.slow
def test_the_studies_and_the_judge_check_load_nothing_heavy_until_used() -> None:
    """`howtobench.studies`, `howtobench.judge_check` and their commands' modules import
    light; a study's public name is the study itself, loaded on first use, and stays so
    after every module of the package has been imported (no module bears a public name:
    `import howtobench.studies.leaderboard_report` must not turn `report` into a module)."""
    found = _run(
        """
        import importlib, inspect, pkgutil
        import howtobench.judge_check, howtobench.judge_check.commands
        import howtobench.studies, howtobench.studies.commands

        studies = howtobench.studies
        light = loaded()
        listed = sorted(studies.__all__) == sorted(studies._HOMES)
        modules = [m.name for m in pkgutil.iter_modules(studies.__path__)]
        import howtobench.studies.leaderboard_report
        from howtobench.studies import report
        first = [inspect.isfunction(report), report.__module__]
        for name in modules:
            importlib.import_module(f"howtobench.studies.{name}")
        kinds = {
            name: type(getattr(studies, name)).__name__ for name in studies.__all__
        }
        same, refused = lazy_facts(studies, "no_such_study")
        print(json.dumps([light, listed, sorted(set(modules) & set(studies.__all__)), first,
                          kinds, same, refused, loaded()]))
        """
    )
    light, listed, clashes, first, kinds, same, refused, after = found
    assert light == []
    assert listed and clashes == []
    assert first == [True, "howtobench.studies.leaderboard_report"]
    assert {name: kind for name, kind in kinds.items() if kind == "module"} == {}
    assert kinds["report"] == "function" and kinds["StudyResult"] == "type"
    assert same
    assert refused == "module 'howtobench.studies' has no attribute 'no_such_study'"
    assert {"pandas", "inspect_ai"} <= set(after)  # the checks above can fail


# What inspect's entry point must not load: it is imported at the start of every eval, ours
# or another package's (`howtobench/_registry.py`). The construction steps register when
# the build imports them; the overlap scorers' libraries load when a text is first cut.
NOT_AT_EVAL_START = (
    "howtobench.construct",
    "howtobench.studies",
    "howtobench.annotate",
    "howtobench.simulator",
    "howtobench.judge_check",
    "howtobench.scale.workers",
    "howtobench.scale.shards",
    "howtobench.lmeval",
    "howtobench.tree.columns",
)
LIBRARIES_NOT_AT_EVAL_START = (
    "jieba",
    "sacrebleu",
    "rapidfuzz",
    "scipy",
    "matplotlib",
    "sklearn",
    "lm_eval",
)


def test_the_entry_point_loads_only_what_an_eval_can_name() -> None:
    """`import howtobench._registry` (what inspect runs at the start of every eval) loads
    none of the construction, the studies, the studio, the simulator, the judge check,
    the workers, the lm-eval parts or the table columns, and none of the overlap scorers'
    libraries, the studies' extras or lm-eval."""
    found = _run(
        f"""
        import howtobench._registry

        parts = sorted(
            name for name in sys.modules
            if any(name == p or name.startswith(p + ".") for p in {NOT_AT_EVAL_START!r})
        )
        libraries = sorted({{n.split(".")[0] for n in sys.modules}} & set({LIBRARIES_NOT_AT_EVAL_START!r}))
        print(json.dumps([parts, libraries]))
        """
    )
    assert found == [[], []]


@pytest.mark.slow
def test_the_entry_point_registers_without_the_studies_or_the_studio() -> None:
    """inspect finds a `howtobench/...` name by importing our entry point whole (it has no
    way to register one name when asked for it), so every task and scorer is found, and
    what they import stops short of the studies, the studio and their libraries; the model
    providers (`replay/`, `towsim/`) are registered with their code left to first use, so the
    judge simulator is not imported either. The
    build's steps are not among them: the build imports them, and they are found then."""
    tasks = ["completion", "guide", "open", "negotiate"]
    steps = ["classify", "quality", "backconstruct", "screen"]
    scorers = ["tow", "negotiation", "bleu", "rouge_l", "bleurt", "rubric", "autoplan"]
    found = _run(
        f"""
        from inspect_ai._util.registry import registry_lookup  # what `inspect eval` asks

        def missing(kinds):
            return [
                f"{{kind}} {{name}}"
                for kind, names in kinds
                for name in names
                if registry_lookup(kind, f"howtobench/{{name}}") is None
            ]

        absent = missing(
            (("task", {tasks!r}), ("scorer", {scorers!r}), ("modelapi", ("replay", "towsim")))
        )
        steps_before = missing((("task", {steps!r}),))
        parts = sorted(
            name for name in sys.modules
            if name.startswith(("howtobench.studies", "howtobench.annotate", "howtobench.construct", "howtobench.simulator"))
        )
        heavy = loaded()
        import howtobench.construct.pipeline
        steps_after = missing((("task", {steps!r}),))
        print(json.dumps([absent, steps_before, parts, heavy, steps_after]))
        """
    )
    absent, steps_before, parts, heavy, steps_after = found
    assert absent == []
    assert steps_before == [f"task {step}" for step in steps]
    assert parts == []
    assert heavy == ["inspect_ai"]
    assert steps_after == []


def test_the_vocabulary_stands_on_nothing_of_ours() -> None:
    code = """
    import howtobench.vocabulary.words
    ours = sorted(n for n in sys.modules if n.startswith("howtobench."))
    print(json.dumps([ours, loaded()]))
    """
    # the package's `__init__` loads its lazy-name helper, which imports nothing of ours
    assert _run(code) == [
        [
            "howtobench.commandline",
            "howtobench.commandline.lazy",
            "howtobench.vocabulary",
            "howtobench.vocabulary.words",
        ],
        [],
    ]
