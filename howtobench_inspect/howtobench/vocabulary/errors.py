"""The user's mistakes: errors that inspect prints as one line, without a traceback.

inspect shows a `PrerequisiteError` raised while a task is built as its message alone
(its convention for errors of setup, not of code; not exported publicly in inspect-ai
0.3.285, see `howtobench._inspect`). `UserError` is also a `ValueError`, so Python
callers can catch it as one.
"""

from __future__ import annotations

from rich.markup import escape  # rich comes with inspect-ai

from howtobench._inspect import PrerequisiteError

__all__ = ["OneLineError", "UserError"]


class OneLineError(PrerequisiteError):
    """An error inspect prints as its message alone, written by us to be read as is.

    inspect prints a `PrerequisiteError`'s `message` through rich with markup on, which
    would take `[fill in the blank]` or the `[bleurt]` of an install command for a style
    tag and drop it; so `message` (read only by inspect's printing) is escaped for rich,
    and `str()` is the text as written, for our commands, Python callers and tests.
    """

    def __init__(self, message: str) -> None:
        PrerequisiteError.__init__(self, escape(message))
        Exception.__init__(self, message)
        self.text = message

    def __str__(self) -> str:
        return self.text


class UserError(OneLineError, ValueError):
    """Bad input from the user: a parameter, a file, a record. The message says what to do."""
