"""Asking a judge for a JSON reply, checking it, and asking again with the error stated.

A reply that breaks the rules is never turned into a default: after the last try the
exchange carries the error, and the caller leaves the sample unscored with it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
)

from howtobench.judge.inputs import PROMPTS
from howtobench.templates import render

T = TypeVar("T")


class ReplyError(ValueError):
    """Why a judge's reply cannot be used; said back to the judge when it is asked again."""


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in a reply (code fences and surrounding prose are tolerated)."""
    decoder = json.JSONDecoder()
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            return value
        start = text.find("{", start + 1)
    raise ReplyError("the reply holds no JSON object")


def number(value: Any, name: str) -> float:
    """A finite JSON number, or a string holding one ("7"); booleans are not numbers."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            pass
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ReplyError(f"{name} must be a number, got {json.dumps(value, ensure_ascii=False)}")
    return float(value)


def bounded(value: Any, name: str, low: float, high: float, *, whole: bool) -> float:
    """A number on a judge's scale; `whole` also refuses fractions (a score, not a mean)."""
    found = number(value, name)
    if (whole and not found.is_integer()) or not low <= found <= high:
        kind = "a whole number" if whole else "a number"
        raise ReplyError(f"{name} must be {kind} from {low:g} to {high:g}, got {found:g}")
    return found


def exact_keys(found: Iterable[object], expected: Sequence[str], name: str) -> None:
    """Refuse keys that are missing or unknown, naming both so the judge can fix them."""
    keys = list(found)
    missing = [k for k in expected if k not in keys]
    extra = [str(k) for k in keys if k not in expected]
    if missing or extra:
        parts = [
            f"missing {', '.join(missing)}" if missing else "",
            f"unknown {', '.join(extra)}" if extra else "",
        ]
        raise ReplyError(
            f"{name} must hold exactly {', '.join(expected)} ({'; '.join(p for p in parts if p)})"
        )


@dataclass
class Exchange(Generic[T]):
    """One judge question: every raw reply, and the checked value or the last error."""

    model: str
    replies: list[str] = field(default_factory=list)
    value: T | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None

    def record(self) -> dict[str, Any]:
        return {"model": self.model, "replies": self.replies, "error": self.error}


async def ask(
    model: Model,
    messages: Sequence[ChatMessage],
    check: Callable[[dict[str, Any]], T],
    *,
    language: str,
    tries: int,
    config: GenerateConfig,
    cache: bool | CachePolicy,
) -> Exchange[T]:
    """Ask until `check` accepts the reply, at most `tries` times.

    Each new try repeats the conversation with the bad reply and the error, so the
    prompt differs from the cached one and the judge knows what to fix.
    """
    exchange: Exchange[T] = Exchange(model=str(model))
    conversation = list(messages)
    for _ in range(tries):
        output = await model.generate(conversation, config=config, cache=cache)
        reply = output.completion
        exchange.replies.append(reply)
        try:
            exchange.value = check(parse_json_object(reply))
            exchange.error = None
            return exchange
        except ReplyError as error:
            exchange.error = str(error)
        conversation += [
            ChatMessageAssistant(content=reply or "(empty)"),
            ChatMessageUser(
                content=render(PROMPTS, "retry", language, error=exchange.error).strip()
            ),
        ]
    return exchange
