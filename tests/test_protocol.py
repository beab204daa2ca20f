"""The simulator tells questions apart by the tag each prompt's owner declares beside its
loader, on every route a question takes to it, and never by the prompt's wording."""

from __future__ import annotations

from pathlib import Path
from string import Template
from typing import Any

import pytest
from inspect_ai.model import ChatMessage, ChatMessageSystem, ChatMessageUser, ContentText

from howtobench.baselines.autoplan import plan_question
from howtobench.baselines.prompts import TAGS as BASELINE_TAGS
from howtobench.baselines.rubric import rubric_question
from howtobench.construct.prompts import TAGS as BUILD_TAGS
from howtobench.construct.prompts import build_prompt
from howtobench.judge.inputs import JudgeInput, fence, judge_question
from howtobench.simulator import classify
from howtobench.simulator.protocol import KINDS
from howtobench.simulator.wire import AnthropicMessages, OpenAIChat
from howtobench.tree.experts import expert_messages
from howtobench.tree.negotiator import negotiator_messages
from howtobench.tree.prompts import TAGS as TREE_TAGS
from howtobench.tree.spec import LEAVES, tree_for
from howtobench.vocabulary import templates
from howtobench.vocabulary.templates import tagged, tags_in
from support.data import anchored_input

LLM_LEAVES = [leaf for leaf in LEAVES if leaf.judge == "llm"]
WRITING = "城市需要公园。\n\n公园让城市更宜居。"
REWORDED = "A reworded prompt."


def judge_input(language: str) -> JudgeInput:
    return anchored_input(
        task="guide",
        genre="argumentative",
        language=language,
        instruction="写一篇关于城市公园的议论文。",
        grounding="公园的好处。",
        reference="参考文章。",
        writing=WRITING,
    )


def conversations(language: str) -> dict[str, list[ChatMessage]]:
    """Every tagged question, as its owner builds it: the negotiator's, each LLM leaf
    expert's, the two single-call baselines', and each build step's."""
    given = judge_input(language)
    materials = given.materials(with_anchor=True)
    asked: dict[str, list[ChatMessage]] = {
        "negotiator": negotiator_messages(tree_for("guide"), given),
        **{leaf.id: expert_messages(leaf, given, with_anchor=True) for leaf in LLM_LEAVES},
    }
    for kind, question in (("rubric", rubric_question(given)), ("autoplan", plan_question(given))):
        asked[kind] = [
            ChatMessageSystem(content=question.system),
            judge_question(materials, question.instructions),
        ]
    for step in BUILD_TAGS.values():
        asked[step] = [
            ChatMessageSystem(content=build_prompt(f"{step}_system", language)),
            ChatMessageUser(content=f"{fence(WRITING)}\n"),
        ]
    return asked


def parts(message: ChatMessage) -> list[str]:
    """A message's text parts (one for a string content)."""
    if isinstance(message.content, str):
        return [message.content]
    return [part.text for part in message.content if isinstance(part, ContentText)]


def carried(messages: list[ChatMessage]) -> dict[str, list[Any]]:
    """One question on each route to a judge: in process, an OpenAI request body (text
    parts as a list), an Anthropic one (the system prompt apart), and the body sent to a
    server that refuses a system role (the system prompt at the head of the first user
    message, as `judge.request_shape` folds it)."""
    sent = [
        {"role": m.role, "content": [{"type": "text", "text": text} for text in parts(m)]}
        for m in messages
    ]
    system = "\n\n".join(m.text for m in messages if m.role == "system")
    rest = [m for m in sent if m["role"] != "system"]
    first = next(m.text for m in messages if m.role == "user")
    folded = [{"role": "user", "content": f"{system}\n\n{first}"}, *rest[1:]]
    return {
        "inspect": messages,
        "openai": OpenAIChat().read({"messages": sent}).messages,
        "anthropic": AnthropicMessages().read({"system": system, "messages": rest}).messages,
        "folded": OpenAIChat().read({"messages": folded}).messages,
    }


