"""Asking a judge for a JSON reply, checking it, and asking again with the error stated.

A reply that breaks the rules is never turned into a default: after the last try the
exchange carries the error, and the caller leaves the sample unscored with it. Only a
reply that passed its check is kept in the reply store, so a later run asks again
exactly the questions that failed (`howtobench.judge.store`).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
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
from howtobench.judge.defaults import REASK_TEMPERATURE, SAMPLED_TEMPERATURE
from howtobench.judge.failures import CallFailed
from howtobench.judge.inputs import PROMPTS
from howtobench.judge.question_locks import LockWaitExpired, held
from howtobench.judge.settings import judge_config
from howtobench.judge.store import ReplyStore
from howtobench.tasks.parameters import unquoted
from howtobench.vocabulary.metadata import ScoreKey
from howtobench.vocabulary.templates import render

T = TypeVar("T")

# A reasoning model's closed think block: only what follows the last one is its answer.
_THINK_END = re.compile(r"</think(?:ing)?\s*>", re.IGNORECASE)
# ... and one opened after the last close that never closes: the reply ends in a draft.
_THINK_START = re.compile(r"<think(?:ing)?\s*>", re.IGNORECASE)


class ReplyError(ValueError):
    """Why a judge's reply cannot be used; said back to the judge when it is asked again."""


class BrokenJSON(ReplyError):
    """The answer object is there but does not parse (a judge that echoes a quoted word
    with ASCII quotes in its reason ends the string early). It says where, in the words
    of the JSON parser, and keeps the reply from the object's opening brace on, from
    which a form may still read a lone number (`Form.salvage`)."""

    def __init__(self, message: str, fragment: str) -> None:
        super().__init__(message)
        self.fragment = fragment


# Where a JSON object may begin: a brace and a quoted key, so that prose braces ("the
# set {a, b}") are never taken for a broken answer.
_OBJECT_START = re.compile(r'\{\s*"')


@dataclass(frozen=True)
class _Scan:
    """A reply's top-level JSON objects with their spans, and where objects begin that
    do not parse, each with the parser's error."""

    objects: list[tuple[int, int, dict[str, Any]]]
    broken: list[tuple[int, json.JSONDecodeError]]


