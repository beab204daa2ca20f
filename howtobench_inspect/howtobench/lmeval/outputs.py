"""lm-eval's `--log_samples` output, read for `howtobench lm-eval import`.

lm-eval 0.4.x writes one folder per model under `--output_path`: a `results_<date>.json`
per run and a `samples_<task>_<date>.jsonl` per task. What cannot make one writer's data
folder is refused in one line (docs/lm-eval.md, "The import"), and credentials are left
out before anything is kept or printed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from howtobench.dataset.records import read_jsonl
from howtobench.judge.defaults import LONGEST_WRITING
from howtobench.lmeval import TASK_PREFIX
from howtobench.vocabulary.credentials import parse_pairs, without_credentials
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.words import TASKS

__all__ = ["Answered", "DOC_FIELDS", "OutputError", "Run", "read_output"]

# What a samples line's `doc` must hold to be one of our items (`tasks/hooks.row`).
DOC_FIELDS = ("infer_id", "task_type", "basic_instruction", "reference", "language", "prompt")


class OutputError(UserError):
    """lm-eval output that cannot be imported, with the file and what to do."""


@dataclass(frozen=True)
class Run:
    """One lm-eval run: its results file and what it says."""

    path: Path
    results: dict[str, Any]

    @property
    def date(self) -> str:
        """The run's stamp, shared by its results and samples files."""
        return self.path.stem.removeprefix("results_")

    @property
    def model_args(self) -> dict[str, Any]:
        """The model's arguments as pairs, credentials left out."""
        args = (self.results.get("config") or {}).get("model_args") or {}
        pairs = parse_pairs(args) if isinstance(args, str) else args
        return self._cleaned(pairs) if isinstance(pairs, dict) else {}

    @property
    def model(self) -> str:
        """lm-eval's backend and the model it served, e.g. `vllm Qwen/Qwen2.5-7B`."""
        args = self.model_args
        named = args.get("model") or args.get("pretrained")
        backend = (self.results.get("config") or {}).get("model")
        return " ".join(str(part) for part in (backend, named) if part)

    @property
    def limit(self) -> float | None:
        return (self.results.get("config") or {}).get("limit")

    def tasks(self) -> list[str]:
        """The benchmark's tasks this run answered (`open` for `howtobench_open`)."""
        ran = self.results.get("configs") or {}
        return [task for task in TASKS if f"{TASK_PREFIX}{task}" in ran]

    def samples_path(self, task: str) -> Path:
        return self.path.with_name(f"samples_{TASK_PREFIX}{task}_{self.date}.jsonl")

    def provenance(self, task: str) -> dict[str, Any]:
        """What lm-eval says made the writings of `task`, credentials left out; the
        command line's generation settings over the task's."""
        config = self.results.get("config") or {}
        task_config = (self.results.get("configs") or {}).get(f"{TASK_PREFIX}{task}") or {}
        settings = {
            **(task_config.get("generation_kwargs") or {}),
            **(config.get("gen_kwargs") or {}),
        }
        provenance = {
            "harness": "lm-evaluation-harness",
            "lm_eval_version": self.results.get("lm_eval_version"),
            "model": config.get("model"),
            "model_args": self.model_args,
            "generation_kwargs": settings,
            # lm-eval records None without --apply_chat_template, the template (or "" for
            # a chat API, whose server applies its own) with it
            "apply_chat_template": self.results.get("chat_template") is not None,
            "chat_template_sha": self.results.get("chat_template_sha"),
            "system_instruction": self.results.get("system_instruction"),
            "limit": self.limit,
            "results_file": self.path.name,
        }
        return self._cleaned(provenance)  # the generation settings' credentials too

    def _cleaned(self, value: dict[str, Any]) -> dict[str, Any]:
        try:
            cleaned: dict[str, Any] = without_credentials(value)
        except ValueError as error:
            raise OutputError(f"{self.path}: its model settings are {error}") from None
        return cleaned


@dataclass(frozen=True)
class Answered:
    """One task's items as lm-eval answered them: the samples' `doc`s and writings."""

    task: str
    run: Run
    docs: list[dict[str, Any]]
    writings: list[str]


