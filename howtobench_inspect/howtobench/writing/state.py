"""What a writer's reply holds, and the writing the judges read: the pure core.

A reply is not always the writer's whole, final writing. It may be cut by the length
limit (`max_tokens`) or the context (`model_length`), withheld by a content filter, empty,
or led by a reasoning trace; a stored writing of the paper's may carry the explanation
block and generation tags its completion prompt allowed. `examine` names each of these
in a `WritingState` and returns the writing the judges read: the trace is always
removed (reasoning is never judged), the completion artifacts when `artifacts="strip"`.

A stored writing has no stop reason, so for it a cut is told by the text: it ends
mid-sentence (`ends_mid_sentence`, a heuristic documented in docs/data.md, where its
counts over the published writings are given).

Nothing here imports inspect: the solver that applies it is `writer.final_writing`, the
run's summary `writing_summary`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from howtobench.writing.endings import ends_mid_sentence

__all__ = [
    "ARTIFACT_POLICIES",
    "COMPLETE",
    "CUT",
    "CUT_POLICIES",
    "CUT_REASONS",
    "DEFAULT_ARTIFACTS",
    "DEFAULT_CUT",
    "EMPTY",
    "FILTERED",
    "STATES",
    "STORED",
    "WritingState",
    "completion_artifacts",
    "count_states",
    "ends_mid_sentence",
    "examine",
    "remove_reasoning",
    "strip_artifacts",
]

# The states of a writing, as each sample records them (`SampleKey.WRITING`).
COMPLETE: Final = "complete"
CUT: Final = "cut"  # by the length limit or the context, or (stored) ending mid-sentence
FILTERED: Final = "filtered"  # the provider's content filter withheld it
EMPTY: Final = "empty"  # nothing to judge once reasoning and artifacts are removed
STATES: tuple[str, ...] = (COMPLETE, CUT, FILTERED, EMPTY)

# Stop reasons (inspect's `StopReason`) that mean the writer was stopped before its end.
CUT_REASONS: frozenset[str] = frozenset({"max_tokens", "model_length"})
# A stop reason nobody recorded (inspect's `unknown`): a stored writing's, which the
# replay model answers with, so its cut is told by the text.
STORED: Final = "unknown"

# `-T cut=`: a cut writing is judged as written and flagged (default), or left unscored.
CUT_POLICIES: tuple[str, ...] = ("scored", "unscored")
DEFAULT_CUT = "scored"
# `-T artifacts=`: the completion artifacts are removed (the fill alone, appendix J's
# raters' reading; default) or kept (the writing as published, what the paper's ToW read).
ARTIFACT_POLICIES: tuple[str, ...] = ("strip", "keep")
DEFAULT_ARTIFACTS = "strip"

# A reasoning trace: a whole <think>…</think> block, or one closed by </think> only (an
# R1-style chat template opens it in the prompt, so the reply holds only its end).
_THINK_BLOCK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</think>", re.IGNORECASE)
_THINK_OPEN = re.compile(r"<think>", re.IGNORECASE)

# The paper's completion prompt had writers tag their fill and allowed an explanation
# after it; the published writings spell the tags with slips (解启, 解决, a trailing 谢).
_EXPLANATION = re.compile(r"<\s*解[释启决]开始\s*>.*?(?:<\s*解[释启决]结束\s*>|\Z)", re.DOTALL)
_FILL_TAG = re.compile(r"<\s*(?:我的)?(?:生成|补全|写作)(?:开始|结束)[^<>\n]{0,6}>")
_FILL_SPAN = re.compile(
    r"<\s*(?:我的)?(?:生成|补全|写作)开始[^<>\n]{0,6}>(.*?)<\s*(?:我的)?(?:生成|补全|写作)结束",
    re.DOTALL,
)


def remove_reasoning(text: str) -> tuple[str, int]:
    """The text without its reasoning trace, and the characters removed. Whole blocks go
    wherever they are; a reply that only closes a trace loses everything up to its last
    `</think>`; an unclosed `<think>` (a trace the length limit cut) takes the rest of the
    reply with it."""
    kept = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(kept))
    if closes:
        kept = kept[closes[-1].end() :]
    opened = _THINK_OPEN.search(kept)
    if opened:
        kept = kept[: opened.start()]
    if kept == text:
        return text, 0
    kept = kept.strip()
    return kept, len(text) - len(kept)


def completion_artifacts(text: str) -> dict[str, int]:
    """The artifacts of the paper's completion prompt in a writing: explanation blocks
    and generation tags, counted (the characters of the explanations too)."""
    found: dict[str, int] = {}
    explanations = _EXPLANATION.findall(text)
    if explanations:
        found["explanation_blocks"] = len(explanations)
        found["explanation_chars"] = sum(len(block) for block in explanations)
    tags = _FILL_TAG.findall(text)
    if tags:
        found["generation_tags"] = len(tags)
    return found


def strip_artifacts(text: str) -> str:
    """The fill alone: the text inside the generation tags where they enclose one, else
    the text without its explanation blocks and stray tags."""
    enclosed = _FILL_SPAN.search(text)
    kept = enclosed.group(1) if enclosed else text
    return _FILL_TAG.sub("", _EXPLANATION.sub("", kept)).strip()


@dataclass(frozen=True)
class WritingState:
    """One writing's state, as its sample records it and its scores name it."""

    state: str  # one of STATES
    stop_reason: str  # the writer's (inspect's `StopReason`), or "stored"
    chars: int  # of the writing the judges read
    reasoning_chars: int = 0  # removed: a trace in the text, or the provider's field
    artifacts: dict[str, int] = field(default_factory=dict)  # found (and removed if strip)
    artifacts_removed: bool = False
    mid_sentence: bool = False  # the writing's last line stops inside a sentence

    def record(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> WritingState:
        return cls(
            state=str(record["state"]),
            stop_reason=str(record["stop_reason"]),
            chars=int(record["chars"]),
            reasoning_chars=int(record.get("reasoning_chars", 0)),
            artifacts=dict(record.get("artifacts", {})),
            artifacts_removed=bool(record.get("artifacts_removed", False)),
            mid_sentence=bool(record.get("mid_sentence", False)),
        )

    @property
    def note(self) -> str | None:
        """One sentence for a score's explanation when the writing is not simply whole."""
        parts = []
        if self.state == CUT:
            parts.append(
                "the writing ends mid-sentence and no stop reason was recorded: likely cut"
                if self.stop_reason == STORED
                else f"the writing was cut by the writer's limit ({self.stop_reason}) "
                f"after {self.chars:,} characters"
            )
        elif self.state == FILTERED:
            parts.append("the writer's content filter withheld the writing")
        elif self.state == EMPTY:
            parts.append("the writer gave no writing")
        if self.reasoning_chars:
            parts.append(f"{self.reasoning_chars:,} characters of reasoning removed")
        if self.artifacts and self.artifacts_removed:
            parts.append("explanation and generation tags removed: the fill alone is judged")
        return "; ".join(parts) + "." if parts else None


def examine(
    text: str,
    stop_reason: str,
    provider_reasoning: int = 0,
    artifacts: str = DEFAULT_ARTIFACTS,
) -> tuple[str, WritingState]:
    """The writing to judge and its state, from a writer's reply.

    `stop_reason` is inspect's (`stop`, `max_tokens`, `model_length`, `content_filter`,
    ...; `unknown`, `STORED`, for a stored writing); `provider_reasoning` is the characters of
    reasoning the provider returned apart from the text (never in `text`)."""
    writing, reasoning = remove_reasoning(text)
    found = completion_artifacts(writing)
    if found and artifacts == "strip":
        writing = strip_artifacts(writing)
    mid_sentence = ends_mid_sentence(writing)
    if stop_reason in CUT_REASONS or (stop_reason == STORED and mid_sentence):
        state = CUT
    elif stop_reason == "content_filter":
        state = FILTERED
    elif not writing.strip():
        state = EMPTY
    else:
        state = COMPLETE
    return writing, WritingState(
        state=state,
        stop_reason=stop_reason,
        chars=len(writing),
        reasoning_chars=reasoning + provider_reasoning,
        artifacts=found,
        artifacts_removed=bool(found) and artifacts == "strip",
        mid_sentence=mid_sentence,
    )


def count_states(records: Iterable[dict[str, Any] | None]) -> Counter[str]:
    """Writings by state, and `writings`, `reasoning` (writings whose reasoning was
    removed), `artifacts` (writings with explanation blocks or generation tags) and
    `stored_cut` (cuts told from the text alone), over `SampleKey.WRITING` records."""
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
        if record.get("state") == CUT and record.get("stop_reason") == STORED:
            counts["stored_cut"] += 1
    return counts
