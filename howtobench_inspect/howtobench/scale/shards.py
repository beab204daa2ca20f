"""`howtobench shards split CAPTURE.json --workers N --out DIR`: worker files of equal work.

An eval set's tasks are (writer × task) units of very different sizes, and what costs
time is the judge's calls; so this cuts the eval set into N stretches of nearly equal
numbers of judge calls (counted from the task's captured `args_full` and the tree in
`howtobench.tree.spec`), cutting a task by sample range where a stretch ends inside it.
The range goes in one field of ours, `howtobench.limits`, beside inspect's selection
format, which has one `limit` per selection: plain inspect refuses the file, the safe
failure, where ignoring the range would run the whole task on every worker holding a
piece of it (the format: docs/cluster.md, "The worker file").
"""

from __future__ import annotations

import argparse
import json
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate
from pathlib import Path
from typing import TYPE_CHECKING, Any

from howtobench.commandline.commands import add_actions, add_command
from howtobench.commandline.options import whole_number
from howtobench.tree.spec import tree_for

if TYPE_CHECKING:
    from howtobench.commandline.commands import Commands

__all__ = ["FIELD", "Task", "add_shards_command", "cut", "read_capture", "split", "writing_calls"]

FIELD = "howtobench"
"""Our field in a worker file, beside inspect's selection (`limits`, `samples`, `judge_calls`)."""

SELECTION_VERSION = 7
"""inspect's selection schema the worker files declare (`EVAL_SET_SELECTION_VERSION` of
inspect-ai 0.3.285; `overrides.limit` needs 3, and nothing newer is written)."""

SINGLE_CALL_BASELINES = ("rubric", "autoplan")
"""Scorers that ask each judge once per writing and judge sample."""

TREE_SCORER = "tow"


def writing_calls(kind: str, args: dict[str, Any]) -> int:
    """The judge calls one writing of a `kind` task (`completion`, `guide`, `open`) costs,
    with these task arguments (the capture's `args_full`), read as the task reads them."""
    from howtobench.vocabulary.parameter_values import names  # inspect-ai's: not for `--help`

    scorers = names(args.get("scorers"), "scorers") or (TREE_SCORER,)
    panel = len(names(args.get("judges"), "judges")) or 1
    samples = int(args.get("judge_samples") or 1)
    calls = 0
    if TREE_SCORER in scorers:
        tree = tree_for(kind, names(args.get("nodes"), "nodes") or None)
        experts = sum(1 for leaf in tree.leaves if leaf.judge == "llm")
        weights = args.get("weights")
        negotiates = bool(tree.negotiated) and weights in (None, "", "negotiated")
        calls += experts * panel * samples + (1 if negotiates else 0)
    calls += sum(panel * samples for name in scorers if name in SINGLE_CALL_BASELINES)
    return calls


@dataclass(frozen=True)
class Task:
    """One captured task and what its samples cost."""

    identifier: str
    samples: int
    calls: int  # per sample, epochs included; 0 for a task that asks no judge

    @classmethod
    def of(cls, entry: dict[str, Any]) -> Task:
        name = str(entry.get("registry_name") or entry.get("name") or "")
        kind = name.rsplit("/", 1)[-1]
        args = entry.get("args_full") or entry.get("args") or {}
        per_writing = writing_calls(kind, args) if kind in ("completion", "guide", "open") else 0
        epochs = int(entry.get("epochs") or 1)
        return cls(str(entry["identifier"]), int(entry["samples"]), per_writing * epochs)


@dataclass(frozen=True)
class Piece:
    """The samples `start`..`stop` (stop excluded) of a task, for one worker."""

    task: Task
    start: int
    stop: int

    @property
    def whole(self) -> bool:
        return self.start == 0 and self.stop == self.task.samples

    @property
    def samples(self) -> int:
        return self.stop - self.start


def read_capture(path: Path) -> tuple[str, list[Task]]:
    """(eval set id, tasks) of an `INSPECT_EVAL_SET_CAPTURE` manifest."""
    from howtobench.vocabulary.errors import UserError  # inspect-ai's error: not for `--help`

    try:
        manifest = json.loads(path.read_text("utf-8"))
        eval_set_id = manifest["eval_set_id"]
        tasks = [Task.of(entry) for entry in manifest["tasks"]]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise UserError(f"{path}: not an inspect eval-set capture ({err})") from None
    if not eval_set_id:
        raise UserError(f"{path}: the capture has no eval_set_id (give eval_set() one)")
    if not tasks or not sum(task.samples for task in tasks):
        raise UserError(f"{path}: the capture has no samples to divide")
    return str(eval_set_id), tasks


