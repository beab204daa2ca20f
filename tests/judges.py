"""A scripted judge for tests: answers by what the prompt asks, never by call order.

Calls run concurrently, so each reply is chosen from the conversation itself: the
negotiator's question, or the expert criterion text (read from the package's own prompt
files), plus the writing between the fences and whether this is a re-ask.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, Model, ModelOutput, ModelUsage, get_model

from howtobench.tree.prompts import tree_prompt
from howtobench.tree.spec import LEAVES

_WRITING = re.compile(r"<writing>\n(.*)\n</writing>", re.S)


@dataclass(frozen=True)
class Question:
    kind: str  # "negotiator" or a leaf id
    writing: str | None
    attempt: int  # 1 for the first ask, 2 and 3 for re-asks
    text: str  # the first user message: the question itself
    last: str  # the last user message: the question, or the re-ask with its error


def classify(messages: list[ChatMessage]) -> Question:
    first_user = next(m.text for m in messages if m.role == "user")
    attempt = 1 + sum(1 for m in messages if m.role == "assistant")
    last = messages[-1].text
    system = messages[0].text
    if system in (tree_prompt("negotiator_system", "zh"), tree_prompt("negotiator_system", "en")):
        return Question("negotiator", None, attempt, first_user, last)
    for leaf in LEAVES:
        for language in ("zh", "en"):
            if leaf.judge == "llm" and tree_prompt(f"leaf_{leaf.id}", language) in first_user:
                match = _WRITING.search(first_user)
                return Question(
                    leaf.id, match.group(1) if match else None, attempt, first_user, last
                )
    raise AssertionError(f"unrecognised judge question: {first_user[:200]}")


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
    asked = [leaf.id for leaf in LEAVES if f"- {leaf.id}: " in question.text]
    return {"weights": {i: weights[i] for i in asked}, "explanation": "scripted"}


def fixed_scores(
    scores: dict[str, int], weights: dict[str, float] = UNIFORM
) -> Callable[[Question], Reply]:
    def answer(question: Question) -> Reply:
        if question.kind == "negotiator":
            return weights_for(question, weights)
        return {"score": scores[question.kind], "reason": f"scripted {question.kind}"}

    return answer
