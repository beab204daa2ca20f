"""A judge simulator: a small chat server on 127.0.0.1 for tests and benchmarks.

It speaks OpenAI's chat completions and Anthropic's Messages API (`POST /v1/messages`,
streamed or not) and both providers' batch APIs (`batches.py`), plays writer,
negotiator, leaf experts and the rubric and auto-plan baseline judges with valid
replies, chosen from what the prompt asks (never from call order), bills tokens with
simulated prompt caching, and can add latency and inject faults: 429 and 500 answers,
hung requests (for client timeouts), dropped connections, malformed replies and
out-of-range scores. With `--profile` it plays another OpenAI-compatible server
(`profiles.py`: vllm, sglang, llama-cpp, llama-cpp-python, ollama, lmstudio, tgi, tgi-1):
what that server refuses (list content, a system role, temperature 0, a prompt over its
context), in its own error bodies, and the fields it adds (reasoning). Point inspect at it
with the `openai-api/<service>/<model>` provider, or with `anthropic/<model>` (and
`openai/<model>` in batch mode, below):

    python -m howtobench.simulator --port 8765 --latency 0.5
    python -m howtobench.simulator --profile vllm --context 8192   # plays vLLM, 8k context
    curl http://127.0.0.1:8765/stats      # calls by kind, faults, characters, tokens, peak load
    SIM_BASE_URL=http://127.0.0.1:8765/v1 SIM_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role grader=openai-api/sim/judge
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role grader=anthropic/claude-sim
    # a judge in batch mode; --batch-delay inf: batches never end, --no-batch-api: 404
    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role \\
      'grader={model: openai/gpt-4o-mini, batch: {size: 100, send_delay: 1, tick: 1}}'
"""

from __future__ import annotations

import argparse
import json
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from howtobench.simulator.answers import Fault, Script, bill, choose, read_by
from howtobench.simulator.batches import Batches, Outcome
from howtobench.simulator.billing import PromptCache, Segment, Usage, tokens, written_out
from howtobench.simulator.profiles import (
    DEFAULT_PROFILE,
    PROFILES,
    Profile,
    Refused,
    check,
    context_fault,
    get_profile,
)
from howtobench.simulator.protocol import message_text
from howtobench.simulator.replies import (
    FAULTS,
    STATUS_FAULTS,
    UNANSWERED_FAULTS,
    Faults,
)
from howtobench.simulator.wire import (
    ANTHROPIC_PATH,
    AnthropicMessages,
    Api,
    Conversation,
    OpenAIChat,
)

# `Fault` and `Script` are defined with the answering code the in-process provider shares
__all__ = [
    "CONTEXT_FAULT",
    "ERROR_OBJECT_FAULT",
    "ERROR_OBJECT_MESSAGE",
    "Fault",
    "JudgeSimulator",
    "Request",
    "Script",
    "main",
]

_ANTHROPIC = AnthropicMessages()
CONTEXT_FAULT = "context"
# HTTP 200 with an error object for a body, as OpenAI-compatible proxies and overloaded
# local servers answer (a scripted fault only)
ERROR_OBJECT_FAULT = "error_object"
ERROR_OBJECT_MESSAGE = "model overloaded"


class _Server(ThreadingHTTPServer):
    # the default backlog of 5 refuses connections under a judge's burst of requests
    request_queue_size = 1024


