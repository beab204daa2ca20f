"""The judge simulator's state, and the answer each chat request gets.

`JudgeSimulator` keeps what a run asked and was answered, and answers a chat request
sent over HTTP (`routes`) or from inside a batch (`batches`): chosen and billed by
`answers`, as the in-process provider's is; refused (`refusals`) or faulted (`faults`)
as the wire would be. `command` serves it from the command line.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import ThreadingHTTPServer
from typing import Any

from howtobench.simulator.answers import Fault, Script, bill, choose, read_by
from howtobench.simulator.batches import Batches
from howtobench.simulator.billing import PromptCache, Segment, Usage, tokens, written_out
from howtobench.simulator.faults import Faults, instead_of_reply
from howtobench.simulator.profiles import DEFAULT_PROFILE, get_profile
from howtobench.simulator.protocol import message_text
from howtobench.simulator.refusals import Profile, check
from howtobench.simulator.routes import listen
from howtobench.simulator.wire import (
    ANTHROPIC_PATH,
    AnthropicMessages,
    Api,
    OpenAIChat,
    Outcome,
)

# `Fault` and `Script` are defined with the answering code the in-process provider shares
__all__ = ["Fault", "JudgeSimulator", "Request", "Script"]

_ANTHROPIC = AnthropicMessages()


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
    max_tokens: int | None = None  # the reply's bound it asked for (either API's field)

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
    `requests` (its text included): for tests, not for runs of millions of calls. A batched
    request is answered and counted as the same request sent directly, and also in
    `batched`; `profile` makes the OpenAI side play another server, its refusals counted in
    `refused` by reason (docs/simulator.md).
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
        self._batches = Batches(self)

    @property
    def batches(self) -> Counter[str]:
        """Batches created so far, per API ("openai", "anthropic")."""
        with self._batches.lock:
            return self._batches.created.copy()

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
        self._server = listen(self, self._batches, self.port)
        return self

    def stats(self) -> dict[str, Any]:
        """What was asked and answered so far (also served as GET /stats); calls by kind
        count batched requests too."""
        with self._lock:
            return {
                "calls": dict(self.calls),
                "faults": dict(self.faults_sent),
                "characters": dict(self.characters),
                "tokens": dict(self.tokens),
                "batches": dict(self.batches),
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

    @contextmanager
    def serving(self) -> Iterator[None]:
        """Count an HTTP request in flight while it is answered (`peak`, `span`)."""
        with self._lock:
            self._in_flight += 1
            self.peak = max(self.peak, self._in_flight)
            self.span[:1] = self.span[:1] or [time.time()]
        try:
            yield
        finally:
            with self._lock:
                self._in_flight -= 1
                self.span[1:] = [time.time()]

    def respond(
        self,
        path: str,
        body: dict[str, Any],
        *,
        batch: str | None = None,
        recorded_path: str | None = None,
    ) -> Outcome:
        """The answer to one chat request (`path` picks the API), sent directly or, with
        `batch`, from inside that batch: counted, billed, scripted and faulted alike."""
        api: Api = _ANTHROPIC if path == ANTHROPIC_PATH else self._openai
        conversation = api.read(body)
        model = body.get("model", "sim")
        refused, read = None, conversation.messages
        if api is self._openai:  # what the profile's server makes of it
            refused = check(self._profile, body, tokens(len(written_out(conversation.segments))))
            read = read if refused else read_by(self._profile, conversation)
        choice = choose(
            read,
            body.get("temperature"),
            faults=self.faults,
            rng=self._rng,
            script=self.script,
            answered=refused is None,
        )
        question, fault, cut = choice.question, choice.fault, read is not conversation.messages
        with self._lock:
            if refused is not None:
                fault = f"refused:{refused.reason}"
                self.refused[refused.reason] += 1
            elif fault:
                self.faults_sent[fault] += 1
            if cut:
                self.truncated += 1
            self.calls[question.kind] += 1
            if batch is not None:
                self.batched[api.name] += 1
            self.temperatures[(question.kind, body.get("temperature"))] += 1
            subject = question.text if question.writing is None else question.writing
            self.questions[(question.kind, subject)] += 1
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
            truncated=cut,
            max_tokens=body.get("max_completion_tokens") or body.get("max_tokens"),
        )
        outcome = (
            Outcome.of(refused.status, refused.body)
            if refused is not None
            else instead_of_reply(api, self._profile, fault, conversation)
        )
        if outcome is None:
            content = choice.reply()
            with self._lock:
                usage = bill(api, self._cache, self._profile, model, conversation, content, cut=cut)
                self.characters["prompt"] += sum(
                    len(message_text(m.get("content") or "")) for m in conversation.messages
                )
                self.characters["completion"] += len(content)
                self.tokens.update(vars(usage))  # input, cache_write, cache_read, output
                self._keep(carried(content, usage))
            return api.answer(model, content, usage, conversation.stream)
        with self._lock:
            self._keep(carried(None, None))
        return outcome

    def _keep(self, request: Request) -> None:
        """Record a request; called under the lock, so `requests` is in billing order."""
        if self.record:
            self.requests.append(request)
