"""Which logs are one run, and what a run lacks.

`inspect eval-retry` continues a log in a new file with its finished samples and usage
carried over, so counting both files would count those samples (and tokens) twice: such
logs are one run (docs/studies.md, "Interrupted and resumed runs").
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from inspect_ai.log import EvalLog, EvalSample

from howtobench.vocabulary.metadata import TaskKey
from howtobench.vocabulary.words import writer_of
from howtobench.writing.summary import WRITING_STATE

__all__ = [
    "Overlap",
    "Run",
    "differences",
    "first_few",
    "grader_model",
    "group_runs",
    "judged_by",
    "overlaps",
    "writer_model",
]


def first_few(items: Iterable[object], shown: int = 5) -> str:
    """`a, b, c, ... (12 in all)`: enough to find the culprits in a long list."""
    items = list(items)
    head = ", ".join(str(i) for i in items[:shown])
    return head if len(items) <= shown else f"{head}, ... ({len(items)} in all)"


def writer_model(log: EvalLog) -> str:
    """Who wrote the writings: the replayed model, else the evaluated one."""
    return (log.eval.metadata or {}).get(TaskKey.REPLAY) or writer_of(log.eval.model)


def grader_model(log: EvalLog) -> str:
    """The judge: a one-model panel named in the task arguments (`-T judges=<model>`), else
    the `grader` role, else the evaluated model (inspect's fallback)."""
    panel = (log.eval.task_args or {}).get("judges")
    if isinstance(panel, str) and panel.strip() and "," not in panel:
        return panel.strip()
    role = (log.eval.model_roles or {}).get("grader")
    if isinstance(role, list):
        return ",".join(config.model for config in role)
    return role.model if role is not None else log.eval.model


def _lineage(log: EvalLog) -> tuple[str, ...]:
    """What a log and its eval-retry continuations share."""
    args = json.dumps(log.eval.task_args or {}, sort_keys=True, default=str)
    return (log.eval.task_id, log.eval.task, writer_model(log), grader_model(log), args)


def _age(entry: tuple[str, EvalLog]) -> tuple[str, str, str]:
    """Oldest first: a continuation is created after the log it continues ended."""
    path, log = entry
    return (log.eval.created, log.stats.completed_at or "", path)


@dataclass(frozen=True)
class Run:
    """The logs of one run, oldest first: a log and its eval-retry continuations, if any."""

    logs: tuple[tuple[str, EvalLog], ...]

    @property
    def path(self) -> str:
        return self.logs[-1][0]

    @property
    def newest(self) -> EvalLog:
        return self.logs[-1][1]

    def samples(self) -> list[tuple[str, EvalSample]]:
        """(log path, sample) for each sample id and epoch once: the newest log's copy."""
        chosen: dict[tuple[str, int], tuple[str, EvalSample]] = {}
        for path, log in self.logs:
            for sample in log.samples or []:
                chosen[(str(sample.id), sample.epoch)] = (path, sample)
        return list(chosen.values())

    def merge_note(self, what: str) -> list[str]:
        """That the older logs are counted through the newest (`what` is counted once)."""
        if len(self.logs) == 1:
            return []
        older = first_few(path for path, _ in self.logs[:-1])
        return [
            f"{self.path} continues {older} (eval-retry, task id {self.newest.eval.task_id}): "
            f"one run, {what}"
        ]

    def interrupted(self) -> str:
        """`interrupted (status 'error': ...); ` for a run that did not finish, else ``."""
        if self.newest.status == "success":
            return ""
        return f"interrupted (status '{self.newest.status}'{self._why()}); "

    def notes(self) -> list[str]:
        """What a reader of a study must know: logs merged, samples lacking."""
        notes = self.merge_note("each sample counted once, from the newest log holding it")
        samples = [sample for _, sample in self.samples()]
        errored = sum(1 for sample in samples if sample.error is not None)
        done = len(samples) - errored
        how = self.interrupted()
        spec = self.newest.eval  # the ids and epochs the run was asked to do
        given = spec.dataset.sample_ids
        ids = len(given) if given is not None else spec.dataset.samples
        if ids is None:
            if how or errored:
                notes.append(
                    f"{self.path}: {how}{errored} sample(s) ended in an error; "
                    f"the studies use the {done} it has"
                )
            return notes
        epochs = spec.config.epochs or 1
        expected = ids * epochs
        if done < expected:
            notes.append(
                f"{self.path}: {how}it lacks {expected - done} of its {expected} samples "
                f"({ids} ids × {epochs} epochs): {max(expected - len(samples), 0)} never run, "
                f"{errored} ended in an error; the studies use the {done} it has"
            )
        elif how:
            notes.append(f"{self.path}: {how}but it has all its {expected} samples")
        return notes

    def _why(self) -> str:
        error = self.newest.error
        if error is None or not error.message:
            return ""
        first = error.message.strip().splitlines()[0]
        return f": {first[:117] + '...' if len(first) > 120 else first}"


def group_runs(logs: Iterable[tuple[str, EvalLog]]) -> list[Run]:
    """The runs of (path, log) pairs, in the order their first log was given."""
    groups: dict[tuple[str, ...], list[tuple[str, EvalLog]]] = {}
    for path, log in logs:
        groups.setdefault(_lineage(log), []).append((path, log))
    runs = []
    for group in groups.values():
        if len({log.eval.eval_id for _, log in group}) < len(group):
            runs += [Run((entry,)) for entry in group]  # one log named twice: not a run's parts
        else:
            runs.append(Run(tuple(sorted(group, key=_age))))
    return runs


def judged_by(log: EvalLog) -> dict[str, str]:
    """What changes a run's scores beyond its task and writer, as its header records it:
    each role's model and the endpoint it was called at (inspect records a role's base
    URL, also one taken from `<SERVICE>_BASE_URL`, but leaves it out of the task's
    identity), and the plan's digest."""
    found: dict[str, str] = {}
    for role, bound in sorted((log.eval.model_roles or {}).items()):
        configs = bound if isinstance(bound, list) else [bound]
        found[role] = ",".join(config.model for config in configs)
        endpoints = ",".join(config.base_url or "" for config in configs)
        if endpoints.strip(","):
            found[f"{role} endpoint"] = endpoints
    plan = (log.eval.metadata or {}).get(TaskKey.PLAN)
    if plan:
        found["plan"] = str(plan)
    return found


def differences(identities: list[dict[str, str]]) -> str:
    """`grader: a vs b; plan: x vs none`: what differs between `judged_by` records."""
    keys = sorted({key for identity in identities for key in identity})
    return "; ".join(
        f"{key}: {' vs '.join(identity.get(key, 'none') for identity in identities)}"
        for key in keys
        if len({identity.get(key) for identity in identities}) > 1
    )


@dataclass(frozen=True)
class Overlap:
    """Samples of one writer's task that several runs scored with the same scorer: the
    studies would count them more than once, so `report` refuses the folder and
    `howtobench check-logs` fails on it, with this one account of it."""

    writer: str
    task: str
    scorer: str
    shared: int  # samples (id × epoch) held by more than one of the runs
    runs: tuple[Run, ...]  # exactly the runs holding them, oldest first

    def line(self) -> str:
        """What overlaps, and which to keep: one of copies, the newest of runs judged
        alike; else what differs."""
        paths = ", ".join(run.path for run in self.runs)
        what = (
            f"{self.shared} sample(s) of {self.writer}'s {self.task} are scored by "
            f"'{self.scorer}' in {len(self.runs)} logs ({paths})"
        )
        eval_ids = {run.newest.eval.eval_id for run in self.runs}
        identities = [judged_by(run.newest) for run in self.runs]
        newest = self.runs[-1].path
        if len(eval_ids) == 1:
            keep = f"the same log in {len(self.runs)} files (eval id {eval_ids.pop()}); keep one"
        elif all(identity == identities[0] for identity in identities):
            keep = f"judged alike; keep the newest ({newest}) and move the others out of the folder"
        else:
            keep = (
                f"judged differently ({differences(identities)}); keep the one you mean to "
                "report (the one matching your plan and judge) and move the others out, or "
                "compare judges with `howtobench judges`"
            )
        return f"{what}: {keep}"


def _sample_keys(log: EvalLog) -> set[tuple[str, int]]:
    """The (sample id, epoch) pairs a run was asked to do, from its header."""
    ids = log.eval.dataset.sample_ids or []
    epochs = log.eval.config.epochs or 1
    return {(str(i), e) for i in ids for e in range(1, epochs + 1)}


def _scorers(log: EvalLog) -> list[str]:
    """The scorers that score the run's writings: not `writing_state`, which every run of
    a writing task has (it counts the writings, whatever scored them)."""
    named = [scorer.name for scorer in log.eval.scorers or []]
    if not named and log.results is not None:
        named = [score.scorer for score in log.results.scores]
    return [name for name in dict.fromkeys(named) if name.rpartition("/")[2] != WRITING_STATE]


def overlaps(runs: Iterable[Run]) -> list[Overlap]:
    """Where runs score the same samples of one writer's task (and perturbation) with the
    same scorer; read from the headers alone. A run's eval-retry logs are one run, and
    runs that split a task's samples (the pieces of `howtobench shards split`) or its
    scorers (an `inspect score` with another scorer) do not overlap."""
    groups: dict[tuple[str, str, str, str], list[Run]] = {}
    for run in runs:
        log = run.newest
        perturb = str((log.eval.metadata or {}).get(TaskKey.PERTURB) or "")
        for scorer in _scorers(log):
            key = (writer_model(log), log.eval.task, perturb, scorer)
            groups.setdefault(key, []).append(run)
    found = []
    for (writer, task, _, scorer), members in groups.items():
        held = [_sample_keys(run.newest) for run in members]
        counts = Counter(key for keys in held for key in keys)
        shared = {key for key, n in counts.items() if n > 1}
        if not shared:
            continue
        holding = sorted(
            (run for run, keys in zip(members, held, strict=True) if keys & shared),
            key=lambda run: _age(run.logs[-1]),
        )
        found.append(Overlap(writer, task.rpartition("/")[2], scorer, len(shared), tuple(holding)))
    return found
