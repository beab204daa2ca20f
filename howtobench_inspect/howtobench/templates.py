"""Prompt templates: text files kept in a `prompts/` folder beside the code that uses them."""

from functools import cache
from pathlib import Path


@cache
def template(folder: Path, name: str, language: str) -> str:
    """The template `<name>.<language>.txt` of `folder`; languages without one use English."""
    path = folder / f"{name}.{language}.txt"
    if not path.is_file():
        path = folder / f"{name}.en.txt"
    return path.read_text(encoding="utf-8")
