"""What a run cost: tokens per model and role from the logs, priced with inspect's model costs.

A run is counted by its newest log, whose usage includes its continuations'. Each model
gets a row with the roles it played, its tokens as inspect logged them (split by role
where inspect's per-role usage tells a model's parts apart); calls answered from inspect's
cache record none. Prices and batch rates are `judge.prices`', shared with `judge-check`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelUsage

from howtobench.judge.prices import EVALUATED, batched_roles, load_prices, price
from howtobench.studies.log_files import StudyError, log_files, runs
from howtobench.studies.tables import StudyResult
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.parameter_values import names
from howtobench.vocabulary.words import replayed_writer

__all__ = ["cost"]

PANEL = "judges"  # the role of a judge panel named in the task arguments
UNBOUND = "unbound"  # a model called by name that plays none of these parts
TOKENS: tuple[str, ...] = (
    "input_tokens",
    "cache_write_tokens",
    "cache_read_tokens",
    "output_tokens",
)


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


def usage_by_role(log: EvalLog) -> list[tuple[str, str, ModelUsage]]:
    """(roles, model, usage) per model of the run but a replayed writer, bound models
    without calls too (they all came from the cache); a model of several parts is split
    where inspect's per-role usage tells them apart (a role bound to it alone)."""
    played: dict[str, list[str]] = {}  # model -> its roles: each bound role, and the panel
    for role, config in (log.eval.model_roles or {}).items():
        for bound in config if isinstance(config, list) else [config]:
            played.setdefault(bound.model, []).append(role)
    for judge in names((log.eval.task_args or {}).get(PANEL), PANEL):
        played.setdefault(judge, []).append(PANEL)
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
    """Tables `usage` (per log, role and model: tokens, batched or not, dollars, dollars
    per scored writing), `by_model` and `by_role` (their sums)."""
    try:
        table_of_prices = load_prices(prices) if prices is not None else {}
    except UserError as err:  # a study's bad input is a `StudyError`
        raise StudyError(str(err)) from err
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
                0.0 if usage.total_tokens == 0 else price(model, usage, table_of_prices, batch)
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
