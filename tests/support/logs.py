"""Logs for the studies' tests, made by running our real tasks offline with scripted judges.

Four made-up writers replay texts derived from the demo writings (`data.writers_file`), each
the evaluated model `replay/<writer>` (inspect's model axis), so that lengths and scores vary; judges score by a stable hash of the writing, so every
number is reproducible. The session fixtures in `conftest.py` build each set once, in a
folder of its own with an inspect cache of its own. `raw_rows` reads logs back with a
plain loop: what the tests compute their expected numbers from.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inspect_ai import Task, task_with
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log

from howtobench import completion, guide, open_writing, tree_of_writing
from support.data import demo_record, writings
from support.evals import run_eval
from support.judges import ScriptedJudge, hashed_judge

WRITERS = ("w-a", "w-b", "w-c", "w-d")
REPLAYED = "replay/"  # the replay provider's prefix, spelt out: the tests read it back
TASKS = {"completion": completion, "guide": guide, "open": open_writing}
BROKEN = ("w-d", "demo_guide_2")  # the writers' judge cannot score this writing


def build_logs(
    tasks: list[Task], folder: Path, judge: ScriptedJudge | None, **kwargs: Any
) -> list[EvalLog]:
    """Run `tasks` into `folder`, with a cache of their own in `folder/cache`."""
    return run_eval(
        tasks,
        folder,
        judge,
        cache_dir=folder / "cache",
        display="log",  # plain log lines: rich's summary of many tasks is slow to lay out
        **kwargs,
    )


def build_writers(folder: Path, data: Path) -> None:
    """12 logs: four writers × three tasks, scored by `tow` (grader judge-1) and `rouge_l`."""
    broken = writings(demo_record(BROKEN[1]))[BROKEN[0]]
    judge = ScriptedJudge(hashed_judge("judge-1", broken=broken), name="judge-1")
    tasks = [make(dataset=str(data), scorers="tow,rouge_l") for make in TASKS.values()]
    build_logs(tasks, folder, judge, model=replayed(*WRITERS))


def build_second_judge(folder: Path, data: Path) -> None:
    """The guide writings of the four writers again, by another grader (judge-2)."""
    judge = ScriptedJudge(hashed_judge("judge-2"), name="judge-2")
    build_logs([guide(dataset=str(data), scorers="tow")], folder, judge, model=replayed(*WRITERS))


def build_panel(folder: Path, data: Path) -> None:
    """Guide writings of two writers judged by a panel of two (strict and kind)."""
    panel = [
        ScriptedJudge(hashed_judge("strict"), name="strict").model(),
        ScriptedJudge(hashed_judge("kind"), name="kind").model(),
    ]
    tasks = [task_with(guide(dataset=str(data)), scorer=tree_of_writing(judges=panel))]
    negotiator = ScriptedJudge(hashed_judge("negotiator"), name="negotiator")
    build_logs(tasks, folder, negotiator, model=replayed("w-a", "w-b"))


def build_epochs(folder: Path, data: Path) -> None:
    """The guide writings of w-a judged in five epochs."""
    judge = ScriptedJudge(hashed_judge("judge-1"), name="judge-1")
    build_logs(
        [guide(dataset=str(data), scorers="tow")], folder, judge, model=replayed("w-a"), epochs=5
    )


def build_perturbed(folder: Path, data: Path) -> None:
    """Open writings replayed as writers `clean`, `drop` and `inject` (`data.perturbed_file`),
    scored by tow and rouge_l; the two disturbed logs record their disturbance."""
    judge = ScriptedJudge(hashed_judge("judge-1"), name="judge-1")
    task = open_writing(dataset=str(data), scorers="tow,rouge_l")
    for log in build_logs([task], folder, judge, model=replayed("clean", "drop", "inject")):
        name = writer_of(log)
        if name != "clean":
            mark_perturbed(log.location, name)


def replayed(*writers: str) -> list[str]:
    """The replay models of `writers`: every task is run once with each."""
    return [REPLAYED + writer for writer in writers]


def writer_of(log: EvalLog) -> str:
    """The writer a log replayed: the task's `replay` metadata (set when `inspect eval`
    built the task; not from Python, as here), else its model's writer."""
    return (log.eval.metadata or {}).get("replay") or log.eval.model.removeprefix(REPLAYED)


def mark_perturbed(path: str | Path, perturb: str) -> None:
    """What a perturbed run records: its disturbance in the task metadata."""
    full = read_eval_log(str(path))
    full.eval.metadata = {**(full.eval.metadata or {}), "perturb": perturb}
    for sample in full.samples or []:
        sample.metadata["perturbation"] = {"kind": perturb}
    write_eval_log(full, str(path))


def raw_rows(folder: Path) -> list[dict[str, Any]]:
    """Every sample of every log in `folder`, read with a plain loop: what the tests compute
    their expected numbers from, without the code under test."""
    rows = []
    for path in sorted(folder.rglob("*.eval")):
        log = read_eval_log(str(path))
        grader = (log.eval.model_roles or {}).get("grader")
        for sample in log.samples or []:
            row = {
                "log": str(path),
                "model": writer_of(log),
                "grader": None if grader is None or isinstance(grader, list) else grader.model,
                "task": sample.metadata["task"],
                "genre": sample.metadata["genre"],
                "id": sample.id,
                "epoch": sample.epoch,
                "input_length": sample.metadata["input_length"],
                "output_length": len(sample.output.completion),
                "metadata": {k: s.metadata for k, s in (sample.scores or {}).items()},
            }
            for name, score in (sample.scores or {}).items():
                if isinstance(score.value, dict):
                    row.update({f"{name}.{k}": v for k, v in score.value.items()})
                else:
                    row[name] = score.value
            rows.append(row)
    return rows


def log_of(folder: Path, replay: str, task: str | None = None) -> Path:
    """The log in `folder` replaying `replay` (and of `task`)."""
    for path in sorted(folder.rglob("*.eval")):
        header = read_eval_log(str(path), header_only=True)
        if writer_of(header) == replay and (
            task is None or header.eval.task == f"howtobench/{task}"
        ):
            return path
    raise LookupError(f"no log of {replay} {task or ''} in {folder}")


def copied_as(folder: Path, replay: str, name: str, out: Path, prefix: str) -> None:
    """The three task logs of `replay` in `folder`, written to `out` as if another writer,
    `name`, had been replayed (`<prefix>-<task>.eval`, the model `replay/<name>`): a report
    then counts a writer whose name is whatever a test needs."""
    for task in ("completion", "guide", "open"):
        log = read_eval_log(str(log_of(folder, replay, task)))
        log.eval.model = REPLAYED + name
        write_eval_log(log, str(out / f"{prefix}-{task}.eval"))
