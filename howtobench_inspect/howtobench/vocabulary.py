"""The benchmark's shared words, at the bottom of the package: the task names, the
completion task's fill-in marker, the inspect task prefix, the replay provider's name and how a text's language is
told. Every layer (data, judges, tree, studies, construction, simulator) names these
from here; the module imports nothing of ours and nothing heavy."""

from __future__ import annotations

import re

# The benchmark's tasks, in the paper's order (section 4.4).
TASKS: tuple[str, ...] = ("completion", "guide", "open")
# The registry prefix of our inspect tasks (`howtobench/guide`).
TASK_PREFIX = "howtobench/"
# Where a completion text's missing passage was cut out (section 4.5).
FILL_MARKER = "[fill in the blank]"
# The model provider of stored writings: `--model replay/<writer>` (howtobench/replay.py).
REPLAY_API = "replay"


def replay_model(writer: str) -> str:
    """The model name that replays `writer`'s stored writings."""
    return f"{REPLAY_API}/{writer}"


def replayed_writer(model: str) -> str | None:
    """The writer a model name replays (`replay/gpt-4o` -> `gpt-4o`), else None."""
    api, _, writer = model.partition("/")
    return writer if api == REPLAY_API and writer else None


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def detect_language(text: str) -> str:
    """`zh` when at least a quarter of the non-space characters are CJK, else `en`."""
    chars = [c for c in text if not c.isspace()]
    if not chars:
        return "en"
    return "zh" if len(_CJK.findall(text)) * 4 >= len(chars) else "en"
