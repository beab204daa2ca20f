"""What a model's tokens cost: the prices file, the batch rates, and which calls were batched.

Here, below both, because `howtobench cost` and `howtobench judge-check` price tokens
alike, and the check runs in the core install: nothing here needs the studies extra.
Prices come from a file in the format of inspect's `--model-cost-config`, which may add a
`batch:` share or batch prices (inspect ignores the key, so one file serves both), else
from inspect's own model data; a usage inspect already priced is taken as logged. Batch
APIs bill at half the standard rate, which inspect's pricing does not know, and neither
usage nor calls say a call was batched: a role counts as batched when the log's header
says its model ran in batch mode (`batched_roles`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from inspect_ai.log import EvalLog
from inspect_ai.model import ModelCost, ModelUsage, compute_model_cost, get_model_info

from howtobench.vocabulary.errors import UserError

__all__ = ["EVALUATED", "Rates", "batched_roles", "load_prices", "price"]

EVALUATED = "model"  # the role of the evaluated model: the writer, unless it is replayed
# The share of the standard price a batch call costs, where the prices file does not say:
# half, the published rule of OpenAI's, Anthropic's and Google's batch APIs.
BATCH_SHARE = 0.5


@dataclass(frozen=True)
class Rates:
    """A model's prices: for calls sent directly and for calls sent in a batch."""

    standard: ModelCost
    batch: ModelCost

    def cost(self, usage: ModelUsage, batch: bool) -> float:
        """The dollars of `usage`, at the batch rates for batched calls."""
        return compute_model_cost(self.batch if batch else self.standard, usage)


def _rates(entry: Mapping[str, Any]) -> Rates:
    fields = dict(entry)
    batch = fields.pop("batch", BATCH_SHARE)
    standard = ModelCost(**fields)
    if isinstance(batch, Mapping):
        return Rates(standard, ModelCost(**batch))
    if isinstance(batch, bool) or not isinstance(batch, int | float) or batch < 0:
        raise ValueError(f"batch: {batch!r} is neither a share of the price nor batch prices")
    return Rates(standard, ModelCost(**{k: v * batch for k, v in standard.model_dump().items()}))


def load_prices(path: Path) -> dict[str, Rates]:
    """The prices of a `--model-cost-config` style file, with each model's batch prices."""
    try:
        text = path.read_text(encoding="utf-8")
        prices = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        return {model: _rates(entry) for model, entry in prices.items()}
    except (OSError, ValueError, TypeError, AttributeError, yaml.YAMLError) as err:
        raise UserError(f"{path}: not a model cost file ({err})") from err


def price(
    model: str, usage: ModelUsage, prices: dict[str, Rates], batch: bool = False
) -> float | None:
    """The dollars of `model`'s `usage`: from the prices file, else as inspect priced it,
    else from inspect's model data (at the batch share for batched calls); None unknown."""
    if model in prices:
        return prices[model].cost(usage, batch)
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
