"""A prompt the judge's server did not read: its reply is not scored.

Ollama past its `num_ctx`, and llama.cpp started with a small `-c` (context shift), do
not refuse a prompt longer than their context: they keep its first few tokens and its
tail, and the model answers what is left (a rubric without the writing, a writing
without its instruction). The reply looks like any other, so the one sign of it is the
reply's usage: far fewer prompt tokens than the request carried.

The prompt's tokens are estimated low on purpose, so that a long reply from a tokenizer
that packs text densely is never taken for a cut one: Chinese text takes about one token
per 1 to 1.5 characters with the tokenizers of the judges in use (counted here at 1.5
characters a token, the fewest tokens), other text about four characters a token. A
reply whose usage counts fewer than `READ_SHARE` of that estimate is not scored; a
server that reports no prompt tokens (0 or none) is not ruled on.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from inspect_ai.model import ChatMessage, ModelUsage

from howtobench.judge.defaults import READ_SHARE

_CJK_CHARACTERS_PER_TOKEN = 1.5
_OTHER_CHARACTERS_PER_TOKEN = 4.0
# How each server sets the context it cuts prompts to.
CONTEXT_SETTINGS = (
    "Ollama's num_ctx (OLLAMA_CONTEXT_LENGTH, or `PARAMETER num_ctx` in a Modelfile), "
    "llama.cpp's -c/--ctx-size, vLLM's --max-model-len"
)


# What is not Chinese: runs of characters outside the CJK ideographs and punctuation and
# the full-width forms (U+3000, the ideographic space, counts as CJK). Found by a regular
# expression, in C: this runs on every judge reply.
_NOT_CJK = re.compile("[^\u3000-\u9fff\uf900-\ufaff\uff00-\uffef\U00020000-\U0002ffff]+")


def estimated_tokens(messages: Sequence[ChatMessage]) -> int:
    """The fewest tokens the messages' text takes (module docstring): CJK characters,
    and other characters but whitespace."""
    cjk = other = 0
    for message in messages:
        rest = "".join(_NOT_CJK.findall(message.text))
        cjk += len(message.text) - len(rest)
        other += len("".join(rest.split()))
    return round(cjk / _CJK_CHARACTERS_PER_TOKEN + other / _OTHER_CHARACTERS_PER_TOKEN)


def prompt_tokens(usage: ModelUsage) -> int:
    """The prompt tokens a reply's usage counts: inspect counts cache reads and writes
    apart from the rest of the input."""
    return (
        usage.input_tokens
        + (usage.input_tokens_cache_read or 0)
        + (usage.input_tokens_cache_write or 0)
    )


def cut_short(messages: Sequence[ChatMessage], usage: ModelUsage | None) -> tuple[int, int] | None:
    """(prompt tokens read, the prompt's low estimate) when the server read too little of
    the prompt, or None when its usage says it read it (or says nothing)."""
    read = prompt_tokens(usage) if usage is not None else 0
    estimate = estimated_tokens(messages)
    if read <= 0 or read >= READ_SHARE * estimate:
        return None
    return read, estimate


def unread_prompt(
    judge: str, messages: Sequence[ChatMessage], usage: ModelUsage | None
) -> str | None:
    """Why the reply is not scored when the server read too little of the prompt, or
    None (`cut_short`)."""
    cut = cut_short(messages, usage)
    if cut is None:
        return None
    read, estimate = cut
    return (
        f"judge {judge} read {read:,} prompt tokens of a prompt of at least {estimate:,}: "
        "its server cut the prompt to its context and answered the rest, so the reply is "
        f"not scored and the question not asked again; raise the context ({CONTEXT_SETTINGS})"
    )
