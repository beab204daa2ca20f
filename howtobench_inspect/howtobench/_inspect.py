"""inspect-ai's private names this package relies on, in one place (inspect-ai 0.3.285).

Three, each with why nothing public does the same; `tests/test_inspect_names.py` fails
naming any that a later inspect moves:

- `PrerequisiteError` (`inspect_ai._util.error`): the one error inspect prints as its
  message alone (its excepthook, and the CLI's `--json` path); any other prints a
  traceback, and no public module exports it. Our `OneLineError` subclasses it.
- `sample_active` (`inspect_ai.log._samples`): the running sample, whose `run_id` tells
  one `eval()` from the next in one event loop (`judge/runs.py`) and whose `Sample` the
  replay model answers for; inspect offers neither at runtime (inspect-ai issues #1262,
  #3125, #5135).
- `batch_log` (`inspect_ai.model._providers.util`): the only report of the batches inspect
  creates and finishes (`set_batch_log_callback`, else `print`); the public hooks have no
  batch event. It names a run's unfinished batches, and those the OpenAI batcher failed
  as a whole ("Batch {id} failed (...), failing all N requests", `judge/lost_batches.py`).

Private attributes of inspect's public classes are read with a fallback, to tell a judge
whose calls go through a batch API: `Model._resolve_config` and the providers' batchers
(`_batcher`, `_completions_batcher`, `_responses_batcher`).

The other helpers rely on inspect's behaviour, each saying which. Each private import
carries the comment that tells inspect-evals-lint (rule IECQ001) why it stays.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from inspect_ai._util.error import (
    PrerequisiteError,  # inspect-evals-lint: ignore[IECQ001] -- not exported; the only error inspect prints without a traceback, and our errors subclass it
)
from inspect_ai.log._samples import (
    sample_active,  # inspect-evals-lint: ignore[IECQ001] -- not exported; the running sample: its Sample for replay, its run_id for a run's state (inspect-ai #1262)
)
from inspect_ai.model import GenerateConfig, Model, get_model
from inspect_ai.model._providers.util import (
    batch_log,  # inspect-evals-lint: ignore[IECQ001] -- not exported; inspect reports its batches only through this log
)

if sys.version_info < (3, 11):  # anyio's task groups raise the backport's group there
    from exceptiongroup import ExceptionGroup

__all__ = [
    "PrerequisiteError",
    "batch_list_request",
    "batched",
    "endpoint",
    "error_message",
    "eval_config",
    "eval_running",
    "gathered",
    "listen_to_batch_log",
    "model_list_request",
    "openai_batch_client",
    "sample_active",
    "writer_temperature",
]


T = TypeVar("T")


async def gathered(*tasks: Awaitable[T]) -> list[T]:
    """The results of `tasks` run concurrently, in their order: inspect's `collect()`
    without the span it opens around each task (ours are in named spans already, and
    `collect()`'s were 18 of a ToW writing's 61 events). A failed task raises its own
    exception, as with `collect()`."""
    results: list[Any] = [None] * len(tasks)

    async def run(index: int, task: Awaitable[T]) -> None:
        results[index] = await task

    try:
        async with anyio.create_task_group() as group:
            for index, task in enumerate(tasks):
                group.start_soon(run, index, task)
    except ExceptionGroup as failed:
        if len(failed.exceptions) != 1:
            raise
        [alone] = failed.exceptions
        raise alone from alone.__cause__  # its own cause; the group is not its context
    return results


def eval_config() -> GenerateConfig:
    """The eval's generation settings (`--temperature`, `--max-connections`, ...) while
    it builds its tasks: the evaluated model's `config`, when inspect made it by name
    with the eval's settings. A `Model` object given to `eval()`, or no eval yet: an
    empty config."""
    if not eval_running():
        return GenerateConfig()
    try:
        return get_model().config
    except Exception:  # no model in context
        return GenerateConfig()


def writer_temperature() -> float | None:
    """The eval's `--temperature`, or None when it is not set or not known."""
    return eval_config().temperature


