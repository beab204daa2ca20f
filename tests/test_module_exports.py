"""Every module of the package says what it offers: a module-level `__all__` whose names
the module defines or imports (a package's may name its modules), so a reader (and
`from x import *`) sees its public face and nothing it merely uses."""

from __future__ import annotations

import ast
from pathlib import Path

import howtobench

PACKAGE = Path(howtobench.__file__).parent


def exports(source: str) -> tuple[list[str] | None, set[str]]:
    """The names of a module's `__all__` (None without one) and the names it binds."""
    declared: list[str] | None = None
    bound: set[str] = set()
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        bound.add(name.id)
                if isinstance(target, ast.Name) and target.id == "__all__":
                    assert node.value is not None and declared is None, "a second __all__"
                    try:
                        declared = list(ast.literal_eval(node.value))
                    except ValueError:  # computed (a lazy package's table): declared
                        declared = []
        elif isinstance(node, ast.If):  # names bound under TYPE_CHECKING
            for inner in ast.walk(node):
                if isinstance(inner, ast.ImportFrom):
                    bound.update(a.asname or a.name for a in inner.names)
    return declared, bound


def test_the_check_sees_a_missing_and_a_stray_name() -> None:
    assert exports("x = 1\n") == (None, {"x"})
    declared, bound = exports('def f(): ...\n__all__ = ["f", "g"]\n')
    assert declared == ["f", "g"] and "g" not in bound


def test_every_module_declares_what_it_offers() -> None:
    modules = sorted(PACKAGE.rglob("*.py"))
    assert len(modules) > 100
    missing, stray, partial = [], [], []
    for path in modules:
        declared, bound = exports(path.read_text(encoding="utf-8"))
        where = str(path.relative_to(PACKAGE))
        if declared is None:
            missing.append(where)
        else:
            folder = path.parent  # a package's `__all__` may name its modules: all of them
            if path.name == "__init__.py":
                modules_here = {p.stem for p in folder.glob("*.py")} - {"__init__", "__main__"}
                modules_here |= {d.name for d in folder.iterdir() if (d / "__init__.py").is_file()}
                named = modules_here & set(declared)
                if named and named != modules_here:
                    partial.append(f"{where}: {sorted(modules_here - named)}")
            stray += [
                f"{where}: {name}"
                for name in declared
                if name not in bound
                and not (
                    path.name == "__init__.py"
                    and ((folder / f"{name}.py").is_file() or (folder / name).is_dir())
                )
            ]
    assert missing == [], f"modules without __all__: {missing}"
    assert partial == [], f"packages whose __all__ names some of their modules only: {partial}"
    assert stray == [], f"__all__ names a module does not bind: {stray}"
