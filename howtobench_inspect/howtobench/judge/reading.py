"""Reading a judge's reply: the final JSON answer after any reasoning or draft, numbers
within their bounds, exactly the expected keys, and `Form`, one kind of answer read and
checked. A reply that cannot be read raises `ReplyError` with what is wrong, which the
asking side (`judge/replies.py`) states in its re-ask; nothing here turns a broken reply
into a default.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from howtobench.vocabulary.parameter_values import unquoted

__all__ = [
    "BrokenJSON",
    "Form",
    "ReplyError",
    "bounded",
    "exact_keys",
    "json_objects",
    "number",
]

T = TypeVar("T")

# A reasoning model's closed think block: only what follows the last one is its answer.
_THINK_END = re.compile(r"</think(?:ing)?\s*>", re.IGNORECASE)
# ... and one opened after the last close that never closes: the reply ends in a draft.
_THINK_START = re.compile(r"<think(?:ing)?\s*>", re.IGNORECASE)


class ReplyError(ValueError):
    """Why a judge's reply cannot be used; said back to the judge when it is asked again."""


class BrokenJSON(ReplyError):
    """The answer object is there but does not parse (a judge that echoes a quoted word
    with ASCII quotes in its reason ends the string early). It says where, in the words
    of the JSON parser, and keeps the reply from the object's opening brace on, from
    which a form may still read a lone number (`Form.salvage`)."""

    def __init__(self, message: str, fragment: str) -> None:
        super().__init__(message)
        self.fragment = fragment


# Where a JSON object may begin: a brace and a quoted key, so that prose braces ("the
# set {a, b}") are never taken for a broken answer.
_OBJECT_START = re.compile(r'\{\s*"')


def _scan(
    text: str, start: int = 0
) -> tuple[list[tuple[int, int, dict[str, Any]]], list[tuple[int, json.JSONDecodeError]]]:
    """A reply's top-level JSON objects from `start` on, with their spans, and where
    objects begin that do not parse, each with the parser's error."""
    decoder = json.JSONDecoder()
    objects: list[tuple[int, int, dict[str, Any]]] = []
    broken: list[tuple[int, json.JSONDecodeError]] = []
    start = text.find("{", start)
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            if _OBJECT_START.match(text, start):
                broken.append((start, error))
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            objects.append((start, end, value))
            start = text.find("{", end)
        else:
            start = text.find("{", start + 1)
    return objects, broken


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in a reply, in order (fences and prose are skipped)."""
    return [value for _, _, value in _scan(text)[0]]


def final_answer(text: str, keys: Sequence[str]) -> dict[str, Any]:
    """The judge's final word: the last JSON object holding every one of `keys`.

    Reasoning models draft before they answer (`draft {"score": 4} ... final
    {"score": 8}`): the last object wins, and anything inside a closed think block is a
    draft, never the answer. An object without the keys (an echo of the materials, a
    nested part) is passed over. An object that names every key but does not parse,
    after the last good one, is the final word too: `BrokenJSON` says where it breaks.
    """
    parts = _THINK_END.split(text)
    answer: str = parts[-1]
    if _THINK_START.search(answer):
        raise ReplyError(
            "the reply ends inside its reasoning (a <think> block never closed), so it holds "
            "no answer; close the reasoning and answer after it"
        )
    objects, broken = _scan(text, len(text) - len(answer))
    answers = [(end, found) for _, end, found in objects if all(k in found for k in keys)]
    after = answers[-1][0] if answers else -1
    for start, error in broken:
        fragment = text[start:]
        if start > after and all(f'"{key}"' in fragment for key in keys):
            where = f"line {error.lineno} column {error.colno}"
            raise BrokenJSON(f"the JSON does not parse at {where}: {error.msg}", fragment)
    if answers:
        return answers[-1][1]
    wanted = ", ".join(f'"{k}"' for k in keys)
    if objects:
        raise ReplyError(f"the reply holds no JSON object with {wanted}")
    if len(parts) > 1 and json_objects(text):
        raise ReplyError(f"the JSON is only inside the reasoning; answer with {wanted} after it")
    raise ReplyError("the reply holds no JSON object")


def number(value: Any, name: str) -> float:
    """A finite JSON number, or a string holding one ("7"); booleans are not numbers."""
    value = unquoted(value, float)
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ReplyError(f"{name} must be a number, got {json.dumps(value, ensure_ascii=False)}")
    return float(value)


def bounded(value: Any, name: str, low: float, high: float, *, whole: bool) -> float:
    """A number on a judge's scale; `whole` also refuses fractions (a score, not a mean)."""
    found = number(value, name)
    if (whole and not found.is_integer()) or not low <= found <= high:
        kind = "a whole number" if whole else "a number"
        raise ReplyError(f"{name} must be {kind} from {low:g} to {high:g}, got {found:g}")
    return found


