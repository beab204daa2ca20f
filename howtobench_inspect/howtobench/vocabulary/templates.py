"""Prompt templates: text files kept in a `prompts/` folder beside the code that uses them.

Templates use `$name` placeholders (string.Template), so JSON examples need no escaping.
A prompt that the judge simulator and the tests' scripted judges must tell apart carries
a tag line `[howtobench:<tag>]` that its loader puts above it (`tagged`), so that
rewording a template never changes which question it is: the one carrier every route
keeps (both APIs, a folded system prompt, batch bodies, inspect's ChatMessages).
"""

import re
from functools import cache
from pathlib import Path
from string import Template

__all__ = ["render", "tagged", "tags_in", "template"]

_TAG_LINE = re.compile(r"^\[howtobench:([a-z_]+)\]$", re.M)


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


def tagged(text: str, tag: str | None) -> str:
    """`text` under the line of its tag; untagged (`None`) as it is."""
    return text if tag is None else f"[howtobench:{tag}]\n{text}"


def tags_in(text: str) -> list[str]:
    """The tags of the tag lines in `text`, in order."""
    return _TAG_LINE.findall(text)
