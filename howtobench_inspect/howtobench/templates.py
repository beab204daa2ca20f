"""Prompt templates: text files kept in a `prompts/` folder beside the code that uses them.

Templates use `$name` placeholders (string.Template), so JSON examples in them need no
escaping.
"""

from functools import cache
from pathlib import Path
from string import Template


@cache
def template(folder: Path, name: str, language: str) -> Template:
    """The template `<name>.<language>.txt` of `folder`; languages without one use English."""
    path = folder / f"{name}.{language}.txt"
    if not path.is_file():
        path = folder / f"{name}.en.txt"
    return Template(path.read_text(encoding="utf-8"))


def render(folder: Path, name: str, language: str, **values: object) -> str:
    """A template filled in; a placeholder without a value is an error, not a blank."""
    return template(folder, name, language).substitute(values)
