"""Scripted judges for tests: in process (`ScriptedJudge`) and over HTTP (the simulator).

Both answer by what the prompt asks, never by call order: calls run concurrently, so each
reply is chosen from the conversation itself, read by the simulator's `classify` (the
tag its prompt's owner declares, the writing between the fences, and whether this is a
re-ask).
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from inspect_ai.model import (
    BatchConfig,
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)

from howtobench.simulator import (
    Asked,
    JudgeSimulator,
    asked_dimensions,
    asked_ids,
    classify,
    valid_weights,
)

Reply = str | dict[str, Any]


@dataclass
class ScriptedJudge:
    """`answer(question)` gives the reply (a dict is sent as JSON); every question is logged."""

    answer: Callable[[Asked], Reply]
    name: str = "judge"
    questions: list[Asked] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, messages: list[ChatMessage], *_: object) -> ModelOutput:
        question = classify(messages)
        with self.lock:
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
        """The judge as `mockllm/<name>`. Its outputs come through a lambda, so that the log
        header records no judge object (with every question it was asked) as a model arg."""
        return get_model(f"mockllm/{self.name}", custom_outputs=lambda *args: self(*args))

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


def weights_for(question: Asked, weights: dict[str, float] = UNIFORM) -> dict[str, Any]:
    """Weights for exactly the ids the negotiator was asked about."""
    return {"weights": {i: weights[i] for i in asked_ids(question)}, "explanation": "scripted"}


def fixed_scores(
    scores: dict[str, int], weights: dict[str, float] = UNIFORM
) -> Callable[[Asked], Reply]:
    def answer(question: Asked) -> Reply:
        if question.kind == "negotiator":
            return weights_for(question, weights)
        return {"score": scores[question.kind], "reason": f"scripted {question.kind}"}

    return answer


def rubric_reply(
    question: Asked, overall: int, scores: dict[str, int] | None = None
) -> dict[str, Any]:
    """A rubric reply for exactly the dimension ids asked (5 where `scores` has none)."""
    given = scores or {}
    return {
        "scores": {i: given.get(i, 5) for i in asked_dimensions(question)},
        "overall": overall,
        "reason": "scripted rubric",
    }


def hashed(*parts: str) -> int:
    return zlib.crc32("\x1f".join(parts).encode("utf-8"))


def hashed_judge(salt: str, broken: str | None = None) -> Callable[[Asked], Reply]:
    """Scores from a hash of (salt, leaf, writing); `broken` writing gets no usable reply."""

    def answer(question: Asked) -> Reply:
        if question.kind == "negotiator":
            return valid_weights(question)
        writing = question.writing or ""
        if question.kind == "emotion" and broken is not None and writing.strip() == broken.strip():
            return "no score here"
        high = 3 if question.kind == "paragraphing" else 10
        score = 1 + (hashed(salt, question.kind, writing) + len(writing) // 40) % high
        return {"score": score, "reason": "hashed"}

    return answer


class Serve(Protocol):
    """The `serve` fixture: start a simulator with these options, point `sim` at it."""

    def __call__(self, **options: Any) -> JudgeSimulator: ...


def simulator_model(simulator: JudgeSimulator, **config: Any) -> Model:
    """The simulator as an `openai-api` judge model, with this generate config."""
    return get_model(
        "openai-api/sim/judge",
        base_url=simulator.base_url,
        api_key="none",
        config=GenerateConfig(**config),
    )


def batch_judge(
    name: str, *, size: int = 100, max_size: int | None = None, **options: Any
) -> Model:
    """A judge that sends its calls through its provider's batch API, polled fast enough
    for a test (batches sent after 0.5 s, checked every 0.2 s), `size` requests or more
    a batch (at most `max_size`); `options` are the model's arguments (e.g.
    `responses_api=False`). Not memoized: each test gets its own batcher and reads its
    provider's base URL from the environment anew."""
    batch = BatchConfig(size=size, max_size=max_size, send_delay=0.5, tick=0.2)
    return get_model(name, config=GenerateConfig(batch=batch), memoize=False, **options)
