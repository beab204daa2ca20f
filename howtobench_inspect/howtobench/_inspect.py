"""The inspect-ai internals this package relies on, in one place (inspect-ai 0.3.285).

None is exported publicly; if a later inspect moves them, this module is the one to
change:

- `PrerequisiteError` (`inspect_ai._util.error`): printed as a message without a traceback.
- `active_generate_config` (`inspect_ai.model._generate_config`): the eval's settings.
- `Model._resolve_config`: the settings a call really runs with, and the batcher
  attributes of the providers that batch (`_batcher`, `_completions_batcher`,
  `_responses_batcher`), to tell a judge whose calls go through a batch API.
- `set_batch_log_callback` and its current value `_batch_log_callback`
  (`inspect_ai.model._providers.util.batch_log`): inspect reports batches created and
  finished only through this log, so it is how a run names its unfinished batches, and
  the batches its OpenAI batcher failed as a whole ("Batch {id} failed (...), failing all
  N requests in batch", read in `judge/lost_batches.py`).
- a provider's SDK client (`model.api.client` of the `openai` and `anthropic` providers),
  to ask whether an endpoint has a batch API before inspect sends a batch there, and
  where its calls go.
- the `message` of inspect's errors, with rich markup in it (`error_message`).
- that inspect builds an eval's tasks and runs its samples inside its event loop, and
  leaves the eval's model and roles set in the caller once `eval_set()` returns
  (`eval_running`).
- `sample_active` (`inspect_ai.log._samples`): the running sample, whose `run_id` tells
  one `eval()` from the next (`judge/runs.py` keeps what a run has learnt under it).
- `init_hooks` (`inspect_ai.hooks._startup`): inspect loads and announces the hooks it
  finds once per process ("hooks enabled: 1", three lines on standard output) at the first
  eval or model; `writing_summary.listen` lets it do so before adding its hook, so that
  the hook is never announced, neither before a one-line error nor in judge-check's JSON.
- `init_display_type` (`inspect_ai.util._display`): `eval_async()` takes no `display`
  argument, so `judge-check` sets inspect's display to none through it.
- `unwrap_exception_group` (`inspect_ai._util._async`): what `collect()` raises when a
  task fails (the task's own exception, not a group), for `gathered`, which is `collect()`
  without its span per task.
- `task_identifier` (public: `inspect_ai.task_identifier`, wrapped here for a log): the
  identity eval-set pairs a log with its task by; a worker (`workers.py`) pairs the logs
  of a shared folder with its tasks by it, as inspect's own eval-set does.

Each private import carries the comment that tells inspect-evals-lint (rule IECQ001,
`private_api_imports`) why it stays.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from inspect_ai import task_identifier as _task_identifier
from inspect_ai._util._async import (
    unwrap_exception_group,  # inspect-evals-lint: ignore[IECQ001] -- not exported; collect()'s own way of raising a failed task's exception, which gathered keeps
)
from inspect_ai._util.error import (
    PrerequisiteError,  # inspect-evals-lint: ignore[IECQ001] -- not exported; our errors subclass it, so inspect prints them as one line without a traceback
)
from inspect_ai.hooks._startup import (
    init_hooks,  # inspect-evals-lint: ignore[IECQ001] -- not exported; inspect announces the hooks it knows once per process, and ours is added after (writing_summary.listen)
)
from inspect_ai.log._samples import (
    sample_active,  # inspect-evals-lint: ignore[IECQ001] -- not exported; the running sample: its id for replay, its run_id for a run's state
)
from inspect_ai.model import Model
from inspect_ai.model._generate_config import (
    active_generate_config,  # inspect-evals-lint: ignore[IECQ001] -- not exported; the eval's generate settings (--temperature) while a task is built
)
from inspect_ai.model._providers.util import (
    batch_log,  # inspect-evals-lint: ignore[IECQ001] -- not exported; inspect reports its batches only through this log
)
from inspect_ai.util._display import (
    init_display_type,  # inspect-evals-lint: ignore[IECQ001] -- not exported; eval_async() takes no display argument
)

__all__ = [
    "PrerequisiteError",
    "active_generate_config",
    "batch_list_request",
    "batched",
    "endpoint",
    "error_message",
    "eval_running",
    "gathered",
    "init_display_type",
    "init_hooks",
    "listen_to_batch_log",
    "model_list_request",
    "openai_batch_client",
    "sample_active",
    "task_identifier",
    "writer_temperature",
]


T = TypeVar("T")


async def gathered(*tasks: Awaitable[T]) -> list[T]:
    """The results of `tasks` run concurrently, in their order: inspect's `collect()`
    without the span it opens around each task. Ours are in named spans already (the
    negotiator, the experts, each leaf), and every span is two more events that inspect
    records, buffers (with its realtime buffer on) and writes: `collect()`'s were 18 of a
    ToW writing's 61 events. A failed task raises its own exception, as with `collect()`."""
    results: list[Any] = [None] * len(tasks)

    async def run(index: int, task: Awaitable[T]) -> None:
        results[index] = await task

    async with unwrap_exception_group(), anyio.create_task_group() as group:
        for index, task in enumerate(tasks):
            group.start_soon(run, index, task)
    return results


def task_identifier(log: Any) -> str:
    """The eval-set identifier of the task an `EvalLog` (a header is enough) ran."""
    return _task_identifier(log, None)


def writer_temperature() -> float | None:
    """The eval's `--temperature` (the evaluated model's), or None when it is not set.

    Under `inspect eval` the eval's generation settings are active while the task is
    built; built from Python before `eval()`, they are not, and this returns None.
    """
    return active_generate_config().temperature


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
    client = getattr(model.api, "client", None)
    messages = getattr(client, "messages", None)
    if hasattr(model.api, "_batcher") and hasattr(messages, "batches"):  # Anthropic's SDK
        return messages.batches.list(limit=1)  # type: ignore[union-attr]
    if hasattr(model.api, "_completions_batcher") and hasattr(client, "batches"):  # OpenAI's
        return client.batches.list(limit=1)  # type: ignore[union-attr]
    return None


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
    """Whether an eval is under way (its tasks being built or its samples run), so that
    the model and roles in context are its own: inspect does both inside its event loop,
    and after `eval_set()` returns the caller keeps that eval's model, which a task built
    next from Python must not take for its own. (In a notebook, whose cells run inside a
    loop, this is always true.)"""
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
