"""What a writer's reply holds, and the writing the judges read: the pure core.

`examine` names a cut, filtered, empty or refused reply, a leading reasoning trace and the
paper's prompt artifacts in a `WritingState`, and returns the writing the judges read. The
rules, and why a refusal is judged as written, are in docs/data.md ("The writing the judges
read"). Nothing here imports inspect: the solver is `writer.final_writing`, the run's
counts `writing.summary.writing_state`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Final

from howtobench.writing.artifacts import HEAVY_STRIP, strip
from howtobench.writing.endings import ends_mid_sentence

__all__ = [
    "ARTIFACT_POLICIES",
    "COMPLETE",
    "CUT",
    "CUT_POLICIES",
    "DEFAULT_ARTIFACTS",
    "DEFAULT_CUT",
    "EMPTY",
    "FILTERED",
    "REFUSED",
    "STATES",
    "STORED",
    "WritingState",
    "count_states",
    "ends_mid_sentence",
    "examine",
    "is_refusal",
    "remove_reasoning",
]

# The states of a writing, as each sample records them (`SampleKey.WRITING`).
COMPLETE: Final = "complete"
CUT: Final = "cut"  # by the length limit or the context, or (stored) ending mid-sentence
FILTERED: Final = "filtered"  # the provider's content filter withheld or stopped it
EMPTY: Final = "empty"  # nothing to judge once reasoning and artifacts are removed
REFUSED: Final = "refused"  # the writer declined (`is_refusal`)
STATES: tuple[str, ...] = (COMPLETE, CUT, FILTERED, EMPTY, REFUSED)

# Stop reasons (inspect's `StopReason`) that mean the writer was stopped before its end.
CUT_REASONS: frozenset[str] = frozenset({"max_tokens", "model_length"})
# A stop reason nobody recorded (inspect's `unknown`): a stored writing's, which the
# replay model answers with, so its cut is told by the text.
STORED: Final = "unknown"

# `-T cut=`: a cut writing is judged as written and flagged (default), or left unscored.
CUT_POLICIES: tuple[str, ...] = ("scored", "unscored")
DEFAULT_CUT = "scored"
# `-T artifacts=`: the paper's prompt artifacts are removed (`artifacts.strip`, the
# default) or kept (the writing as published, what the paper's ToW read).
ARTIFACT_POLICIES: tuple[str, ...] = ("strip", "keep")
DEFAULT_ARTIFACTS = "strip"

# The reasoning tags (`<think>` may carry attributes, as inspect's own reading allows).
_THINK_OPEN = re.compile(r"<think(?:\s[^<>]{0,200})?>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think\s{0,3}>", re.IGNORECASE)
_BLANKS = re.compile(r"\s*")
# The first line of a writing, not of a trace: a heading, or a short line without
# punctuation at its end (a title).
_HEADING = re.compile(r"#|《|\*\*|标题")
_TITLE_LINE = 30
_LINE_END = frozenset('。！？.!?，,、：:；;…」』”"）)')

# A refusal: an apology with a "cannot", or a "cannot" with the request, opening a short
# reply (`is_refusal`).
MAX_REFUSAL: Final = 300
_APOLOGY = re.compile(
    r"(?:i['’]?m |i am )?(?:sorry|afraid)|unfortunately"
    r"|(?:很|非常|十分|真的)?(?:抱歉|对不起)|不好意思",
    re.IGNORECASE,
)
_CANNOT = re.compile(
    r"can(?:no|['’])t|can not|unable|won['’]?t|not able|无法|不能|没法|不可以|不便",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"help|assist|comply|request|provide|write|generate|create|fulfil"
    r"|帮|协助|请求|要求|提供|生成|写|创作|完成|满足|回答|内容",
    re.IGNORECASE,
)
_DECLINE = re.compile(
    r"i(?: can(?:no|['’])t| can not| won['’]?t| am unable to|['’]m unable to| am not able to)"
    r"|我(?:无法|不能|没法|不可以)",
    re.IGNORECASE,
)
_DECLINED = 6  # characters after the "cannot" in which the request is named


def remove_reasoning(text: str) -> tuple[str, str, bool]:
    """The writing without the trace that leads it (the module's rule), the trace (with
    its tags and the blanks before the writing), and whether a reasoning tag stays in the
    writing (kept as the writing's own: the text is judged whole)."""
    at = start = _after_blanks(text, 0)
    while opened := _THINK_OPEN.match(text, at):
        closed = _THINK_CLOSE.search(text, opened.end())
        if closed is None:  # a trace the limit cut before it closed
            return "", text, False
        at = _after_blanks(text, closed.end())
    if at == start:
        closed = _THINK_CLOSE.search(text)
        if closed is not None and _closes_trace(text, closed):
            at = closed.end()
    kept = text[at:].strip() if at > start else text
    tagged = bool(_THINK_OPEN.search(kept) or _THINK_CLOSE.search(kept))
    return kept, text[:at] if at > start else "", tagged


def _after_blanks(text: str, at: int) -> int:
    blanks = _BLANKS.match(text, at)
    return blanks.end() if blanks else at


def _closes_trace(text: str, closed: re.Match[str]) -> bool:
    """Whether the reply's first `</think>`, with no `<think>` before it, closes an
    R1-style trace: the rest of its line is blank, the writing follows, and the text
    before it does not open like a writing."""
    if _THINK_OPEN.search(text, 0, closed.start()):
        return False
    line_end = text.find("\n", closed.end())
    after = text[closed.end() : line_end if line_end >= 0 else len(text)]
    if after.strip() or line_end < 0 or not text[line_end:].strip():
        return False
    before = text[: closed.start()].strip()
    first = before.split("\n", 1)[0].strip() if before else ""
    if not first or _HEADING.match(first):
        return False
    return len(first) > _TITLE_LINE or first[-1] in _LINE_END


def is_refusal(text: str) -> bool:
    """Whether a reply declines the request (the module's rule)."""
    reply = text.strip()
    if not reply or len(reply) > MAX_REFUSAL:
        return False
    opening = reply.split("\n", 1)[0]
    if _APOLOGY.match(opening):
        return bool(_CANNOT.search(opening) and _REQUEST.search(opening))
    declined = _DECLINE.match(opening)
    return bool(declined and _REQUEST.search(opening, declined.end(), declined.end() + _DECLINED))


@dataclass(frozen=True)
class WritingState:
    """One writing's state, as its sample records it and its scores name it."""

    state: str  # one of STATES
    stop_reason: str  # the writer's (inspect's `StopReason`), or "stored"
    chars: int  # of the writing the judges read
    reasoning_chars: int = 0  # removed: the trace leading the text, the provider's part
    artifacts: dict[str, int] = field(default_factory=dict)  # found (and removed if strip)
    artifacts_removed: bool = False
    mid_sentence: bool = False  # the writing's last line stops inside a sentence
    # a reasoning tag in the text that does not lead it as a trace: kept, judged whole
    ambiguous_reasoning: bool = False
    stripped_chars: int = 0  # removed as the paper's prompt artifacts
    heavy_strip: bool = False  # more than `HEAVY_STRIP` of the writing was artifacts

    def record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> WritingState:
        names = {each.name for each in fields(cls)}
        return cls(**{name: value for name, value in record.items() if name in names})

    @property
    def note(self) -> str | None:
        """One sentence for a score's explanation when the writing is not simply whole."""
        parts = [self._state_note()] if self.state != COMPLETE else []
        if self.reasoning_chars:
            parts.append(f"{self.reasoning_chars:,} characters of reasoning removed")
        if self.ambiguous_reasoning:
            parts.append(
                "the text holds a <think> or </think> tag that does not lead it as a "
                "reasoning trace: kept, the writing judged whole"
            )
        if self.artifacts and self.artifacts_removed and self.stripped_chars:
            parts.append(
                f"{self.stripped_chars:,} characters of the paper's prompt artifacts "
                "removed (explanations, tags, later answers): the first answer is judged"
            )
        if self.heavy_strip:
            parts.append(f"more than {HEAVY_STRIP:.0%} of the writing was artifacts")
        return "; ".join(parts) + "." if parts else None

    def _state_note(self) -> str:
        if self.state == CUT:
            return (
                "the writing ends mid-sentence and no stop reason was recorded: likely cut"
                if self.stop_reason == STORED
                else f"the writing was cut by the writer's limit ({self.stop_reason}) "
                f"after {self.chars:,} characters"
            )
        if self.state == FILTERED:
            return (
                f"the writer's content filter stopped the writing after {self.chars:,} "
                "characters: the text it let through is judged"
                if self.chars
                else "the writer's content filter withheld the writing: scored as an "
                "empty writing, not judged"
            )
        if self.state == REFUSED:
            return "the writer refused the request: its reply is judged as written"
        if self.artifacts.get("marker_only"):
            return "the writer's fill is only the [fill in the blank] marker: no writing"
        return "the writer gave no writing"


def examine(
    text: str,
    stop_reason: str,
    task: str,
    *,
    artifacts: str = DEFAULT_ARTIFACTS,
    provider_reasoning: str = "",
    provider_refusal: bool = False,
) -> tuple[str, WritingState]:
    """The writing to judge and its state, from a writer's reply to a `task` item, given
    inspect's `stop_reason` (`STORED` for a stored writing), the reasoning the provider
    returned apart from the text, and whether the provider marked the reply a refusal."""
    writing, trace, ambiguous = remove_reasoning(text)
    stripped = strip(writing, task)
    removed = 0
    if stripped.found and artifacts == "strip":
        removed = len(writing.strip()) - len(stripped.writing)
        writing = stripped.writing
    mid_sentence = ends_mid_sentence(writing)
    if stop_reason in CUT_REASONS:
        state = CUT
    elif stop_reason == "content_filter":
        state = FILTERED
    elif not writing.strip():
        state = EMPTY
    elif provider_refusal or is_refusal(writing):
        state = REFUSED
    elif stop_reason == STORED and mid_sentence:
        state = CUT
    else:
        state = COMPLETE
    return writing, WritingState(
        state=state,
        stop_reason=stop_reason,
        chars=len(writing),
        reasoning_chars=_reasoning_once(trace, provider_reasoning),
        artifacts=stripped.found,
        artifacts_removed=bool(stripped.found) and artifacts == "strip",
        mid_sentence=mid_sentence,
        ambiguous_reasoning=ambiguous,
        stripped_chars=removed,
        heavy_strip=removed > HEAVY_STRIP * (removed + len(writing)),
    )


def _reasoning_once(trace: str, provider: str) -> int:
    """The characters of reasoning removed: the trace the text led with and the
    provider's reasoning, counted once when one holds the other (a server that returns
    the reasoning in its field and leaves it in the text too)."""
    given = provider.strip()
    words = _THINK_CLOSE.sub("", _THINK_OPEN.sub("", trace)).strip()
    if given and words and (given in words or words in given):
        return max(len(trace), len(given))
    return len(trace) + len(given)


def count_states(records: Iterable[dict[str, Any] | None]) -> Counter[str]:
    """Writings by state over `SampleKey.WRITING` records, with `writings` (all), the
    writings each flag was set on, and `stored_cut` (cuts told from the text alone)."""
    counts: Counter[str] = Counter()
    for record in records:
        if not record:
            continue
        counts["writings"] += 1
        counts[str(record.get("state", COMPLETE))] += 1
        if record.get("reasoning_chars"):
            counts["reasoning"] += 1
        if record.get("artifacts"):
            counts["artifacts"] += 1
        for flag in ("heavy_strip", "ambiguous_reasoning"):
            counts[flag] += bool(record.get(flag))
        if record.get("state") == CUT and record.get("stop_reason") == STORED:
            counts["stored_cut"] += 1
    return counts