@dataclass(frozen=True)
class Request:
    """What one request carried and what it was billed (`requests` keeps them in the
    order they were billed, the order the prompt cache saw them)."""

    path: str  # a batched request's is the route it names inside its batch
    api: str  # "anthropic" for Anthropic's path, else "openai"
    model: str
    kind: str  # what the prompt asks (`Asked.kind`)
    stream: bool
    segments: tuple[Segment, ...]  # its content blocks, with their `cache_control`
    automatic_cache: bool  # Anthropic: the request carried a top-level `cache_control`
    fault: str | None
    reply: str | None  # None when a fault answered instead of a reply
    usage: Usage | None  # None with the reply
    batch: str | None = None  # the batch that carried it; None: sent directly
    truncated: bool = False  # the profile's server cut the prompt to fit its context

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

    Both batch APIs are served (`howtobench.simulator.batches`); a batched request is
    answered and counted as the same request sent directly, and also counted in
    `batched`. A batch ends `batch_delay` seconds after it was created at the earliest
    (`math.inf`: never, to test a bounded wait); `batch_api=False` answers 404 on every
    batch path, as a server without a batch API.

    `profile` (a name in `profiles.PROFILES`, or a `Profile`) makes the OpenAI side play
    that server: a request it would refuse gets its status and error body and is counted
    in `refused` by reason (`list_content`, `system_role`, `temperature`, `n`, `stop`,
    `context`, `max_tokens`); a prompt over the context of a server that truncates
    (Ollama) is judged as cut (`truncated` counts them). The default, `openai`, answers
    as the simulator always has. Anthropic's API is not profiled.
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
    batch_delay: float = 0.0
    batch_api: bool = True
    profile: str | Profile = DEFAULT_PROFILE
    refused: Counter[str] = field(default_factory=Counter)  # by reason, as the profile refuses
    truncated: int = 0  # prompts a truncating profile cut to fit its context
    batched: Counter[str] = field(default_factory=Counter)  # requests inside batches, per API
    peak: int = 0  # the most requests in flight at once
    span: list[float] = field(default_factory=list)  # wall clock of first request, last answer

    def __post_init__(self) -> None:
        self._in_flight = 0
        self._lock = threading.Lock()
        self._rng = random.Random(self.faults.seed)
        self._cache = PromptCache()
        self._server: ThreadingHTTPServer | None = None
        self._profile = get_profile(self.profile)
        self._openai = OpenAIChat(self._profile)
        self._batches = Batches(
            lambda path, body, batch: self.respond(path, body, batch=batch),
            lambda: self.root_url,
            delay=lambda: self.batch_delay,
            enabled=lambda: self.batch_api,
        )

    @property
    def batches(self) -> Counter[str]:
        """Batches created so far, per API ("openai", "anthropic")."""
        return Counter(self._batches.stats())

    def batch_ids(self, *, unfinished: bool = False) -> list[str]:
        """The ids of the batches created so far; with `unfinished`, of those not ended."""
        return self._batches.ids(unfinished=unfinished)

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
                path = urlsplit(self.path).path
                if path.rstrip("/") == "/stats":
                    simulator._send(self, 200, simulator.stats())
                elif (batched := simulator._batches.route("GET", path, "", b"")) is not None:
                    simulator._deliver(self, batched)
                else:
                    simulator._send(self, 404, {"error": {"message": "only /stats"}})

        self._server = _Server(("127.0.0.1", self.port), Handler)
        self._server.daemon_threads = True
        # a short poll: stop() returns at once (the default poll waits half a second)
        serving = partial(self._server.serve_forever, poll_interval=0.05)
        threading.Thread(target=serving, daemon=True).start()
        return self

    def stats(self) -> dict[str, Any]:
        """What was asked and answered so far (also served as GET /stats): calls by kind
        (batched requests included), faults, characters, billed tokens, batches created
        per API (`batches`) and requests answered inside them (`batched`), peak load."""
        with self._lock:
            return {
                "calls": dict(self.calls),
                "faults": dict(self.faults_sent),
                "characters": dict(self.characters),
                "tokens": dict(self.tokens),
                "batches": self._batches.stats(),
                "batched": dict(self.batched),
                "profile": self._profile.name,
                "refused": dict(self.refused),
                "truncated": self.truncated,
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
        path = urlsplit(handler.path).path
        data = handler.rfile.read(int(handler.headers.get("Content-Length", 0)))
        content_type = handler.headers.get("Content-Type", "")
        if (batched := self._batches.route("POST", path, content_type, data)) is not None:
            outcome = batched
        else:
            outcome = self.respond(path, json.loads(data), recorded_path=handler.path)
        self._deliver(handler, outcome)

    def respond(
        self,
        path: str,
        body: dict[str, Any],
        *,
        batch: str | None = None,
        recorded_path: str | None = None,
    ) -> Outcome:
        """The answer to one chat request (`path` picks the API), sent directly or, with
        `batch`, from inside that batch: counted, billed, scripted and faulted alike. The
        answer is chosen and billed by `answers` (as the in-process provider's is); the
        rest is the wire's: refusals, statuses, latency, hung and dropped connections."""
        api: Api = _ANTHROPIC if path == ANTHROPIC_PATH else self._openai
        conversation = api.read(body)
        model = body.get("model", "sim")
        refused, read = None, conversation.messages
        if api is self._openai:
            refused, read = self._as_profiled(body, conversation)
        choice = choose(
            read,
            body.get("temperature"),
            faults=self.faults,
            rng=self._rng,
            script=self.script,
            answered=refused is None,
        )
        question = choice.question
        with self._lock:
            fault = choice.fault
            if refused is not None:
                fault = f"refused:{refused.reason}"
                self.refused[refused.reason] += 1
            if read is not conversation.messages:
                self.truncated += 1
            self.calls[question.kind] += 1
            if batch is not None:
                self.batched[api.name] += 1
            self.temperatures[(question.kind, body.get("temperature"))] += 1
            subject = question.text if question.writing is None else question.writing
            self.questions[(question.kind, subject)] += 1
            if fault and refused is None:
                self.faults_sent[fault] += 1
        if self.latency:
            time.sleep(self.latency)
        if fault == "hang":
            time.sleep(self.faults.hang_seconds)

        carried = partial(
            Request,
            recorded_path or path,
            api.name,
            model,
            question.kind,
            conversation.stream,
            conversation.segments,
            conversation.automatic_cache,
            fault,
            batch=batch,
            truncated=read is not conversation.messages,
        )
        if refused is None and fault == CONTEXT_FAULT:
            prompt = tokens(len(written_out(conversation.segments)))
            if api is _ANTHROPIC:  # Anthropic's words, in its error shape
                message = f"prompt is too long: {max(prompt, 200_001)} tokens > 200000 maximum"
                refused = Refused("context", 400, api.error(400, message))
            else:
                refused = context_fault(self._profile, prompt)
        if refused is not None:
            with self._lock:
                self._keep(carried(None, None))
            return Outcome(refused.status, json.dumps(refused.body).encode())
        if fault == ERROR_OBJECT_FAULT:
            with self._lock:
                self._keep(carried(None, None))
            return Outcome(200, json.dumps(api.error(200, ERROR_OBJECT_MESSAGE)).encode())
        if fault in UNANSWERED_FAULTS:
            with self._lock:
                self._keep(carried(None, None))
            return self._fault_outcome(api, fault)
        content = choice.reply()
        with self._lock:
            cut = read is not conversation.messages
            usage = bill(api, self._cache, self._profile, model, conversation, content, cut=cut)
            self._count(conversation, content, usage)
            self._keep(carried(content, usage))
        answer = api.answer(model, content, usage, conversation.stream)
        return Outcome(200, answer.data, answer.content_type)

    def _as_profiled(
        self, body: dict[str, Any], conversation: Conversation
    ) -> tuple[Refused | None, list[dict[str, Any]]]:
        """What the profile's server makes of a request: its refusal (or None), and the
        messages its model reads (the request's own, or the prompt cut to its context)."""
        refused = check(self._profile, body, tokens(len(written_out(conversation.segments))))
        return refused, conversation.messages if refused else read_by(self._profile, conversation)

    def _keep(self, request: Request) -> None:
        """Record a request; called under the lock, so `requests` is in billing order."""
        if self.record:
            self.requests.append(request)

    @staticmethod
    def _fault_outcome(api: Api, fault: str) -> Outcome:
        """No reply: a dropped connection, an error status, or a body that is no reply."""
        if fault == "drop":
            return Outcome(0, b"", dropped=True)
        if fault in STATUS_FAULTS:
            return Outcome(
                int(fault), json.dumps(api.error(int(fault), f"simulated {fault}")).encode()
            )
        return Outcome(200, b"" if fault == "empty_body" else b"<html>oops")

    @staticmethod
    def _deliver(handler: BaseHTTPRequestHandler, outcome: Outcome) -> None:
        if outcome.dropped:
            handler.close_connection = True
            handler.connection.close()
        else:
            JudgeSimulator._send_raw(handler, outcome.status, outcome.data, outcome.content_type)

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
    parser.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=DEFAULT_PROFILE,
        help="the OpenAI-compatible server to play (default: openai, the simulator as always)",
    )
    parser.add_argument(
        "--context", type=int, help="the profile's context size in tokens (two characters a token)"
    )
    parser.add_argument(
        "--usage-read",
        action="store_true",
        help="a truncating profile's usage counts the context it read, not the prompt sent "
        "(Ollama past num_ctx): --profile ollama --context 1024 --usage-read",
    )
    parser.add_argument(
        "--uncached-usage",
        action="store_true",
        help="usage counts only the prompt tokens past a prefix reused from an earlier "
        "prompt, without saying so (Ollama 0.30.x)",
    )
    parser.add_argument(
        "--no-system-role",
        action="store_true",
        help="play a chat template that refuses a system role (Gemma's), in the profile's words",
    )
    parser.add_argument(
        "--batch-delay",
        type=float,
        default=0.0,
        help="seconds from a batch's creation to its end at the earliest (inf: never ends)",
    )
    parser.add_argument(
        "--no-batch-api",
        action="store_true",
        help="answer 404 on the batch APIs' paths, as a server without them",
    )
    args = parser.parse_args()
    faults = Faults(
        **{f"rate_{n}": getattr(args, f"rate_{n}") for n in FAULTS},
        seed=args.seed,
    )
    changes: dict[str, Any] = {"system_role": False} if args.no_system_role else {}
    if args.context is not None:
        changes["context"] = args.context
    if args.usage_read:
        changes["usage_read"] = True
    if args.uncached_usage:
        changes["uncached_usage"] = True
    profile = get_profile(args.profile, **changes)
    # a served simulator may answer long runs: it keeps counts, not every request's text
    simulator = JudgeSimulator(
        latency=args.latency,
        faults=faults,
        port=args.port,
        record=False,
        batch_delay=args.batch_delay,
        batch_api=not args.no_batch_api,
        profile=profile,
    ).start()
    playing = "" if profile.name == DEFAULT_PROFILE else f" as {profile.server}"
    # the line that says it listens, and where: `process.served` waits for it
    print(f"judge simulator on {simulator.base_url}{playing}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        simulator.stop()
