"""Asking a judge for a JSON reply, checking it, and asking again with the error stated.

A reply that breaks the rules is never turned into a default: after the last try the
exchange carries the error, and the caller leaves the sample unscored with it. Only a
reply that passed its check is kept in the reply store, so a later run asks again
exactly the questions that failed (`howtobench.judge.store`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from inspect_ai.log import transcript
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageUser,
    GenerateConfig,
    Model,
)

from howtobench.judge.calls import generate_reply
from howtobench.judge.defaults import ECHOED_REPLY, REASK_TEMPERATURE, SAMPLED_TEMPERATURE
from howtobench.judge.failures import CallFailed
from howtobench.judge.inputs import PROMPTS
from howtobench.judge.question_locks import LockWaitExpired, held
from howtobench.judge.reading import Form, ReplyError
from howtobench.judge.settings import judge_config
from howtobench.judge.store import ReplyStore
from howtobench.vocabulary.metadata import ScoreKey
from howtobench.vocabulary.templates import render

__all__ = ["Asking", "Exchange", "Verdict", "ask", "reason_of"]

T = TypeVar("T")


@dataclass(frozen=True)
class Asking:
    """How every question of a scorer is asked: tries, the store, the temperature."""

    tries: int
    store: ReplyStore | None  # None: nothing is kept between runs (`cache=False`)
    temperature: float | None = None  # the scorer's; None: the role's own, else `fallback`
    fallback_temperature: float = 0.0

    @classmethod
    def for_scorer(
        cls, tries: int, cache: bool, temperature: float | None, judge_samples: int
    ) -> Asking:
        """A judge scorer's asking: the reply store unless `cache=False` (read when
        scoring starts, so `INSPECT_CACHE_DIR` set for a run is honoured), and 0 as the
        fallback temperature, or `SAMPLED_TEMPERATURE` when several judge samples need spread."""
        store = ReplyStore.beside_inspect_cache() if cache else None
        return cls(tries, store, temperature, 0.0 if judge_samples <= 1 else SAMPLED_TEMPERATURE)

    def config(self, model: Model) -> GenerateConfig:
        """The settings of every call to `model` (see `judge_config`)."""
        return judge_config(model, self.temperature, self.fallback_temperature)


@dataclass(frozen=True)
class Verdict:
    """A judge's checked answer: its score on the question's own scale, its reason as
    given, and for a single-call judge the sub-scores behind it (recorded with the
    reply) and those sub-scores on one line (for the explanation)."""

    score: float
    reason: str
    details: dict[str, Any] = field(default_factory=dict)
    summary: str = ""


def reason_of(reply: dict[str, Any]) -> str:
    """The judge's reason as given; a missing one is no reason to ask again."""
    reason = reply.get("reason")
    return reason if isinstance(reason, str) else ""


@dataclass
class Exchange(Generic[T]):
    """One judge question: every raw reply, and the checked value or the last error."""

    model: str
    replies: list[str] = field(default_factory=list)
    value: T | None = None
    error: str | None = None
    stored: bool = False  # answered from the reply store, without a call
    temperature: float | None = None  # the sampling temperature it was asked at
    reasked_at: list[float | None] = field(default_factory=list)  # each re-ask's temperature
    # the value was read from an answer that does not parse: its parse error
    recovered: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None

    def record(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "replies": self.replies,
            "error": self.error,
            "from_store": self.stored,
            "temperature": self.temperature,
            "reasked_at": self.reasked_at,
            ScoreKey.RECOVERED: self.recovered,
        }

    def take(self, form: Form[T], reply: str) -> None:
        """Read `reply` with `form` (raising `ReplyError`); a value recovered from a
        broken answer is said in the transcript, as it is in the record."""
        self.value, self.recovered = form.reading(reply)
        if self.recovered:
            transcript().info(
                {ScoreKey.RECOVERED: self.recovered, "model": self.model, "reply": reply},
                source="howtobench",
            )


async def ask(
    model: Model,
    messages: Sequence[ChatMessage],
    form: Form[T],
    *,
    language: str,
    asking: Asking,
    scope: Mapping[str, str],
    key: str | None = None,
) -> Exchange[T]:
    """Ask until the reply passes `form`, at most `asking.tries` times.

    With a store, the question is held first (`judge.question_locks`), then the store is
    read once: a kept reply answers without a call (`key`, when the caller computed it to
    hold the question itself). Each re-ask is told the error (`_asked`); the store keeps
    the answer under the question as first asked. A call the judge cannot answer counts as
    a try; an unreachable judge raises `JudgeUnavailable`, which ends the run.
    """
    config = asking.config(model)
    exchange: Exchange[T] = Exchange(model=str(model), temperature=config.temperature)
    store = asking.store
    if store is None:
        return await _asked(model, messages, form, language, asking.tries, config, exchange)
    key = key or store.key(model, messages, config, scope)
    try:
        async with held(store, key):
            if (kept := store.get(key)) is not None:
                try:
                    exchange.take(form, kept)
                except ReplyError:
                    pass  # kept under older rules: ask again
                else:
                    exchange.replies.append(kept)
                    exchange.stored = True
                    transcript().info(
                        {"answered_from_store": key, "model": str(model), "reply": kept},
                        source="howtobench",
                    )
                    return exchange
            await _asked(model, messages, form, language, asking.tries, config, exchange)
            if exchange.ok:
                store.put(key, exchange.replies[-1])
            return exchange
    except LockWaitExpired as expired:
        exchange.error = str(expired)
        return exchange


async def _asked(
    model: Model,
    messages: Sequence[ChatMessage],
    form: Form[T],
    language: str,
    tries: int,
    config: GenerateConfig,
    exchange: Exchange[T],
) -> Exchange[T]:
    """The judge asked up to `tries` times, each re-ask told the last error and sampled
    at `REASK_TEMPERATURE` at least, so that a deterministic judge can answer differently."""
    conversation = list(messages)
    asked = config
    for attempt in range(tries):
        if attempt:
            asked = _reask_config(config)
            exchange.reasked_at.append(asked.temperature)
            transcript().info(
                {"reask": attempt, "temperature": asked.temperature, "after": exchange.error},
                source="howtobench",
            )
        try:
            reply = await generate_reply(model, conversation, asked)
        except CallFailed as failure:
            exchange.error = str(failure)
            if failure.final:
                return exchange
            continue
        exchange.replies.append(reply)
        try:
            exchange.take(form, reply)
        except ReplyError as error:
            exchange.error = str(error)
        else:
            exchange.error = None
            return exchange
        conversation += [
            ChatMessageAssistant(content=_echoed(reply, language)),
            ChatMessageUser(
                content=render(PROMPTS, "retry", language, error=exchange.error).strip()
            ),
        ]
    return exchange


def _echoed(reply: str, language: str) -> str:
    """An unusable reply as its re-ask sends it back: whole, or its last `ECHOED_REPLY`
    characters (where the answer is) after a line saying how many were left out, so
    that a long trace or a repetition is not sent to the judge again."""
    if len(reply) <= ECHOED_REPLY:
        return reply or "(empty)"
    left_out = render(PROMPTS, "left_out", language, count=f"{len(reply) - ECHOED_REPLY:,}")
    return f"{left_out.strip()}\n{reply[-ECHOED_REPLY:]}"


def _reask_config(config: GenerateConfig) -> GenerateConfig:
    """The settings of a re-ask: the first ask's, sampled at `REASK_TEMPERATURE` or warmer."""
    warmer = max(config.temperature or 0.0, REASK_TEMPERATURE)
    return config.merge(GenerateConfig(temperature=warmer))
