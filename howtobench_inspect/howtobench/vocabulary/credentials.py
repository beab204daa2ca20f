"""Credentials found in a model's arguments, taken out before the arguments are kept.

lm-eval's arguments are kept as the provenance of imported writings, a judge role's in the
reply store's key, and a data folder or a log is shared: so a credential in any shape, at
any depth, is dropped (provenance) or replaced by its digest (the store's key, where a new
credential may mean a new deployment). The shapes found: docs/lm-eval.md ("The import").
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

__all__ = ["digest", "parse_pairs", "secret_name", "without_credentials"]

# The words of a name: runs of letters and digits, a capital starting a new word.
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")
_ENDINGS = ("key", "token", "secret", "password", "passwd")
_AUTH = ("authori", "authent")  # authorization, authentication; not author
_WHOLE = frozenset({"auth", "cookie"})
_SCHEME_VALUE = re.compile(r"\s*(bearer|basic)\s+\S", re.IGNORECASE)
_HEADER_LINE = re.compile(r"\s*([A-Za-z][\w-]*)\s*:\s*\S")
_URL = re.compile(r"[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def secret_name(name: str) -> bool:
    """Whether a member, header or query parameter of this name holds a credential."""
    words = [word.lower() for word in _WORDS.findall(name)]
    return any(
        word.endswith(_ENDINGS) or word.startswith(_AUTH) or word in _WHOLE for word in words
    )


def digest(text: str) -> str:
    """A credential's stand-in: its SHA-256, which tells two credentials apart and gives
    neither away."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def without_credentials(value: Any, conceal: Callable[[str], str] | None = None) -> Any:
    """`value` with every credential dropped (a dropped value itself is None), or, given
    `conceal`, replaced by `conceal` of its text. A value nested deeper than Python
    recurses raises `ValueError`, since what it holds cannot be looked through."""
    try:
        kept = _kept(value, conceal)
    except RecursionError:
        raise ValueError("nested too deep to look through for credentials") from None
    return None if kept is _DROPPED else kept


_DROPPED = object()  # a credential left out of its dict or list


def _kept(value: Any, conceal: Callable[[str], str] | None) -> Any:
    if isinstance(value, Mapping):
        members = {}
        for name, member in value.items():
            if not secret_name(str(name)):
                members[name] = _kept(member, conceal)
            elif conceal is not None:
                members[name] = conceal(json.dumps(member, sort_keys=True, default=str))
        return {name: member for name, member in members.items() if member is not _DROPPED}
    if isinstance(value, list | tuple):
        return [item for item in (_kept(each, conceal) for each in value) if item is not _DROPPED]
    if not isinstance(value, str):
        return value
    header = _HEADER_LINE.match(value)
    if _SCHEME_VALUE.match(value) or (header is not None and secret_name(header.group(1))):
        return _DROPPED if conceal is None else conceal(value)
    return _url(value.strip(), conceal) if _URL.match(value.strip()) else value


def _url(url: str, conceal: Callable[[str], str] | None) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL after all (an unclosed IPv6 bracket)
        return url
    user, at, host = parts.netloc.rpartition("@")
    query = parse_qsl(parts.query, keep_blank_values=True)
    secret = any(secret_name(name) for name, _ in query)
    if not (at or secret):
        return url
    if conceal is None:
        pairs = [(name, value) for name, value in query if not secret_name(name)]
    else:
        host = f"{conceal(user)}@{host}" if at else host
        pairs = [(name, conceal(v) if secret_name(name) else v) for name, v in query]
    return urlunsplit(
        parts._replace(netloc=host, query=urlencode(pairs) if secret else parts.query)
    )


def parse_pairs(text: str) -> dict[str, str]:
    """`name=value,name=value` (lm-eval's `--model_args` string, which it records as
    given) as its pairs, each value as written (lm-eval splits the same way:
    `utils.simple_parse_args_string`); a piece without `=` is a name with an empty value."""
    pieces = (piece.partition("=") for piece in text.split(",") if piece.strip())
    return {name.strip(): value.strip() for name, _, value in pieces}
