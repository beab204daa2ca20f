"""What a build is asked for (`--tasks`, `--threshold`, `--per-genre`, `--seed`), checked
once: in a module of its own because both the pipeline that uses it and the report that
records it in `manifest.json` need it, and the report must not import the pipeline.
"""

from __future__ import annotations

from dataclasses import dataclass

from howtobench.commandline.constants import DEFAULT_THRESHOLD, HIGHEST, LOWEST
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.words import TASKS

__all__ = ["BuildOptions"]


@dataclass(frozen=True)
class BuildOptions:
    """What to build: the tasks, the quality threshold, a cap per genre and the seed."""

    tasks: tuple[str, ...] = TASKS
    threshold: int = DEFAULT_THRESHOLD
    per_genre: int | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [t for t in self.tasks if t not in TASKS]
        if unknown or not self.tasks:
            raise UserError(
                f"--tasks: expected a comma list of {', '.join(TASKS)}, got {', '.join(self.tasks) or 'nothing'}"
            )
        if not LOWEST <= self.threshold <= HIGHEST:
            raise UserError(f"--threshold: expected {LOWEST}-{HIGHEST}, got {self.threshold}")
        if self.per_genre is not None and self.per_genre < 1:
            raise UserError(f"--per-genre: expected at least 1, got {self.per_genre}")
