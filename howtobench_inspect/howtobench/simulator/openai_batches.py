"""OpenAI's Files and Batch API, as the simulator serves it (the batches run in `batches`).

The files upload, the batches' create, list, show and cancel, with OpenAI's input,
output and error line shapes; the Responses API is refused (400).
"""

from __future__ import annotations

import json
import time
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any

from howtobench.simulator.wire import OPENAI_PATH, Outcome, jsonl

if TYPE_CHECKING:
    from howtobench.simulator.batches import Batch, Batches

__all__ = ["error", "route"]


def route(
    store: Batches, method: str, parts: list[str], content_type: str, data: bytes
) -> Outcome | None:
    """The answer on a path under `/v1/files` or `/v1/batches`, or None: no such route."""
    kind, rest = parts[1], parts[2:]
    if kind == "files":
        if method == "POST" and not rest:
            return _upload(store, content_type, data)
        if method == "GET" and rest and rest[0] in store.files:
            if rest[1:] == ["content"]:
                return Outcome(200, store.files[rest[0]][1], "application/octet-stream")
            if not rest[1:]:
                return Outcome.of(200, _file_object(store, rest[0]))
        return None
    if method == "POST" and not rest:
        return _create(store, json.loads(data))
    return store.shared("openai", method, rest, _shown)


def error(status: int, message: str) -> Outcome:
    return Outcome.of(status, {"error": {"message": message, "type": "invalid_request_error"}})


def _write_results(store: Batches, batch: Batch) -> None:
    """The output file and the error file of a batch that ends (under the store's lock)."""
    answered = [(c, batch.results[c]) for c, _ in batch.requests if c in batch.results]
    for failed in (False, True):
        lines = [_line(batch, c, outcome) for c, outcome in answered if outcome.succeeded != failed]
        if lines:
            file_id = store.new_id("file-sim")
            kind = "error" if failed else "output"
            store.files[file_id] = (f"{batch.id}_{kind}.jsonl", jsonl(lines))
            setattr(batch, f"{kind}_file", file_id)


def _upload(store: Batches, content_type: str, data: bytes) -> Outcome:
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
    file_id = store.new_id("file-sim")
    with store.lock:
        store.files[file_id] = (fields["file"][0] or "batch.jsonl", fields["file"][1])
    return Outcome.of(200, _file_object(store, file_id))


def _file_object(store: Batches, file_id: str) -> dict[str, Any]:
    filename, content = store.files[file_id]
    return {
        "id": file_id,
        "object": "file",
        "bytes": len(content),
        "created_at": int(time.time()),
        "filename": filename,
        "purpose": "batch",
        "status": "processed",
    }


def _create(store: Batches, body: dict[str, Any]) -> Outcome:
    file_id = body["input_file_id"]
    if file_id not in store.files:
        return error(404, f"no file {file_id}")
    if body.get("endpoint") != OPENAI_PATH:
        raise ValueError(
            f"endpoint {body.get('endpoint')!r}: the simulator answers {OPENAI_PATH} only"
        )
    lines = [json.loads(line) for line in store.files[file_id][1].splitlines() if line.strip()]
    for line in lines:
        if line.get("url") != OPENAI_PATH:
            raise ValueError(f"request {line.get('custom_id')}: url {line.get('url')!r}")
    requests = [(line["custom_id"], line["body"]) for line in lines]
    batch = store.start("openai", store.new_id("batch_sim"), requests, file_id, _write_results)
    return Outcome.of(200, _shown(store, batch))


def _shown(store: Batches, batch: Batch) -> dict[str, Any]:
    results = store.results(batch)
    failed = sum(1 for r in results.values() if not r.succeeded)
    status = "cancelled" if batch.cancelled else "completed" if batch.ended else "in_progress"
    return {
        "id": batch.id,
        "object": "batch",
        "endpoint": OPENAI_PATH,
        "errors": None,
        "input_file_id": batch.input_file,
        "completion_window": "24h",
        "status": status,
        "output_file_id": batch.output_file,
        "error_file_id": batch.error_file,
        "created_at": int(batch.created),
        "in_progress_at": int(batch.created),
        "expires_at": int(batch.created + 24 * 3600),
        "completed_at": int(batch.ended) if batch.ended and not batch.cancelled else None,
        "cancelled_at": None if batch.cancelled is None else int(batch.cancelled),
        "request_counts": {
            "total": len(batch.requests),
            "completed": len(results) - failed,
            "failed": failed,
        },
        "metadata": None,
    }


def _line(batch: Batch, custom_id: str, outcome: Outcome) -> dict[str, Any]:
    """A line of the output file, or of the error file for a request that failed: its
    HTTP status and error body, as OpenAI writes them (`error` is for a request the
    batch itself gave up on, such as an expired one)."""
    line_id = f"batch_req_{batch.id}_{custom_id}"
    body, status = outcome.json(), 200
    if not outcome.succeeded:
        status = outcome.status if outcome.status >= 400 else 500
        body = {"error": {"message": outcome.error_message(), "type": "simulated"}}
    response = {"status_code": status, "request_id": line_id, "body": body}
    return {"id": line_id, "custom_id": custom_id, "response": response, "error": None}
