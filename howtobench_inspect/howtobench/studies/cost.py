"""What a run cost: tokens per model and role from the logs, priced with inspect's model costs.

Prices come from a YAML/JSON file in the format of inspect's `--model-cost-config` (model
name -> `input`, `output`, `input_cache_write`, `input_cache_read`, in dollars per
million tokens), or else from inspect's own model data (`get_model_info(...).cost`). The
file may name any model, a local or simulated one included. A usage that inspect already priced (`total_cost`) is taken as logged. Calls
answered from inspect's cache record no tokens, so a repeated run costs nothing here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import yaml
from inspect_ai.log import read_eval_log
from inspect_ai.model import (
    ModelCost,
    ModelUsage,
    compute_model_cost,
    get_model_info,
)

from howtobench.studies.logs import StudyError, log_files
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
    for path in log_files(logs):
        log = read_eval_log(str(path), header_only=True)
        writings = log.results.completed_samples if log.results else 0
        roles = {role: _role_model(log, role) for role in log.stats.role_usage or {}}
        usages = [(role, roles[role], u) for role, u in (log.stats.role_usage or {}).items()]
        # the evaluated model (writer, or judge with no grader bound) is what no role used
        usages += [
            ("model", m, u) for m, u in log.stats.model_usage.items() if m not in roles.values()
        ]
        for role, model, usage in usages:
            dollars = _price(model, usage, table_of_prices)
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
    if not rows:
        raise StudyError("the logs record no token usage (every call came from the cache?)")
    table = pd.DataFrame(rows)
    total = table.groupby("role", sort=False)[["input_tokens", "output_tokens", "dollars"]].sum(
        min_count=1
    )
    return StudyResult("cost", {"usage": table, "by_role": total}, notes=sorted(set(notes)))


def _role_model(log, role: str) -> str:  # type: ignore[no-untyped-def]
    roles = log.eval.model_roles or {}
    return roles[role].model if role in roles else log.eval.model
