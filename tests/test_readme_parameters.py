"""The README's parameter tables are generated from the tasks' signatures and docstrings.

As inspect_evals keeps the Parameters section of each README, the tables between the
`Parameters: Automatically Generated` markers are written from what inspect itself reads:
each registered task's signature (its names, types and defaults; the three writing tasks
share `writing_parameters`' one) and the `Args:` of the docstring that documents them. So a
parameter added, renamed or given a new default changes the README with it, and a
parameter without a line in its docstring stops the generator. No model is called.

`python tests/test_readme_parameters.py` rewrites the tables in place; the test fails,
saying so, when the README's differ from the ones the code gives.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from inspect_ai._util.registry import registry_info

from howtobench import completion, guide, negotiate, open_writing, writing_parameters

README = Path(__file__).resolve().parents[1] / "README.md"
KEY = "Parameters: Automatically Generated"
START, END = f"<!-- {KEY} -->", f"<!-- /{KEY} -->"
REGENERATE = "python tests/test_readme_parameters.py"
# Each table: the tasks that take the parameters, and the function whose docstring says
# what each one does (the writing tasks' own docstrings point to `writing_parameters`).
TABLES: list[tuple[Sequence[Callable[..., Any]], Callable[..., Any]]] = [
    ((completion, guide, open_writing), writing_parameters),
    ((negotiate,), negotiate),
]


def described(function: Callable[..., Any]) -> dict[str, str]:
    """The `Args:` of a Google-style docstring: each name and its text on one line."""
    lines = (inspect.getdoc(function) or "").splitlines()
    start = next((i + 1 for i, line in enumerate(lines) if line.strip() == "Args:"), None)
    if start is None:
        return {}
    found: dict[str, str] = {}
    indent = len(lines[start]) - len(lines[start].lstrip())
    name = ""
    for line in lines[start:]:
        depth = len(line) - len(line.lstrip())
        if line.strip() and depth < indent:
            break  # the next section (Returns:, Raises:)
        entry = re.match(r"\*{0,2}(\w+):\s*(.*)", line.strip())
        if depth == indent and entry:
            name = entry.group(1)
            found[name] = entry.group(2)
        elif name and line.strip():
            found[name] += " " + line.strip()
    return found


def cell(text: str) -> str:
    """Text for a Markdown table cell: a `|` escaped (GitHub reads it so in code too)."""
    return text.replace("|", "\\|")


def rows(function: Callable[..., Any], documented_by: Callable[..., Any]) -> list[str]:
    """A table row for each parameter of the function's signature, with its docstring line."""
    meanings = described(documented_by)
    found = []
    for parameter in inspect.signature(function, eval_str=True).parameters.values():
        if parameter.kind is parameter.VAR_KEYWORD:
            continue  # the writing tasks' `**unknown`: refused, so not a parameter to list
        meaning = meanings.get(parameter.name)
        if not meaning:
            raise ValueError(
                f"{documented_by.__qualname__}: parameter {parameter.name!r} has no line under "
                f"Args: in its docstring; add one, then run {REGENERATE}"
            )
        kind = inspect.formatannotation(parameter.annotation)
        default = "" if parameter.default is parameter.empty else f"`{parameter.default!r}`"
        found.append(f"| `{parameter.name}` | `{cell(kind)}` | {default} | {cell(meaning)} |")
    return found


def table(tasks: Sequence[Callable[..., Any]], documented_by: Callable[..., Any]) -> list[str]:
    """One table for tasks that share a signature, named as inspect registers them."""
    names = ", ".join(f"`{registry_info(task).name}`" for task in tasks)
    signatures = {str(inspect.signature(task).replace(return_annotation=None)) for task in tasks}
    if len(signatures) != 1:
        raise ValueError(f"{names} do not share one signature: give each its own table")
    head = [f"{names} (from `{documented_by.__name__}`):", ""]
    return [*head, "| parameter | type | default | meaning |", "|---|---|---|---|"] + rows(
        tasks[0], documented_by
    )


def generated() -> str:
    """The text between the markers, the markers included."""
    lines = [START]
    for tasks, documented_by in TABLES:
        lines += ["", *table(tasks, documented_by)]
    return "\n".join([*lines, "", END])


def section(readme: str) -> str:
    """The README's generated part, the markers included ("" when they are missing)."""
    found = re.search(re.escape(START) + ".*?" + re.escape(END), readme, re.DOTALL)
    return found.group(0) if found else ""


def problem(readme: str, expected: str) -> str:
    """Why the README's tables are not the code's, or ""."""
    found = section(readme)
    if not found:
        return f"README.md has no {START} ... {END} section: add the markers, then run {REGENERATE}"
    if found != expected:
        differ = sorted(set(found.splitlines()) ^ set(expected.splitlines()))
        shown = "\n".join(differ[:10])
        return (
            "README.md's parameter tables differ from the tasks' signatures and docstrings; "
            f"regenerate them with `{REGENERATE}`. The lines that differ:\n{shown}"
        )
    return ""


def test_the_readme_tables_are_the_tasks_parameters() -> None:
    text = problem(README.read_text(encoding="utf-8"), generated())
    assert not text, text


def test_every_parameter_inspect_passes_is_in_a_table() -> None:
    """Every name a task takes is a row: nothing of the signature is left out."""
    rows = set(re.findall(r"^\| `(\w+)` \|", generated(), re.MULTILINE))
    for tasks, _ in TABLES:
        for task in tasks:
            taken = inspect.signature(task).parameters.values()
            assert {p.name for p in taken if p.kind is not p.VAR_KEYWORD} <= rows


def test_the_check_sees_a_changed_default_and_missing_markers() -> None:
    expected = generated()
    readme = f"# Title\n\n{expected}\n\n## Next\n"
    assert problem(readme, expected) == ""
    changed = readme.replace("| `'hub'` |", "| `'demo'` |", 1)
    assert changed != readme
    assert f"regenerate them with `{REGENERATE}`" in problem(changed, expected)
    assert "has no <!-- Parameters" in problem("# Title\n", expected)


def test_the_rows_follow_a_signature_and_its_docstring() -> None:
    def fake(dataset: str | None = "hub", rounds: int = 3) -> None:
        """A task.

        Args:
            dataset: where the instructions
                come from.
            rounds: how many | rounds.

        Returns:
            Nothing.
        """

    assert described(fake) == {
        "dataset": "where the instructions come from.",
        "rounds": "how many | rounds.",
    }
    assert rows(fake, fake) == [
        "| `dataset` | `str \\| None` | `'hub'` | where the instructions come from. |",
        "| `rounds` | `int` | `3` | how many \\| rounds. |",
    ]

    def undocumented(dataset: str = "hub", seed: int = 0) -> None:
        """A task.

        Args:
            dataset: where.
        """

    with pytest.raises(ValueError, match="parameter 'seed' has no line under Args:"):
        rows(undocumented, undocumented)


if __name__ == "__main__":
    current = README.read_text(encoding="utf-8")
    if not section(current):
        sys.exit(f"README.md has no {START} ... {END} section: add the markers first")
    README.write_text(current.replace(section(current), generated()), encoding="utf-8")
    print(f"README.md: the parameter tables rewritten from {len(TABLES)} signatures")
