"""The two APIs the simulator speaks, as their SDKs send and read them.

OpenAI's chat completions (any POST path but Anthropic's) and Anthropic's Messages API
(`POST /v1/messages`, streamed as the SDK's server-sent events or not). Each reads a
request body into a `Conversation` and writes a reply (an `Outcome`) or an error in its
own shape; OpenAI's side may play another server's shape of it (`refusals.Profile`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from howtobench.simulator.billing import PromptCache, Segment, Usage
from howtobench.simulator.profiles import DEFAULT_PROFILE, PROFILES
from howtobench.simulator.refusals import Profile

__all__ = [
    "ANTHROPIC_PATH",
    "OPENAI_PATH",
    "THINK_TEXT",
    "AnthropicMessages",
    "Api",
    "Conversation",
    "OpenAIChat",
    "Outcome",
    "jsonl",
]

ANTHROPIC_PATH = "/v1/messages"
OPENAI_PATH = "/v1/chat/completions"  # the one a batched OpenAI request may name
# What a thinking judge thought, as a profile with a reasoning field sends it
THINK_TEXT = "模拟的思考：先读写作任务，再读作品，最后按评分项给分。"
# Anthropic's error types by status, `api_error` for the others (docs.anthropic.com/en/api/errors)
_ANTHROPIC_ERRORS = {400: "invalid_request_error", 404: "not_found_error", 429: "rate_limit_error"}


@dataclass(frozen=True)
class Conversation:
    """A request's messages as `classify` reads them (a system prompt first), its content
    blocks as billed, and whether the request asks for automatic caching or a stream."""

    messages: list[dict[str, Any]]
    segments: tuple[Segment, ...]
    automatic_cache: bool = False
    stream: bool = False


@dataclass(frozen=True)
class Outcome:
    """What goes back for one request: a status and body (JSON, server-sent events, a
    file), or a dropped connection; with `repeat`, a body that never ends: `data`, then
    `repeat` again and again until the client hangs up."""

    status: int
    data: bytes
    content_type: str = "application/json"
    dropped: bool = False
    repeat: bytes = b""

    @staticmethod
    def of(status: int, payload: Any) -> Outcome:
        return Outcome(status, json.dumps(payload).encode())

    def json(self) -> Any:
        """The body as JSON, or None when it is not (an empty or broken body)."""
        try:
            return json.loads(self.data)
        except ValueError:
            return None

    @property
    def succeeded(self) -> bool:
        """A reply: status 200 with a JSON object (not a fault's empty or broken body)."""
        return self.status == 200 and isinstance(self.json(), dict)

    def error_message(self) -> str:
        """The error message of a failed answer, from either API's error shape."""
        body = self.json()
        if isinstance(body, dict) and isinstance(body.get("error"), dict):
            return str(body["error"].get("message", "error"))
        return f"the simulator's answer was not a reply (HTTP {self.status or 'dropped'})"


def jsonl(lines: list[dict[str, Any]]) -> bytes:
    """JSON lines, as both batch APIs write their files."""
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _segments(messages: list[dict[str, Any]]) -> tuple[Segment, ...]:
    """Every content block of every message (a string content is one block)."""
    segments: list[Segment] = []
    for message in messages:
        content = message.get("content") or ""
        parts: list[dict[str, Any]] = [{"text": content}] if isinstance(content, str) else content
        segments += [
            Segment(message["role"], part.get("text", ""), part.get("cache_control"))
            for part in parts
        ]
    return tuple(segments)


class OpenAIChat:
    """OpenAI's chat completions: usage with `prompt_tokens_details.cached_tokens`; with a
    `profile`, in that server's shape of the API (no profile: OpenAI's, as always)."""

    name = "openai"

    def __init__(self, profile: Profile | None = None) -> None:
        self.profile = profile or PROFILES[DEFAULT_PROFILE]

    def read(self, body: dict[str, Any]) -> Conversation:
        messages = body.get("messages", [])
        return Conversation(messages, _segments(messages))

    def bill(self, cache: PromptCache, model: str, conversation: Conversation, reply: str) -> Usage:
        return cache.openai(model, conversation.segments, reply)

    def answer(self, model: str, content: str, usage: Usage, stream: bool) -> Outcome:
        prompt = usage.input + usage.cache_read
        message: dict[str, Any] = {"role": "assistant", "content": content}
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "stop"}
        reply: dict[str, Any] = {
            "id": f"sim-{time.monotonic_ns()}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [choice],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": usage.output,
                "total_tokens": prompt + usage.output,
                "prompt_tokens_details": {"cached_tokens": usage.cache_read},
            },
        }
        profile = self.profile
        if profile.reasoning == "think-tags":  # no reasoning parser: it stays in content
            message["content"] = f"<think>\n{THINK_TEXT}\n</think>\n\n{content}"
        elif profile.reasoning:
            message[profile.reasoning] = THINK_TEXT
        message.update(profile.message_extra)
        choice.update(profile.choice_extra)
        reply.update(profile.reply_extra)
        if not profile.cached_tokens:
            del reply["usage"]["prompt_tokens_details"]
        return Outcome.of(200, reply)

    def error(self, status: int, message: str) -> dict[str, Any]:
        return self.profile.error_body(status, message)


class AnthropicMessages:
    """Anthropic's Messages API: `system` apart, content blocks that may carry
    `cache_control`, usage with `cache_creation_input_tokens` and `cache_read_input_tokens`."""

    name = "anthropic"

    def read(self, body: dict[str, Any]) -> Conversation:
        system = body.get("system") or []
        head = [{"role": "system", "content": system}] if system else []
        messages = head + body.get("messages", [])
        return Conversation(
            messages,
            _segments(messages),
            automatic_cache=bool(body.get("cache_control")),
            stream=bool(body.get("stream")),
        )

    def bill(self, cache: PromptCache, model: str, conversation: Conversation, reply: str) -> Usage:
        return cache.anthropic(model, conversation.segments, conversation.automatic_cache, reply)

    def answer(self, model: str, content: str, usage: Usage, stream: bool) -> Outcome:
        message = {
            "id": f"msg_sim{time.monotonic_ns()}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": content}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": usage.input,
                "output_tokens": usage.output,
                "cache_creation_input_tokens": usage.cache_write,
                "cache_read_input_tokens": usage.cache_read,
            },
        }
        return _events(message) if stream else Outcome.of(200, message)

    def error(self, status: int, message: str) -> dict[str, Any]:
        kind = _ANTHROPIC_ERRORS.get(status, "api_error")
        return {"type": "error", "error": {"type": kind, "message": message}}


# One API's side of the exchange: each reads a request, bills it, answers and refuses
Api = OpenAIChat | AnthropicMessages


def _events(message: dict[str, Any]) -> Outcome:
    """A message as the stream of events the SDK accumulates: the start (with the input
    usage), one text block in one delta, and the end (with the output usage)."""
    text = message["content"][0]["text"]
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None, "usage": {**usage, "output_tokens": 0}}
    events: list[tuple[str, dict[str, Any]]] = [
        ("message_start", {"message": start}),
        ("content_block_start", {"index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"index": 0}),
        (
            "message_delta",
            {
                "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        ),
        ("message_stop", {}),
    ]
    data = "".join(
        f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n"
        for name, payload in events
    )
    return Outcome(200, data.encode(), "text/event-stream")
