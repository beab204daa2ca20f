"""A judge simulator: a small OpenAI-compatible chat server on 127.0.0.1 for tests and benchmarks.

It plays writer, negotiator, leaf experts and the rubric and auto-plan baseline judges
with valid replies, chosen from what the prompt asks (never from call order), and can
add latency and inject faults: 429 and 500 answers, hung requests (for client timeouts),
dropped connections, malformed replies and out-of-range scores. Point inspect at it with
the `openai-api/<service>/<model>` provider:

    python -m howtobench.simulator --port 8765 --latency 0.5
    curl http://127.0.0.1:8765/stats      # calls by kind, faults sent, characters, peak load
    SIM_BASE_URL=http://127.0.0.1:8765/v1 SIM_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role grader=openai-api/sim/judge
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import re
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from howtobench.baselines.prompts import baseline_prompt, rubric_ids
from howtobench.tree.prompts import tree_prompt
from howtobench.tree.spec import LEAVES, NEGOTIATED_NODES, Leaf

_WRITING = re.compile(r"<writing>\n(.*)\n</writing>", re.S)
_LEAVES = {leaf.id: leaf for leaf in LEAVES}
_FENCE_END = "</writing>"
_BASELINES = ("rubric", "autoplan")  # single-call judges, told apart by their system prompts
_PLAN_NAMES = ("content", "structure", "language", "creativity", "task_fit", "feeling")


@dataclass(frozen=True)
class Question:
    """What a chat request asks (`writer`, `negotiator`, a leaf id, `rubric` or `autoplan`),
    and what it judges."""

    kind: str
    writing: str | None
    attempt: int  # 1 for the first ask, 2 and more for re-asks
    text: str  # the first user message: the question itself
    last: str  # the last user message: the question, or the re-ask with its error


def classify(messages: list[dict[str, Any]] | list[Any]) -> Question:
    """Read a conversation (dicts of an HTTP request, or inspect ChatMessages)."""
    pairs = [
        (m["role"], _text(m["content"])) if isinstance(m, dict) else (m.role, m.text)
        for m in messages
    ]
    users = [text for role, text in pairs if role == "user"]
    attempt = 1 + sum(1 for role, _ in pairs if role == "assistant")
    system = pairs[0][1] if pairs and pairs[0][0] == "system" else ""
    if system in (tree_prompt("negotiator_system", "zh"), tree_prompt("negotiator_system", "en")):
        return Question("negotiator", None, attempt, users[0], users[-1])
    for kind in _BASELINES:
        if system in (
            baseline_prompt(f"{kind}_system", "zh"),
            baseline_prompt(f"{kind}_system", "en"),
        ):
            match = _WRITING.search(users[0])
            return Question(kind, match.group(1) if match else None, attempt, users[0], users[-1])
    for leaf in LEAVES:
        for language in ("zh", "en"):
            if (
                leaf.judge == "llm"
                and users
                and tree_prompt(f"leaf_{leaf.id}", language) in users[0]
            ):
                match = _WRITING.search(users[0])
                return Question(
                    leaf.id, match.group(1) if match else None, attempt, users[0], users[-1]
                )
    return Question("writer", None, attempt, users[0] if users else "", users[-1] if users else "")


def _text(content: str | list[dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content)  # as ChatMessage.text joins


def _unit(*parts: str) -> float:
    """A stable pseudo-random number in [0, 1) from text."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def asked_ids(question: Question) -> list[str]:
    return [leaf.id for leaf in LEAVES if f"- {leaf.id}: " in question.text]


def valid_weights(question: Question) -> dict[str, Any]:
    """Weights that vary with the instruction but not with the writing, summing to 1 per node."""
    ids = asked_ids(question)
    weights: dict[str, float] = {}
    for node in NEGOTIATED_NODES:
        group = [i for i in ids if _LEAVES[i].node == node]
        raw = [0.5 + _unit(question.text, i) for i in group]
        weights.update({i: round(r / sum(raw), 6) for i, r in zip(group, raw, strict=True)})
        if group:  # make the rounded group sum exactly 1
            weights[group[-1]] = round(1 - sum(weights[i] for i in group[:-1]), 6)
    return {"weights": weights, "explanation": "simulated weights"}


def simulated_score(writing: str, key: str, low: int = 1, high: int = 10) -> int:
    """A score that grows with the writing's length and varies with its text (lowest if empty)."""
    if not writing.strip():
        return low
    share = min(len(writing) / 1500, 1.0) * 0.6 + _unit(writing, key) * 0.4
    return low + round(share * (high - low))


def valid_score(leaf: Leaf, writing: str) -> dict[str, Any]:
    reason = "simulated" if writing.strip() else "empty"
    return {"score": simulated_score(writing, leaf.id, leaf.low, leaf.high), "reason": reason}


def asked_dimensions(question: Question) -> list[str]:
    """The rubric's dimension ids: read after the writing, where the rubric comes last."""
    return list(rubric_ids(question.text.rpartition(_FENCE_END)[2]))


def valid_rubric(question: Question) -> dict[str, Any]:
    writing = question.writing or ""
    scores = {i: simulated_score(writing, i) for i in asked_dimensions(question)}
    return {"scores": scores, "overall": simulated_score(writing, "overall"), "reason": "simulated"}