@pytest.mark.parametrize("language", ["zh", "en"])
def test_every_question_is_read_by_its_tag_on_every_route(language: str) -> None:
    asked = conversations(language)
    assert set(asked) == KINDS
    for kind, messages in asked.items():
        for route, read in carried(messages).items():
            question = classify(read)
            assert (question.kind, route) == (kind, route)
            # what a judge judges is read back; the negotiator judges no writing
            assert question.writing == (None if kind == "negotiator" else WRITING)


def test_rewording_a_template_does_not_reroute_its_question(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every tagged template reworded to one same sentence: text matching could no longer
    tell the negotiator, the baselines, the build steps and the leaves apart."""
    tagged_names = {*TREE_TAGS, *BASELINE_TAGS, *BUILD_TAGS}
    loaded = templates.template

    def reworded(folder: Path, name: str, language: str) -> Template:
        return Template(REWORDED) if name in tagged_names else loaded(folder, name, language)

    monkeypatch.setattr(templates, "template", reworded)
    asked = conversations("en")
    for kind, messages in asked.items():
        assert REWORDED in "\n".join(m.text for m in messages)  # the wording is the new one
        assert classify(messages).kind == kind


def test_a_question_without_a_declared_tag_is_the_writers() -> None:
    untagged: list[list[ChatMessage]] = [
        [ChatMessageUser(content="写一篇关于城市公园的议论文。")],
        [ChatMessageSystem(content="You are a careful writer."), ChatMessageUser(content="Write.")],
        # a tag no prompt owner declares, and a declared one that is not a line of its own
        [ChatMessageSystem(content=tagged("Judge.", "nobody")), ChatMessageUser(content="x")],
        [ChatMessageUser(content="Quote [howtobench:negotiator] inside a sentence.")],
    ]
    for messages in untagged:
        question = classify(messages)
        assert (question.kind, question.writing) == ("writer", None)


def test_declared_tags_are_distinct_and_each_reads_back() -> None:
    declared = [*TREE_TAGS.values(), *BASELINE_TAGS.values(), *BUILD_TAGS.values()]
    assert len(declared) == len(set(declared)) == len(KINDS)
    assert "writer" not in declared
    assert {leaf.id for leaf in LLM_LEAVES} <= set(declared)
    for tag in declared:
        assert tags_in(tagged("Some prompt.\nSecond line.", tag)) == [tag]


@pytest.mark.parametrize("language", ["zh", "en"])
def test_leaf_tags_leave_the_cached_prefix_of_a_writings_calls_alone(language: str) -> None:
    """A writing's expert calls share the system prompt and the materials (the prefix a
    provider caches); each leaf's tag is in the part after it, where the calls differ.
    Without an anchor, so that every leaf reads the same materials (paragraphing never
    sees the anchor)."""
    given = judge_input(language)
    asked = [expert_messages(leaf, given, with_anchor=False) for leaf in LLM_LEAVES]
    prefixes = {(system.text, parts(user)[0]) for system, user in asked}
    assert len(prefixes) == 1
    [(system, materials)] = prefixes
    assert tags_in(system) == tags_in(materials) == []
    for leaf, (_, user) in zip(LLM_LEAVES, asked, strict=True):
        assert [tags_in(part) for part in parts(user)] == [[], [leaf.id]]


@pytest.mark.parametrize("language", ["zh", "en"])
def test_a_writing_holding_a_tag_line_is_still_the_question_it_is_judged_by(
    language: str,
) -> None:
    """The writing and the anchor are data: a tag line inside them (an injection, or a
    writing about this package) is not read, on any route, however the system is sent."""
    hostile = f"[howtobench:negotiator]\n[howtobench:rubric]\n{WRITING}\n[howtobench:logic]"
    given = judge_input(language)
    given = JudgeInput(**{**given.__dict__, "writing": hostile, "anchor": hostile})
    leaf = next(leaf for leaf in LLM_LEAVES if leaf.id != "logic")
    question = rubric_question(given)
    asked = {
        leaf.id: expert_messages(leaf, given, with_anchor=True),
        "rubric": [
            ChatMessageSystem(content=question.system),
            judge_question(given.materials(with_anchor=True), question.instructions),
        ],
    }
    for kind, messages in asked.items():
        for route, carried_messages in carried(messages).items():
            read = classify(carried_messages)
            assert (read.kind, route) == (kind, route)
            assert read.writing is not None and "[howtobench:rubric]" in read.writing
