"""The negotiator: one grader call per instruction that sets the content and format weights.

It reads task type, genre, instruction and grounding, never the writing or the
reference, so its weights are a property of the instruction. They are computed once per
instruction and judge model in a process (concurrent epochs and writings wait for the
same call) and, through inspect's generate cache (not per epoch), once across runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
from anyio.lowlevel import current_token
from inspect_ai.model import (
    CachePolicy,
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    Model,
)

from howtobench.judge.inputs import JudgeInput
from howtobench.judge.replies import Exchange, ReplyError, ask, exact_keys, number
from howtobench.judge.sampling import cache_policy
from howtobench.tree.prompts import leaf_summaries, tree_prompt
from howtobench.tree.spec import Tree

SUM_TOLERANCE = 0.01


@dataclass(frozen=True)
class Weights:
    """Edge weights by leaf id, the negotiator's explanation, and groups it renormalised."""

    values: dict[str, float]
    explanation: str
    renormalised: tuple[str, ...] = ()


def negotiator_messages(tree: Tree, judge_input: JudgeInput) -> list[ChatMessage]:
    language = judge_input.language
    summaries = leaf_summaries(language)
    groups = "\n".join(
        tree_prompt(
            "group", language, node=node, leaves="\n".join(f"- {i}: {summaries[i]}" for i in ids)
        )
        for node, ids in tree.negotiated.items()
    )
    ids = ", ".join(i for ids in tree.negotiated.values() for i in ids)
    return [
        ChatMessageSystem(content=tree_prompt("negotiator_system", language)),
        ChatMessageUser(
            content=tree_prompt(
                "negotiator", language, task=judge_input.task_block(), groups=groups, ids=ids
            )
        ),
    ]


def weight_checker(tree: Tree) -> Callable[[dict[str, Any]], Weights]:
    """The rules: exactly the tree's negotiated ids, numbers in (-1, 1), each group summing
    to 1; a group off by at most 0.01 is renormalised."""
    expected = [i for ids in tree.negotiated.values() for i in ids]

    def check(reply: dict[str, Any]) -> Weights:
        weights = reply.get("weights")
        if not isinstance(weights, dict):
            raise ReplyError('"weights" must be an object of criterion id -> weight')
        exact_keys(weights, expected, "the weights")
        values = {i: number(weights[i], f'the weight of "{i}"') for i in expected}
        renormalised = []
        for node, ids in tree.negotiated.items():
            total = sum(values[i] for i in ids)
            if abs(total - 1) > SUM_TOLERANCE + 1e-9:
                raise ReplyError(f"the {node} weights sum to {total:.4g}, not 1")
            if abs(total - 1) > 1e-9:
                values.update({i: values[i] / total for i in ids})
                renormalised.append(node)
        for i, value in values.items():
            if not -1 < value < 1:
                raise ReplyError(f'the weight of "{i}" is {value:.4g}, outside (-1, 1)')
        explanation = reply.get("explanation")
        return Weights(
            values, explanation if isinstance(explanation, str) else "", tuple(renormalised)
        )

    return check


_settled: dict[tuple[str, str], Exchange[Weights]] = {}
_locks: dict[tuple[object, str, str], anyio.Lock] = {}


async def negotiate(
    model: Model,
    tree: Tree,
    judge_input: JudgeInput,
    *,
    tries: int,
    config: GenerateConfig,
    cache: bool,
    reuse: bool = True,
) -> tuple[Exchange[Weights], bool]:
    """The instruction's weights and whether they were reused rather than asked for here.

    With `reuse=False` every writing, epoch and judge sample negotiates afresh (cached per
    epoch like an expert question): that is how the consistency study measures how much
    the negotiator's weights fluctuate.
    """
    messages = negotiator_messages(tree, judge_input)

    async def ask_weights(policy: CachePolicy | bool) -> Exchange[Weights]:
        return await ask(
            model,
            messages,
            weight_checker(tree),
            language=judge_input.language,
            tries=tries,
            config=config,
            cache=policy,
        )

    if not reuse:
        return await ask_weights(cache_policy(cache)), False
    key = (str(model), "\n".join(m.text for m in messages))
    async with _locks.setdefault((current_token(), *key), anyio.Lock()):
        if key in _settled:
            return _settled[key], True
        # one entry per instruction: not per epoch, not per judge sample
        exchange = await ask_weights(CachePolicy(expiry=None, per_epoch=False) if cache else False)
        if exchange.ok:
            _settled[key] = exchange
        return exchange, False
