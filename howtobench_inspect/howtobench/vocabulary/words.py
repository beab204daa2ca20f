"""The benchmark's shared words (task names, the fill-in marker, the providers' names, a
text's language), named by every layer from here; it imports nothing of ours or heavy."""

from __future__ import annotations

import re

__all__ = [
    "FILL_MARKER",
    "REPLAY_API",
    "SIMULATOR_API",
    "TASKS",
    "TASK_PREFIX",
    "detect_language",
    "replay_model",
    "replayed_writer",
    "writer_of",
]

# The benchmark's tasks, in the paper's order (section 4.4).
TASKS: tuple[str, ...] = ("completion", "guide", "open")
# The registry prefix of our inspect tasks (`howtobench/guide`).
TASK_PREFIX = "howtobench/"
# Where a completion text's missing passage was cut out (section 4.5).
FILL_MARKER = "[fill in the blank]"
# The model provider of stored writings: `--model replay/<writer>` (howtobench/writing/replay.py).
REPLAY_API = "replay"
# The judge simulator answering in process: `--model-role grader=towsim/judge`
# (howtobench/simulator/embedded.py).
SIMULATOR_API = "towsim"


def replay_model(writer: str) -> str:
    """The model name that replays `writer`'s stored writings."""
    return f"{REPLAY_API}/{writer}"


def replayed_writer(model: str) -> str | None:
    """The writer a model name replays (`replay/gpt-4o` -> `gpt-4o`), else None."""
    api, _, writer = model.partition("/")
    return writer if api == REPLAY_API and writer else None


def writer_of(model: str) -> str:
    """Who wrote an eval's writings: the writer a replay model replays, else the model."""
    return replayed_writer(model) or model


_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# Scripts that share the Han characters with Chinese, or sit beside it: Japanese kana
# (hiragana, katakana and their extensions, half-width katakana) and Korean Hangul.
_KANA = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\uff66-\uff9d]")
_HANGUL = re.compile(r"[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]")
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")


def detect_language(text: str) -> str:
    """The language of a text by its scripts, or "" when they do not tell.

    Japanese is written with Han characters too: a tenth of kana among them makes `ja`
    (a Chinese text may borrow a lone の, never that many). Any script but Han, kana,
    Hangul and Latin (Cyrillic, Arabic, Thai, ...) is "": the caller asks for the
    language instead of guessing one.
    """
    chars = [c for c in text if not c.isspace()]
    han, kana = len(_CJK.findall(text)), len(_KANA.findall(text))
    if kana and kana * 10 >= han + kana:
        return "ja"
    if len(_HANGUL.findall(text)) * 4 >= len(chars) > 0:
        return "ko"
    if han * 4 >= len(chars) > 0:
        return "zh"
    letters = [c for c in chars if c.isalpha()]
    return "en" if len(_LATIN.findall(text)) * 2 > len(letters) or not letters else ""
