"""How every scorer of the package stores its numbers: rounded to 6 decimals.

A weighted sum, a panel's mean or a ratio of token counts carries the error of binary
floating point (5.410125000000001 for 5.410125), and inspect's viewer and `inspect log
dump` show a stored float digit by digit, beside an explanation that rounds it to 2
places: the reader sees two numbers that seem to disagree. Rounding where a score is
made removes that noise. 6 decimals lie far below anything a judge resolves (whole
scores, weights of a few decimals) or a study reports, and far above a double's error at
these magnitudes (about 1e-15), so no information is lost; inspect's metrics are computed
from the stored values and move by less than 1e-6.

Only what a score stores as its value, and the metadata's copies of those numbers, go
through here; the judges' answers and the negotiated weights stay as given, since the
weights' fingerprint and the plan files are made from them.
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