def _scan(text: str) -> _Scan:
    decoder = json.JSONDecoder()
    scan = _Scan([], [])
    start = text.find("{")
    while start != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            if _OBJECT_START.match(text, start):
                scan.broken.append((start, error))
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            scan.objects.append((start, end, value))
            start = text.find("{", end)
        else:
            start = text.find("{", start + 1)
    return scan


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in a reply, in order (fences and prose are skipped)."""
    return [value for _, _, value in _scan(text).objects]


def _where(text: str, position: int) -> str:
    """`line L column C` of a position in `text`, both counted from 1."""
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return f"line {line} column {column}"


def final_answer(text: str, keys: Sequence[str]) -> dict[str, Any]:
    """The judge's final word: the last JSON object holding every one of `keys`.

    Reasoning models draft before they answer (`draft {"score": 4} ... final
    {"score": 8}`): the last object wins, and anything inside a closed think block is a
    draft, never the answer. An object without the keys (an echo of the materials, a
    nested part) is passed over. An object that names every key but does not parse,
    after the last good one, is the final word too: `BrokenJSON` says where it breaks.
    """
    parts = _THINK_END.split(text)
    answer: str = parts[-1]
    if _THINK_START.search(answer):
        raise ReplyError(
            "the reply ends inside its reasoning (a <think> block never closed), so it holds "
            "no answer; close the reasoning and answer after it"
        )
    offset = len(text) - len(answer)
    scan = _scan(answer)
    answers = [(end, found) for _, end, found in scan.objects if all(k in found for k in keys)]
    after = answers[-1][0] if answers else -1
    for start, error in scan.broken:
        fragment = answer[start:]
        if start > after and all(f'"{key}"' in fragment for key in keys):
            where = _where(text, offset + error.pos)
            raise BrokenJSON(f"the JSON does not parse at {where}: {error.msg}", fragment)
    if answers:
        return answers[-1][1]
    wanted = ", ".join(f'"{k}"' for k in keys)
    if scan.objects:
        raise ReplyError(f"the reply holds no JSON object with {wanted}")
    if len(parts) > 1 and json_objects(text):
        raise ReplyError(f"the JSON is only inside the reasoning; answer with {wanted} after it")
    raise ReplyError("the reply holds no JSON object")


def number(value: Any, name: str) -> float:
    """A finite JSON number, or a string holding one ("7"); booleans are not numbers."""
    value = unquoted(value, float)
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


@dataclass(frozen=True)
class Form(Generic[T]):
    """What a question's answer must look like: the keys that mark the answer object
    (so drafts and echoes are passed over), and the check that turns it into a value.

    `salvage` names the number keys that may still be read from an answer object that
    does not parse, when each occurs in it exactly once as `"key": <number>` (or a
    quoted number), as a member of the object (after its brace or a comma), and the
    object closes: the reading says it was recovered, and the check still applies. Two
    of them are two answers (one may stand inside the judge's reason, quoted from the
    rubric), one inside a string is not the judge's number, and an object cut off before
    it closes may have lost the real one: no number is read, and the question is asked
    again."""

    keys: tuple[str, ...]
    check: Callable[[dict[str, Any]], T]
    salvage: tuple[str, ...] = ()

    def read(self, reply: str) -> T:
        return self.reading(reply)[0]

    def reading(self, reply: str) -> tuple[T, str | None]:
        """The checked value, and the parse error of the broken object it was recovered
        from (None: the reply parsed)."""
        try:
            return self.check(final_answer(reply, self.keys)), None
        except BrokenJSON as broken:
            if not self.salvage:
                raise
            return self.check(_salvaged(broken, self.salvage)), str(broken)


def _salvaged(broken: BrokenJSON, keys: Sequence[str]) -> dict[str, Any]:
    """The lone member `"key": <number>` of each key in a broken object (`Form`), or
    the parse error with why nothing is read."""
    if not broken.fragment.rstrip().rstrip("`").rstrip().endswith("}"):
        raise ReplyError(f"{broken} (the object is cut off before it closes, so none is taken)")
    found = {key: _number_of(key).findall(broken.fragment) for key in keys}
    unclear = [f'{len(values)} "{key}" values' for key, values in found.items() if len(values) != 1]
    if unclear:
        raise ReplyError(f"{broken} (it holds {', '.join(unclear)}, so none is taken)")
    inside = [f'"{key}"' for key, [(member, _, _)] in found.items() if not member]
    if inside:
        raise ReplyError(
            f"{broken} (its {', '.join(inside)} stands inside a string, so none is taken)"
        )
    return {key: float(value) for key, [(_, _, value)] in found.items()}


def _number_of(key: str) -> re.Pattern[str]:
    """`"key": 7` or `"key": "7"` anywhere; the first group is the brace or comma before
    it when it is a member of the object, empty when it stands in running text."""
    return re.compile(
        rf'((?:^|[{{,])\s*)?"{re.escape(key)}"\s*:\s*("?)(-?\d+(?:\.\d+)?)\2(?![\d.eE])'
    )


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

    With a store, the question is held first (`howtobench.judge.question_locks`: another
    task or process asking it meanwhile waits for this answer, and a wait past the bound
    is the exchange's error), then the store is read, once: a checked reply kept from an
    earlier run or by the holder before (same model, settings, question and `scope`)
    answers without a call. So a question costs one reply key (`key`, when the caller
    has computed it already to hold the question itself, as the negotiator does) and one
    read, however it is answered.
    Each new try repeats the conversation with the bad
    reply and the error, so the judge knows what to fix, and is sampled at
    `REASK_TEMPERATURE` at least, so that a deterministic judge can answer differently
    (recorded in `reasked_at` and in the transcript); the reply store keeps the answer
    under the question as first asked, at its own temperature. A call the judge cannot
    answer (a refused request, a body that is not JSON) counts as a try; an unreachable
    judge raises `JudgeUnavailable` from `generate_reply`, which ends the run.
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
    """The judge asked up to `tries` times, each re-ask told the last error."""
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
            ChatMessageAssistant(content=reply or "(empty)"),
            ChatMessageUser(
                content=render(PROMPTS, "retry", language, error=exchange.error).strip()
            ),
        ]
    return exchange


def _reask_config(config: GenerateConfig) -> GenerateConfig:
    """The settings of a re-ask: the first ask's, sampled at `REASK_TEMPERATURE` or warmer."""
    warmer = max(config.temperature or 0.0, REASK_TEMPERATURE)
    return config.merge(GenerateConfig(temperature=warmer))
