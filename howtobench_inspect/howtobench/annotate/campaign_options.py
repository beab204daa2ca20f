"""What a campaign can ask for, apart from the planning (`campaign`): here, where nothing
is imported, `howtobench annotate new`'s parser shows the choices and defaults without
loading inspect-ai or pandas.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KINDS", "Options", "REFERENCE_MODES"]

KINDS: tuple[str, ...] = ("rate", "pick")
REFERENCE_MODES: tuple[str, ...] = ("show", "hide")


@dataclass(frozen=True)
class Options:
    """What a campaign asks for (`howtobench annotate new`); `count` None: every eligible
    instruction."""

    count: int | None = None
    raters: tuple[str, ...] = ("rater-1", "rater-2")
    per_writing: int = 2
    seed: int = 0
    kind: str = "rate"
    reference: str = "show"
