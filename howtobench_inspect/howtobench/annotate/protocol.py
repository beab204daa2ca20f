"""The rules a rating follows (paper section 5.2 and appendix J; picks: appendix G; in
short in docs/studio.md), checked on the server for every save, whatever the page
allowed: the page is one client of the API.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from string import ascii_uppercase

__all__ = [
    "InvalidInput",
    "MAX_CANDIDATES",
    "NOTE_LIMIT",
    "PASSING",
    "Pick",
    "REFERENCE_SCORE",
    "Rating",
    "check_pick",
    "check_rating",
    "error_types",
    "label",
]

SCORES: tuple[int, ...] = (1, 2, 3, 4, 5)
PASSING = 3  # the lowest score a writing without an error type can get
REFERENCE_SCORE = 4  # what the human reference counts as
# A note or a reason is a remark, not an essay; the limit also bounds what one save stores.
NOTE_LIMIT = 2000
# one letter per candidate; more writings than this on one instruction cannot be compared
MAX_CANDIDATES = len(ascii_uppercase)


@dataclass(frozen=True)
class ErrorType:
    """One error type of the fixed list (appendix J's penalty items grouped, in our names)."""

    id: str
    group: str
    zh: str
    en: str


GROUPS: dict[str, tuple[str, str]] = {
    "consistency": ("一致性", "Consistency"),
    "accuracy": ("准确性", "Accuracy"),
    "fluency": ("流畅性", "Fluency"),
    "instruction": ("要求", "The request"),
    "safety": ("安全", "Safety"),
}
UNSAFE = "unsafe"
ERROR_TYPES: tuple[ErrorType, ...] = (
    ErrorType(
        "format_mismatch",
        "consistency",
        "格式与上下文或文体不符",
        "Form out of step with context or genre",
    ),
    ErrorType(
        "content_mismatch",
        "consistency",
        "人称、逻辑、语气或事实前后矛盾",
        "Inconsistent person, logic, tone or facts",
    ),
    ErrorType("repeats_given", "consistency", "照搬已给出的内容", "Copies the given text"),
    ErrorType("factual_error", "accuracy", "事实或引用有误", "Wrong facts or quotations"),
    ErrorType("needless_repetition", "fluency", "空洞重复", "Empty repetition"),
    ErrorType("mixed_language", "fluency", "不必要的中外文混杂", "Needless mixing of languages"),
    ErrorType(
        "stray_symbols", "fluency", "多余的符号、标记或编号", "Stray symbols, tags or numbering"
    ),
    ErrorType("off_request", "instruction", "没有按要求写", "Not what was asked"),
    ErrorType(UNSAFE, "safety", "内容不安全（记 1 分）", "Unsafe content (scores 1)"),
)
KNOWN_ERRORS = {error.id for error in ERROR_TYPES}


class InvalidInput(ValueError):
    """A request the studio refuses; the message is shown to whoever sent it."""


@dataclass(frozen=True)
class Rating:
    """One rater's verdict on one writing."""

    score: int
    errors: tuple[str, ...]
    note: str


@dataclass(frozen=True)
class Pick:
    """One rater's choice of the best candidate of an instruction (`choice` is the
    candidate's opaque id) and why."""

    choice: str
    reason: str


def label(position: int) -> str:
    """The letter a rater sees for the candidate at `position` (0 is A)."""
    return ascii_uppercase[position]


def error_types(language: str) -> list[dict[str, str]]:
    """The fixed list as the page shows it, in `language` (Chinese or English)."""
    index = 0 if language == "zh" else 1
    return [
        {"id": e.id, "group": GROUPS[e.group][index], "label": (e.zh, e.en)[index]}
        for e in ERROR_TYPES
    ]


def _shown(value: str, limit: int = 40) -> str:
    return value if len(value) <= limit else value[:limit] + "…"


def _fields(body: object, allowed: tuple[str, ...], required: str) -> Mapping[str, object]:
    if not isinstance(body, dict):
        raise InvalidInput("the body must be a JSON object")
    unknown = sorted(set(body) - set(allowed))
    if unknown:
        # at most five, each cut short: the message quotes the sender, not a 64 KB echo
        named = ", ".join(_shown(name) for name in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        raise InvalidInput(f"unknown field(s) {named}{more}; expected {', '.join(allowed)}")
    if required not in body:
        raise InvalidInput(f"'{required}' is required")
    return body


def _text(body: Mapping[str, object], name: str) -> str:
    value = body.get(name, "")
    if not isinstance(value, str):
        raise InvalidInput(f"'{name}' must be a string")
    if len(value) > NOTE_LIMIT:
        raise InvalidInput(f"'{name}' is {len(value)} characters long; the limit is {NOTE_LIMIT}")
    return value


def check_rating(body: object) -> Rating:
    """The rating in a request body, or `InvalidInput` saying what is wrong with it."""
    fields = _fields(body, ("score", "errors", "note"), "score")
    score = fields["score"]
    if isinstance(score, bool) or not isinstance(score, int) or score not in SCORES:
        raise InvalidInput(f"'score' must be a whole number from 1 to 5, not {_shown(repr(score))}")
    errors = fields.get("errors", [])
    if not isinstance(errors, list) or not all(isinstance(e, str) for e in errors):
        raise InvalidInput("'errors' must be a list of error type ids")
    unknown = [e for e in errors if e not in KNOWN_ERRORS]
    if unknown:
        known = ", ".join(e.id for e in ERROR_TYPES)
        named = ", ".join(_shown(e) for e in unknown[:5])
        raise InvalidInput(f"unknown error type(s) {named}; known: {known}")
    if len(set(errors)) < len(errors):
        raise InvalidInput("'errors' names an error type twice")
    if score < PASSING and not errors:
        raise InvalidInput(f"a score below {PASSING} needs at least one error type")
    if score >= PASSING and errors:
        raise InvalidInput(f"error types go with scores below {PASSING} only")
    if UNSAFE in errors and score != 1:
        raise InvalidInput("an unsafe writing scores 1")
    ordered = tuple(e.id for e in ERROR_TYPES if e.id in errors)
    return Rating(score, ordered, _text(fields, "note"))


def check_pick(body: object) -> Pick:
    """The pick in a request body, or `InvalidInput`: a candidate and a reason that is
    not blank (appendix G asks the rater to say why)."""
    fields = _fields(body, ("choice", "reason"), "choice")
    choice = fields["choice"]
    if not isinstance(choice, str):
        raise InvalidInput("'choice' must be a candidate id")
    reason = _text(fields, "reason")
    if not reason.strip():
        raise InvalidInput("'reason' is required: say why this candidate is the best")
    return Pick(choice, reason)