def cut(tasks: Sequence[Task], workers: int) -> list[list[Piece]]:
    """The tasks, in capture order, cut into `workers` contiguous stretches of nearly equal
    weight: every sample goes to exactly one worker and every worker gets one at least, so a
    worker holds at most two cut tasks and no task twice; worker k ends at the sample where
    the running weight comes closest to k/N of the total.
    """
    from howtobench.vocabulary.errors import UserError

    total_samples = sum(task.samples for task in tasks)
    if workers > total_samples:
        raise UserError(f"--workers {workers} is more than the {total_samples} samples to divide")
    # running weight after each sample, across the tasks in order: a sample weighs its
    # calls, or 1 in a task with none, so that such tasks are still divided by their samples
    running = list(accumulate(task.calls or 1 for task in tasks for _ in range(task.samples)))
    so_far = running[-1]
    bounds = [0]
    for k in range(1, workers):
        share = so_far * k / workers
        at = bisect_left(running, share)  # the first sample reaching the share
        if at > 0 and share - running[at - 1] <= running[at] - share:
            at -= 1  # ending one sample earlier comes closer
        # at least one sample for this worker and for each one after it
        bounds.append(min(max(at + 1, bounds[-1] + 1), total_samples - (workers - k)))
    bounds.append(total_samples)
    stretches: list[list[Piece]] = []
    for begin, end in zip(bounds[:-1], bounds[1:], strict=True):
        pieces, offset = [], 0
        for task in tasks:
            start, stop = max(begin - offset, 0), min(end - offset, task.samples)
            if start < stop:
                pieces.append(Piece(task, start, stop))
            offset += task.samples
        stretches.append(pieces)
    return stretches


def worker_file(eval_set_id: str, pieces: Sequence[Piece]) -> dict[str, Any]:
    """A worker's selection: inspect's, plus our `FIELD` (docs/cluster.md, "The worker file")."""
    return {
        "version": SELECTION_VERSION,
        "eval_set_id": eval_set_id,
        "tasks": [{"identifier": piece.task.identifier} for piece in pieces],
        FIELD: {
            "limits": {
                piece.task.identifier: [piece.start, piece.stop]
                for piece in pieces
                if not piece.whole
            },
            "samples": sum(piece.samples for piece in pieces),
            "judge_calls": sum(piece.samples * piece.task.calls for piece in pieces),
        },
    }


def split(capture: Path, workers: int, out: Path, replace: bool = False) -> list[Path]:
    """Write `out/worker-0.json` ... `out/worker-(N-1).json` from a capture manifest.

    A folder holding the worker files of another split is refused (a job runner would
    start its leftover `worker-K.json` beside the new ones, and the two splits overlap),
    unless `replace`, which deletes them first; writing the same split again is allowed."""
    from howtobench.vocabulary.errors import UserError

    eval_set_id, tasks = read_capture(capture)
    files = {
        out / f"worker-{index}.json": json.dumps(worker_file(eval_set_id, pieces), indent=1) + "\n"
        for index, pieces in enumerate(cut(tasks, workers))
    }
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out}: a file, not a folder; name a folder for the worker files")
    earlier = sorted(out.glob("worker-*.json"), key=lambda p: p.name) if out.is_dir() else []
    other = [p for p in earlier if files.get(p) != p.read_text("utf-8")]
    if other and not replace:
        raise UserError(
            f"--out {out} holds the worker files of another split ({_named(earlier)}); "
            "write into an empty folder, or add --replace to delete them first"
        )
    for path in earlier:
        path.unlink()
    if other:
        print(f"{out}: deleted the worker files of an earlier split ({_named(earlier)})")
    out.mkdir(parents=True, exist_ok=True)
    for path, text in files.items():
        path.write_text(text, "utf-8")
    return list(files)


def _named(paths: Sequence[Path]) -> str:
    names = [p.name for p in paths]
    return (
        ", ".join(names) if len(names) <= 3 else f"{names[0]} ... {names[-1]}, {len(names)} files"
    )


SUMMARY = "divide an eval set among workers: worker files of nearly equal judge calls"


def add_shards_command(commands: Commands) -> None:
    """`howtobench shards split`."""
    actions = add_actions(commands, "shards", SUMMARY)
    p = add_command(
        actions,
        "split",
        "cut an INSPECT_EVAL_SET_CAPTURE manifest into N worker files (tasks cut by sample "
        "range where needed) for INSPECT_EVAL_SET_SELECTION",
    )
    p.add_argument("capture", type=Path, metavar="CAPTURE.json", help="the capture manifest")
    p.add_argument(
        "--workers", required=True, type=whole_number(1), metavar="N", help="how many workers"
    )
    p.add_argument(
        "--out", required=True, type=Path, metavar="DIR", help="writes DIR/worker-K.json"
    )
    p.add_argument(
        "--replace",
        action="store_true",
        help="delete the worker files of an earlier split in DIR first (refused without it)",
    )
    p.set_defaults(run=_run)


def _run(args: argparse.Namespace) -> None:
    written = split(args.capture, args.workers, args.out, args.replace)
    for path in written:
        share = json.loads(path.read_text("utf-8"))
        ours = share[FIELD]
        print(
            f"{path}: {len(share['tasks'])} task(s), {len(ours['limits'])} cut by range, "
            f"{ours['samples']} samples, {ours['judge_calls']:,} judge calls"
        )
