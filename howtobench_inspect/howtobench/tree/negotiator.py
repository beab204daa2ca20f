"""The negotiator: one grader call per instruction that sets the content and format weights.

Its weights are a property of the instruction, so they are negotiated once per instruction
and judge model (docs/tree-of-writing.md, "Negotiator"): concurrent epochs and writings
wait for one call (`SettledWeights`), other processes for the question's lock, and a
negotiation that gave no usable weights is asked once per run (`judge.runs.RunNotes`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, Model

from howtobench.judge.defaults import SUM_TOLERANCE
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.question_locks import LockWaitExpired, held
from howtobench.judge.reading import Form, ReplyError, exact_keys, number
from howtobench.judge.replies import Asking, Exchange, ask
from howtobench.judge.runs import this_run
from howtobench.judge.store import ReplyStore
from howtobench.tree.prompts import TAGS, leaf_summaries, tree_prompt
from howtobench.tree.spec import Tree
from howtobench.vocabulary.metadata import ScoreKey
from howtobench.vocabulary.templates import tagged

__all__ = [
    "SettledWeights",
    "Weights",
    "fixed_weights",
    "negotiator_messages",
    "weights_form",
    "weights_record",
]


@dataclass(frozen=True)
class Weights:
    """Edge weights by leaf id, the negotiator's explanation, and groups it renormalised."""

    values: dict[str, float]
    explanation: str
    renormalised: tuple[str, ...] = ()

    @property
    def fingerprint(self) -> str:
        """12 hex characters that differ when any weight differs: writings judged with
        the same fingerprint were judged alike (`howtobench report` checks it)."""
        text = json.dumps({k: round(v, 9) for k, v in sorted(self.values.items())})
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def fixed_weights(tree: Tree, why: str) -> Exchange[Weights]:
    """Equal weights within each negotiated group, without a negotiator call: the
    paper's "Average scoring" row of Table 3 (ToW w/o plan), or no group at all when an
    ablation keeps no negotiated node."""
    values = {i: 1 / len(ids) for ids in tree.negotiated.values() for i in ids}
    return Exchange(model="none", value=Weights(values, why))


def weights_record(negotiated: Exchange[Weights], reused: bool) -> dict[str, Any]:
    """What a score's metadata says of its weights: the values, their fingerprint, and
    the negotiator's exchange (replies, explanation, renormalised groups, reused)."""
    weights = negotiated.value
    return {
        ScoreKey.WEIGHTS: weights.values if weights else None,
        ScoreKey.WEIGHTS_FINGERPRINT: weights.fingerprint if weights else None,
        ScoreKey.NEGOTIATOR: {
            **negotiated.record(),
            "explanation": weights.explanation if weights else None,
            "renormalised": list(weights.renormalised) if weights else [],
            ScoreKey.REUSED: reused,
        },
    }


def negotiator_messages(tree: Tree, judge_input: JudgeInput) -> list[ChatMessage]:
    """Our system prompt (without `judge_system`: none, as in the paper's code), then the
    instruction's task block and the groups to weight, with the reply's shape."""
    language = judge_input.language
    summaries = leaf_summaries(language)
    groups = "\n".join(
        tree_prompt(
            "group", language, node=node, leaves="\n".join(f"- {i}: {summaries[i]}" for i in ids)
        )
        for node, ids in tree.negotiated.items()
    )
    listed = [i for ids in tree.negotiated.values() for i in ids]
    slot = tree_prompt("weight_slot", language)
    # the reply's shape with the real ids spelled out: a small judge otherwise answers
    # with the groups' names ("content", "format") as keys
    shape = ", ".join(f'"{i}": {slot}' for i in listed)
    ids = ", ".join(listed)
    question = tree_prompt(
        "negotiator", language, task=judge_input.task_block(), groups=groups, ids=ids, shape=shape
    )
    if not judge_input.judge_system:  # the question alone, under the tag its system prompt has
        return [ChatMessageUser(content=tagged(question, TAGS["negotiator_system"]))]
    return [
        ChatMessageSystem(content=tree_prompt("negotiator_system", language)),
        ChatMessageUser(content=question),
    ]


def weights_form(tree: Tree) -> Form[Weights]:
    """The last object with "weights"; the rules: exactly the tree's negotiated ids,
    numbers in (-1, 1), each group summing to 1; a group off by at most 0.01 is
    renormalised."""
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

    return Form(("weights",), check)


class SettledWeights:
    """The weights one tow scorer has settled, so concurrent writings, epochs and judge
    samples of one instruction wait for one negotiation; keyed on the reply store and the
    question's key, so a different judge or setting negotiates anew."""

    def __init__(self) -> None:
        self._settled: dict[tuple[str, str], Exchange[Weights]] = {}

    async def negotiate(
        self,
        model: Model,
        tree: Tree,
        judge_input: JudgeInput,
        *,
        asking: Asking,
        reuse: bool = True,
        scope: Mapping[str, str] | None = None,
    ) -> tuple[Exchange[Weights], bool]:
        """The instruction's weights and whether they were reused rather than asked for here.

        With `reuse=False` every epoch and judge sample (`scope`) negotiates afresh, as
        an expert question does: that is how the consistency study measures how much the
        negotiator's weights fluctuate.
        """
        messages = negotiator_messages(tree, judge_input)
        form = weights_form(tree)
        language = judge_input.language
        if not reuse:
            exchange = await ask(
                model, messages, form, language=language, asking=asking, scope=scope or {}
            )
            return exchange, False
        key = ReplyStore.key(model, messages, asking.config(model), {})
        memo = (str(asking.store.root) if asking.store else "", key)
        try:
            # held around the memo and the ask (which then holds it already): with no
            # store too, concurrent writings wait for one negotiation
            async with held(asking.store, key):
                if memo in self._settled:
                    return self._settled[memo], True
                failed = this_run().failed_negotiations
                if memo in failed:
                    return Exchange(model=str(model), error=failed[memo]), True
                # one entry per instruction: not per epoch, not per judge sample
                exchange = await ask(
                    model, messages, form, language=language, asking=asking, scope={}, key=key
                )
                if exchange.ok:
                    self._settled[memo] = exchange
                else:
                    failed[memo] = f"{exchange.error} (asked earlier in this run; not again)"
                return exchange, exchange.stored
        except LockWaitExpired as expired:
            return Exchange(model=str(model), error=str(expired)), False
