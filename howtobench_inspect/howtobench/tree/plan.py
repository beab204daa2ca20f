"""The judge plan: every instruction's negotiated weights, frozen in one file.

The reply store is keyed on the judge's endpoint, so two hosts or replicas would
negotiate every instruction again; a plan makes the weights an artifact every worker reads
(docs/large-runs.md, "Scale out: one plan, many workers", has the file and its checks).
Its `digest` proves only that the file is whole, so every entry is also held to the rules
a negotiator's reply is (`negotiator.weights_form`), one line per instruction.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fsspec

from howtobench.dataset.fingerprint import Fingerprint
from howtobench.judge.reading import Form, ReplyError
from howtobench.tree.negotiator import Weights, weights_form
from howtobench.tree.prompts import PROMPTS
from howtobench.tree.spec import tree_for
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.words import TASKS

__all__ = [
    "Plan",
    "PlanEntry",
    "PlanError",
    "PlanFileMissing",
    "TREE_VERSION",
    "plan_digest",
    "plan_text",
    "read_plan",
]

PLAN_FORMAT = 1
# The version of the tree's negotiated leaves (ids and groups): a plan of another
# version has weights for other criteria.
TREE_VERSION = 1
_NEGOTIATOR_PROMPTS = ("negotiator", "negotiator_system", "group", "leaf_summaries")


class PlanError(UserError):
    """A plan that cannot be used: the message names the file and what is wrong."""


class PlanFileMissing(PlanError):
    """No file at the plan's path."""


def prompts_digest() -> str:
    """12 hex characters over the negotiator's prompt files (all languages): plans made
    with other negotiator prompts say so in their manifest."""
    digest = hashlib.sha256()
    for path in sorted(PROMPTS.glob("*.txt")):
        if path.name.split(".")[0] in _NEGOTIATOR_PROMPTS:
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


@dataclass(frozen=True)
class PlanEntry:
    """One instruction's weights, as the negotiator gave them."""

    task: str
    id: str
    weights: dict[str, float]
    explanation: str = ""

    @property
    def fingerprint(self) -> str:
        return Weights(self.weights, self.explanation).fingerprint

    def line(self) -> str:
        return json.dumps(
            {
                "task": self.task,
                "id": self.id,
                "weights": self.weights,
                "fingerprint": self.fingerprint,
                "explanation": self.explanation,
            },
            ensure_ascii=False,
        )


@dataclass(frozen=True)
class Plan:
    """A plan file read and checked: its manifest and its entries by (task, id)."""

    path: str
    manifest: dict[str, Any]
    entries: dict[tuple[str, str], PlanEntry]

    @property
    def digest(self) -> str:
        return str(self.manifest["digest"])

    def weights(self, task: str, sample_id: str) -> Weights | None:
        entry = self.entries.get((task, sample_id))
        return Weights(entry.weights, entry.explanation) if entry else None

    def check_data(self, task: str, data: Fingerprint) -> None:
        """Refuse a plan negotiated on other data than the task's."""
        planned = self.manifest["data"].get(task)
        if planned is None:
            tasks = ", ".join(self.manifest["data"]) or "none"
            raise PlanError(f"{self.path}: the plan has no {task} instructions (it has {tasks})")
        if (planned.get("count"), planned.get("sha256")) != (data.count, data.sha256):
            raise PlanError(
                f"{self.path}: the plan was negotiated on other {task} data "
                f"({planned.get('count')} records, content hash {str(planned.get('sha256'))[:12]}; "
                f"this data: {data.count} records, {data.sha256[:12]}): export a plan from "
                "this data source"
            )

    def check_covers(self, task: str, ids: Sequence[str]) -> None:
        """Refuse a plan that lacks some of the task's instructions."""
        missing = [i for i in ids if (task, i) not in self.entries]
        if missing:
            raise PlanError(
                f"{self.path}: the plan lacks the weights of {len(missing)} of the {len(ids)} "
                f"{task} instructions (e.g. {missing[0]}): negotiate them "
                "(howtobench/negotiate) and export the plan again"
            )


def plan_digest(body: str) -> str:
    """The manifest's digest of the instruction lines `body` (every line after the
    manifest, each with its line end)."""
    return hashlib.sha256(body.encode("utf-8")).hexdigest()


