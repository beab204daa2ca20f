"""A scripted judge for tests: answers by what the prompt asks, never by call order.

Calls run concurrently, so each reply is chosen from the conversation itself, read by
the simulator's `classify`: the negotiator's question or the expert criterion, the
writing between the fences, and whether this is a re-ask.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, Model, ModelOutput, ModelUsage, get_model

from howtobench.simulator import Question, asked_dimensions, asked_ids, classify

Reply = str | dict[str, Any]


@dataclass
class ScriptedJudge:
    """`answer(question)` gives the reply (a dict is sent as JSON); every question is logged."""

    answer: Callable[[Question], Reply]
    name: str = "judge"
    questions: list[Question] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, messages: list[ChatMessage], *_: object) -> ModelOutput:
        question = classify(messages)
        with self._lock:
            self.questions.append(question)
        reply = self.answer(question)
        text = reply if isinstance(reply, str) else json.dumps(reply, ensure_ascii=False)
        output = ModelOutput.from_content(f"mockllm/{self.name}", text)
        output.usage = ModelUsage(
            input_tokens=len(messages[-1].text),
            output_tokens=len(text),
            total_tokens=len(messages[-1].text) + len(text),
        )
        return output

    def model(self) -> Model:
        return get_model(f"mockllm/{self.name}", custom_outputs=self)

    def count(self, kind: str) -> int:
        return sum(1 for q in self.questions if q.kind == kind)


# Scripted verdicts per LLM leaf, and non-uniform weights, that tests compute with by hand.
SCORES = {
    "opening_ending": 7,
    "rhetoric": 6,
    "logic": 8,
    "emotion": 5,
    "plots": 6,
    "paragraphing": 3,
    "impression": 7,
}
WEIGHTS = {
    "opening_ending": 0.1,
    "rhetoric": 0.2,
    "logic": 0.5,
    "emotion": 0.2,
    "plots": 0.6,
    "paragraphing": 0.3,
    "formatting": 0.1,
}

UNIFORM = {
    "opening_ending": 0.25,
    "rhetoric": 0.25,
    "logic": 0.25,
    "emotion": 0.25,
    "plots": 0.5,
    "paragraphing": 0.25,
    "formatting": 0.25,
}


def weights_for(question: Question, weights: dict[str, float] = UNIFORM) -> dict[str, Any]:
    """Weights for exactly the ids the negotiator was asked about."""
    return {"weights": {i: weights[i] for i in asked_ids(question)}, "explanation": "scripted"}


def fixed_scores(
    scores: dict[str, int], weights: dict[str, float] = UNIFORM
) -> Callable[[Question], Reply]:
    def answer(question: Question) -> Reply:
        if question.kind == "negotiator":
            return weights_for(question, weights)
        return {"score": scores[question.kind], "reason": f"scripted {question.kind}"}

    return answer


def rubric_reply(question: Question, overall: int, scores: dict[str, int] | None = None) -> dict:
    """A rubric reply for exactly the dimension ids asked (5 where `scores` has none)."""
    given = scores or {}
    return {
        "scores": {i: given.get(i, 5) for i in asked_dimensions(question)},
        "overall": overall,
        "reason": "scripted rubric",
    }
