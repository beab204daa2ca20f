"""The package's `eval.yaml`: a card valid against inspect_evals' own schema (its
`metadata.py` of inspect-evals 0.28.0, pinned by hash in tests/vendor), shipped with the
package, naming the registered tasks with their version and the published benchmark's
sample counts."""

from __future__ import annotations

import base64
import functools
import hashlib
import importlib.util
import sys
import warnings
from importlib.machinery import SourceFileLoader
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from inspect_ai._util.registry import registry_info
from pydantic import ValidationError

import howtobench
from howtobench import completion, guide, negotiate, open_writing
from howtobench.dataset import open_source

PACKAGE = Path(howtobench.__file__).parent
ROOT = Path(__file__).parents[1]
TASKS = {"completion": completion, "guide": guide, "open": open_writing, "negotiate": negotiate}
WRITING = ("completion", "guide", "open")

# inspect_evals/metadata.py of the inspect-evals 0.28.0 wheel, byte for byte (MIT, its
# LICENSE beside it), and its hash as the wheel's RECORD lists it:
#   pip download inspect-evals==0.28.0 --no-deps -d wheel
#   unzip -p wheel/inspect_evals-0.28.0-py3-none-any.whl \
#     inspect_evals-0.28.0.dist-info/RECORD | grep /metadata.py
# Installed instead, inspect-evals registers its tasks as an inspect_ai entry point, which
# inspect imports in every process that makes a model (its hooks load all entry points).
SCHEMA = ROOT / "tests" / "vendor" / "inspect_evals-0.28.0" / "metadata.py.txt"
SCHEMA_RECORD_SHA256 = "ZIY87tcZoFzwPlUIm0kvfRjoQG_VGNWggTerDqHx6Tc"


def eval_yaml() -> dict[str, Any]:
    data = yaml.safe_load((PACKAGE / "eval.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


@functools.cache
def schema() -> ModuleType:
    """The pinned `inspect_evals.metadata`: it imports pydantic, PyYAML and
    typing_extensions only."""
    name = "inspect_evals_0_28_0_metadata"
    loader = SourceFileLoader(name, str(SCHEMA))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic resolves the models' annotations through it
    with warnings.catch_warnings():  # its TaskVersion uses pydantic 1's __get_validators__
        warnings.simplefilter("ignore", DeprecationWarning)
        loader.exec_module(module)
    return module


def validate(card: dict[str, Any]) -> Any:
    """The card as inspect_evals reads an eval in its repository: the id is the folder's
    name (`_load_single_eval_yaml`), a card without `source` is an `InternalEvalMetadata`."""
    return schema().InternalEvalMetadata(**{**card, "id": PACKAGE.name})


def test_the_schema_is_inspect_evals_0_28_0s() -> None:
    digest = hashlib.sha256(SCHEMA.read_bytes()).digest()
    assert base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == SCHEMA_RECORD_SHA256


def test_it_is_a_valid_card_for_inspect_evals() -> None:
    card = validate(eval_yaml())
    assert str(card.group) == "Writing"
    assert [t.name for t in card.benchmark_tasks] == list(WRITING)
    assert [t.name for t in card.maintenance_tasks] == ["negotiate"]
    assert "\n" not in card.description  # one line, as the register renders it
    assert [asset.source for asset in card.external_assets] == ["andrewzhuoerfeng/HowToBench"]


def test_its_version_is_the_writing_tasks() -> None:
    """inspect_evals' convention: the comparability number is each task's `Task.version`."""
    version = validate(eval_yaml()).version
    for name in WRITING:
        assert TASKS[name](dataset="demo").version == version.comparability_version, name


DROP = object()


@pytest.mark.parametrize(
    ("path", "value", "error"),
    [
        (("version",), DROP, "missing"),
        (("external_assets",), DROP, "missing"),
        (("group",), DROP, "missing"),
        (("version",), "7", "value_error"),
        (("group",), "Chinese writing", "enum"),
        # a field of a register entry for an eval in another repository
        (("common_title",), "HoWToBench", "extra_forbidden"),
        (("tasks", 0, "samples"), 379, "extra_forbidden"),
    ],
    ids=["no version", "no assets", "no group", "bad version", "bad group", "foreign", "task"],
)
def test_the_schema_refuses_a_card_it_does_not_allow(
    path: tuple[str | int, ...], value: object, error: str
) -> None:
    """The card with one field dropped, set or added: the schema names that field."""
    card = eval_yaml()
    *parents, key = path
    place: Any = card
    for step in parents:
        place = place[step]
    if value is DROP:
        del place[key]
    else:
        place[key] = value
    with pytest.raises(ValidationError) as refused:
        validate(card)
    assert [(e["loc"], e["type"]) for e in refused.value.errors()] == [(path, error)]


def test_it_ships_with_the_package() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")  # no tomllib in 3.10
    package_data = pyproject.split("\n[tool.setuptools.package-data]\n")[1].split("\n[")[0]
    assert '\n    "eval.yaml",\n' in package_data


def test_it_names_each_task_as_inspect_registers_it() -> None:
    listed = {entry["name"]: entry for entry in eval_yaml()["tasks"]}
    assert list(listed) == list(TASKS)
    for name, task in TASKS.items():
        assert registry_info(task).name == f"howtobench/{name}"


def test_its_sample_counts_are_the_published_benchmarks(shared_data: Path) -> None:
    """One sample per instruction of each writing task; negotiate has one per instruction
    of all three (its default `tasks`)."""
    counts = {entry["name"]: entry["dataset_samples"] for entry in eval_yaml()["tasks"]}
    source = open_source(str(shared_data))
    published = {task: len(source.records(task)) for task in WRITING}
    assert {task: counts[task] for task in WRITING} == published
    assert counts["negotiate"] == sum(published.values()) == 1302
