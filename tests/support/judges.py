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
from collections.abc import Callable, Mapping
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
from howtobench.tree.spec import LEAVES, tree_for

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
        # a character a token: never fewer than the whole conversation's (a re-ask's too)
        prompt = sum(len(m.text) for m in messages)
        output.usage = ModelUsage(
            input_tokens=prompt, output_tokens=len(text), total_tokens=prompt + len(text)
        )
        return output

    def model(self) -> Model:
        """The judge as `mockllm/<name>`. Its outputs come through a lambda, so that the log
        header records no judge object (with every question it was asked) as a model arg."""
        return get_model(f"mockllm/{self.name}", custom_outputs=lambda *args: self(*args))

    def count(self, kind: str) -> int:
        return sum(1 for q in self.questions if q.kind == kind)


# Scripted verdicts per LLM leaf, and non-uniform weights, that tests compute with by hand.
# The hand values name the leaves of TREE_VERSION 1; `padded` completes them for every
# leaf the spec has, so a leaf added to the tree gets a verdict and a weight of 0 and
# every sum worked by hand in the tests still holds.
_HAND_SCORES = {
    "opening_ending": 7,
    "rhetoric": 6,
    "logic": 8,
    "emotion": 5,
    "plots": 6,
    "paragraphing": 3,
    "impression": 7,
}
_HAND_WEIGHTS = {
    "opening_ending": 0.1,
    "rhetoric": 0.2,
    "logic": 0.5,
    "emotion": 0.2,
    "plots": 0.6,
    "paragraphing": 0.3,
    "formatting": 0.1,
}
_HAND_UNIFORM = {
    "opening_ending": 0.25,
    "rhetoric": 0.25,
    "logic": 0.25,
    "emotion": 0.25,
    "plots": 0.5,
    "paragraphing": 0.25,
    "formatting": 0.25,
}
_LEAF = {leaf.id: leaf for leaf in LEAVES}


def negotiated(task: str = "guide") -> tuple[str, ...]:
    """The ids whose weights the negotiator sets for `task`, in the spec's order."""
    return tuple(i for ids in tree_for(task).negotiated.values() for i in ids)


def padded(given: Mapping[str, float], task: str = "guide") -> dict[str, float]:
    """Weights for every negotiated leaf of `task`'s tree: `given` for the leaves it
    names, 0 for the rest (a weight of 0 keeps each group's sum and every node score
    worked by hand)."""
    ids = negotiated(task)
    if unknown := set(given) - set(ids):
        raise KeyError(f"not negotiated leaves of the {task} tree: {sorted(unknown)}")
    return {i: given.get(i, 0.0) for i in ids}


def scored(given: Mapping[str, float], default: float = 6) -> dict[str, float]:
    """Leaf scores for every leaf of the spec: `given`, `default` for the rest."""
    return {leaf.id: given.get(leaf.id, default) for leaf in LEAVES}


SCORES = {leaf.id: _HAND_SCORES.get(leaf.id, 6) for leaf in LEAVES if leaf.judge == "llm"}
WEIGHTS = padded(_HAND_WEIGHTS)
UNIFORM = padded(_HAND_UNIFORM)


def experts(task: str = "guide", keep: tuple[str, ...] | None = None) -> tuple[str, ...]:
    """The LLM leaves of `task`'s tree (narrowed to `keep`): one expert call each per
    writing and judge."""
    return tuple(leaf.id for leaf in tree_for(task, keep).leaves if leaf.judge == "llm")


def llm_calls(task: str = "guide") -> int:
    """Expert calls for one writing of `task` and one judge."""
    return len(experts(task))


def tow_metrics(task: str = "guide") -> tuple[str, ...]:
    """The names ToW reports a metric by for `task`: the root, each node and each leaf
    (impression is a node and its one leaf, one metric)."""
    tree = tree_for(task)
    return tuple(dict.fromkeys(("overall", *tree.nodes, *(leaf.id for leaf in tree.leaves))))


def root_of(task: str, nodes: Mapping[str, float], keep: tuple[str, ...] | None = None) -> float:
    """The root of `task`'s tree (narrowed to `keep`) over these node scores, weighted by
    the spec's leaf counts (4:3:1 for the paper's tree, §3.3)."""
    weights = tree_for(task, keep).root_weights
    return sum(weights[n] * nodes[n] for n in weights) / sum(weights.values())


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
        leaf = _LEAF[question.kind]
        span = leaf.high - leaf.low + 1
        score = leaf.low + (hashed(salt, question.kind, writing) + len(writing) // 40) % span
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
