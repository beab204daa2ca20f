"""Environment variables set for a block and put back after it: how the judge check and
the scale-out worker hand inspect a setting it reads only from the environment."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

__all__ = ["environment"]


@contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """`values` set inside the block; after it, each variable is as it was before."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, earlier in before.items():
            if earlier is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = earlier
