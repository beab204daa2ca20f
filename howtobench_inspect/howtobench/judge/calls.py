"""One judge call: the reply's text, or what its failure means.

`generate_reply` sends a conversation as the judge's server accepts it
(`judge.request_shape`), and says a failure in the judge's terms (`judge.failures`). A
server whose chat template has no system role, or whose context cannot hold a prompt and
our `max_tokens`, is learnt from its first refusal, here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from inspect_ai.model import ChatMessage, GenerateConfig, Model, ModelOutput
from tenacity import RetryError

from howtobench._inspect import batched
from howtobench.judge.batching import batched_reply
from howtobench.judge.failures import Lasting, classified, reply_text
from howtobench.judge.outages import diagnosed
from howtobench.judge.redirects import bound_client
from howtobench.judge.request_shape import (
    endpoint_key,
    fitted,
    folded,
    room_refused,
    sendable,
)
from howtobench.judge.runs import this_run
from howtobench.judge.server_words import server_message, system_refusal
from howtobench.judge.unread import remember_prompt

__all__ = ["generate_reply"]

logger = logging.getLogger(__name__)


async def generate_reply(
    model: Model, conversation: Sequence[ChatMessage], config: GenerateConfig
) -> str:
    """The judge's reply text; raises `CallFailed` or `JudgeUnavailable`
    (`howtobench.judge.failures`). Not through inspect's generate cache (`judge.store`
    says why); a batched call waits at most `batch_wait()` seconds for its batch."""
    sent = sendable(model, conversation)
    if batched(model):
        return await batched_reply(model, sent, config)
    recent = remember_prompt(endpoint_key(model), sent)
    bound_client(model)
    asked = fitted(model, sent, config)
    try:
        output, asked = await _answered(model, sent, asked)
    except Exception as error:
        failure = classified(error, model)  # the class says it all
        if isinstance(failure, Lasting):
            failure = await diagnosed(model, failure, config)
        raise failure from None
    return reply_text(output, model, sent, recent, asked.max_tokens)


async def _answered(
    model: Model, sent: list[ChatMessage], config: GenerateConfig
) -> tuple[ModelOutput, GenerateConfig]:
    """The judge's output, and the settings it answered. A request its server refused for
    a shape it cannot take is sent again in one it can, each change at most once: the
    system prompt folded into the first user message (`_refuses_system`), our
    `max_tokens` left out (`room_refused`; inspect gives a context refusal of some
    servers as an output, stopped `model_length`, whose text is the server's message)."""
    while True:
        try:
            output = await model.generate(sent, config=config, cache=False)
        except Exception as error:
            if _refuses_system(model, sent, error):
                sent = folded(sent)
            elif (unbounded := room_refused(model, sent, config, server_message(error))) is None:
                raise
            else:
                config = unbounded
            continue
        refused = output.stop_reason == "model_length" and output.completion
        if refused and (unbounded := room_refused(model, sent, config, refused)) is not None:
            config = unbounded
            continue
        return output, config


def _refuses_system(model: Model, sent: Sequence[ChatMessage], error: Exception) -> bool:
    """Whether the server refused the request for its system message: then this and every
    later request of the run to its endpoint carries the system prompt in the first user
    message (`RunNotes.no_system`)."""
    cause = error.last_attempt.exception() if isinstance(error, RetryError) else error
    if not isinstance(cause, Exception) or not any(m.role == "system" for m in sent):
        return False
    if not system_refusal(server_message(cause)):
        return False
    notes, key = this_run(), endpoint_key(model)
    notes.no_system.add(key)
    notes.warn_once(
        logger,
        ("no system role", key),
        f"judge {model} refuses system messages: its system prompts are sent at the head "
        "of the first user message for the rest of this run",
    )
    return True
