"""The prompt protocol: what a judge request asks, read from its messages alone.

Judge calls run concurrently, so the simulator (and every scripted judge in the tests)
tells questions apart by their content, never by call order: the system prompt names
the negotiator, the single-call baselines and the benchmark build's steps, the
criterion text names a leaf expert, and anything else is the writer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from howtobench.baselines.prompts import baseline_prompt, rubric_ids
from howtobench.construct.prompts import build_prompt
from howtobench.judge.inputs import FENCE_END
from howtobench.tree.prompts import tree_prompt
from howtobench.tree.spec import LEAVES

_WRITING = re.compile(r"<writing>\n(.*)\n</writing>", re.S)
# what a back-construction question asks beyond its sections: the genre and the length
# (`construct/prompts/backconstruct.*.txt`, `length_given.*.txt`)
_GENRE = re.compile(r"^(?:【体裁】|\[Genre\] )(.+)$", re.M)
_LENGTH = re.compile(r"约 (\d+) 字|about (\d+) words")
_BASELINES = ("rubric", "autoplan")  # single-call judges, told apart by their system prompts
# the LLM steps of `howtobench build`, told apart by their system prompts too
BUILD_STEPS = ("classify", "quality", "backconstruct", "screen")
_LANGUAGES = ("zh", "en")
_LLM_LEAVES = tuple(leaf for leaf in LEAVES if leaf.judge == "llm")


@dataclass(frozen=True)
class Question:
    """What a chat request asks (`writer`, `negotiator`, a leaf id, `rubric`, `autoplan`,
    or a build step: `classify`, `quality`, `backconstruct`, `screen`), and the writing it
    judges (a build step's text). `temperature` is the sampling temperature the request
    asked for (None: not given, or not known), for scripts that play a deterministic
    judge: one whose answer changes only when it is sampled."""

    kind: str
    writing: str | None
    attempt: int  # 1 for the first ask, 2 and more for re-asks
    text: str  # the first user message: the question itself
    last: str  # the last user message: the question, or the re-ask with its error
    temperature: float | None = None


def message_text(content: str | list[dict[str, Any]]) -> str:
    """A message's text: its string, or its text blocks joined by newlines (as
    inspect's `ChatMessage.text` joins them)."""
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)


def classify(
    messages: list[dict[str, Any]] | list[Any], temperature: float | None = None
) -> Question:
    """Read a conversation: role/content dicts of an HTTP request (a system prompt sent
    apart, as Anthropic's is, goes first as a `system` message), or inspect ChatMessages;
    `temperature` is the request's, kept on the question."""
    question = _classify(messages)
    return question if temperature is None else replace(question, temperature=temperature)


def _classify(messages: list[dict[str, Any]] | list[Any]) -> Question:
    pairs = [
        (m["role"], message_text(m["content"])) if isinstance(m, dict) else (m.role, m.text)
        for m in messages
    ]
    users = [text for role, text in pairs if role == "user"]
    first, last = (users[0], users[-1]) if users else ("", "")
    attempt = 1 + sum(1 for role, _ in pairs if role == "assistant")
    # OpenAI's newer models take the system prompt as a `developer` message; a server
    # whose template refuses a system role gets it at the head of the first user message
    system = pairs[0][1] if pairs and pairs[0][0] in ("system", "developer") else ""
    if not system:
        system = next((known for known in _system_prompts() if first.startswith(known)), "")
    if system in _in_both_languages(tree_prompt, "negotiator_system"):
        return Question("negotiator", None, attempt, first, last)
    for kind in _BASELINES:
        if system in _in_both_languages(baseline_prompt, f"{kind}_system"):
            return Question(kind, _judged_writing(first), attempt, first, last)
    for kind in BUILD_STEPS:
        if system in _in_both_languages(build_prompt, f"{kind}_system"):
            return Question(kind, _judged_writing(first), attempt, first, last)
    for leaf in _LLM_LEAVES:
        if any(c in first for c in _in_both_languages(tree_prompt, f"leaf_{leaf.id}")):
            return Question(leaf.id, _judged_writing(first), attempt, first, last)
    return Question("writer", None, attempt, first, last)


@cache
def _system_prompts() -> tuple[str, ...]:
    """Every system prompt that names its question, longest first."""
    found = [
        *_in_both_languages(tree_prompt, "negotiator_system"),
        *(p for kind in _BASELINES for p in _in_both_languages(baseline_prompt, f"{kind}_system")),
        *(p for kind in BUILD_STEPS for p in _in_both_languages(build_prompt, f"{kind}_system")),
    ]
    return tuple(sorted(found, key=len, reverse=True))


def _in_both_languages(prompt: Callable[[str, str], str], name: str) -> tuple[str, ...]:
    return tuple(prompt(name, language) for language in _LANGUAGES)


def _judged_writing(text: str) -> str | None:
    match = _WRITING.search(text)
    return match.group(1) if match else None


def asked_ids(question: Question) -> list[str]:
    """The leaf ids a negotiator question lists, in the tree's order."""
    return [leaf.id for leaf in LEAVES if f"- {leaf.id}: " in question.text]


def asked_dimensions(question: Question) -> list[str]:
    """The rubric's dimension ids (a back-construction's section ids): read after the
    writing, where the rubric comes last."""
    return list(rubric_ids(_after_writing(question)))


def asked_genre(question: Question) -> str:
    """The genre a back-construction question names (`【体裁】散文`), or ""."""
    match = _GENRE.search(_after_writing(question))
    return match.group(1).strip() if match else ""


def asked_length(question: Question) -> int | None:
    """The length a back-construction question asks the request to state, or None."""
    match = _LENGTH.search(_after_writing(question))
    return int(match.group(1) or match.group(2)) if match else None


def _after_writing(question: Question) -> str:
    return question.text.rpartition(FENCE_END)[2]