def valid_plan(question: Question) -> dict[str, Any]:
    """3-6 dimensions, their weights and scores from the writing; overall their weighted mean."""
    writing = question.writing or ""
    names = _PLAN_NAMES[: 3 + int(_unit(writing, "count") * 4)]
    dimensions: list[dict[str, Any]] = [
        {
            "name": name,
            "weight": round(0.5 + _unit(writing, "weight", name), 2),
            "score": simulated_score(writing, name),
        }
        for name in names
    ]
    total = sum(d["weight"] for d in dimensions)
    overall = round(sum(d["weight"] * d["score"] for d in dimensions) / total, 1)
    return {"dimensions": dimensions, "overall": overall, "reason": "simulated"}


def valid_reply(question: Question) -> str:
    if question.kind == "writer":
        return "模拟的作品正文。\n\n第二段：这是一段用于测试的文字。"
    if question.kind == "negotiator":
        return json.dumps(valid_weights(question))
    if question.kind == "rubric":
        return json.dumps(valid_rubric(question))
    if question.kind == "autoplan":
        return json.dumps(valid_plan(question))
    return json.dumps(valid_score(_LEAVES[question.kind], question.writing or ""))


def out_of_range_reply(question: Question) -> str:
    if question.kind == "negotiator":
        return json.dumps({"weights": dict.fromkeys(asked_ids(question), 0.9)})
    if question.kind == "rubric":
        scores = dict.fromkeys(asked_dimensions(question), 42)
        return json.dumps({"scores": scores, "overall": 42, "reason": "out of range"})
    if question.kind == "autoplan":
        return json.dumps({**valid_plan(question), "overall": 0, "reason": "out of range"})
    return json.dumps({"score": 42, "reason": "out of range"})


# Faults by name: transient ones (429, 500, hang, drop), unusable replies (malformed,
# out_of_range), a request the provider refuses (400), and a 200 answer whose body is
# empty or not JSON at all.
FAULTS: tuple[str, ...] = (
    "429",
    "500",
    "hang",
    "drop",
    "malformed",
    "out_of_range",
    "400",
    "empty_body",
    "bad_body",
)


@dataclass
class Faults:
    """Chances per request (0-1) of each fault; `seed` makes a run repeatable."""

    rate_429: float = 0.0
    rate_500: float = 0.0
    rate_hang: float = 0.0
    rate_drop: float = 0.0
    rate_malformed: float = 0.0
    rate_out_of_range: float = 0.0
    rate_400: float = 0.0
    rate_empty_body: float = 0.0
    rate_bad_body: float = 0.0
    hang_seconds: float = 30.0
    seed: int = 0

    def draw(self, rng: random.Random) -> str | None:
        roll = rng.random()
        for name in FAULTS:
            rate = getattr(self, f"rate_{name}")
            if roll < rate:
                return name
            roll -= rate
        return None


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


@dataclass
class JudgeSimulator:
    """The server; use as a context manager or call start() and stop().

    Random `faults` model a flaky provider; a `script` answers chosen questions as a
    test wants (a given reply, or a given fault), and may change its answers while the
    server runs (a judge that recovers).
    """

    latency: float = 0.0
    faults: Faults = field(default_factory=Faults)
    port: int = 0
    script: Script | None = None
    calls: Counter[str] = field(default_factory=Counter)
    # (kind, writing judged, or the question itself for the negotiator and the writer)
    questions: Counter[tuple[str, str]] = field(default_factory=Counter)
    faults_sent: Counter[str] = field(default_factory=Counter)
    tokens: Counter[str] = field(default_factory=Counter)
    # (kind, temperature asked for): how the calls were configured
    temperatures: Counter[tuple[str, float | None]] = field(default_factory=Counter)
    peak: int = 0  # the most requests in flight at once
    span: list[float] = field(default_factory=list)  # wall clock of first request, last answer

    def __post_init__(self) -> None:
        self._in_flight = 0
        self._lock = threading.Lock()
        self._rng = random.Random(self.faults.seed)
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None, "the simulator is not running"
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

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
        body = json.loads(handler.rfile.read(int(handler.headers.get("Content-Length", 0))))
        question = classify(body.get("messages", []))
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
        if fault == "drop":
            handler.close_connection = True
            handler.connection.close()
            return
        if fault in ("429", "500", "400"):
            self._send(
                handler,
                int(fault),
                {"error": {"message": f"simulated {fault}", "type": "simulated"}},
            )
            return
        if fault in ("empty_body", "bad_body"):
            self._send_raw(handler, 200, b"" if fault == "empty_body" else b"<html>oops")
            return
        if isinstance(scripted, str | dict):
            content = scripted if isinstance(scripted, str) else json.dumps(scripted)
        else:
            content = {
                "malformed": "I would rather not answer in JSON.",
                "out_of_range": out_of_range_reply(question),
            }.get(fault or "", None) or valid_reply(question)
        prompt_tokens = sum(len(_text(m.get("content", ""))) for m in body.get("messages", []))
        with self._lock:
            self.tokens["prompt"] += prompt_tokens
            self.tokens["completion"] += len(content)
        self._send(
            handler,
            200,
            {
                "id": f"sim-{time.monotonic_ns()}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body.get("model", "sim"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": content},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": len(content),
                    "total_tokens": prompt_tokens + len(content),
                },
            },
        )

    @staticmethod
    def _send(handler: BaseHTTPRequestHandler, status: int, payload: dict[str, Any]) -> None:
        JudgeSimulator._send_raw(handler, status, json.dumps(payload).encode())

    @staticmethod
    def _send_raw(handler: BaseHTTPRequestHandler, status: int, data: bytes) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (its timeout); nothing to answer


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
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
    simulator = JudgeSimulator(latency=args.latency, faults=faults, port=args.port).start()
    print(f"judge simulator on {simulator.base_url}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        simulator.stop()


if __name__ == "__main__":
    main()
