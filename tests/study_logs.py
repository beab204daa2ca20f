"""Logs for the studies' tests, made by running our real tasks offline with scripted judges.

Four made-up writers replay texts derived from the demo writings (a user JSONL file), so
that lengths and scores vary; judges score by a stable hash of the writing, so every
number is reproducible. Logs are built once per test session (several test modules use
them), each in its own folder, with an inspect cache of their own.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval
from inspect_ai.log import EvalLog, read_eval_log, write_eval_log
from inspect_ai.model import Model, get_model
from judges import Question, Reply, ScriptedJudge

from howtobench import completion, guide, open_writing, tree_of_writing
from howtobench.dataset import DEMO_FILE
from howtobench.simulator import valid_weights

WRITERS = ("w-a", "w-b", "w-c", "w-d")
TASKS = {"completion": completion, "guide": guide, "open": open_writing}
BROKEN = ("w-d", "demo_guide_2")  # the writers' judge cannot score this writing


def writings(record: dict[str, Any]) -> dict[str, str]:
    """Four writers of different length and quality from the demo's two."""
    a, b = record["generations"]["demo-writer-a"], record["generations"]["demo-writer-b"]
    return {
        "w-a": a,
        "w-b": b,
        "w-c": a[: max(20, len(a) * 2 // 3)],
        "w-d": b + "\n\n" + a[: len(a) // 4],
    }


def writers_file(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "writers.jsonl"
    with DEMO_FILE.open(encoding="utf-8") as src, path.open("w", encoding="utf-8") as out:
        for line in src:
            record = json.loads(line)
            record["generations"] = writings(record)
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def hashed(*parts: str) -> int:
    return zlib.crc32("\x1f".join(parts).encode("utf-8"))


def hashed_judge(salt: str, broken: str | None = None) -> Callable[[Question], Reply]:
    """Scores from a hash of (salt, leaf, writing); `broken` writing gets no usable reply."""

    def answer(question: Question) -> Reply:
        if question.kind == "negotiator":
            return valid_weights(question)
        writing = question.writing or ""
        if question.kind == "emotion" and broken is not None and writing.strip() == broken.strip():
            return "no score here"
        high = 3 if question.kind == "paragraphing" else 10
        score = 1 + (hashed(salt, question.kind, writing) + len(writing) // 40) % high
        return {"score": score, "reason": "hashed"}

    return answer


def quiet(judge: ScriptedJudge) -> Model:
    """The judge as a model whose arguments stay small in the log header (the judge object
    itself would be recorded with every question it was asked)."""
    return get_model(f"mockllm/{judge.name}", custom_outputs=lambda *args: judge(*args))


def run(
    tasks: list[Task], folder: Path, judge: ScriptedJudge | None, **kwargs: Any
) -> list[EvalLog]:
    roles = {"grader": quiet(judge)} if judge else None
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_CACHE_DIR", str(folder / "cache"))
        logs = eval(
            tasks,
            model="none",
            model_roles=roles,
            log_dir=str(folder),
            display="log",  # plain log lines: rich's summary of many tasks is slow to lay out
            **kwargs,
        )
    assert all(log.status == "success" for log in logs), [log.error for log in logs]
    return logs


def mark_perturbed(path: str | Path, perturb: str) -> None:
    """What a perturbed run records: its disturbance in the task metadata."""
    full = read_eval_log(str(path))
    full.eval.metadata = {**(full.eval.metadata or {}), "perturb": perturb}
    for sample in full.samples or []:
        sample.metadata["perturbation"] = {"kind": perturb}
    write_eval_log(full, str(path))


_BUILT: dict[str, Path] = {}


def built(root: Path, name: str, build: Callable[[Path], None]) -> Path:
    """Build `name` once per session, however many modules ask for it."""
    if name not in _BUILT:
        folder = root / name
        build(folder)
        _BUILT[name] = folder
    return _BUILT[name]


def build_writers(folder: Path) -> None:
    """12 logs: four writers × three tasks, scored by `tow` (grader judge-1) and `rouge_l`."""
    data = str(writers_file(folder.parent / "data"))
    broken = writings(_demo_record(BROKEN[1]))[BROKEN[0]]
    judge = ScriptedJudge(hashed_judge("judge-1", broken=broken), name="judge-1")
    tasks = [
        make(dataset=data, replay=w, scorers="tow,rouge_l")
        for w in WRITERS
        for make in TASKS.values()
    ]
    run(tasks, folder, judge)


def build_second_judge(folder: Path) -> None:
    """The guide writings of the four writers again, by another grader (judge-2)."""
    data = str(writers_file(folder.parent / "data"))
    judge = ScriptedJudge(hashed_judge("judge-2"), name="judge-2")
    run([guide(dataset=data, replay=w, scorers="tow") for w in WRITERS], folder, judge)


def build_panel(folder: Path) -> None:
    """Guide writings of two writers judged by a panel of two (strict and kind)."""
    data = str(writers_file(folder.parent / "data"))
    strict = ScriptedJudge(hashed_judge("strict"), name="strict")
    kind = ScriptedJudge(hashed_judge("kind"), name="kind")
    tasks = []
    for writer in ("w-a", "w-b"):
        task = guide(dataset=data, replay=writer)
        task.scorer = [tree_of_writing(judges=[quiet(strict), quiet(kind)])]  # type: ignore[list-item]
        tasks.append(task)
    run(tasks, folder, ScriptedJudge(hashed_judge("negotiator"), name="negotiator"))


def build_epochs(folder: Path) -> None:
    """The guide writings of w-a judged in five epochs."""
    data = str(writers_file(folder.parent / "data"))
    judge = ScriptedJudge(hashed_judge("judge-1"), name="judge-1")
    run([guide(dataset=data, replay="w-a", scorers="tow")], folder, judge, epochs=5)


def build_perturbed(folder: Path) -> None:
    """Open writings: clean, with paragraphs dropped, and with the reference injected (which
    raises the overlap scores); scored by tow and rouge_l."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "perturbed.jsonl"
    with DEMO_FILE.open(encoding="utf-8") as src, path.open("w", encoding="utf-8") as out:
        for line in src:
            record = json.loads(line)
            if record.get("task") != "open":
                continue
            clean = record["generations"]["demo-writer-a"]
            paragraphs = clean.split("\n\n")
            record["generations"] = {
                "clean": clean,
                "drop": "\n\n".join(paragraphs[: max(1, len(paragraphs) // 2)]),
                "inject": record["reference"],
            }
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
    judge = ScriptedJudge(hashed_judge("judge-1"), name="judge-1")
    names = ("clean", "drop", "inject")
    tasks = [open_writing(dataset=str(path), replay=n, scorers="tow,rouge_l") for n in names]
    logs = run(tasks, folder / "logs", judge)
    for name, log in zip(names, logs, strict=True):
        if name != "clean":
            mark_perturbed(log.location, name)


def raw_rows(folder: Path) -> list[dict[str, Any]]:
    """Every sample of every log in `folder`, read with a plain loop: what the tests compute
    their expected numbers from, without the code under test."""
    rows = []
    for path in sorted(folder.rglob("*.eval")):
        log = read_eval_log(str(path))
        for sample in log.samples or []:
            row = {
                "log": str(path),
                "model": log.eval.metadata.get("replay") or log.eval.model,
                "grader": log.eval.model_roles["grader"].model if log.eval.model_roles else None,
                "task": sample.metadata["task"],
                "genre": sample.metadata["genre"],
                "id": sample.id,
                "epoch": sample.epoch,
                "input_length": sample.metadata["input_length"],
                "output_length": len(sample.output.completion),
                "metadata": {k: s.metadata for k, s in sample.scores.items()},
            }
            for name, score in sample.scores.items():
                if isinstance(score.value, dict):
                    row.update({f"{name}.{k}": v for k, v in score.value.items()})
                else:
                    row[name] = score.value
            rows.append(row)
    return rows


def _demo_record(sample_id: str) -> dict[str, Any]:
    with DEMO_FILE.open(encoding="utf-8") as f:
        return next(r for r in map(json.loads, f) if r["id"] == sample_id)


def log_of(folder: Path, replay: str, task: str | None = None) -> Path:
    """The log in `folder` replaying `replay` (and of `task`)."""
    for path in sorted(folder.rglob("*.eval")):
        header = read_eval_log(str(path), header_only=True)
        if header.eval.metadata.get("replay") == replay and (
            task is None or header.eval.task == f"howtobench/{task}"
        ):
            return path
    raise LookupError(f"no log of {replay} {task or ''} in {folder}")


@pytest.fixture(scope="session", name="writers_logs")
def writers_logs_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built(tmp_path_factory.getbasetemp(), "writers", build_writers)


@pytest.fixture(scope="session", name="second_judge_logs")
def second_judge_logs_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built(tmp_path_factory.getbasetemp(), "second_judge", build_second_judge)


@pytest.fixture(scope="session", name="panel_logs")
def panel_logs_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built(tmp_path_factory.getbasetemp(), "panel", build_panel)


@pytest.fixture(scope="session", name="epochs_logs")
def epochs_logs_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built(tmp_path_factory.getbasetemp(), "epochs", build_epochs)


@pytest.fixture(scope="session", name="perturbed_logs")
def perturbed_logs_fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return built(tmp_path_factory.getbasetemp(), "perturbed", build_perturbed) / "logs"
