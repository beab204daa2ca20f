"""inspect's run options, checked when one of our tasks is built.

`inspect eval` takes `--max-connections 0` (or any negative count), a negative
`--max-retries` or a `--timeout` of 0 without a word, and then waits forever or misbehaves.
While inspect builds the tasks the eval's generation settings are known
(`_inspect.eval_config`), so a task refuses them in one line before anything runs.
`--max-samples` is not among those settings in inspect-ai 0.3.285, so `--max-samples 0`
is inspect's to refuse.
"""

from __future__ import annotations

from inspect_ai.model import GenerateConfig

from howtobench._inspect import eval_config
from howtobench.vocabulary.errors import UserError

__all__ = ["BOUNDS", "check_run_options"]

# inspect's option -> (its GenerateConfig field, the lowest value that makes sense)
BOUNDS = {
    "--max-connections": ("max_connections", 1),
    "--max-retries": ("max_retries", 0),
    "--timeout": ("timeout", 1),
    "--attempt-timeout": ("attempt_timeout", 1),
}


def check_run_options(config: GenerateConfig | None = None) -> None:
    """Refuse counts and timeouts out of range in `config`, by default the eval's. Built
    from Python before `eval()`, or with a `Model` object as the eval's model, the eval's
    settings are not known and nothing is checked.
    """
    found = config if config is not None else eval_config()
    for option, (field, lowest) in BOUNDS.items():
        value = getattr(found, field)
        if value is not None and value < lowest:
            raise UserError(f"{option}: expected a whole number of at least {lowest}, got {value}")
