"""A prompt the judge's server did not read: its reply is not scored.

Ollama past its `num_ctx`, and llama.cpp with a small `-c`, cut an overlong prompt without
a word; the one sign is the reply's usage, far fewer prompt tokens than a low estimate of
the request's (docs/judges.md, "Context length"). A server may count only the tokens past
a prefix it reused from its cache (Ollama 0.30.x, ollama issue 16414), so a reply that
looks cut is measured again against the part of its prompt past the longest prefix shared
with the run's last `RECENT_PROMPTS` prompts, and scored, with one line, when it fits.
"""

from __future__ import annotations

import logging
import re
from collections import deque
from collections.abc import Iterable, Sequence

from inspect_ai.model import ChatMessage, ModelUsage

from howtobench.judge.defaults import READ_SHARE
from howtobench.judge.runs import this_run

__all__ = [
    "CONTEXT_SETTINGS",
    "RECENT_PROMPTS",
    "cut_short",
    "estimated_tokens",
    "logger",
    "prompt_tokens",
    "remember_prompt",
    "unread_prompt",
]

logger = logging.getLogger(__name__)

# A server counting only uncached tokens reports about the uncached part's tokens: at most
# this many times its low estimate (tokenizers give 0.9-1.4 times it on Chinese, the
# simulator's rule 0.75-2). A cut reports its context, which a short uncached part (the
# leaf prompts share their first ~1,770 characters) stays well below.
UNCACHED_AT_MOST = 2.5
RECENT_PROMPTS = 64  # a judge's prompts of the run kept to compare a cut-looking one with


def remember_prompt(key: str, messages: Sequence[ChatMessage]) -> deque[str]:
    """Add the prompt to the judge's (`key`: its endpoint) recent prompts of this run,
    and return them: what `unread_prompt` compares a cut-looking prompt with when its
    reply comes. Those sent after it count too: concurrent requests reach the server in
    another order than they were made, and the server may have cached any of them first."""
    recent = this_run().prompts.setdefault(key, deque(maxlen=RECENT_PROMPTS))
    recent.append(prompt_text(messages))
    return recent


def shared_length(text: str, other: str) -> int:
    """How many first characters two texts share: a binary search on equal slices (each
    compared in C), not a walk through the characters in Python."""
    low, high = 0, min(len(text), len(other))
    while low < high:
        middle = (low + high + 1) // 2
        if text[:middle] == other[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


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
    """The low estimate of the tokens the messages' text takes (module docstring)."""
    return text_tokens(prompt_text(messages))


def prompt_text(messages: Sequence[ChatMessage]) -> str:
    """The messages' text, one after another: what a server's prefix cache compares."""
    return "\n".join(message.text for message in messages)


def text_tokens(text: str) -> int:
    """The low estimate of a text's tokens: CJK characters, and other characters but
    whitespace, each at their rate."""
    rest = "".join(_NOT_CJK.findall(text))
    other = len("".join(rest.split()))
    cjk = len(text) - len(rest)
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
    judge: str,
    messages: Sequence[ChatMessage],
    usage: ModelUsage | None,
    recent: Iterable[str] = (),
) -> str | None:
    """Why the reply is not scored when the server read too little of the prompt, or
    None (`cut_short`; `recent`: the judge's recent prompts, `prompt_text`, for a server
    that counts only what it did not reuse, as the module docstring says)."""
    cut = cut_short(messages, usage)
    if cut is None:
        return None
    read, estimate = cut
    text = prompt_text(messages)
    # the same prompt sent again (another epoch) is no prefix cache: it would share all
    shared = max((shared_length(text, other) for other in recent if other != text), default=0)
    uncached = text_tokens(text[shared:])
    if shared and READ_SHARE * uncached <= read <= UNCACHED_AT_MOST * uncached:
        this_run().warn_once(
            logger,
            ("uncached usage", judge),
            f"judge {judge}'s server counts only the prompt tokens past the prefix it "
            f"reused from an earlier prompt ({read:,} of at least {estimate:,}, where "
            f"{uncached:,} are past the shared prefix): its replies are scored, and a prompt "
            "it cuts is told by the part it did not reuse",
        )
        return None
    seen = (
        f", {uncached:,} of them past the prefix it shares with an earlier prompt, so not a "
        "server counting only what it did not cache"
        if shared
        else ""
    )
    return (
        f"judge {judge} read {read:,} prompt tokens of a prompt of at least {estimate:,}"
        f"{seen}: its server cut the prompt to its context and answered the rest, so the "
        "reply is not scored and the question not asked again; raise the context "
        f"({CONTEXT_SETTINGS})"
    )
