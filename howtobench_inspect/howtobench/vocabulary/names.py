"""Names from the logs (writers, judges, genres) shown so that no two can look alike.

A writer's name is whatever a run called it: a zero-width space or a direction override
(U+202E shows `abc` as `cba`) makes two names look the same, and a 3,000-character name
widens every table it is in. So every table shows a name through `shown_name`: each
invisible, direction-changing or blank-looking character is written as its escape
(`\\u200b`; a backslash as `\\\\`, so an escape stays readable as one), and a name wider
than `NAME_LIMIT` columns is cut with an ellipsis and a short digest of the whole name, so
two long names that share their first characters still differ. The CSV and JSON files
keep every name exactly as the logs have it.
"""

from __future__ import annotations

import hashlib
import unicodedata
from html import escape
from itertools import accumulate

__all__ = ["ELLIPSIS", "NAME_LIMIT", "html_name", "shown_name", "width"]

# The widest name a table shows whole, in terminal columns as shown.
NAME_LIMIT = 60
ELLIPSIS = "…"
# Letters and symbols that draw nothing: Hangul fillers, half-width Hangul filler,
# Braille pattern blank, Mongolian vowel separator (Cf in old Unicode versions).
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")
_ESCAPED_CATEGORIES = frozenset({"Cf", "Cc", "Zl", "Zp", "Zs"})


def _hidden(char: str) -> bool:
    """A character a reader cannot see, or one that moves the text around it."""
    if char == " ":
        return False
    code = ord(char)
    return (
        unicodedata.category(char) in _ESCAPED_CATEGORIES
        or char in _BLANK
        or 0xFE00 <= code <= 0xFE0F  # variation selectors
        or 0xE0100 <= code <= 0xE01EF  # variation selectors supplement
    )


def _visible(char: str) -> str:
    if char == "\\":
        return "\\\\"
    if not _hidden(char):
        return char
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def width(text: str) -> int:
    """Terminal columns of `text`: two for a wide (East Asian) character, else one."""
    return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in text)


def shown_name(name: object, limit: int | None = NAME_LIMIT) -> str:
    """`name` as a table shows it: hidden characters escaped, and cut at `limit`
    columns with `…#` and six hex digits of the name's SHA-256 (None: never cut)."""
    text = "".join(_visible(char) for char in str(name))
    if limit is None or width(text) <= limit:
        return text
    digest = hashlib.sha256(str(name).encode("utf-8", "surrogatepass")).hexdigest()[:6]
    tail = f"{ELLIPSIS}#{digest}"
    room = limit - width(tail)
    kept = sum(1 for used in accumulate(map(width, text)) if used <= room)
    return text[:kept] + tail


def html_name(name: object) -> str:
    """`shown_name` as HTML; a name that had to be cut or escaped carries its whole
    (escaped) form in `title=`, for the reader who hovers it."""
    whole = shown_name(name, None)
    short = shown_name(name)
    if short == str(name):
        return escape(short)
    return f'<span class=name title="{escape(whole)}">{escape(short)}</span>'
