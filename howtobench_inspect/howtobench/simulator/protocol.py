"""The prompt protocol: what a judge request asks, read from its messages alone.

Judge calls run concurrently, so the simulator (and every scripted judge in the tests)
tells questions apart by the tag each prompt's owner declares (`vocabulary.templates`),
never by call order or wording. A request with no declared tag is the writer's, unless
it asks for a JSON `"score"`: another benchmark's judge (`FOREIGN_JUDGE`, as
inspect_evals' writingbench asks), answered with a score so that such a task can be
measured against the same simulator (`bench/client_bench.py`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from howtobench.baselines.prompts import TAGS as BASELINE_TAGS
from howtobench.baselines.prompts import rubric_ids
from howtobench.construct.prompts import TAGS as BUILD_TAGS
from howtobench.judge.inputs import FENCE_END
from howtobench.tree.prompts import TAGS as TREE_TAGS
from howtobench.tree.spec import LEAVES
from howtobench.vocabulary.templates import tags_in

__all__ = [
    "Asked",
    "FOREIGN_JUDGE",
    "KINDS",
    "asked_dimensions",
    "asked_genre",
    "asked_ids",
    "asked_length",
    "classify",
    "message_text",
]

_WRITING = re.compile(r"<writing>\n(.*)\n</writing>", re.S)
# the texts a question quotes (the writing judged, its anchor): data, never read for tags,
# so that a writing holding a tag line cannot pass for another question
_QUOTED = re.compile(r"<(writing|reference)>\n.*\n</\1>", re.S)
# what a back-construction question asks beyond its sections: the genre and the length
# (`construct/prompts/backconstruct.*.txt`, `length_given.*.txt`)
_GENRE = re.compile(r"^(?:【体裁】|\[Genre\] )(.+)$", re.M)
_LENGTH = re.compile(r"约 (\d+) 字|about (\d+) words")
# what a request may ask besides the writer's question: every tag a prompt owner declares
KINDS = frozenset({*TREE_TAGS.values(), *BASELINE_TAGS.values(), *BUILD_TAGS.values()})
# the kind of an untagged request that asks for a JSON score: another benchmark's judge
FOREIGN_JUDGE = "foreign_judge"
_ASKS_SCORE = re.compile(r'"score"\s*:')


@dataclass(frozen=True)
class Asked:
    """What a chat request asks, as the simulator reads it: its kind (`writer`,
    `negotiator`, a leaf id, `rubric`, `autoplan`, or a build step: `classify`,
    `quality`, `backconstruct`, `screen`), and the writing it judges (a build step's
    text). `temperature` is the sampling temperature the request asked for (None: not
    given, or not known), for scripts that play a deterministic judge: one whose answer
    changes only when it is sampled."""

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


def classify(messages: list[dict[str, Any]] | list[Any], temperature: float | None = None) -> Asked:
    """Read a conversation: role/content dicts of an HTTP request (a system prompt sent
    apart, as Anthropic's is, goes first as a `system` message), or inspect ChatMessages;
    `temperature` is the request's, kept on what it asks.

    Its kind is the first declared tag in its system prompt (a `system` or, as OpenAI's
    newer models take it, `developer` message) and its first user message (where a
    server that refuses a system role gets the system prompt, and where an expert's
    criterion is), outside the texts it quotes. Re-asks come later and carry none."""
    pairs = [
        (m["role"], message_text(m["content"])) if isinstance(m, dict) else (m.role, m.text)
        for m in messages
    ]
    users = [text for role, text in pairs if role == "user"]
    first, last = (users[0], users[-1]) if users else ("", "")
    attempt = 1 + sum(1 for role, _ in pairs if role == "assistant")
    system = [text for role, text in pairs if role in ("system", "developer")]
    asking = _QUOTED.sub("", "\n".join([*system, first]))
    kind = next((tag for tag in tags_in(asking) if tag in KINDS), None) or (
        FOREIGN_JUDGE if _ASKS_SCORE.search(asking) else "writer"
    )
    judged = None if kind in ("writer", "negotiator", FOREIGN_JUDGE) else _WRITING.search(first)
    return Asked(kind, judged.group(1) if judged else None, attempt, first, last, temperature)


def asked_ids(question: Asked) -> list[str]:
    """The leaf ids a negotiator question lists, in the tree's order."""
    return [leaf.id for leaf in LEAVES if f"- {leaf.id}: " in question.text]


def asked_dimensions(question: Asked) -> list[str]:
    """The rubric's dimension ids (a back-construction's section ids): read after the
    writing, where the rubric comes last."""
    return list(rubric_ids(_after_writing(question)))


def asked_genre(question: Asked) -> str:
    """The genre a back-construction question names (`【体裁】散文`), or ""."""
    match = _GENRE.search(_after_writing(question))
    return match.group(1).strip() if match else ""


def asked_length(question: Asked) -> int | None:
    """The length a back-construction question asks the request to state, or None."""
    match = _LENGTH.search(_after_writing(question))
    return int(match.group(1) or match.group(2)) if match else None


def _after_writing(question: Asked) -> str:
    return question.text.rpartition(FENCE_END)[2]