def exact_keys(found: Iterable[object], expected: Sequence[str], name: str) -> None:
    """Refuse keys that are missing or unknown, naming both so the judge can fix them."""
    keys = list(found)
    missing = [k for k in expected if k not in keys]
    extra = [str(k) for k in keys if k not in expected]
    if missing or extra:
        parts = [
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(extra)}" if extra else "",
        ]
        raise ReplyError(
            f"{name} must hold exactly {', '.join(expected)} ({'; '.join(p for p in parts if p)})"
        )


@dataclass(frozen=True)
class Form(Generic[T]):
    """What a question's answer must look like: the keys that mark the answer object
    (so drafts and echoes are passed over), and the check that turns it into a value.

    `salvage` names the number keys that may still be read from an answer object that does
    not parse, when each occurs in it exactly once as a member of the object and the object
    closes: the reading says it was recovered, and the check still applies. Otherwise (two
    of them, one inside a string, an object cut off) no number is read, and the question is
    asked again.
    """

    keys: tuple[str, ...]
    check: Callable[[dict[str, Any]], T]
    salvage: tuple[str, ...] = ()

    def read(self, reply: str) -> T:
        return self.reading(reply)[0]

    def reading(self, reply: str) -> tuple[T, str | None]:
        """The checked value, and the parse error of the broken object it was recovered
        from (None: the reply parsed)."""
        try:
            return self.check(final_answer(reply, self.keys)), None
        except BrokenJSON as broken:
            if not self.salvage:
                raise
            return self.check(_salvaged(broken, self.salvage)), str(broken)


def _salvaged(broken: BrokenJSON, keys: Sequence[str]) -> dict[str, Any]:
    """The lone member `"key": <number>` of each key in a broken object (`Form`), or
    the parse error with why nothing is read."""
    if not broken.fragment.rstrip().rstrip("`").rstrip().endswith("}"):
        raise ReplyError(f"{broken} (the object is cut off before it closes, so none is taken)")
    found = {key: _number_of(key).findall(broken.fragment) for key in keys}
    unclear = [f'{len(values)} "{key}" values' for key, values in found.items() if len(values) != 1]
    if unclear:
        raise ReplyError(f"{broken} (it holds {', '.join(unclear)}, so none is taken)")
    inside = [f'"{key}"' for key, [(member, _, _)] in found.items() if not member]
    if inside:
        raise ReplyError(
            f"{broken} (its {', '.join(inside)} stands inside a string, so none is taken)"
        )
    return {key: float(value) for key, [(_, _, value)] in found.items()}


def _number_of(key: str) -> re.Pattern[str]:
    """`"key": 7` or `"key": "7"` anywhere; the first group is the brace or comma before
    it when it is a member of the object, empty when it stands in running text."""
    return re.compile(
        rf'((?:^|[{{,])\s*)?"{re.escape(key)}"\s*:\s*("?)(-?\d+(?:\.\d+)?)\2(?![\d.eE])'
    )
