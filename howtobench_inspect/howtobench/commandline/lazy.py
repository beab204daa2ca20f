"""Public names that load on first use (PEP 562), for the packages that `howtobench --help`
imports: their public names live in modules that load inspect-ai, pandas, scipy or
matplotlib, which a parser must not pay for."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names"]


def lazy_names(
    package: str, homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The `__getattr__` and `__dir__` of `package`, whose public names are the keys of
    `homes`, each defined in the module its value names: a name's module is imported when
    the name is first used, and the name is kept in the package from then on."""

    def attribute(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        setattr(sys.modules[package], name, value)
        return value

    def listing() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return attribute, listing
