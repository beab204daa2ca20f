"""The corpus a benchmark is built from: JSONL, one human text a line (docs/construction.md,
"The corpus"). A line that cannot be used stops the build, naming file, line and field,
before any model is asked. Step inputs are corpus lines too, so each step task reads what
a user could give it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.dataset.records import DataError, jsonl_text, read_jsonl, told_language
from howtobench.vocabulary.genres import canonical_genre
from howtobench.vocabulary.words import FILL_MARKER

__all__ = ["CorpusText", "read_corpus", "write_jsonl"]

FIELDS: tuple[str, ...] = ("text", "id", "genre", "language", "source")
_LANGUAGE = re.compile(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{1,8})*$")
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


@dataclass(frozen=True)
class CorpusText:
    """One human text of the corpus, and where it was read."""

    id: str
    text: str
    genre_raw: str  # as given, or as classified; "" until then
    language: str  # the primary language subtag: `zh`, `en`, ...
    source: str = ""
    line: int = 0  # the corpus line, for messages and the rejected list

    @property
    def genre(self) -> str:
        """The canonical genre (a label of the user's own is kept as is); "" if unknown."""
        return canonical_genre(self.genre_raw) if self.genre_raw else ""

    def record(self) -> dict[str, Any]:
        """The text as a corpus line (what `read_corpus` reads back)."""
        row = {"id": self.id, "text": self.text, "language": self.language}
        optional = {"genre": self.genre_raw, "source": self.source}
        return row | {key: value for key, value in optional.items() if value}


def _string(obj: Mapping[str, Any], key: str, source: str, line: int) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise DataError(source, f"must be a string, got {type(value).__name__}", line, key)
    if not value.strip():
        raise DataError(source, "is empty (leave the field out instead)", line, key)
    return value


def parse_corpus_line(
    obj: Mapping[str, Any], source: str, line: int, default_id: str
) -> CorpusText:
    """One corpus line, checked; raises `DataError` naming the field."""
    unknown = sorted(set(obj) - set(FIELDS))
    if unknown:
        raise DataError(
            source, f"unknown field (the fields are {', '.join(FIELDS)})", line, unknown[0]
        )
    text = _string(obj, "text", source, line)
    if text is None:
        raise DataError(source, "missing", line, "text")
    if FILL_MARKER in text:
        raise DataError(
            source, f"holds {FILL_MARKER}, the marker the completion task reserves", line, "text"
        )
    if _LONE_SURROGATE.search(text):
        raise DataError(
            source,
            "holds a lone surrogate (\\ud800-\\udfff), which UTF-8 cannot carry",
            line,
            "text",
        )
    language = _string(obj, "language", source, line)
    if language is not None and not _LANGUAGE.match(language.strip()):
        raise DataError(
            source, f"'{language}' is not a language code such as zh or en", line, "language"
        )
    return CorpusText(
        id=(_string(obj, "id", source, line) or default_id).strip(),
        text=text,
        genre_raw=(_string(obj, "genre", source, line) or "").strip(),
        # the prompts are chosen by the primary subtag: `zh-CN` is `zh`
        language=re.split(r"[-_]", language.strip())[0].lower()
        if language
        else told_language(text, source, line, "text"),
        source=(_string(obj, "source", source, line) or "").strip(),
        line=line,
    )


def read_corpus(path: Path) -> list[CorpusText]:
    """Every text of a corpus file, checked; a second text with one id names both lines."""
    source = str(path)
    texts: list[CorpusText] = []
    lines: dict[str, int] = {}
    for line, obj in read_jsonl(path):
        text = parse_corpus_line(obj, source, line, f"{path.stem}_{line}")
        if text.id in lines:
            raise DataError(
                source, f"duplicate id '{text.id}' (lines {lines[text.id]} and {line})", line, "id"
            )
        lines[text.id] = line
        texts.append(text)
    return texts


def write_jsonl(path: Path, rows: Iterable[Mapping[str, Any]]) -> Path:
    """Write rows as a UTF-8 JSONL file (the folder is made if needed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(jsonl_text(rows), encoding="utf-8")
    return path
