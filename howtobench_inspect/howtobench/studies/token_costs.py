"""What a run cost: tokens per model and role from the logs, priced with inspect's model costs.

Logs are read as every study reads them (`studies.logs`: the headers suffice, and a log
and its eval-retry continuations are one run, counted by its newest log, whose usage
includes the others'). Each model of a run gets a row of its own, with the roles it
played: the evaluated model (`model`), each role bound to it (a role bound to a list of
models, `--model-role grader=a,b`, names each of them), and `judges` for a panel named
with `-T judges=a,b` (`unbound` for any other model called by name). A row counts the model's input tokens (at the full rate), cache
writes, cache reads and output tokens, as inspect logged them (`ModelUsage`). A model
that played a role alone and also another part is split by inspect's per-role usage.

Prices come from a YAML/JSON file in the format of inspect's `--model-cost-config` (model
name -> `input`, `output`, `input_cache_write`, `input_cache_read`, in dollars per
million tokens), or else from inspect's own model data (`get_model_info(...).cost`). The
file may name any model, a local or simulated one included. A usage that inspect already
priced (`total_cost`) is taken as logged. Calls answered from inspect's cache record no
tokens, so a repeated run costs nothing here.

Batch calls are cheaper: OpenAI, Anthropic and Google bill every token of a call sent
through their batch APIs at half the standard rate (cache reads and writes included), and
inspect's own pricing does not know it. A model's entry may say otherwise with `batch:`,
either the share of the standard prices paid (`batch: 0.5`) or batch prices of their own
(`batch: {input: ..., output: ..., input_cache_write: ..., input_cache_read: ...}`);
inspect's `--model-cost-config` ignores the key, so one file serves both. Neither a log's
usage nor its model calls say that a call was batched, so a row counts as batched when
the log's header says its model ran in batch mode in every role of the row: the role's
own `batch` setting (`--model-role 'grader={model: ..., batch: ...}'`), or `--batch` for
the evaluated model (which inspect applies to it alone). The `batch` column says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ModelCost,
    ModelUsage,
    compute_model_cost,
    get_model_info,
)

from howtobench.studies.logs import StudyError, log_files, runs
from howtobench.studies.tables import StudyResult
from howtobench.vocabulary.parameter_values import names
from howtobench.vocabulary.words import replayed_writer

EVALUATED = "model"  # the role of the evaluated model: the writer, unless it is replayed
PANEL = "judges"  # the role of a judge panel named in the task arguments
UNBOUND = "unbound"  # a model called by name that plays none of these parts
TOKENS: tuple[str, ...] = (
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
)
# The share of the standard price a batch call costs, where the prices file does not say:
# half, the published rule of OpenAI's, Anthropic's and Google's batch APIs.
BATCH_SHARE = 0.5


@dataclass(frozen=True)
class Rates:
    """A model's prices: for calls sent directly and for calls sent in a batch."""

    standard: ModelCost
    batch: ModelCost


def _scaled(cost: ModelCost, share: float) -> ModelCost:
    return ModelCost(
        input=cost.input * share,
        output=cost.output * share,
        input_cache_write=cost.input_cache_write * share,
        input_cache_read=cost.input_cache_read * share,
    )


def _rates(entry: Mapping[str, Any]) -> Rates:
    fields = dict(entry)
    batch = fields.pop("batch", BATCH_SHARE)
    standard = ModelCost(**fields)
    if isinstance(batch, Mapping):
        return Rates(standard, ModelCost(**batch))
    if isinstance(batch, bool) or not isinstance(batch, int | float) or batch < 0:
        raise ValueError(f"batch: {batch!r} is neither a share of the price nor batch prices")
    return Rates(standard, _scaled(standard, float(batch)))


def load_prices(path: Path) -> dict[str, Rates]:
    """The prices of a `--model-cost-config` style file, with each model's batch prices."""
    try:
        text = path.read_text(encoding="utf-8")
        prices = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        return {model: _rates(entry) for model, entry in prices.items()}
    except (OSError, ValueError, TypeError, AttributeError, yaml.YAMLError) as err:
        raise StudyError(f"{path}: not a model cost file ({err})") from err


def _price(
    model: str, usage: ModelUsage, prices: dict[str, Rates], batch: bool = False
) -> float | None:
    if model in prices:
        rates = prices[model]
        return compute_model_cost(rates.batch if batch else rates.standard, usage)
    share = BATCH_SHARE if batch else 1.0
    if usage.total_cost is not None:  # inspect prices every call at the standard rate
        return usage.total_cost * share
    info = get_model_info(model)
    return compute_model_cost(info.cost, usage) * share if info and info.cost else None


def batched_roles(log: EvalLog) -> set[tuple[str, str]]:
    """(role, model) pairs of the run that sent their calls through a batch API, read
    from the log's header: a bound role whose own settings have `batch`, and the
    evaluated model under `--batch` (or a `batch` of its own)."""
    pairs = {
        (role, bound.model)
        for role, config in (log.eval.model_roles or {}).items()
        for bound in (config if isinstance(config, list) else [config])
        if bound.config.batch
    }
    own = log.eval.model_generate_config
    if log.plan.config.batch or (own is not None and own.batch):
        pairs.add((EVALUATED, log.eval.model))
    return pairs


