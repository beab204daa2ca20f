"""Leaf experts: the question one grader call per LLM leaf and judge asks, and how its
score and reason are read."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageSystem

from howtobench.judge.inputs import JudgeInput, judge_question
from howtobench.judge.reading import Form, ReplyError, bounded
from howtobench.judge.replies import Verdict, reason_of
from howtobench.tree.prompts import tree_prompt
from howtobench.tree.spec import Leaf

__all__ = ["expert_messages", "score_form"]


def expert_messages(leaf: Leaf, judge_input: JudgeInput, with_anchor: bool) -> list[ChatMessage]:
    """The materials first and the leaf's criterion and scale last, so a provider's prompt
    cache can reuse the long prefix across one writing's calls; the scale follows the
    leaf's `Anchoring` when the anchor is shown, else the leaf's own bands."""
    language = judge_input.language
    anchored = with_anchor and leaf.anchoring != "none" and bool(judge_input.anchor.strip())
    materials = judge_input.materials(with_anchor=anchored)
    criterion = tree_prompt(f"leaf_{leaf.id}", language)
    bands = tree_prompt(f"bands_{leaf.id}", language)
    if anchored and leaf.anchoring == "context":
        bands = f"{tree_prompt('bands_context', language)}\n{bands}"
    elif anchored:
        bands = tree_prompt(f"bands_{leaf.anchoring}", language)
    answer = tree_prompt("answer", language, low=leaf.low, high=leaf.high)
    system = [ChatMessageSystem(content=tree_prompt("judge_system", language))]
    question = judge_question(materials, f"{criterion}\n{bands}\n\n{answer}")
    return [*system, question] if judge_input.judge_system else [question]


def score_form(leaf: Leaf) -> Form[Verdict]:
    """The last object with a "score": a whole number within the leaf's scale; the
    reason is kept as given. A lone score in an answer that does not parse is read."""

    def check(reply: dict[str, Any]) -> Verdict:
        if "score" not in reply:
            raise ReplyError('the reply has no "score"')
        score = bounded(reply["score"], '"score"', leaf.low, leaf.high, whole=True)
        return Verdict(score, reason_of(reply))

    return Form(("score",), check, salvage=("score",))