# Set by inspect's providers that have a batcher (OpenAI, Anthropic, Google, Grok, Together)
_BATCHERS = ("_batcher", "_completions_batcher", "_responses_batcher")


def batched(model: Model) -> bool:
    """Whether calls to `model` go through its provider's batch API: its role's own
    `batch` setting, or `--batch` when it is the evaluated model (inspect merges the eval's
    settings into the evaluated model's calls only), on a provider that batches
    (`openai-api/...`, for one, ignores the setting and calls directly)."""
    if not any(hasattr(model.api, name) for name in _BATCHERS):
        return False
    try:
        batch = model._resolve_config(None).batch
    except Exception:  # a later inspect without it: the model's own setting
        batch = model.config.batch
    return bool(batch)


_listeners: list[Callable[[str], None]] = []


def listen_to_batch_log(listener: Callable[[str], None]) -> None:
    """Call `listener` with every line inspect logs about batches ("Created batch {id}
    with {n} requests", "Batch {id} completed", ...); the lines still reach whatever
    printed them before (inspect's default: the console). Installed once per process."""
    if listener in _listeners:
        return
    if not _listeners:
        shown = batch_log._batch_log_callback or print

        def relay(message: str) -> None:
            for each in list(_listeners):
                each(message)
            shown(message)

        batch_log.set_batch_log_callback(relay)
    _listeners.append(listener)


def endpoint(model: Model) -> str | None:
    """The base URL a model's calls go to: its own, else its SDK client's (a base URL
    from the provider's environment variable, e.g. `ANTHROPIC_BASE_URL`)."""
    if model.api.base_url:
        return model.api.base_url
    url = getattr(getattr(model.api, "client", None), "base_url", None)
    return str(url).rstrip("/") if url else None


def batch_list_request(model: Model) -> Any | None:
    """A cheap request that fails with 404 where the model's endpoint has no batch API
    (the first page of its batches), for inspect's `openai` and `anthropic` providers;
    None for any other."""
    messages = getattr(getattr(model.api, "client", None), "messages", None)
    if hasattr(model.api, "_batcher") and hasattr(messages, "batches"):  # Anthropic's SDK
        return messages.batches.list(limit=1)  # type: ignore[union-attr]
    openai = openai_batch_client(model)
    return None if openai is None else openai.batches.list(limit=1)


def openai_batch_client(model: Model) -> Any | None:
    """The OpenAI SDK client of a model whose provider batches through OpenAI's batch API
    (inspect's `openai` provider), to read a batch's files back; None for any other."""
    client = getattr(model.api, "client", None)
    batches = hasattr(model.api, "_completions_batcher") and hasattr(client, "batches")
    return client if batches else None


def model_list_request(model: Model) -> Any | None:
    """A request that any live OpenAI- or Anthropic-style server answers at once, busy
    or not (listing its models; a 404 is an answer too): whether the server is up at
    all, when its chat answers do not come. None for a provider without such a client."""
    lister = getattr(getattr(getattr(model.api, "client", None), "models", None), "list", None)
    return lister() if callable(lister) else None


def eval_running() -> bool:
    """Whether an eval is under way, so that the model and roles in context are its own:
    inspect builds tasks and runs samples inside its event loop, and after `eval_set()`
    the caller keeps that eval's model. (Always true in a notebook, inside a loop.)"""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# rich markup in the messages of inspect's errors (`[bold]...[/bold]`)
_MARKUP = re.compile(r"\[/?[a-z ]+\]")


def error_message(error: BaseException) -> str:
    """What an error inspect raised says, on one plain line: a `PrerequisiteError`'s
    `message` (else the error's text), without rich markup or line breaks."""
    return _MARKUP.sub("", " ".join(str(getattr(error, "message", error)).split()))