def _less(usage: ModelUsage, part: ModelUsage) -> ModelUsage:
    """What is left of `usage` once `part` of it is counted elsewhere."""
    return ModelUsage(
        input_tokens=usage.input_tokens - part.input_tokens,
        output_tokens=usage.output_tokens - part.output_tokens,
        total_tokens=usage.total_tokens - part.total_tokens,
        input_tokens_cache_write=(usage.input_tokens_cache_write or 0)
        - (part.input_tokens_cache_write or 0),
        input_tokens_cache_read=(usage.input_tokens_cache_read or 0)
        - (part.input_tokens_cache_read or 0),
    )


def roles_played(log: EvalLog) -> dict[str, list[str]]:
    """Model -> the roles it played in the run, from the log's header: each bound role
    and the panel; the evaluated model is added by `usage_by_role` when it made calls."""
    played: dict[str, list[str]] = {}
    for role, config in (log.eval.model_roles or {}).items():
        for bound in config if isinstance(config, list) else [config]:
            played.setdefault(bound.model, []).append(role)
    for judge in names((log.eval.task_args or {}).get(PANEL), PANEL):
        played.setdefault(judge, []).append(PANEL)
    return played


def usage_by_role(log: EvalLog) -> list[tuple[str, str, ModelUsage]]:
    """(roles, model, usage) per model of the run but a replayed writer, bound models
    with no calls included (their calls all came from the cache); a model that played several parts is split
    where inspect's per-role usage tells them apart (a role bound to it alone)."""
    played = roles_played(log)
    used = log.stats.model_usage
    if log.eval.model in used or not played:
        played.setdefault(log.eval.model, []).append(EVALUATED)
    alone = {
        role: config.model
        for role, config in (log.eval.model_roles or {}).items()
        if not isinstance(config, list) and role in log.stats.role_usage
    }
    rows = []
    # a replay model answers from the stored writings: no tokens, nothing to price
    for model in [m for m in dict.fromkeys([*used, *played]) if not replayed_writer(m)]:
        roles = played.get(model, [UNBOUND])
        usage = used.get(model, ModelUsage())
        split = [role for role in roles if alone.get(role) == model] if len(roles) > 1 else []
        for role in split:
            rows.append((role, model, log.stats.role_usage[role]))
            usage = _less(usage, log.stats.role_usage[role])
        if len(split) < len(roles):
            rows.append((", ".join(r for r in roles if r not in split), model, usage))
    return rows


# The columns of the `usage` table, one row per log, role and model.
COLUMNS: tuple[str, ...] = (
    "log",
    "role",
    "model",
    "writings",
    *TOKENS,
    "batch",
    "dollars",
    "dollars_per_writing",
)


def cost(logs: Sequence[str | Path], prices: Path | None = None) -> StudyResult:
    """Tables `usage` (tokens and dollars per log and model, whether its calls went
    through a batch API, and dollars per scored writing), `by_model` and `by_role`
    (their sums)."""
    table_of_prices = load_prices(prices) if prices is not None else {}
    rows = []
    notes = []
    for run in runs(log_files(logs)):
        path, log = run.path, run.newest
        notes += run.merge_note("its usage counted once: the newest log's includes the others'")
        writings = log.results.completed_samples if log.results else 0
        if log.results is None:
            notes.append(
                f"{path}: {run.interrupted()}its header counts no scored writings: "
                "no dollars per writing"
            )
        in_batches = batched_roles(log)
        found = usage_by_role(log)
        if not found:
            notes.append(
                f"{Path(path).name}: nothing to price (its writer replays stored writings, "
                "and no other model was bound or called)"
            )
        for role, model, usage in found:
            if usage.total_tokens == 0:
                notes.append("calls answered from inspect's cache (or none made) record no tokens")
            played = [(part, model) in in_batches for part in role.split(", ")]
            batch = all(played)
            if any(played) and not batch:
                notes.append(
                    f"{model} played {role}, batched in some and not in others, with one "
                    "usage for all: priced at the standard rate (an upper bound)"
                )
            dollars = (
                0.0 if usage.total_tokens == 0 else _price(model, usage, table_of_prices, batch)
            )
            if dollars is None:
                notes.append(f"no price for {model}: give --prices FILE (tokens are shown)")
            rows.append(
                {
                    "log": Path(path).name,
                    "role": role,
                    "model": model,
                    "writings": writings,
                    "input_tokens": usage.input_tokens,
                    "cache_write_tokens": usage.input_tokens_cache_write or 0,
                    "cache_read_tokens": usage.input_tokens_cache_read or 0,
                    "output_tokens": usage.output_tokens,
                    "batch": batch,
                    "dollars": dollars,
                    "dollars_per_writing": dollars / writings
                    if dollars is not None and writings
                    else None,
                }
            )
    table = pd.DataFrame(rows, columns=COLUMNS).astype({"dollars": float})
    totals = {  # dollars unknown for one row are unknown for its total
        f"by_{key}": table.groupby(key, sort=False)[[*TOKENS, "dollars"]].agg(
            lambda column: column.sum(skipna=False)
        )
        for key in ("model", "role")
    }
    return StudyResult("cost", {"usage": table, **totals}, notes=sorted(set(notes)))
