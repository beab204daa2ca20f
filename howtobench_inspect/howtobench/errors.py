"""The user's mistakes: errors that inspect prints as one line, without a traceback.

inspect shows a `PrerequisiteError` raised while a task is built as its message alone
(its convention for errors of setup, not of code). It is not exported publicly in
inspect-ai 0.3.285 (see `howtobench._inspect`). `UserError` is also a `ValueError`, so
Python callers can catch it as one.
"""

from __future__ import annotations

from howtobench._inspect import PrerequisiteError


class UserError(PrerequisiteError, ValueError):
    """Bad input from the user: a parameter, a file, a record. The message says what to do."""

    def __init__(self, message: str) -> None:
        PrerequisiteError.__init__(self, message)
        ValueError.__init__(self, message)

    def __str__(self) -> str:
        return str(self.message)
