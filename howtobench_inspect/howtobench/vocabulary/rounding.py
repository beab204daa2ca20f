"""How every scorer of the package stores its numbers: rounded to 6 decimals.

A weighted sum carries the error of binary floating point (5.410125000000001), which
inspect's viewer shows digit by digit beside an explanation rounded to 2 places, so the
reader sees two numbers that seem to disagree. 6 decimals lie far below anything a judge
resolves or a study reports and far above a double's error, so nothing is lost. Only a
score's value and the metadata's copies of it go through here; the judges' answers and
the negotiated weights stay as given, since fingerprints and plans are made from them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, overload

from inspect_ai.scorer import Value

__all__ = ["DECIMALS", "rounded"]

DECIMALS = 6


@overload
def rounded(value: float) -> float: ...


@overload
def rounded(value: Mapping[str, float]) -> dict[str, float]: ...


@overload
def rounded(value: Value) -> Value: ...


def rounded(value: Any) -> Any:
    """A number, or each number of a dict or list, rounded to `DECIMALS` places; whole
    numbers, booleans, strings and NaN (an unscored value) come back as they are."""
    if isinstance(value, Mapping):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [rounded(item) for item in value]
    if isinstance(value, float) and math.isfinite(value):
        return round(value, DECIMALS)
    return value
