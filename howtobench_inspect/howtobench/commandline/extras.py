"""The optional parts of the install (`pyproject.toml`'s extras) and what each brings.

The core install runs the tasks, the scorers, the judges and the commands that run or
check them; the studies, `build` and the studio's server need more (docs/install.md). A
command says which extra it needs (`extra=` in its parser's defaults), and `cli.main`
checks that extra's modules before the command runs, so a missing one stops it in one
line naming what to install. This module imports nothing but the standard library: the
parser imports it for every `--help`.
"""

from __future__ import annotations

from importlib.util import find_spec

__all__ = ["EXTRAS", "check_extra", "install_command"]

# Each extra's modules, as its packages are imported (the studio's are installed by
# inspect-ai too; they are declared where they are used).
EXTRAS: dict[str, tuple[str, ...]] = {
    "studies": ("scipy", "matplotlib", "tabulate"),
    "construct": ("scipy", "tabulate"),
    "studio": ("starlette", "uvicorn"),
    # lm-eval runs the task files of `howtobench lm-eval path`; no command of ours needs it
    "lm-eval": ("lm_eval",),
}


def install_command(extra: str) -> str:
    """What installs `extra` (quoted for the shells that read `[...]` as a pattern)."""
    return f"pip install 'howtobench[{extra}]'"


def check_extra(extra: str, option: str = "") -> None:
    """Raise a `UserError` naming what to install when a module of `extra` is missing
    (and the `option` that needs it, if only that option does)."""
    missing = [module for module in EXTRAS[extra] if not _installed(module)]
    if missing:
        from howtobench.vocabulary.errors import UserError  # inspect-ai's error: not for `--help`

        who = f"{option} needs" if option else "needs"
        raise UserError(
            f"{who} the {extra} extra ({', '.join(missing)} not installed): "
            f"{install_command(extra)}"
        )


def _installed(module: str) -> bool:
    """Whether `module` can be imported, without importing it."""
    try:
        return find_spec(module) is not None
    except (ImportError, ValueError):  # a blocked or half-installed package
        return False
