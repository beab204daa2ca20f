"""The settings of every call to one judge model: temperature, the reply's length and
bounded retries, so that a dead or hung endpoint ends a run in minutes instead of retrying
forever, as inspect does when nothing is set (`howtobench.judge.defaults`).
"""

from __future__ import annotations

import math
import os

from inspect_ai.model import GenerateConfig, Model

from howtobench._inspect import batched
from howtobench.judge.defaults import JUDGE_ATTEMPT_TIMEOUT, JUDGE_MAX_TOKENS
from howtobench.vocabulary.errors import UserError

__all__ = ["judge_config"]


def judge_config(model: Model, temperature: float | None, fallback: float) -> GenerateConfig:
    """The settings of every call to one judge model: the scorer's temperature, else the
    role's own, else `fallback` (the run stops when the scorer's and the role's disagree);
    the role's own `max_tokens` and retries, else ours (inspect gives `--max-tokens` to
    the writer only, `--max-retries` to every role). A batched judge gets no attempt
    timeout of ours: inspect would abandon its call while the batch runs and queue the
    question again in a new batch; `HOWTOBENCH_BATCH_WAIT` bounds its wait instead."""
    own = model.config
    if temperature is not None and own.temperature is not None and own.temperature != temperature:
        raise UserError(
            f"-T judge_temperature={temperature:g} and the temperature {own.temperature:g} "
            f"of judge {model} disagree: set only one of them"
        )
    chosen = temperature if temperature is not None else own.temperature
    attempt_timeout = own.attempt_timeout or (None if batched(model) else JUDGE_ATTEMPT_TIMEOUT)
    return GenerateConfig(
        temperature=chosen if chosen is not None else fallback,
        max_tokens=own.max_tokens or JUDGE_MAX_TOKENS,
        attempt_timeout=attempt_timeout,
        max_retries=own.max_retries,
        timeout=own.timeout,
    )


def wait_setting(variable: str, default: float, what: str) -> float:
    """Seconds from the environment variable `variable` (a number above 0, or `inf`), else
    `default`; a bad value is one line saying `what` the seconds are for. The judges'
    waits change no answer, so they are not task arguments: they reach `inspect score`
    and `inspect eval-retry` alike, where a role's config cannot carry them."""
    text = os.environ.get(variable, "").strip()
    if not text:
        return default
    try:
        wait = float(text)
    except ValueError:
        wait = math.nan
    if not wait > 0:  # also NaN
        raise UserError(
            f"{variable}={text!r}: give the seconds {what} (a number above 0, or inf for no bound)"
        )
    return wait
