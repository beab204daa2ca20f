"""The private inspect-ai names the package relies on are where `howtobench/_inspect.py`
says they are, in the inspect-ai installed: when a release moves one, this fails naming
it (module and name) and the module to update, instead of an ImportError at the first
`import howtobench`, or an AttributeError in the middle of a run.

Read from `_inspect.py`'s source (its private imports, and the attributes it reads of an
imported private module), so a name added there is checked without a word here. The
package imports private inspect modules in `_inspect.py` alone, three at most.
"""

from __future__ import annotations

import ast
import importlib
from importlib.metadata import version
from pathlib import Path

import pytest

import howtobench

PACKAGE = Path(howtobench.__file__).parent
SEAMS = PACKAGE / "_inspect.py"
AT_MOST = 3  # issue 43: inspect's public API only, or nearly


def _private(dotted: str) -> bool:
    return any(part.startswith("_") for part in dotted.split("."))


def private_imports(source: str) -> list[tuple[str, str]]:
    """(module, name) of every `from inspect_ai... import name` with a private part."""
    return [
        (node.module, alias.name)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("inspect_ai")
        for alias in node.names
        if _private(f"{node.module}.{alias.name}")
    ]


def private_names(source: str) -> list[tuple[str, str]]:
    """(module, name) of each private import, and of each attribute read of an imported
    module (`batch_log.set_batch_log_callback` as `...batch_log`, `set_batch_log_callback`)."""
    imported = private_imports(source)
    reads = sorted(
        (node.lineno, node.col_offset, node.value.id, node.attr)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    )
    found = list(imported)
    for module, name in imported:
        for *_, read, attribute in reads:
            if read == name and (f"{module}.{name}", attribute) not in found:
                found.append((f"{module}.{name}", attribute))
    return found


def moved(module: str, name: str) -> str | None:
    """None when `module.name` is there; else the line that says it moved."""
    try:
        found = importlib.import_module(module)
        if not hasattr(found, name):
            importlib.import_module(f"{module}.{name}")  # a submodule, not yet imported
    except ImportError:
        return (
            f"inspect-ai {version('inspect-ai')} moved {module}.{name}: "
            "update howtobench/_inspect.py"
        )
    return None


def test_every_private_inspect_name_is_where_the_package_expects_it() -> None:
    names = private_names(SEAMS.read_text("utf-8"))
    assert names, "no private import found: has _inspect.py moved?"
    missing = [line for module, name in names if (line := moved(module, name))]
    if missing:
        pytest.fail("\n".join(missing), pytrace=False)


def test_the_check_names_a_moved_name_and_its_module() -> None:
    source = (
        "from inspect_ai._util.error import PrerequisiteError, GoneError\n"
        "from inspect_ai.model._providers.util import batch_log\n"
        "from inspect_ai.model import Model\n"
        "batch_log.set_batch_log_callback(None)\n"
        "batch_log.no_such_callback\n"
    )
    names = private_names(source)
    assert names == [
        ("inspect_ai._util.error", "PrerequisiteError"),
        ("inspect_ai._util.error", "GoneError"),
        ("inspect_ai.model._providers.util", "batch_log"),
        ("inspect_ai.model._providers.util.batch_log", "set_batch_log_callback"),
        ("inspect_ai.model._providers.util.batch_log", "no_such_callback"),
    ]
    said = [line for module, name in names if (line := moved(module, name))]
    release = version("inspect-ai")
    assert said == [
        f"inspect-ai {release} moved inspect_ai._util.error.GoneError: "
        "update howtobench/_inspect.py",
        f"inspect-ai {release} moved inspect_ai.model._providers.util.batch_log."
        "no_such_callback: update howtobench/_inspect.py",
    ]


def test_private_inspect_modules_are_imported_in_one_module_three_at_most() -> None:
    elsewhere = [
        f"{path.relative_to(PACKAGE)}: {module}.{name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != SEAMS
        for module, name in private_imports(path.read_text("utf-8"))
    ]
    assert elsewhere == []
    modules = {module for module, _ in private_imports(SEAMS.read_text("utf-8"))}
    assert len(modules) <= AT_MOST, sorted(modules)
