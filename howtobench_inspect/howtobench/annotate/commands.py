"""What `howtobench annotate new|links|export` do, as text for the terminal.

`howtobench.cli` parses the options and prints what these return; bad input is a
`StudyError`, which it prints as one line (exit status 2). The studio's modules are
imported by the command that uses them, so that the parser and `--help` stay light.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from howtobench.annotate.campaign_options import Options

DEFAULT_URL = "http://127.0.0.1:8780"


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{key} {n}" for key, n in sorted(counter.items()))


def new_campaign(db: Path, logs: Sequence[str], options: Options) -> str:
    """Make the campaign file and say what is in it."""
    from howtobench.annotate.campaign import eligible, plan
    from howtobench.annotate.sources import read_instructions
    from howtobench.annotate.store import create

    instructions = read_instructions(logs)
    chosen = plan(instructions, options)
    create(db, chosen)
    models = sorted({m for item in chosen.instructions for m in item.writings})
    writings = sum(len(item.writings) for item in chosen.instructions)
    load = Counter(a.rater for a in chosen.assignments)
    lines = [
        f"wrote {db}: a {options.kind} campaign of {len(chosen.instructions)} instruction(s) "
        f"({_counts(Counter(item.task for item in chosen.instructions))}), {writings} "
        f"writings by {len(models)} writer(s): {', '.join(models)}",
        f"genres: {_counts(Counter(item.genre for item in chosen.instructions))}",
        f"{len(chosen.raters)} raters, {options.per_writing} per writing; instructions each: "
        + ", ".join(f"{rater} {load[rater]}" for rater in chosen.raters),
    ]
    left = len(instructions) - len(eligible(instructions))
    if left:
        lines.append(f"left out {left} instruction(s) that not every writer wrote")
    lines.append(f"the links: howtobench annotate links {db}")
    return "\n".join(lines)


def show_links(db: Path, url: str, as_json: bool) -> str:
    """The admin link and the raters' links, as text or JSON."""
    from howtobench.annotate.app import links
    from howtobench.annotate.store import Store

    store = Store(db)
    try:
        found = links(store.settings(), url)
    finally:
        store.close()
    if as_json:
        return json.dumps(found, ensure_ascii=False, indent=2)
    width = max(len("admin"), *(len(name) for name in found["raters"]))
    rows = [f"{'admin':<{width}}  {found['admin']}"]
    rows += [f"{name:<{width}}  {link}" for name, link in found["raters"].items()]
    return "\n".join(rows)


def export_file(db: Path, out: Path) -> str:
    """Write the export and say how many rows it has."""
    from howtobench.annotate.export import export
    from howtobench.annotate.store import Store

    store = Store(db)
    try:
        rows = export(store, out)
        kind = "ratings" if store.settings().kind == "rate" else "picks"
    finally:
        store.close()
    return f"wrote {rows} {kind} to {out}"
