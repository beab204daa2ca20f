"""The two providers' batch APIs, as the simulator serves them.

Batch mode halves a judge's price on a real provider, but its failures differ from a
direct call's: a batch may take hours, never end, or the endpoint may have no batch API
at all. To test a judge in batch mode offline, the simulator speaks both:

- OpenAI (Files and Batch API): `POST /v1/files` (a multipart upload of a JSONL file,
  `purpose=batch`), `GET /v1/files/{id}` and `/v1/files/{id}/content`, `POST /v1/batches`,
  `GET /v1/batches` and `/v1/batches/{id}`, `POST /v1/batches/{id}/cancel`. Each input
  line is `{"custom_id", "method", "url": "/v1/chat/completions", "body"}`; the output
  file has a line per answered request, `{"id", "custom_id", "response": {"status_code":
  200, "body": <chat completion>}, "error": null}`, and the error file one per failed
  request, with its status and an error body. The Responses API is refused (400).
- Anthropic (Message Batches API): `POST /v1/messages/batches` (`{"requests": [{"custom_id",
  "params"}]}`), `GET /v1/messages/batches` and `/v1/messages/batches/{id}`,
  `GET /v1/messages/batches/{id}/results` (JSONL of `{"custom_id", "result": {"type":
  "succeeded", "message": ...}}`, or `errored` with an error), and
  `POST /v1/messages/batches/{id}/cancel`.

Every request inside a batch is answered by the simulator's own answering code, exactly
as the same request sent directly (script, faults, billing, counts by kind), in a thread
of its own once the batch is created. A batch ends when all its requests are answered
and `delay` seconds have passed since it was created; an infinite `delay` never ends it
(and never answers its requests, as a provider whose queue is stuck). With `enabled`
false every batch path answers 404, as an OpenAI-compatible server without a batch API.

A fault drawn for a batched request becomes that request's error in the results (a
status fault keeps its status; a dropped connection or a body that is no reply is a 500):
inside a batch the provider, not the connection, reports what went wrong.
"""

from __future__ import annotations

import itertools
import json
import math
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from howtobench.simulator.wire import ANTHROPIC_PATH

OPENAI_CHAT_PATH = "/v1/chat/completions"
_WORKERS = 16  # requests of one batch answered at once
_ANTHROPIC_ERRORS = {400: "invalid_request_error", 429: "rate_limit_error"}


@dataclass(frozen=True)
class Outcome:
    """What goes back for one request: a status and body, or a dropped connection."""

    status: int
    data: bytes
    content_type: str = "application/json"
    dropped: bool = False

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


# Answers one chat request: (path of the API, request body, batch id) -> outcome.
Respond = Callable[[str, dict[str, Any], str], Outcome]


@dataclass
class _Batch:
    id: str
    api: str  # "openai" or "anthropic"
    requests: list[tuple[str, dict[str, Any]]]  # (custom_id, body)
    created: float
    input_file: str = ""  # OpenAI: the uploaded file it came from
    results: dict[str, Outcome] = field(default_factory=dict)
    ended: float | None = None
    cancelled: float | None = None
    output_file: str | None = None  # OpenAI: the answers
    error_file: str | None = None  # OpenAI: the requests that failed


