"""Anthropic's Message Batches API, as the simulator serves it (the batches run in `batches`):
create, list, show, results (JSONL: `succeeded`, `errored` or `canceled`) and cancel.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from howtobench.simulator.wire import AnthropicMessages, Outcome, jsonl

if TYPE_CHECKING:
    from howtobench.simulator.batches import Batch, Batches

__all__ = ["error", "route"]

_MESSAGES = AnthropicMessages()


def route(
    store: Batches, method: str, parts: list[str], content_type: str, data: bytes
) -> Outcome | None:
    """The answer on a path under `/v1/messages/batches`, or None: no such route."""
    rest = parts[3:]
    if method == "POST" and not rest:
        requests = [(r["custom_id"], dict(r["params"])) for r in json.loads(data)["requests"]]
        created = store.start("anthropic", store.new_id("msgbatch_sim"), requests)
        return Outcome.of(200, _shown(store, created))
    batch = store.batch(rest, "anthropic")
    if batch is not None and method == "GET" and rest[1:] == ["results"]:
        if batch.ended is None:
            return error(400, f"batch {batch.id} is still in progress")
        lines = [_line(custom_id, batch.results.get(custom_id)) for custom_id, _ in batch.requests]
        return Outcome(200, jsonl(lines), "application/binary")
    return store.shared("anthropic", method, rest, _shown)


def error(status: int, message: str) -> Outcome:
    return Outcome.of(status, _MESSAGES.error(status, message))


def _shown(store: Batches, batch: Batch) -> dict[str, Any]:
    results = store.results(batch)
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
            f"{store.simulator.root_url}/v1/messages/batches/{batch.id}/results" if ended else None
        ),
    }


def _line(custom_id: str, outcome: Outcome | None) -> dict[str, Any]:
    if outcome is None:
        return {"custom_id": custom_id, "result": {"type": "canceled"}}
    if outcome.succeeded:
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": outcome.json()}}
    status = outcome.status if outcome.status >= 400 else 500
    body = _MESSAGES.error(status, outcome.error_message())
    return {"custom_id": custom_id, "result": {"type": "errored", "error": body}}


def _rfc3339(moment: float) -> str:
    return datetime.fromtimestamp(moment, timezone.utc).isoformat().replace("+00:00", "Z")
