"""What a run cost: tokens per model and role from the logs, priced with inspect's model costs.

Prices come from a YAML/JSON file in the format of inspect's `--model-cost-config` (model
name -> `input`, `output`, `input_cache_write`, `input_cache_read`, in dollars per
million tokens), or else from inspect's own model data (`get_model_info(...).cost`). The
file may name any model, a local or simulated one included. A usage that inspect already
priced (`total_cost`) is taken as logged. Calls answered from inspect's cache record no
tokens, so a repeated run costs nothing here. An eval-retry log carries the usage of the
log it continues, so a run of several logs is counted once, by its newest log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import yaml
from inspect_ai.model import (
    ModelCost,
    ModelUsage,
    compute_model_cost,
    get_model_info,
)

from howtobench.studies.logs import StudyError, log_files, runs
from howtobench.studies.tables import StudyResult


def load_prices(path: Path) -> dict[str, ModelCost]:
    """The prices of a `--model-cost-config` style file."""
    try:
        text = path.read_text(encoding="utf-8")
        prices = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        return {model: ModelCost(**cost) for model, cost in prices.items()}
    except (OSError, ValueError, TypeError, AttributeError, yaml.YAMLError) as err:
        raise StudyError(f"{path}: not a model cost file ({err})") from err


def _price(model: str, usage: ModelUsage, prices: dict[str, ModelCost]) -> float | None:
    if model in prices:
        return compute_model_cost(prices[model], usage)
    if usage.total_cost is not None:
        return usage.total_cost
    info = get_model_info(model)
    return compute_model_cost(info.cost, usage) if info and info.cost else None


def cost(logs: Sequence[str | Path], prices: Path | None = None) -> StudyResult:
    """Tokens and dollars per log, model and role, and per scored writing."""
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
        used = log.stats.role_usage or {}
        bound = {
            role: ",".join(c.model for c in config) if isinstance(config, list) else config.model
            for role, config in (log.eval.model_roles or {}).items()
        }
        # every bound role, with no usage when its calls all came from the cache
        usages = [
            (role, bound.get(role, log.eval.model), used.get(role, ModelUsage()))
            for role in {**bound, **used}
        ]
        # the evaluated model (writer, or judge with no grader bound) is what no role used
        usages += [
            ("model", m, u)
            for m, u in log.stats.model_usage.items()
            if m not in {model for _, model, _ in usages}
        ]
        usages = usages or [("model", log.eval.model, ModelUsage())]
        for role, model, usage in usages:
            if usage.total_tokens == 0:
                notes.append("calls answered from inspect's cache (or none made) record no tokens")
            dollars = 0.0 if usage.total_tokens == 0 else _price(model, usage, table_of_prices)
            if dollars is None:
                notes.append(f"no price for {model}: give --prices FILE (tokens are shown)")
            rows.append(
                {
                    "log": Path(path).name,
                    "role": role,
                    "model": model,
                    "writings": writings,
                    "input_tokens": usage.input_tokens,
                    "cache_read_tokens": usage.input_tokens_cache_read or 0,
                    "output_tokens": usage.output_tokens,
                    "dollars": dollars,
                    "dollars_per_writing": dollars / writings
                    if dollars is not None and writings
                    else None,
                }
            )
    table = pd.DataFrame(rows)
    total = table.groupby("role", sort=False)[["input_tokens", "output_tokens", "dollars"]].sum(
        min_count=1
    )
    return StudyResult("cost", {"usage": table, "by_role": total}, notes=sorted(set(notes)))