class Batches:
    """Files and batches of both APIs; `route` answers a request on a batch path."""

    def __init__(
        self,
        respond: Respond,
        root_url: Callable[[], str],
        *,
        delay: Callable[[], float] = lambda: 0.0,
        enabled: Callable[[], bool] = lambda: True,
    ) -> None:
        # read at each use, so that a test may change them while the server runs
        self.respond = respond
        self.root_url = root_url
        self.delay = delay
        self.enabled = enabled
        self.created: Counter[str] = Counter()  # batches created per API
        self._files: dict[str, tuple[str, bytes]] = {}  # id -> (filename, content)
        self._batches: dict[str, _Batch] = {}
        self._lock = threading.Lock()
        self._ids = itertools.count(1)

    def route(self, method: str, path: str, content_type: str, data: bytes) -> Outcome | None:
        """The answer on a batch path, or None when `path` is not one (a chat request)."""
        parts = path.rstrip("/").split("/")[1:]  # "v1", ...
        anthropic = parts[:3] == ["v1", "messages", "batches"]
        openai = parts[:2] in (["v1", "files"], ["v1", "batches"])
        if not (anthropic or openai):
            return None
        if not self.enabled():
            return _not_found(anthropic, f"{path}: this server has no batch API")
        try:
            outcome = (
                self._anthropic(method, parts[3:], data)
                if anthropic
                else self._openai(method, parts[1], parts[2:], content_type, data)
            )
        except (ValueError, KeyError, TypeError) as error:
            return _error(anthropic, 400, f"bad batch request: {error}")
        return outcome or _not_found(anthropic, f"{method} {path}: no such batch route")

    def stats(self) -> dict[str, int]:
        with self._lock:
            return dict(self.created)

    def ids(self, *, unfinished: bool = False) -> list[str]:
        """The batches created so far, in order; with `unfinished`, those not ended."""
        with self._lock:
            return [b.id for b in self._batches.values() if not unfinished or b.ended is None]

    # --- OpenAI -----------------------------------------------------------------------

    def _openai(
        self,
        method: str,
        kind: str,
        rest: list[str],
        content_type: str,
        data: bytes,
    ) -> Outcome | None:
        if kind == "files":
            if method == "POST" and not rest:
                return self._upload(content_type, data)
            if method == "GET" and rest and rest[0] in self._files:
                file_id = rest[0]
                if rest[1:] == ["content"]:
                    return Outcome(200, self._files[file_id][1], "application/octet-stream")
                if not rest[1:]:
                    return Outcome.of(200, self._file_object(file_id))
            return None
        if method == "POST" and not rest:
            return self._create_openai(json.loads(data))
        return self._shared("openai", method, rest, self._openai_batch)

    def _upload(self, content_type: str, data: bytes) -> Outcome:
        message = BytesParser(policy=HTTP).parsebytes(
            f"Content-Type: {content_type}\r\n\r\n".encode() + data
        )
        fields: dict[str, tuple[str, bytes]] = {}
        for part in message.iter_parts():
            name = part.get_param("name", header="content-disposition")
            payload = part.get_payload(decode=True)
            if isinstance(name, str) and isinstance(payload, bytes):
                fields[name] = (part.get_filename() or "", payload)
        if "file" not in fields:
            raise ValueError("the upload carries no `file` part")
        purpose = fields.get("purpose", ("", b""))[1].decode()
        if purpose != "batch":
            raise ValueError(f"purpose {purpose!r}: the simulator keeps batch files only")
        file_id = f"file-sim{next(self._ids)}"
        with self._lock:
            self._files[file_id] = (fields["file"][0] or "batch.jsonl", fields["file"][1])
        return Outcome.of(200, self._file_object(file_id))

    def _file_object(self, file_id: str) -> dict[str, Any]:
        filename, content = self._files[file_id]
        return {
            "id": file_id,
            "object": "file",
            "bytes": len(content),
            "created_at": int(time.time()),
            "filename": filename,
            "purpose": "batch",
            "status": "processed",
        }

    def _create_openai(self, body: dict[str, Any]) -> Outcome:
        file_id = body["input_file_id"]
        if file_id not in self._files:
            return _not_found(False, f"no file {file_id}")
        if body.get("endpoint") != OPENAI_CHAT_PATH:
            raise ValueError(
                f"endpoint {body.get('endpoint')!r}: the simulator answers {OPENAI_CHAT_PATH} only"
            )
        lines = [json.loads(line) for line in self._files[file_id][1].splitlines() if line.strip()]
        for line in lines:
            if line.get("url") != OPENAI_CHAT_PATH:
                raise ValueError(f"request {line.get('custom_id')}: url {line.get('url')!r}")
        requests = [(line["custom_id"], line["body"]) for line in lines]
        batch = self._start("openai", f"batch_sim{next(self._ids)}", requests, file_id)
        return Outcome.of(200, self._openai_batch(batch))

    def _openai_batch(self, batch: _Batch) -> dict[str, Any]:
        with self._lock:
            results = dict(batch.results)
        failed = sum(1 for r in results.values() if not r.succeeded)
        if batch.cancelled is not None:
            status = "cancelled"
        elif batch.ended is not None:
            status = "completed"
        else:
            status = "in_progress"
        return {
            "id": batch.id,
            "object": "batch",
            "endpoint": OPENAI_CHAT_PATH,
            "errors": None,
            "input_file_id": batch.input_file,
            "completion_window": "24h",
            "status": status,
            "output_file_id": batch.output_file,
            "error_file_id": batch.error_file,
            "created_at": int(batch.created),
            "in_progress_at": int(batch.created),
            "expires_at": int(batch.created + 24 * 3600),
            "completed_at": _int(batch.ended) if batch.cancelled is None else None,
            "cancelled_at": _int(batch.cancelled),
            "request_counts": {
                "total": len(batch.requests),
                "completed": len(results) - failed,
                "failed": failed,
            },
            "metadata": None,
        }

    @staticmethod
    def _openai_line(batch: _Batch, custom_id: str, outcome: Outcome) -> dict[str, Any]:
        """A line of the output file, or of the error file for a request that failed: its
        HTTP status and error body, as OpenAI writes them (`error` is for a request the
        batch itself gave up on, such as an expired one)."""
        line_id = f"batch_req_{batch.id}_{custom_id}"
        body = outcome.json()
        status = 200
        if not outcome.succeeded:
            status = outcome.status if outcome.status >= 400 else 500
            body = {"error": {"message": _message(body, outcome), "type": "simulated"}}
        response = {"status_code": status, "request_id": line_id, "body": body}
        return {"id": line_id, "custom_id": custom_id, "response": response, "error": None}

    # --- Anthropic --------------------------------------------------------------------

    def _anthropic(self, method: str, rest: list[str], data: bytes) -> Outcome | None:
        if method == "POST" and not rest:
            body = json.loads(data)
            requests = [(r["custom_id"], dict(r["params"])) for r in body["requests"]]
            created = self._start("anthropic", f"msgbatch_sim{next(self._ids)}", requests)
            return Outcome.of(200, self._anthropic_batch(created))
        batch = self._batch(rest, "anthropic")
        if batch is not None and method == "GET" and rest[1:] == ["results"]:
            if batch.ended is None:
                return _error(True, 400, f"batch {batch.id} is still in progress")
            lines = [
                self._anthropic_line(custom_id, batch.results.get(custom_id))
                for custom_id, _ in batch.requests
            ]
            return Outcome(200, _jsonl(lines), "application/binary")
        return self._shared("anthropic", method, rest, self._anthropic_batch)

    def _anthropic_batch(self, batch: _Batch) -> dict[str, Any]:
        with self._lock:
            results = dict(batch.results)
        ended = batch.ended is not None
        errored = sum(1 for r in results.values() if not r.succeeded)
        counts = {
            "processing": 0 if ended else len(batch.requests),
            "succeeded": len(results) - errored if ended else 0,
            "errored": errored if ended else 0,
            "canceled": len(batch.requests) - len(results) if ended else 0,
            "expired": 0,
        }
        return {
            "id": batch.id,
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": _rfc3339(batch.created),
            "expires_at": _rfc3339(batch.created + 24 * 3600),
            "ended_at": _rfc3339(batch.ended) if batch.ended is not None else None,
            "cancel_initiated_at": _rfc3339(batch.cancelled) if batch.cancelled else None,
            "archived_at": None,
            "results_url": (
                f"{self.root_url()}/v1/messages/batches/{batch.id}/results" if ended else None
            ),
        }

    @staticmethod
    def _anthropic_line(custom_id: str, outcome: Outcome | None) -> dict[str, Any]:
        if outcome is None:
            return {"custom_id": custom_id, "result": {"type": "canceled"}}
        body = outcome.json()
        if outcome.succeeded:
            return {"custom_id": custom_id, "result": {"type": "succeeded", "message": body}}
        status = outcome.status if outcome.status >= 400 else 500
        kind = _ANTHROPIC_ERRORS.get(status, "api_error")
        error = {"type": "error", "error": {"type": kind, "message": _message(body, outcome)}}
        return {"custom_id": custom_id, "result": {"type": "errored", "error": error}}

    # --- both -------------------------------------------------------------------------

    def _shared(
        self, api: str, method: str, rest: list[str], shown: Callable[[_Batch], dict[str, Any]]
    ) -> Outcome | None:
        """The routes both APIs have, each answering in its API's shape (`shown`): list
        the batches, show one, cancel one (which shows it cancelled)."""
        if method == "GET" and not rest:
            return Outcome.of(200, self._listed(api, shown))
        batch = self._batch(rest, api)
        if batch is None:
            return None
        if method == "POST" and rest[1:] == ["cancel"]:
            self._cancel(batch)
        elif not (method == "GET" and not rest[1:]):
            return None
        return Outcome.of(200, shown(batch))

    def _batch(self, rest: list[str], api: str) -> _Batch | None:
        """The batch of `api` that the path after the batches' route names, if any."""
        batch = self._batches.get(rest[0]) if rest else None
        return batch if batch is not None and batch.api == api else None

    def _listed(self, api: str, shown: Callable[[_Batch], dict[str, Any]]) -> dict[str, Any]:
        """Every batch of one API, newest first, as one page of either API's list."""
        with self._lock:
            batches = [b for b in self._batches.values() if b.api == api][::-1]
        data = [shown(batch) for batch in batches]
        ids = [batch.id for batch in batches]
        return {
            "object": "list",
            "data": data,
            "has_more": False,
            "first_id": ids[0] if ids else None,
            "last_id": ids[-1] if ids else None,
        }

    def _start(
        self,
        api: str,
        batch_id: str,
        requests: list[tuple[str, dict[str, Any]]],
        input_file: str = "",
    ) -> _Batch:
        batch = _Batch(batch_id, api, requests, time.time(), input_file)
        delay = self.delay()
        with self._lock:
            self._batches[batch_id] = batch
            self.created[api] += 1
        if math.isfinite(delay):  # a batch that never ends is never worked on
            threading.Thread(target=self._work, args=(batch, delay), daemon=True).start()
        return batch

    def _work(self, batch: _Batch, delay: float) -> None:
        path = ANTHROPIC_PATH if batch.api == "anthropic" else OPENAI_CHAT_PATH

        slots = threading.BoundedSemaphore(_WORKERS)

        def answer(custom_id: str, body: dict[str, Any]) -> None:
            with slots:
                outcome = self.respond(path, {**body, "stream": False}, batch.id)
            with self._lock:
                if batch.cancelled is None:
                    batch.results[custom_id] = outcome

        # daemon threads, not a pool: a request that hangs must not hold up the exit
        workers = [
            threading.Thread(target=answer, args=request, daemon=True) for request in batch.requests
        ]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
        time.sleep(max(0.0, batch.created + delay - time.time()))
        self._end(batch)

    def _end(self, batch: _Batch) -> None:
        with self._lock:
            if batch.ended is not None:
                return
            if batch.api == "openai":
                answered = [(c, batch.results[c]) for c, _ in batch.requests if c in batch.results]
                for failed in (False, True):
                    lines = [
                        self._openai_line(batch, custom_id, outcome)
                        for custom_id, outcome in answered
                        if outcome.succeeded != failed
                    ]
                    if lines:
                        file_id = f"file-sim{next(self._ids)}"
                        kind = "error" if failed else "output"
                        self._files[file_id] = (f"{batch.id}_{kind}.jsonl", _jsonl(lines))
                        setattr(batch, f"{kind}_file", file_id)
            batch.ended = time.time()

    def _cancel(self, batch: _Batch) -> None:
        """Cancelled: it ends now, with the answers it has (the rest are canceled)."""
        with self._lock:
            if batch.ended is None and batch.cancelled is None:
                batch.cancelled = time.time()
        self._end(batch)


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def _int(moment: float | None) -> int | None:
    return None if moment is None else int(moment)


def _rfc3339(moment: float) -> str:
    stamp = datetime.fromtimestamp(0, timezone.utc) + timedelta(seconds=moment)
    return stamp.isoformat().replace("+00:00", "Z")


def _message(body: Any, outcome: Outcome) -> str:
    """The error message of a failed answer, from either API's error shape."""
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return str(body["error"].get("message", "error"))
    return f"the simulator's answer was not a reply (HTTP {outcome.status or 'dropped'})"


def _error(anthropic: bool, status: int, message: str) -> Outcome:
    if anthropic:
        kind = {404: "not_found_error"}.get(status, _ANTHROPIC_ERRORS.get(status, "api_error"))
        return Outcome.of(status, {"type": "error", "error": {"type": kind, "message": message}})
    return Outcome.of(status, {"error": {"message": message, "type": "invalid_request_error"}})


def _not_found(anthropic: bool, message: str) -> Outcome:
    return _error(anthropic, 404, message)
