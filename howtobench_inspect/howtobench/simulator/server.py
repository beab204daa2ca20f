"""A judge simulator: a small chat server on 127.0.0.1 for tests and benchmarks.

It speaks OpenAI's chat completions and Anthropic's Messages API (`POST /v1/messages`,
streamed or not), plays writer, negotiator, leaf experts and the rubric and auto-plan
baseline judges with valid replies, chosen from what the prompt asks (never from call
order), bills tokens with simulated prompt caching, and can add latency and inject
faults: 429 and 500 answers, hung requests (for client timeouts), dropped connections,
malformed replies and out-of-range scores. Point inspect at it with the
`openai-api/<service>/<model>` provider, or with `anthropic/<model>`:

    python -m howtobench.simulator --port 8765 --latency 0.5
    curl http://127.0.0.1:8765/stats      # calls by kind, faults, characters, tokens, peak load
    SIM_BASE_URL=http://127.0.0.1:8765/v1 SIM_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role grader=openai-api/sim/judge
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role grader=anthropic/claude-sim
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from howtobench.simulator.billing import PromptCache, Segment, Usage
from howtobench.simulator.protocol import Question, classify, message_text
from howtobench.simulator.replies import (
    FAULTS,
    STATUS_FAULTS,
    UNANSWERED_FAULTS,
    Faults,
    reply_text,
)
from howtobench.simulator.wire import (
    ANTHROPIC_PATH,
    AnthropicMessages,
    Api,
    Conversation,
    OpenAIChat,
)

_OPENAI = OpenAIChat()
_ANTHROPIC = AnthropicMessages()


class _Server(ThreadingHTTPServer):
    # the default backlog of 5 refuses connections under a judge's burst of requests
    request_queue_size = 1024


@dataclass(frozen=True)
class Fault:
    """A scripted fault (one of `FAULTS`) instead of a reply."""

    name: str


# A script answers a question with reply text, a JSON reply, a fault, or None for the
# simulator's own valid reply. It reads the question, never the call order.
Script = Callable[[Question], "str | dict[str, Any] | Fault | None"]


@dataclass(frozen=True)
class Request:
    """What one request carried and what it was billed (`requests` keeps them in the
    order they were billed, the order the prompt cache saw them)."""

    path: str
    api: str  # "anthropic" for Anthropic's path, else "openai"
    model: str
    kind: str  # what the prompt asks (`Question.kind`)
    stream: bool
    segments: tuple[Segment, ...]  # its content blocks, with their `cache_control`
    automatic_cache: bool  # Anthropic: the request carried a top-level `cache_control`
    fault: str | None
    reply: str | None  # None when a fault answered instead of a reply
    usage: Usage | None  # None with the reply

    @property
    def marked(self) -> tuple[Segment, ...]:
        """The blocks that carried a cache breakpoint."""
        return tuple(s for s in self.segments if s.cache_control)


@dataclass
class JudgeSimulator:
    """The server; use as a context manager or call start() and stop().

    Random `faults` model a flaky provider; a `script` answers chosen questions as a
    test wants (a given reply, or a given fault), and may change its answers while the
    server runs (a judge that recovers). With `record`, every request is kept in
    `requests` (its text included): for tests, not for runs of millions of calls.
    """

    latency: float = 0.0
    faults: Faults = field(default_factory=Faults)
    port: int = 0
    script: Script | None = None
    record: bool = True
    calls: Counter[str] = field(default_factory=Counter)
    # (kind, writing judged, or the question itself for the negotiator and the writer)
    questions: Counter[tuple[str, str]] = field(default_factory=Counter)
    faults_sent: Counter[str] = field(default_factory=Counter)
    characters: Counter[str] = field(default_factory=Counter)  # prompt and completion
    tokens: Counter[str] = field(default_factory=Counter)  # billed: input, cache_*, output
    # (kind, temperature asked for): how the calls were configured
    temperatures: Counter[tuple[str, float | None]] = field(default_factory=Counter)
    requests: list[Request] = field(default_factory=list)
    peak: int = 0  # the most requests in flight at once
    span: list[float] = field(default_factory=list)  # wall clock of first request, last answer

    def __post_init__(self) -> None:
        self._in_flight = 0
        self._lock = threading.Lock()
        self._rng = random.Random(self.faults.seed)
        self._cache = PromptCache()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (`<SERVICE>_BASE_URL`, `OPENAI_BASE_URL`)."""
        return f"{self.root_url}/v1"

    @property
    def root_url(self) -> str:
        """The Anthropic base URL (`ANTHROPIC_BASE_URL`): its SDK adds `/v1/messages`."""
        assert self._server is not None, "the simulator is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> JudgeSimulator:
        simulator = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                simulator._answer(self)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/") != "/stats":
                    simulator._send(self, 404, {"error": {"message": "only /stats"}})
                else:
                    simulator._send(self, 200, simulator.stats())

        self._server = _Server(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stats(self) -> dict[str, Any]:
        """What was asked and answered so far (also served as GET /stats)."""
        with self._lock:
            return {
                "calls": dict(self.calls),
                "faults": dict(self.faults_sent),
                "characters": dict(self.characters),
                "tokens": dict(self.tokens),
                "peak": self.peak,
                "span": list(self.span),
            }

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> JudgeSimulator:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            self._in_flight += 1
            self.peak = max(self.peak, self._in_flight)
            self.span[:1] = self.span[:1] or [time.time()]
        try:
            self._reply(handler)
        finally:
            with self._lock:
                self._in_flight -= 1
                self.span[1:] = [time.time()]

    def _reply(self, handler: BaseHTTPRequestHandler) -> None:
        api: Api = _ANTHROPIC if urlsplit(handler.path).path == ANTHROPIC_PATH else _OPENAI
        body = json.loads(handler.rfile.read(int(handler.headers.get("Content-Length", 0))))
        conversation = api.read(body)
        model = body.get("model", "sim")
        question = classify(conversation.messages)
        scripted = self.script(question) if self.script else None
        with self._lock:
            fault = scripted.name if isinstance(scripted, Fault) else self.faults.draw(self._rng)
            self.calls[question.kind] += 1
            self.temperatures[(question.kind, body.get("temperature"))] += 1
            subject = question.text if question.writing is None else question.writing
            self.questions[(question.kind, subject)] += 1
            if fault:
                self.faults_sent[fault] += 1
        if self.latency:
            time.sleep(self.latency)
        if fault == "hang":
            time.sleep(self.faults.hang_seconds)

        carried = partial(
            Request,
            handler.path,
            api.name,
            model,
            question.kind,
            conversation.stream,
            conversation.segments,
            conversation.automatic_cache,
            fault,
        )
        if fault in UNANSWERED_FAULTS:
            with self._lock:
                self._keep(carried(None, None))
            self._fail(handler, api, fault)
            return
        if isinstance(scripted, str | dict):
            content = scripted if isinstance(scripted, str) else json.dumps(scripted)
        else:
            content = reply_text(question, fault)
        with self._lock:
            usage = api.bill(self._cache, model, conversation, content)
            self._count(conversation, content, usage)
            self._keep(carried(content, usage))
        answer = api.answer(model, content, usage, conversation.stream)
        self._send_raw(handler, 200, answer.data, answer.content_type)

    def _keep(self, request: Request) -> None:
        """Record a request; called under the lock, so `requests` is in billing order."""
        if self.record:
            self.requests.append(request)

    def _fail(self, handler: BaseHTTPRequestHandler, api: Api, fault: str) -> None:
        """No reply: a dropped connection, an error status, or a body that is no reply."""
        if fault == "drop":
            handler.close_connection = True
            handler.connection.close()
        elif fault in STATUS_FAULTS:
            self._send(handler, int(fault), api.error(int(fault), f"simulated {fault}"))
        else:
            self._send_raw(handler, 200, b"" if fault == "empty_body" else b"<html>oops")

    def _count(self, conversation: Conversation, content: str, usage: Usage) -> None:
        self.characters["prompt"] += sum(
            len(message_text(m.get("content") or "")) for m in conversation.messages
        )
        self.characters["completion"] += len(content)
        self.tokens.update(
            input=usage.input,
            cache_write=usage.cache_write,
            cache_read=usage.cache_read,
            output=usage.output,
        )

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        JudgeSimulator._send_raw(handler, status, json.dumps(payload).encode())

    @staticmethod
    def _send_raw(
        handler: BaseHTTPRequestHandler,
        status: int,
        data: bytes,
        content_type: str = "application/json",
    ) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout); nothing to answer


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m howtobench.simulator",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    for name in FAULTS:
        parser.add_argument(f"--rate-{name.replace('_', '-')}", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    faults = Faults(
        **{f"rate_{n}": getattr(args, f"rate_{n}") for n in FAULTS},
        seed=args.seed,
    )
    # a served simulator may answer long runs: it keeps counts, not every request's text
    simulator = JudgeSimulator(
        latency=args.latency, faults=faults, port=args.port, record=False
    ).start()
    print(f"judge simulator on {simulator.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        simulator.stop()
