"""Task parameters read once, at the task boundary, into typed values.

`inspect eval ... -T name=value` hands a task YAML-parsed values: `-T judge_samples=3`
arrives as 3, `-T judge_samples=abc` as "abc", `-T anchor=0` as 0 and
`-T anchor=false` as False, `-T scorers=a,b` as a list or a string. Each reader here
accepts the spellings a user would type and refuses anything else with one line that
names the parameter and says what it takes (a `ParameterError`, which inspect prints
without a traceback). A name that no task or scorer takes is refused the same way, for
`-T` and for the `-S` of `inspect score` (`refuse_unknown`, `refuses_unknown`).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, cast

from howtobench.vocabulary.errors import OneLineError, UserError
from howtobench.vocabulary.words import TASK_PREFIX

__all__ = [
    "Anchor",
    "ParameterError",
    "RENAMED",
    "ScorerParameterError",
    "anchor",
    "boolean",
    "choice",
    "integer",
    "names",
    "positive_integer",
    "refuse_unknown",
    "refuses_unknown",
    "signature_of",
    "temperature",
    "unquoted",
]

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
# The spellings of `anchor=none` and `anchor=human`; YAML gives False for false/no/off.
_ANCHORS = {
    **dict.fromkeys(_FALSE | {"none", "null"}, "none"),
    **dict.fromkeys(_TRUE | {"human"}, "human"),
}


F = TypeVar("F", bound=Callable[..., Any])


def signature_of(reader: Callable[..., Any]) -> Callable[[F], F]:
    """Give a factory (`def task(**given)`) the parameters of the function that reads them:
    inspect reads a task's or scorer's parameters from its signature (to pass, record and
    rebuild them), so factories that take the same parameters share one signature,
    documented once. The factory's return type is kept.
    """

    def shared(factory: F) -> F:
        returns = inspect.signature(factory).return_annotation
        signature = inspect.signature(reader).replace(return_annotation=returns)
        setattr(factory, "__signature__", signature)  # noqa: B010 (a function attribute)
        return factory

    return shared


class ParameterError(UserError):
    """A task parameter (`-T name=value`) that cannot be used."""

    flag: ClassVar[str] = "-T"

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{self.flag} {name}: {message}")
        self.name = name


class ScorerParameterError(OneLineError, TypeError):
    """A name that a scorer does not take (`inspect score ... -S name=value`).

    Not a `UserError`: that is a `ValueError`, and inspect's scorer loader takes any
    ValueError raised while it makes a scorer for "no such scorer", and prints that
    instead of this line. A `TypeError`, as Python's own refusal of an unknown keyword
    is, for Python callers of the factories.
    """

    flag: ClassVar[str] = "-S"

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{self.flag} {name}: {message}")
        self.name = name


# The names task version 4 renamed (CHANGELOG.md), old -> new, by where they are given: a
# task's `reference` (-T), and the judge scorers' `reference`, `samples` and `temperature`
# (-S). An old name is answered with its new one where the new one is taken.
RENAMED: dict[str, dict[str, str]] = {
    ParameterError.flag: {"reference": "anchor"},
    ScorerParameterError.flag: {
        "reference": "anchor",
        "samples": "judge_samples",
        "temperature": "judge_temperature",
    },
}


def _replay_removed(value: Any) -> str:
    """Task version 7 removed a task's `replay`, the old form of a replayed writer
    (`-T replay=<writer> --model none`): the writer is the evaluated model."""
    given = isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip()
    return f"removed in task version 7; use --model replay/{given or '<writer>'}"


# The names a task version removed, by where they are given: name -> what to say instead,
# from the value given.
REMOVED: dict[str, dict[str, Callable[[Any], str]]] = {
    ParameterError.flag: {"replay": _replay_removed},
    ScorerParameterError.flag: {},
}


def refuse_unknown(
    given: Mapping[str, Any],
    taker: Callable[..., Any],
    owner: str,
    error: type[ParameterError] | type[ScorerParameterError],
) -> None:
    """Refuse the first name in `given` that `taker`'s signature does not name, in one line
    naming the parameter as given (`-T`/`-S`) and `owner`, then its new name, what replaces
    it (`REMOVED`), the nearest known name, or all of them: inspect itself would only warn
    about an unknown `-T` name, and print a traceback for an unknown `-S` one.
    """
    known = [
        p.name
        for p in inspect.signature(taker).parameters.values()
        if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    name = next((n for n in given if n not in known), None)
    if name is None:
        return
    new = RENAMED[error.flag].get(name)
    if new in known:
        raise error(name, f"renamed {new} in task version 4")
    removed = REMOVED[error.flag].get(name)
    if removed is not None:
        raise error(name, removed(given[name]))
    near = difflib.get_close_matches(name, known, n=1)
    if near:
        hint = f"did you mean {near[0]}?"
    elif known:
        hint = f"the parameters are {', '.join(known)}"
    else:
        hint = "it takes none"
    raise error(name, f"not a parameter of {owner}; {hint}")


def refuses_unknown(scorer: str) -> Callable[[F], F]:
    """Make a scorer factory refuse a keyword it does not take with one line
    (`refuse_unknown`) naming `-S`, the scorer and the name meant. Goes between inspect's
    `@scorer` and the factory, which keeps its own signature (`functools.wraps`): inspect
    reads it to record the scorer's parameters and to make the scorer again.
    """
    owner = f"{TASK_PREFIX}{scorer}"  # as `--scorer` names it

    def checked(factory: F) -> F:
        @functools.wraps(factory)
        def refusing(*args: Any, **given: Any) -> Any:
            refuse_unknown(given, factory, owner, ScorerParameterError)
            return factory(*args, **given)

        return cast(F, refusing)

    return checked


def _shown(value: Any) -> str:
    return repr(value) if isinstance(value, str) else str(value)


def names(value: str | Sequence[Any] | None, name: str) -> tuple[str, ...]:
    """A comma list (`a,b`) or a list of names, stripped, empty items dropped."""
    if value is None:
        return ()
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list | tuple) or not all(isinstance(item, str) for item in items):
        raise ParameterError(name, f"expected a comma list of names, got {_shown(value)}")
    return tuple(dict.fromkeys(item.strip() for item in items if item.strip()))


def unquoted(value: Any, convert: Callable[[str], Any]) -> Any:
    """`value`, or `convert` of it where it is text that holds one (`"3"` from a command
    line or a reply); other text stays as given, for the caller to refuse by name."""
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return convert(value.strip())
    return value


def integer(value: Any, name: str) -> int:
    """A whole number (`3`, or the text `"3"`); booleans and fractions are refused."""
    value = unquoted(value, int)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ParameterError(name, f"expected a whole number, got {_shown(value)}")
    return value


def positive_integer(value: Any, name: str) -> int:
    found = integer(value, name)
    if found < 1:
        raise ParameterError(name, f"expected a whole number of at least 1, got {found}")
    return found


def temperature(value: Any, name: str) -> float | None:
    """A sampling temperature from 0 to 2, or None (not set)."""
    if value is None:
        return None
    value = unquoted(value, float)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 2:
        raise ParameterError(name, f"expected a temperature from 0 to 2, got {_shown(value)}")
    return float(value)


def choice(value: Any, name: str, allowed: Sequence[str]) -> str:
    if not isinstance(value, str) or value.strip() not in allowed:
        raise ParameterError(name, f"expected one of {', '.join(allowed)}, got {_shown(value)}")
    return value.strip()


def boolean(value: Any, name: str) -> bool:
    """`true`/`false` (also yes/no, on/off, 1/0)."""
    text = str(value).strip().lower() if isinstance(value, str | int) else None
    if text in _TRUE | _FALSE:
        return text in _TRUE
    raise ParameterError(name, f"expected true or false, got {_shown(value)}")


@dataclass(frozen=True)
class Anchor:
    """What the judges compare a writing with: `human` (the record's reference), `none`,
    or the name of a model whose stored writing serves as the anchor."""

    source: str

    @property
    def model(self) -> str | None:
        return None if self.source in ("human", "none") else self.source


def anchor(value: Any) -> Anchor:
    """The `anchor` parameter: human (or true), none (or false, 0), or a model name."""
    if value is None or value is False or value == 0:
        return Anchor("none")
    if value is True or value == 1:
        return Anchor("human")
    if not isinstance(value, str) or not value.strip():
        raise ParameterError("anchor", f"expected human, none or a model name, got {_shown(value)}")
    text = value.strip()
    return Anchor(_ANCHORS.get(text.lower(), text))
