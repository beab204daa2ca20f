"""The package's `eval.yaml` (the inspect_evals register's fields, which inspect-evals-lint
checks): shipped with the package, naming the registered tasks with the published
benchmark's sample counts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from inspect_ai._util.registry import registry_info

import howtobench
from howtobench import completion, guide, negotiate, open_writing
from howtobench.dataset import open_source

PACKAGE = Path(howtobench.__file__).parent
ROOT = Path(__file__).parents[1]
TASKS = {"completion": completion, "guide": guide, "open": open_writing, "negotiate": negotiate}
WRITING = ("completion", "guide", "open")


def eval_yaml() -> dict[str, Any]:
    data = yaml.safe_load((PACKAGE / "eval.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def test_it_has_the_register_fields_and_ships_with_the_package() -> None:
    data = eval_yaml()
    for field in ("title", "description", "group", "contributors", "tasks"):
        assert data[field], field
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib in 3.10
    package_data = pyproject.split("\n[tool.setuptools.package-data]\n")[1].split("\n[")[0]
    assert '\n    "eval.yaml",\n' in package_data


def test_it_names_each_task_as_inspect_registers_it() -> None:
    listed = {entry["name"]: entry for entry in eval_yaml()["tasks"]}
    assert list(listed) == list(TASKS)
    for name, task in TASKS.items():
        assert registry_info(task).name == f"howtobench/{name}"
    # the negotiator's weights are no result of a model under evaluation
    assert [n for n, entry in listed.items() if entry.get("kind") == "maintenance"] == ["negotiate"]


def test_its_sample_counts_are_the_published_benchmarks(shared_data: Path) -> None:
    """One sample per instruction of each writing task; negotiate has one per instruction
    of all three (its default `tasks`)."""
    counts = {entry["name"]: entry["dataset_samples"] for entry in eval_yaml()["tasks"]}
    source = open_source(str(shared_data))
    published = {task: len(source.records(task)) for task in WRITING}
    assert {task: counts[task] for task in WRITING} == published
    assert counts["negotiate"] == sum(published.values()) == 1302
