"""The tests reach howtobench through its public names only: a name with a leading
underscore is free to change with its module, and a test that imports one pins it (and
tests the module's insides instead of what its callers get). What a test needs is made
public in its module, or tested through the public surface."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
PACKAGE = "howtobench"


def _ours(module: str) -> bool:
    return module == PACKAGE or module.startswith(f"{PACKAGE}.")


def _private(name: str) -> bool:
    """A leading underscore, not a dunder (`__version__` is public)."""
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def private_imports(source: str) -> list[str]:
    """`line: name` of every private howtobench name the source imports: `from
    howtobench.x import _y`, `from howtobench._x import y` and `import howtobench._x`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _ours(node.module or ""):
            module = node.module or ""
            for alias in node.names:
                dotted = f"{module}.{alias.name}"
                if any(_private(part) for part in dotted.split(".")):
                    found.append(f"{node.lineno}: {dotted}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if _ours(alias.name) and any(_private(p) for p in alias.name.split(".")):
                    found.append(f"{node.lineno}: {alias.name}")
    return found


@pytest.mark.parametrize(
    ("source", "found"),
    [
        (
            "from howtobench.studies.logs import _sample_row",
            ["1: howtobench.studies.logs._sample_row"],
        ),
        (
            "from howtobench.studies.logs import (\n    load_samples,\n    _x as y,\n)",
            ["1: howtobench.studies.logs._x"],
        ),
        ("from howtobench import _inspect", ["1: howtobench._inspect"]),
        ("from howtobench._registry import guide", ["1: howtobench._registry.guide"]),
        ("import howtobench._registry", ["1: howtobench._registry"]),
        ("def f():\n    import howtobench.judge._x as x", ["2: howtobench.judge._x"]),
        ("from howtobench.studies.logs import load_samples", []),
        ("from howtobench import __version__", []),
        ("from inspect_ai._util.registry import registry_find", []),  # not ours
        ("from support.evals import _helper", []),  # the tests' own helpers
        ("from howtobenchmark import _other", []),
    ],
)
def test_the_check_finds_private_imports_of_ours_only(source: str, found: list[str]) -> None:
    assert private_imports(source) == found


def test_no_test_imports_a_private_howtobench_name() -> None:
    files = sorted(TESTS.rglob("*.py"))
    assert Path(__file__) in files  # the check reads the tests themselves
    offending = [
        f"{path.relative_to(TESTS)}:{hit}"
        for path in files
        for hit in private_imports(path.read_text(encoding="utf-8"))
    ]
    assert offending == [], (
        "tests import private howtobench names (make the name public in its module, or "
        f"test through the public surface): {offending}"
    )
