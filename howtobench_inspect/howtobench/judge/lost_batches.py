"""Judge questions of an OpenAI batch that inspect gave up on, read back from the batch's
own files.

inspect 0.3.285's OpenAI batcher fails every request of a batch when it cannot read one
failed line as a completion, and asked again they fail the same way; yet the provider
answered the others. So such a call takes its own line of the batch's output or error file,
at no new cost (docs/large-runs.md, "Batch mode"); when the files cannot be read the reason
names the batch (`lost_reason`). These replies' tokens are not in inspect's usage. The
batch log is read here (`BatchLog`) for the batches a run left unfinished, too.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, Model, ModelOutput, StopReason

from howtobench._inspect import openai_batch_client
from howtobench.judge.failures import TRANSIENT_STATUS, CallFailed
from howtobench.judge.question_locks import held
from howtobench.judge.server_words import body_words, one_line

__all__ = ["LOST_WITH_BATCH", "BatchLog", "logger"]

logger = logging.getLogger(__name__)

# inspect's batch-log lines: a batch created, finished, and failed as a whole
# (`Batcher._fail_and_cleanup_inflight_batch`)
_CREATED = re.compile(r"Created batch (\S+) with (\d+) requests")
_ENDED = re.compile(r"Batch (\S+) (?:completed|failed)")
_FAILED = re.compile(r"Batch (\S+) failed \((.*?)\), failing all (\d+) requests in batch")
# The words every reason for a question lost with its batch carries; `check-logs` reads them.
LOST_WITH_BATCH = "lost with its batch"
# OpenAI's finish reasons of a reply that is not whole, in inspect's words
_STOP_REASONS: dict[Any, StopReason] = {"length": "max_tokens", "content_filter": "content_filter"}


@dataclass(frozen=True)
class LostBatch:
    """A batch inspect failed as a whole: its id, inspect's words, its size, when."""

    id: str
    description: str
    requests: int
    at: float


@dataclass
class _Outcome:
    """One request's line of a batch's output or error file."""

    custom_id: str
    status: int
    body: dict[str, Any]
    error: str | None = None  # the batch's own error for the request (an expired one)

    @property
    def failed(self) -> bool:
        return self.error is not None or self.status != 200

    def described(self) -> str:
        if self.error is not None:
            return self.error
        return f"HTTP {self.status}: {(body_words(self.body) or one_line(str(self.body)))[:300]}"


@dataclass
class _Files:
    """What a lost batch's files say: each request's outcome by the messages it asked,
    and the first failed request. `problem` says why the files could not be read."""

    outcomes: dict[str, list[_Outcome]] = field(default_factory=dict)
    first_failed: _Outcome | None = None
    problem: str | None = None


class BatchLog:
    """The batches inspect reported created, finished and failed as a whole in this
    process, read from its batch log (inspect gives no other account of them), and the
    failed ones' files once read."""

    def __init__(self) -> None:
        self.created: dict[str, float] = {}
        self.ended: set[str] = set()
        self.lost: list[LostBatch] = []
        # by endpoint and batch id: two servers (a restarted one) may use the same ids
        self._files: dict[tuple[str, str], _Files] = {}

    def read(self, message: str) -> None:
        """Note a batch-log line."""
        if created := _CREATED.match(message):
            self.created[created.group(1)] = time.time()
            self.ended.discard(created.group(1))  # an id used again (a restarted server)
        elif ended := _ENDED.match(message):
            self.ended.add(ended.group(1))
        if failed := _FAILED.match(message):
            batch_id, description, count = failed.groups()
            self.lost.append(LostBatch(batch_id, description, int(count), time.time()))

    def unfinished(self, since: float) -> list[str]:
        """Batches created since a call was queued that have not finished: the call's
        own batch among them (the log does not say which model a batch belongs to)."""
        return [b for b, at in self.created.items() if at >= since and b not in self.ended]

    async def answer(
        self, model: Model, sent: Sequence[ChatMessage], error: Exception, started: float
    ) -> ModelOutput | CallFailed | None:
        """The output of a batched call that raised `error`, read from the batch it was lost
        with, or its failure; None when no batch was lost since the call was queued, or
        none of those holds its question (`error` is then the call's own). A lost batch
        whose files cannot be read may have held it: the call is taken as lost with it."""
        lost = [batch for batch in reversed(self.lost) if batch.at >= started]  # newest first
        client = openai_batch_client(model)
        if not lost or client is None:
            return None
        # the question as the batch's input file holds it
        asked = messages_key([(message.role, message.text) for message in sent])
        unread: list[tuple[LostBatch, _Files]] = []
        for batch in lost:
            files = await self._read(client, batch)
            outcomes = files.outcomes.get(asked)
            if outcomes:
                return _answer_of(model, batch, outcomes, files)
            if files.problem is not None:
                unread.append((batch, files))
        if not unread:  # in none of them: the call failed on its own
            return None
        batch, files = unread[0]
        return lost_reason(model, batch, error, files.first_failed, files.problem)

    async def _read(self, client: Any, batch: LostBatch) -> _Files:
        """The batch's files, read by the first caller; the others wait for it."""
        key = (str(getattr(client, "base_url", "")), batch.id)
        async with held(None, f"files of batch {key}"):
            if key in self._files:
                return self._files[key]
            try:
                files = await _batch_files(client, batch.id)
            except Exception as problem:
                files = _Files(problem=f"{type(problem).__name__}: {one_line(str(problem))}")
            self._files[key] = files
        if files.problem is None:
            outcomes = [o for each in files.outcomes.values() for o in each]
            refused = [o for o in outcomes if o.failed]
            first = f"; the first failed request: {refused[0].described()}" if refused else ""
            logger.warning(
                f"inspect's OpenAI batcher failed batch {batch.id} as a whole "
                f"({batch.description}); its {len(outcomes) - len(refused)} answered requests "
                f"were read back from the batch's output file, and {len(refused)} failed at "
                f"the provider{first}"
            )
        return files


