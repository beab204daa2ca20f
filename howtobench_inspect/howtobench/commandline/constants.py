"""Values that a module and the `howtobench` command's parser share, kept where nothing is
imported: their owners load inspect-ai, pandas or matplotlib, which `howtobench --help`
must not pay for, so each value is written here once and its owner imports it.
"""

from __future__ import annotations

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_RESAMPLES",
    "DEFAULT_SCORES",
    "DEFAULT_TASKS",
    "DEFAULT_THRESHOLD",
    "HIGHEST",
    "LOCK_FILE",
    "LOWEST",
]

# `howtobench build`: the quality filter's score range, and the paper's cut (texts
# below 4 are discarded; `howtobench.construct.quality`), and the lock a build holds on its
# folder while it writes there (`howtobench.construct.pipeline`).
LOWEST, HIGHEST = 1, 5
DEFAULT_THRESHOLD = 4
LOCK_FILE = ".build.lock"

# `howtobench lengths`: the scores set against the lengths (`howtobench.studies.lengths`).
DEFAULT_SCORES: tuple[str, ...] = ("tow.overall", "tow.content")

# `howtobench report` and `metaeval`: bootstrap resamples of their intervals.
DEFAULT_RESAMPLES = 1000

# `howtobench judge-check`: writings per task, and the tasks (`howtobench.judge_check`).
DEFAULT_LIMIT = 2
DEFAULT_TASKS: tuple[str, ...] = ("guide", "open", "completion")