def read_output(path: Path) -> list[Answered]:
    """Every howtobench task answered under `path` (`--output_path`, or a results file)."""
    runs = [run for run in _runs(path) if run.tasks()]
    if not runs:
        raise OutputError(
            f"{path}: no lm-eval output of {', '.join(TASK_PREFIX + t for t in TASKS)} "
            "(results_*.json of another task, or none)"
        )
    _check_one_model_and_limit(runs)
    seen: dict[str, Run] = {}
    answered = []
    for run in runs:
        for task in run.tasks():
            if task in seen:
                raise OutputError(
                    f"{TASK_PREFIX}{task} was answered in two runs ({seen[task].path.name} and "
                    f"{run.path.name}): import one results file"
                )
            seen[task] = run
            answered.append(_answered(run, task))
    return answered


def _runs(path: Path) -> list[Run]:
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(path.rglob("results_*.json"))
    else:
        raise OutputError(f"{path}: not found (give lm_eval's --output_path or a results file)")
    return [Run(file, _json(file)) for file in files]


def _check_one_model_and_limit(runs: list[Run]) -> None:
    """One writer is one model at one limit (2 items beside 50 compares nothing)."""
    first = runs[0]
    for run in runs[1:]:
        if run.model != first.model:
            raise OutputError(
                f"runs of different models: {first.path.name} ran {first.model}, "
                f"{run.path.name} ran {run.model}; import one model's output at a time"
            )
        if run.limit != first.limit:
            raise OutputError(
                f"mixed limits: {first.path.name} ran --limit {_shown(first.limit)}, "
                f"{run.path.name} --limit {_shown(run.limit)}; import runs of one limit"
            )


def _answered(run: Run, task: str) -> Answered:
    path = run.samples_path(task)
    if not path.is_file():
        raise OutputError(
            f"{run.path}: no samples file {path.name} beside it: rerun lm_eval with --log_samples"
        )
    docs, writings = [], []
    lines: dict[str, int] = {}  # item id -> the line that answered it
    for number, line in read_jsonl(path):
        doc = line.get("doc")
        if not isinstance(doc, dict) or any(field not in doc for field in DOC_FIELDS):
            raise OutputError(
                f"{path}, line {number}: not a sample of the howtobench lm-eval tasks"
            )
        if doc["task_type"] != task:
            raise OutputError(
                f"{path}, line {number}: an item of task '{doc['task_type']}' in the samples of "
                f"{TASK_PREFIX}{task}"
            )
        item = str(doc["infer_id"])
        if item in lines:
            raise OutputError(
                f"{path}, line {number}: item '{item}' answered twice (lines {lines[item]} and "
                f"{number}): import the output of one lm_eval run, which answers each item once"
            )
        lines[item] = number
        writings.append(_writing(line, path, number))
        docs.append(doc)
    counted = ((run.results.get("n-samples") or {}).get(f"{TASK_PREFIX}{task}") or {}).get(
        "effective"
    )
    if counted is not None and counted != len(docs):
        raise OutputError(
            f"{path}: {len(docs)} samples where {run.path.name} says {counted} were answered "
            "(a file cut short, or of another run)"
        )
    return Answered(task, run, docs, writings)


def _writing(line: dict[str, Any], path: Path, number: int) -> str:
    """The generation as lm-eval scored it (filtered); None (an API's content filter)
    is an empty writing, as inspect scores an empty live writing."""
    found = line.get("filtered_resps")
    if not (isinstance(found, list) and found and (found[0] is None or isinstance(found[0], str))):
        raise OutputError(f"{path}, line {number}: no generation (filtered_resps) to import")
    writing: str = found[0] or ""
    if len(writing) > LONGEST_WRITING:
        raise OutputError(
            f"{path}, line {number}: a generation of {len(writing):,} characters, more than "
            f"the {LONGEST_WRITING:,} a judge is sent: rerun lm_eval with a lower max_gen_toks"
        )
    return writing


def _json(path: Path) -> dict[str, Any]:
    try:
        found = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError) as err:
        raise OutputError(f"{path}: not an lm-eval results file ({err})") from None
    except RecursionError:
        raise OutputError(f"{path}: not an lm-eval results file (nested too deep)") from None
    if not isinstance(found, dict) or "config" not in found:
        raise OutputError(f"{path}: not an lm-eval results file (no 'config')")
    return found


def _shown(limit: float | None) -> str:
    return "none" if limit is None else f"{limit:g}"
