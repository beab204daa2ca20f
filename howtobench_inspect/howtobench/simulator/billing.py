"""What the simulator bills a request: tokens by a fixed rule, and prompt caching as each
provider does it, so that a cost study can be checked against known numbers.

Tokens. A request's prompt is its segments in order (Anthropic's system blocks, then
every content block of every message; a string content is one block), written out as
`<role>\\n<text>\\n` each. A text of n characters is ceil(n / 2) tokens (`tokens`); the
prompt's tokens are those of its written-out form, a reply's those of its text. Two
characters a token is no real tokenizer's rule; it is simple to recompute in a test.

Anthropic (explicit caching). A breakpoint is a content block carrying `cache_control`,
or the request's last block when the request itself carries `cache_control` (automatic
caching). The prefix up to and including the last breakpoint is cached: the longest
part of it already in the cache (any earlier request's breakpoint prefix that ends at a
block boundary of this one, to the same model) is billed as cache read, the rest of it as
cache write, and what follows the last breakpoint as plain input. A breakpoint whose
prefix is shorter than `ANTHROPIC_MIN_CACHED` tokens is ignored, as Anthropic ignores
it. The cache never expires while the simulator runs (Anthropic's lasts 5 minutes from
its last use) and there is no limit of 20 blocks on the look-back.

OpenAI (automatic caching). A prompt of at least `OPENAI_MIN_CACHED` tokens reads from
the cache the longest prefix, in whole steps of `OPENAI_CACHE_STEP` tokens, that an
earlier prompt to the same model began with (`prompt_tokens_details.cached_tokens`);
there is no separate write charge. Marks in the request are ignored.
"""

from __future__ import annotations

import hashlib
import os
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

__all__ = ["CHARS_PER_TOKEN", "PromptCache", "Segment", "Usage", "tokens", "written_out"]

CHARS_PER_TOKEN = 2
ANTHROPIC_MIN_CACHED = 1024  # Claude Sonnet and Opus 4; some Haiku and Opus models need more
OPENAI_MIN_CACHED = 1024
OPENAI_CACHE_STEP = 128
RECENT_PROMPTS = 16  # what a server that reuses earlier prompts' prefixes compares with


def tokens(chars: int) -> int:
    """Tokens of a text of `chars` characters: ceil(chars / 2)."""
    return -(-chars // CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Segment:
    """One content block of a request, as sent: its role, text and `cache_control`."""

    role: str
    text: str
    cache_control: dict[str, Any] | None = None

    @property
    def written(self) -> str:
        return f"{self.role}\n{self.text}\n"


def written_out(segments: Sequence[Segment]) -> str:
    """The prompt as the token rule counts it: every segment written out, in order."""
    return "".join(segment.written for segment in segments)


@dataclass(frozen=True)
class Usage:
    """Tokens billed for one request; `input` is the part billed at the full rate."""

    input: int
    cache_write: int
    cache_read: int
    output: int


class PromptCache:
    """The prefixes cached so far, per API and model. Not thread-safe: the simulator bills
    under its lock, so requests are billed one at a time, in the order they arrive."""

    def __init__(self) -> None:
        self._cached: set[tuple[str, str, bytes]] = set()
        self._recent: dict[str, deque[str]] = {}  # model -> its last prompts, written out

    def reused(self, model: str, prompt: str) -> int:
        """The characters of `prompt` that one of the last `RECENT_PROMPTS` prompts to
        `model` began with too (the longest): what a server keeping the state of its
        recent prompts (a llama.cpp slot's, Ollama's) does not compute again."""
        recent = self._recent.setdefault(model, deque(maxlen=RECENT_PROMPTS))
        shared = max(
            (len(os.path.commonprefix([prompt, earlier])) for earlier in recent), default=0
        )
        recent.append(prompt)
        return shared

    def anthropic(
        self, model: str, segments: Sequence[Segment], automatic: bool, reply: str
    ) -> Usage:
        """Anthropic's billing of a request: see the module's docstring."""
        prompt = written_out(segments)
        ends = list(accumulate(len(segment.written) for segment in segments))
        keys = dict(zip(ends, _prefix_keys("anthropic", model, prompt, ends), strict=True))
        marked = [
            end
            for i, (segment, end) in enumerate(zip(segments, ends, strict=True))
            if (segment.cache_control or (automatic and i == len(segments) - 1))
            and tokens(end) >= ANTHROPIC_MIN_CACHED
        ]
        if not marked:
            return Usage(tokens(len(prompt)), 0, 0, tokens(len(reply)))
        last = marked[-1]
        read = max((end for end in ends if end <= last and keys[end] in self._cached), default=0)
        self._cached.update(keys[end] for end in marked)
        return Usage(
            input=tokens(len(prompt)) - tokens(last),
            cache_write=tokens(last) - tokens(read),
            cache_read=tokens(read),
            output=tokens(len(reply)),
        )

    def openai(self, model: str, segments: Sequence[Segment], reply: str) -> Usage:
        """OpenAI's billing of a request: see the module's docstring."""
        prompt = written_out(segments)
        total = tokens(len(prompt))
        steps = range(OPENAI_MIN_CACHED, total + 1, OPENAI_CACHE_STEP)
        keys = _prefix_keys("openai", model, prompt, [n * CHARS_PER_TOKEN for n in steps])
        cached = max(
            (n for n, key in zip(steps, keys, strict=True) if key in self._cached), default=0
        )
        self._cached.update(keys)
        return Usage(total - cached, 0, cached, tokens(len(reply)))


def _prefix_keys(
    api: str, model: str, prompt: str, ends: Sequence[int]
) -> list[tuple[str, str, bytes]]:
    """A cache key for each prefix `prompt[:end]` (`ends` ascending), hashed in one pass."""
    digest = hashlib.sha256()
    keys = []
    start = 0
    for end in ends:
        digest.update(prompt[start:end].encode("utf-8", "surrogatepass"))
        keys.append((api, model, digest.copy().digest()))
        start = end
    return keys
