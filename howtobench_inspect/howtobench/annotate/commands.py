"""`howtobench annotate new|links|serve|export`: the rating studio's commands, and what
they print. Each action imports the studio's modules when it runs, so that `--help`
stays light.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING

from howtobench.annotate.campaign_options import KINDS, REFERENCE_MODES, Options
from howtobench.commandline import options
from howtobench.commandline.commands import (
    LOGS_HELP,
    add_actions,
    add_command,
    add_count,
    add_seed,
    names,
)

if TYPE_CHECKING:
    from howtobench.commandline.commands import Commands

__all__ = ["add_annotate_command"]

SUMMARY = "the rating studio: experts rate writings in a browser (paper section 5.2)"
DEFAULT_URL = "http://127.0.0.1:8780"
CAMPAIGN = Options()  # the defaults of `howtobench annotate new`


def add_annotate_command(commands: Commands) -> None:
    """`howtobench annotate ACTION`."""
    actions = add_actions(commands, "annotate", SUMMARY)
    p = add_command(
        actions, "new", "a campaign in a new SQLite file, from the writings of inspect logs"
    )
    p.add_argument("db", type=Path, metavar="DB", help="the campaign file to create")
    p.add_argument("--logs", nargs="+", required=True, metavar="LOGS", help=LOGS_HELP)
    add_count(p, "--instructions", "how many (default: all written by every writer)")
    p.add_argument(
        "--raters",
        type=names,
        default=list(CAMPAIGN.raters),
        help=f"comma list of rater names (default {','.join(CAMPAIGN.raters)})",
    )
    per_writing = CAMPAIGN.per_writing
    add_count(p, "--raters-per-writing", f"default {per_writing}", per_writing, metavar="K")
    add_seed(p, "seed of the sampling and orders", CAMPAIGN.seed)
    p.add_argument(
        "--kind",
        choices=KINDS,
        default=CAMPAIGN.kind,
        help="rate each writing 1-5, or pick the best",
    )
    p.add_argument(
        "--reference",
        choices=REFERENCE_MODES,
        default=CAMPAIGN.reference,
        help="rate: show the reference as a 4; pick: put it among the candidates",
    )
    p.set_defaults(run=lambda a: print(new_campaign(a.db, a.logs, _options(a))))

    p = add_command(actions, "links", "the admin link and each rater's private link")
    p.add_argument("db", type=Path, metavar="DB")
    p.add_argument(
        "--url", default=DEFAULT_URL, help=f"where raters reach the studio ({DEFAULT_URL})"
    )
    p.add_argument(
        "--json", action="store_true", help='print {"admin": URL, "raters": {name: URL}}'
    )
    p.set_defaults(run=lambda a: print(show_links(a.db, a.url, a.json)), extra="studio")

    p = add_command(actions, "serve", "serve the rater and admin pages (Ctrl-C stops)")
    p.add_argument("db", type=Path, metavar="DB")
    p.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1 (this machine only)")
    p.add_argument(
        "--port", type=options.port, default=8780, help="default 8780 (0: any free port)"
    )
    p.set_defaults(run=_serve, extra="studio")

    p = add_command(
        actions, "export", "write the ratings (or picks) as CSV or JSONL, by the file's suffix"
    )
    p.add_argument("db", type=Path, metavar="DB")
    p.add_argument("--out", required=True, type=Path, metavar="FILE", help="ratings.csv or .jsonl")
    p.set_defaults(run=lambda a: print(export_file(a.db, a.out)))


def _options(args: argparse.Namespace) -> Options:
    return Options(
        args.instructions,
        tuple(args.raters),
        args.raters_per_writing,
        args.seed,
        args.kind,
        args.reference,
    )


def _serve(a: argparse.Namespace) -> None:
    from howtobench.annotate.server import serve

    serve(a.db, a.host, a.port)


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{key} {n}" for key, n in sorted(counter.items()))


def new_campaign(db: Path, logs: Sequence[str], options: Options) -> str:
    """Make the campaign file and say what is in it."""
    from howtobench.annotate.campaign import eligible, plan
    from howtobench.annotate.schema import create
    from howtobench.annotate.sources import read_instructions

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
    from howtobench.annotate.server import links
    from howtobench.annotate.store import Store

    with closing(Store(db)) as store:
        found = links(store.settings(), url)
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

    with closing(Store(db)) as store:
        rows = export(store, out)
        kind = "ratings" if store.settings().kind == "rate" else "picks"
    return f"wrote {rows} {kind} to {out}"