def plan_text(entries: Iterable[PlanEntry], manifest: Mapping[str, Any]) -> str:
    """The plan file: `manifest` (judge, temperature, data, sources) completed with the
    format, tree and prompt versions, the count and the digest, then the entries in
    (task, id) order."""
    ordered = sorted(entries, key=lambda e: (e.task, e.id))
    body = "".join(entry.line() + "\n" for entry in ordered)
    head = {
        "howtobench_plan": PLAN_FORMAT,
        "tree": TREE_VERSION,
        "prompts": prompts_digest(),
        **manifest,
        "instructions": len(ordered),
        "digest": plan_digest(body),
    }
    return json.dumps(head, ensure_ascii=False) + "\n" + body


def read_plan(path: str | Path) -> Plan:
    """Read a plan (a local path or any fsspec URL) and check it whole; a file that is
    not a plan, was altered, or belongs to another tree version is refused in one line."""
    where = str(path)
    try:
        with fsspec.open(where, "rb") as file:
            raw = file.read()
    except FileNotFoundError:
        raise PlanFileMissing(f"{where}: no such plan file") from None
    except Exception as error:  # OSError, or a storage client's own (an endpoint down)
        said = str(error).strip().splitlines()[0] if str(error).strip() else ""
        raise PlanError(f"{where}: cannot read the plan ({type(error).__name__}: {said})") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(f"{where}: not a plan (the file is not UTF-8 text)") from None
    head, _, body = text.partition("\n")
    manifest = _manifest(where, head)
    if plan_digest(body) != manifest["digest"]:
        raise PlanError(
            f"{where}: the plan's instructions do not match its digest (the file was edited "
            "or cut short): export it again"
        )
    if manifest.get("tree") != TREE_VERSION:
        raise PlanError(
            f"{where}: the plan is for tree version {manifest.get('tree')}, this package's "
            f"tree is version {TREE_VERSION}: negotiate and export a new plan"
        )
    entries: dict[tuple[str, str], PlanEntry] = {}
    lines: dict[tuple[str, str], int] = {}
    forms = {task: weights_form(tree_for(task)) for task in TASKS}
    for number, line in enumerate(body.splitlines(), start=2):
        entry = _entry(where, number, line, forms)
        instruction = (entry.task, entry.id)
        if instruction in lines:
            raise PlanError(
                f"{where}, line {number}, {entry.task}/{entry.id}: the instruction is also on "
                f"line {lines[instruction]} (one line per instruction): export the plan again"
            )
        lines[instruction] = number
        entries[instruction] = entry
    return Plan(where, manifest, entries)


def _manifest(where: str, head: str) -> dict[str, Any]:
    try:
        manifest = json.loads(head)
    except ValueError:
        manifest = None
    if not isinstance(manifest, dict) or "howtobench_plan" not in manifest:
        raise PlanError(
            f"{where}: not a plan (its first line is no plan manifest; make one with "
            "`howtobench plan export`)"
        )
    if manifest["howtobench_plan"] != PLAN_FORMAT:
        raise PlanError(
            f"{where}: plan format {manifest['howtobench_plan']}, this package reads "
            f"format {PLAN_FORMAT}"
        )
    for key, kind in (("digest", str), ("data", dict)):
        if not isinstance(manifest.get(key), kind):
            raise PlanError(f"{where}, line 1: the manifest lacks '{key}'")
    return manifest


def _entry(where: str, number: int, line: str, forms: Mapping[str, Form[Weights]]) -> PlanEntry:
    try:
        row = json.loads(line)
    except ValueError:
        row = None
    if not isinstance(row, dict):
        raise PlanError(f"{where}, line {number}: not a JSON object")
    task, sample_id = row.get("task"), row.get("id")
    if task not in TASKS or not isinstance(sample_id, str):
        raise PlanError(
            f"{where}, line {number}: 'task' must be one of {', '.join(TASKS)} and 'id' a string"
        )
    try:
        # the negotiator's own rules, as its reply would be checked
        checked = forms[task].check(row)
    except ReplyError as error:
        raise PlanError(
            f"{where}, line {number}, {task}/{sample_id}: {error} (a negotiator reply with "
            "these weights would be refused): export the plan again"
        ) from None
    return PlanEntry(task, sample_id, checked.values, checked.explanation)
