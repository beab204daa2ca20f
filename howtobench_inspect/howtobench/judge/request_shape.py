"""The request as the judge's server accepts it: plain strings or text parts, a system
prompt folded into the first user message where the server has no system role, and our
`max_tokens` left out where the server's context cannot hold it beside the prompt."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from inspect_ai.model import ChatMessage, ChatMessageUser, ContentText, GenerateConfig, Model

from howtobench._inspect import endpoint
from howtobench.judge.runs import this_run
from howtobench.judge.server_words import reply_counted
from howtobench.judge.unread import estimated_tokens

__all__ = ["endpoint_key", "fitted", "folded", "logger", "room_refused", "sendable"]

logger = logging.getLogger(__name__)


def sendable(model: Model, conversation: Sequence[ChatMessage]) -> list[ChatMessage]:
    """The conversation as the judge's server accepts it: text parts (our cache
    breakpoint, which only Anthropic needs and llama-cpp-python refuses with a 500) joined
    into exactly `message.text` elsewhere, so the store's key is the same either way; and
    `folded` for an endpoint the run learnt has no system role (`RunNotes.no_system`)."""
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


def fitted(
    model: Model, conversation: Sequence[ChatMessage], config: GenerateConfig
) -> GenerateConfig:
    """`config`, without our `max_tokens` where the run learnt the judge's context
    (`room_refused`) and the prompt's low token estimate and `max_tokens` do not fit in
    it: the server would refuse the request, and leaves less room than `max_tokens`."""
    context = this_run().contexts.get(endpoint_key(model))
    if context is None or not _ours(model, config) or config.max_tokens is None:
        return config
    if estimated_tokens(conversation) + config.max_tokens <= context:
        return config
    return config.model_copy(update={"max_tokens": None})


def room_refused(
    model: Model, conversation: Sequence[ChatMessage], config: GenerateConfig, message: str
) -> GenerateConfig | None:
    """The settings to ask again with, without our `max_tokens`, when the server refused
    (`message`) a prompt that fits alone for its context counting `max_tokens` too
    (docs/judges.md, "Judge replies, bounded"); the context it names is noted for `fitted`.
    None for any other refusal, the role's own `max_tokens`, or a prompt over the context."""
    counted = reply_counted(message)
    if counted is None or not _ours(model, config):
        return None
    context, prompt = counted
    if context is not None:
        if (prompt if prompt is not None else estimated_tokens(conversation)) >= context:
            return None
        this_run().contexts[endpoint_key(model)] = context
    this_run().warn_once(
        logger,
        ("no room for max_tokens", endpoint_key(model)),
        f"judge {model}'s context{f' ({context:,} tokens)' if context else ''} cannot hold a "
        f"prompt and max_tokens {config.max_tokens:,}: such prompts are sent without "
        "max_tokens, and its server bounds the reply by what is left of its context",
    )
    return config.model_copy(update={"max_tokens": None})


def _ours(model: Model, config: GenerateConfig) -> bool:
    """Whether the call's `max_tokens` is ours, not the judge role's own."""
    return config.max_tokens is not None and model.config.max_tokens is None
