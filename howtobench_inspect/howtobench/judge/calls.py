"""One judge call: the reply's text, or what its failure means.

`generate_reply` sends a conversation as the judge's server accepts it
(`howtobench.judge.request_shape`) with the settings of `howtobench.judge.settings`,
and says a failure in the judge's terms (`howtobench.judge.failures`): this question
failed (`CallFailed`), or the judge is gone (`JudgeUnavailable`, after the probe of
`howtobench.judge.outages`). A batched judge waits for its batch
(`howtobench.judge.batching`). A server whose chat template has no system role is
learnt from its first refusal, here.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from inspect_ai.model import ChatMessage, GenerateConfig, Model
from tenacity import RetryError

from howtobench._inspect import batched
from howtobench.judge.batching import batched_reply
from howtobench.judge.failures import Lasting, classified, reply_text
from howtobench.judge.outages import diagnosed
from howtobench.judge.redirects import bound_redirects
from howtobench.judge.request_shape import endpoint_key, folded, sendable
from howtobench.judge.runs import this_run
from howtobench.judge.server_words import server_message, system_refusal
from howtobench.judge.unread import remember_prompt

__all__ = ["generate_reply"]

logger = logging.getLogger(__name__)


async def generate_reply(
    model: Model, conversation: Sequence[ChatMessage], config: GenerateConfig
) -> str:
    """The judge's reply text; raises `CallFailed` or `JudgeUnavailable`
    (`howtobench.judge.failures`).

    Judge calls bypass inspect's generate cache: it would keep replies that fail their
    check and hand them back on every later run. Checked replies go to the reply store.
    A batched call first makes sure the endpoint has a batch API, then waits at most
    `batch_wait()` seconds for its batch.
    """
    sent = sendable(model, conversation)
    if batched(model):
        return await batched_reply(model, sent, config)
    recent = remember_prompt(endpoint_key(model), sent)
    bound_redirects(model)
    try:
        try:
            output = await model.generate(sent, config=config, cache=False)
        except Exception as error:
            if not _refuses_system(model, sent, error):
                raise
            output = await model.generate(folded(sent), config=config, cache=False)
    except Exception as error:
        failure = classified(error, model)  # the class says it all
        if isinstance(failure, Lasting):
            failure = await diagnosed(model, failure, config)
        raise failure from None
    return reply_text(output, model, sent, recent)


def _refuses_system(model: Model, sent: Sequence[ChatMessage], error: Exception) -> bool:
    """Whether the server refused the request for its system message: the run then
    notes the endpoint (`RunNotes.no_system`), and this and every later request of the
    run carries the system prompt at the head of the first user message instead. The
    next run learns it again from one refusal (`howtobench.judge.runs` says why)."""
    cause = error.last_attempt.exception() if isinstance(error, RetryError) else error
    if not isinstance(cause, Exception) or not any(m.role == "system" for m in sent):
        return False
    if not system_refusal(server_message(cause)):
        return False
    learnt = this_run().no_system
    key = endpoint_key(model)
    if key in learnt:  # learnt meanwhile, from a concurrent request
        return True
    learnt.add(key)
    logger.warning(
        f"judge {model} refuses system messages: its system prompts are sent at the head "
        "of the first user message for the rest of this run"
    )
    return True