def messages_key(messages: Sequence[tuple[str, str]]) -> str:
    """A digest of a conversation's roles and texts (a system prompt may be sent with the
    `developer` role: the same message)."""
    named = [["system" if role == "developer" else role, text] for role, text in messages]
    text = json.dumps(named, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


async def _batch_files(client: Any, batch_id: str) -> _Files:
    """Each request's outcome in a finished batch, keyed on the messages it asked."""
    batch = await client.batches.retrieve(batch_id)
    asked: dict[str, str] = {}  # custom_id -> messages key
    for line in await _lines(client, batch.input_file_id):
        messages = line.get("body", {}).get("messages", [])
        pairs = [(str(m.get("role")), _content_text(m.get("content"))) for m in messages]
        asked[str(line.get("custom_id"))] = messages_key(pairs)
    files = _Files()
    for file_id in (batch.output_file_id, batch.error_file_id):
        for line in await _lines(client, file_id):
            custom_id = str(line.get("custom_id"))
            response = line.get("response") or {}
            error = line.get("error")
            outcome = _Outcome(
                custom_id,
                int(response.get("status_code") or 0),
                response.get("body") or {},
                one_line(json.dumps(error, ensure_ascii=False)) if error is not None else None,
            )
            if custom_id in asked:
                files.outcomes.setdefault(asked[custom_id], []).append(outcome)
            if outcome.failed and files.first_failed is None:
                files.first_failed = outcome
    return files


async def _lines(client: Any, file_id: str | None) -> list[dict[str, Any]]:
    if not file_id:
        return []
    content = await client.files.content(file_id)
    text = (await content.aread()).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _answer_of(
    model: Model, batch: LostBatch, outcomes: list[_Outcome], files: _Files
) -> ModelOutput | CallFailed:
    """The output of a question found in a lost batch (an answered copy of it, when the
    same messages were asked twice), or its failure as the provider gave it."""
    answered = [o for o in outcomes if not o.failed]
    if not answered:
        outcome = outcomes[0]
        status = outcome.status
        final = 400 <= status < 500 and status not in TRANSIENT_STATUS
        what = "refused the request" if final else "failed the request"
        return CallFailed(
            f"the judge {what} ({outcome.described()}; request {outcome.custom_id} of batch "
            f"{batch.id})",
            final=final,
        )
    choices = answered[0].body.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    text = (choice.get("message") or {}).get("content")
    stop = _STOP_REASONS.get(choice.get("finish_reason"), "stop")
    if not isinstance(text, str) and stop == "stop":
        return lost_reason(model, batch, None, files.first_failed, "its answer has no text")
    return ModelOutput.from_content(str(model), text if isinstance(text, str) else "", stop)


def lost_reason(
    model: Model,
    batch: LostBatch,
    error: BaseException | None,
    first_failed: _Outcome | None,
    problem: str | None,
) -> CallFailed:
    """The failure of a question lost with its batch: the batch, its id, what inspect
    raised, the first failed request's error, and that a rerun asks it again."""
    raised = f"; inspect raised {type(error).__name__}" if error is not None else ""
    failed = first_failed.described() if first_failed is not None else _failed_body(error)
    first = f"; the first failed request: {failed}" if failed else ""
    unread = f"; its files could not be read back ({problem})" if problem else ""
    return CallFailed(
        f"{LOST_WITH_BATCH}: judge {model}'s OpenAI batch {batch.id} of {batch.requests} "
        f"requests failed as a whole in inspect ({batch.description}{raised}){first}{unread}. "
        "A rerun asks this question again (`inspect score <log> --action overwrite "
        "--overwrite`, or the same `inspect eval`); answered questions are kept",
        final=True,
    )


def _failed_body(error: BaseException | None) -> str:
    """The failed request's error as inspect's `ValidationError` quotes it: the error
    body it tried to read as a completion."""
    try:
        details = error.errors()  # type: ignore[union-attr]
    except Exception:  # no `ValidationError`
        return ""
    for detail in details:
        body = detail.get("input") if isinstance(detail, dict) else None
        if isinstance(body, dict) and "error" in body:
            said = body_words(body) or one_line(str(body["error"]))
            return f"the provider's error {said[:300]!r}"
    return ""
