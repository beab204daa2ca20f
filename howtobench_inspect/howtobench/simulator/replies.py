"""The simulator's replies: valid ones chosen from what the question asks, and the faults.

Valid replies are deterministic functions of the question: weights vary with the
instruction (not with the writing), scores grow with the writing's length and vary with
its text. The fault catalogue names what a flaky provider does instead of answering.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from typing import Any

from howtobench.simulator.protocol import Question, asked_dimensions, asked_ids
from howtobench.tree.spec import LEAVES, NEGOTIATED_NODES, Leaf

_LEAVES = {leaf.id: leaf for leaf in LEAVES}
_PLAN_NAMES = ("content", "structure", "language", "creativity", "task_fit", "feeling")
WRITER_REPLY = "模拟的作品正文。\n\n第二段：这是一段用于测试的文字。"
MALFORMED_REPLY = "I would rather not answer in JSON."


def _unit(*parts: str) -> float:
    """A stable pseudo-random number in [0, 1) from text."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def valid_weights(question: Question) -> dict[str, Any]:
    """Weights that vary with the instruction but not with the writing, summing to 1 per node."""
    ids = asked_ids(question)
    weights: dict[str, float] = {}
    for node in NEGOTIATED_NODES:
        group = [i for i in ids if _LEAVES[i].node == node]
        raw = [0.5 + _unit(question.text, i) for i in group]
        weights.update({i: round(r / sum(raw), 6) for i, r in zip(group, raw, strict=True)})
        if group:  # make the rounded group sum exactly 1
            weights[group[-1]] = round(1 - sum(weights[i] for i in group[:-1]), 6)
    return {"weights": weights, "explanation": "simulated weights"}


def simulated_score(writing: str, key: str, low: int = 1, high: int = 10) -> int:
    """A score that grows with the writing's length and varies with its text (lowest if empty)."""
    if not writing.strip():
        return low
    share = min(len(writing) / 1500, 1.0) * 0.6 + _unit(writing, key) * 0.4
    return low + round(share * (high - low))


def valid_score(leaf: Leaf, writing: str) -> dict[str, Any]:
    reason = "simulated" if writing.strip() else "empty"
    return {"score": simulated_score(writing, leaf.id, leaf.low, leaf.high), "reason": reason}


def valid_rubric(question: Question) -> dict[str, Any]:
    writing = question.writing or ""
    scores = {i: simulated_score(writing, i) for i in asked_dimensions(question)}
    return {"scores": scores, "overall": simulated_score(writing, "overall"), "reason": "simulated"}


def valid_plan(question: Question) -> dict[str, Any]:
    """3-6 dimensions, their weights and scores from the writing; overall their weighted mean."""
    writing = question.writing or ""
    names = _PLAN_NAMES[: 3 + int(_unit(writing, "count") * 4)]
    dimensions: list[dict[str, Any]] = [
        {
            "name": name,
            "weight": round(0.5 + _unit(writing, "weight", name), 2),
            "score": simulated_score(writing, name),
        }
        for name in names
    ]
    total = sum(d["weight"] for d in dimensions)
    overall = round(sum(d["weight"] * d["score"] for d in dimensions) / total, 1)
    return {"dimensions": dimensions, "overall": overall, "reason": "simulated"}


def valid_reply(question: Question) -> str:
    if question.kind == "writer":
        return WRITER_REPLY
    if question.kind == "negotiator":
        return json.dumps(valid_weights(question))
    if question.kind == "rubric":
        return json.dumps(valid_rubric(question))
    if question.kind == "autoplan":
        return json.dumps(valid_plan(question))
    return json.dumps(valid_score(_LEAVES[question.kind], question.writing or ""))


def out_of_range_reply(question: Question) -> str:
    if question.kind == "negotiator":
        return json.dumps({"weights": dict.fromkeys(asked_ids(question), 0.9)})
    if question.kind == "rubric":
        scores = dict.fromkeys(asked_dimensions(question), 42)
        return json.dumps({"scores": scores, "overall": 42, "reason": "out of range"})
    if question.kind == "autoplan":
        return json.dumps({**valid_plan(question), "overall": 0, "reason": "out of range"})
    return json.dumps({"score": 42, "reason": "out of range"})


def reply_text(question: Question, fault: str | None) -> str:
    """The text of a 200 answer: unusable for the reply faults (`malformed`,
    `out_of_range`), else the valid reply."""
    if fault == "malformed":
        return MALFORMED_REPLY
    if fault == "out_of_range":
        return out_of_range_reply(question)
    return valid_reply(question)


# Faults by name: transient ones (429, 500, hang, drop), unusable replies (malformed,
# out_of_range), a request the provider refuses (400), and a 200 answer whose body is
# empty or not JSON at all.
FAULTS: tuple[str, ...] = (
    "429",
    "500",
    "hang",
    "drop",
    "malformed",
    "out_of_range",
    "400",
    "empty_body",
    "bad_body",
)
# The faults answered with an HTTP error status (in the API's error shape).
STATUS_FAULTS: tuple[str, ...] = ("429", "500", "400")
# The faults that send no reply at all (nothing is billed); a hung request answers late.
UNANSWERED_FAULTS: tuple[str, ...] = ("drop", *STATUS_FAULTS, "empty_body", "bad_body")


@dataclass
class Faults:
    """Chances per request (0-1) of each fault; `seed` makes a run repeatable."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_hang: float = 0.0
    rate_drop: float = 0.0
    rate_malformed: float = 0.0
    rate_out_of_range: float = 0.0
    rate_400: float = 0.0
    rate_empty_body: float = 0.0
    rate_bad_body: float = 0.0
    hang_seconds: float = 30.0
    seed: int = 0

    def draw(self, rng: random.Random) -> str | None:
        roll = rng.random()
        for name in FAULTS:
            rate = getattr(self, f"rate_{name}")
            if roll < rate:
                return name
            roll -= rate
        return None
