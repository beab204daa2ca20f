"""Writer servers on 127.0.0.1: an OpenAI-compatible chat endpoint that answers as a
writer would, each model name one behaviour, and keeps every request body it was sent.

- `whole`: a finished writing (`finish_reason: stop`);
- `limited`: the same writing, honouring `max_tokens` at one token a character, and
  `finish_reason: length` when it cuts;
- `think_closed`: a reasoning trace closed by `</think>` only, then the writing (an
  R1-style chat template opens the trace in the prompt);
- `reasoning_field`: the writing, with its reasoning in the provider's own field
  (`reasoning_content`);
- `unclosed`: a trace opened by `<think>` and cut by the limit before it closed;
- `empty`: no text at all; `filtered`: no text, `finish_reason: content_filter`.

And the replies that are not what they seem (`TRICKS`): prose that holds a reasoning tag
or an explanation tag as its own words (`PROSE`: a `<think>` never closed in its middle,
a last line that quotes `</think>`, a `</think>` on a line of its own after a title and
a first sentence, a `<解释开始>` in its middle), a refusal in words and one in the
provider's own `refusal` field, a writing the content filter stopped after some text,
and a server that sends the reasoning in its field and leaves it in the text too.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from inspect_ai.model import Model, get_model

from support.local_http import QuietHandler, serving

WRITING = (
    "秋天来了，院子里的银杏一夜之间黄透了。母亲在树下扫落叶，扫帚声沙沙地响。"
    "我站在窗前看她，忽然明白，日子就是这样一片一片落下，又一片一片被人收拢起来。"
)
TRACE = "先想一想：题目要写秋天，要有细节，要收得住。REASONING-MARK"
# Prose whose own words hold a tag, never a trace: each judged whole.
PROSE = {
    "prose_think": f"开头一段。\n\n他在草稿纸上写下<think>这个词，又划掉了。\n\n{WRITING}",
    "prose_unthink": f"开头一段。\n\n{WRITING}\n\n最后一行，他敲下的是</think>",
    "prose_titled": f"《秋》\n\n院子里的银杏黄透了。\n</think>\n\n{WRITING}",
    "prose_explained": f"开头一段。\n\n门上挂着<解释开始>的牌子。\n\n{WRITING}",
}
REFUSAL = "I'm sorry, but I can't help with that."
POLICY = "This request is outside our usage policy."  # no refusal by its words alone
TRICKS = (*PROSE, "refusal", "refusal_field", "filtered_text", "think_twice")
BEHAVIOURS = (
    "whole",
    "limited",
    "think_closed",
    "reasoning_field",
    "unclosed",
    "empty",
    "filtered",
)


def reply(behaviour: str, max_tokens: int | None) -> tuple[str, str, str | None]:
    """(content, finish_reason, reasoning field) of one behaviour."""
    if behaviour == "limited" and max_tokens is not None and max_tokens < len(WRITING):
        return WRITING[:max_tokens], "length", None
    if behaviour == "think_closed":
        return f"{TRACE}\n</think>\n\n{WRITING}", "stop", None
    if behaviour == "reasoning_field":
        return WRITING, "stop", TRACE
    if behaviour == "unclosed":
        return f"<think>{TRACE}", "length", None
    if behaviour == "empty":
        return "", "stop", None
    if behaviour == "filtered":
        return "", "content_filter", None
    if behaviour in PROSE:
        return PROSE[behaviour], "stop", None
    if behaviour == "refusal":
        return REFUSAL, "stop", None
    if behaviour == "filtered_text":
        return WRITING[:40], "content_filter", None
    if behaviour == "think_twice":
        return f"{TRACE}\n</think>\n\n{WRITING}", "stop", TRACE
    return WRITING, "stop", None


@dataclass
class WriterServer:
    """The server; `bodies` are the request bodies received, in order."""

    bodies: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with server.lock:
                    server.bodies.append(body)
                self.send(200, "application/json", json.dumps(answer(body)).encode())

        return Handler


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """The chat completion a request's behaviour (its model name) answers."""
    behaviour = str(body.get("model", "whole"))
    limit = body.get("max_tokens") or body.get("max_completion_tokens")
    content, finish, reasoning = reply(behaviour, limit)
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if reasoning is not None:
        message["reasoning_content"] = reasoning
    if behaviour == "refusal_field":
        message = {"role": "assistant", "content": None, "refusal": POLICY}
    return {
        "id": "chatcmpl-writer",
        "object": "chat.completion",
        "created": 0,
        "model": behaviour,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": 100,
            "completion_tokens": len(content),
            "total_tokens": 100 + len(content),
        },
    }


@contextmanager
def writer_server() -> Iterator[tuple[WriterServer, str]]:
    """A running writer server and its base URL (`.../v1`)."""
    state = WriterServer()
    with serving(state.handler()) as url:
        yield state, url


def writer_model(base_url: str, behaviour: str) -> Model:
    """The writer server's `behaviour` as an `openai-api` model (its base URL named, so
    that inspect's memoized model of an earlier server is never handed back)."""
    return get_model(f"openai-api/writer/{behaviour}", base_url=base_url, api_key="none")
