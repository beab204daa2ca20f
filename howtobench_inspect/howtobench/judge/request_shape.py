"""The conversation as the judge's server accepts it: plain strings or text parts, and
a system prompt folded into the first user message where the server has no system role."""

from __future__ import annotations

from collections.abc import Sequence

from inspect_ai.model import ChatMessage, ChatMessageUser, ContentText, Model

from howtobench._inspect import endpoint
from howtobench.judge.runs import this_run

__all__ = ["endpoint_key", "folded", "sendable"]


def sendable(model: Model, conversation: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The conversation as the judge's server accepts it.

    Our prompts' cache breakpoint makes a message's content a list of text parts, which
    only Anthropic's API needs and several OpenAI-compatible servers refuse
    (llama-cpp-python answers 500); everywhere else the parts are joined into exactly
    `message.text`, so the reply store's key is the same either way. An endpoint the run
    learnt has no system role (`RunNotes.no_system`) gets the conversation `folded`.
    """
    if any(cls.__name__ == "AnthropicAPI" for cls in type(model.api).__mro__):
        return list(conversation)
    joined = [
        message.model_copy(update={"content": message.text})
        if isinstance(message.content, list)
        and all(isinstance(part, ContentText) for part in message.content)
        else message
        for message in conversation
    ]
    return folded(joined) if endpoint_key(model) in this_run().no_system else joined


def endpoint_key(model: Model) -> str:
    """A judge model at its endpoint: what the run's notes are kept by."""
    return f"{model}@{endpoint(model)}"


def folded(conversation: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The conversation with its system messages put at the head of the first user one."""
    system = "\n\n".join(m.text for m in conversation if m.role == "system")
    rest: list[ChatMessage] = [m for m in conversation if m.role != "system"]
    for index, message in enumerate(rest):
        if message.role == "user":
            rest[index] = ChatMessageUser(content=f"{system}\n\n{message.text}")
            break
    return rest
