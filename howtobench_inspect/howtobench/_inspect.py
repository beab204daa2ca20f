"""The two inspect-ai internals this package relies on, in one place (inspect-ai 0.3.285).

Neither is exported publicly; if a later inspect moves them, this module is the one to
change.
"""

from __future__ import annotations

from inspect_ai._util.error import PrerequisiteError
from inspect_ai.model._generate_config import active_generate_config

__all__ = ["PrerequisiteError", "writer_temperature"]


def writer_temperature() -> float | None:
    """The eval's `--temperature` (the evaluated model's), or None when it is not set.

    Under `inspect eval` the eval's generation settings are active while the task is
    built; built from Python before `eval()`, they are not, and this returns None.
    """
    return active_generate_config().temperature
