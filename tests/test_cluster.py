"""The job runners of docs/cluster.md: the Slurm array job run for real on a single-node
Slurm started here (cancelled mid-run with scancel, then resubmitted), and the Kubernetes
recipe checked without a cluster: the Indexed Job's worker contract read from its
manifest (the index each pod gets → the worker file its container runs, its reply store
and its connections), the manifest against the API's schema and the API server's rules
(`support.kubernetes`), and the worker image's Dockerfile against its build context.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from howtobench.scale.limits import limits
from howtobench.scale.shards import split
from howtobench.simulator.process import served
from support import kubernetes
from support.scale_out import (
    RECIPE,
    capture,
    job_settings,
    judge_environment,
    one_finished_log_per_unit,
    wait_asked,
)
from support.slurm import single_node, unavailable

ROOT = Path(__file__).parents[1]
EXAMPLES = ROOT / "docs" / "examples"
SBATCH = EXAMPLES / "slurm" / "howtobench-array.sbatch"
MANIFEST = EXAMPLES / "kubernetes" / "howtobench-job.yaml"
DOCKERFILE = EXAMPLES / "kubernetes" / "Dockerfile"
DOCKERIGNORE = EXAMPLES / "kubernetes" / "Dockerfile.dockerignore"
# the oldest Kubernetes the manifest states (backoffLimitPerIndex, podReplacementPolicy on
# by default), and the newest whose schema kubernetes-validate has
VERSIONS = ("1.29", "1.37")
WORKERS = 2


@pytest.mark.slow
@pytest.mark.nightly
@pytest.mark.timeout(600)
def test_the_slurm_array_resumes_when_resubmitted_after_scancel(tmp_path: Path) -> None:
    reason = unavailable()
    if reason:
        pytest.skip(reason)
    job = job_settings(tmp_path / "job")
    with served(latency=0.2) as judge, single_node(tmp_path / "slurm") as slurm:
        (tmp_path / "tasks.json").write_text(json.dumps(capture(job, tmp_path, None)), "utf-8")
        split(tmp_path / "tasks.json", WORKERS, tmp_path / "shards")
        logs = tmp_path / "logs"
        env = {
            **judge_environment(judge.base_url, tmp_path / "unused"),
            **job,
            "HOWTOBENCH_LOG_DIR": str(logs),
            "HOWTOBENCH_SHARDS": str(tmp_path / "shards"),
            "HOWTOBENCH_RECIPE": str(RECIPE),
            "HOWTOBENCH_CACHE": str(tmp_path / "cache"),
            "HOWTOBENCH_PYTHON": sys.executable,
        }

        def submit() -> str:
            return slurm.command(
                "sbatch", "--parsable", f"--array=0-{WORKERS - 1}", "--chdir", str(tmp_path),
                str(SBATCH), env=env,
            ).strip()  # fmt: skip

        first = submit()
        # Slurm schedules the array, then each task starts inspect: beside the nightly's
        # heaviest test on 2 cores the first 40 questions took over 90 s (32 s alone)
        wait_asked(judge, 40, lambda: bool(slurm.jobs(first)), seconds=300)
        slurm.command("scancel", first)
        slurm.wait_ended(first, 60)
        from inspect_ai.log import list_eval_logs, read_eval_log

        statuses = [read_eval_log(i, header_only=True).status for i in list_eval_logs(str(logs))]
        assert set(statuses) - {"success"}, "the cancel came after the work had finished"
        asked = judge.calls()
        second = submit()
        slurm.wait_ended(second, 120)
        outputs = "\n".join(p.read_text() for p in tmp_path.glob(f"howtobench-{second}_*.out"))
        assert "continuing" in outputs, outputs[-3000:]
        one_finished_log_per_unit(str(logs), tmp_path / "shards")
        assert judge.calls() > asked


def expand(value: str, env: dict[str, str]) -> str:
    """Kubernetes' `$(NAME)` in an env value: a variable defined above, else left as is."""
    return re.sub(r"\$\((\w+)\)", lambda m: env.get(m.group(1), m.group(0)), value)


def pod_environment(container: dict[str, Any], index: int) -> dict[str, str]:
    """The container's environment in the pod of completion index `index`, as Kubernetes
    builds it: in order, fieldRefs to the index annotation resolved, `$(NAME)` expanded."""
    env: dict[str, str] = {}
    for entry in container["env"]:
        if "value" in entry:
            env[entry["name"]] = expand(str(entry["value"]), env)
            continue
        path = entry["valueFrom"]["fieldRef"]["fieldPath"]
        assert path == "metadata.annotations['batch.kubernetes.io/job-completion-index']"
        env[entry["name"]] = str(index)
    return env


def the_job() -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """The manifest's objects, its Job and the Job's one container."""
    objects = kubernetes.documents(MANIFEST)
    (job,) = kubernetes.of_kind(objects, "Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    return objects, job, container


def test_the_indexed_job_runs_worker_k_in_pod_k(tmp_path: Path) -> None:
    objects, manifest, container = the_job()
    spec = manifest["spec"]
    assert spec["completionMode"] == "Indexed"
    workers = spec["completions"]
    assert spec["parallelism"] == workers
    assert Path(container["command"][-1]).name == RECIPE.name
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    shards = Path(mounts["shards"])
    # the files `howtobench shards split --workers <completions>` writes
    capture_file = tmp_path / "tasks.json"
    tasks = [{"identifier": f"t{i}", "samples": 10, "epochs": 1} for i in range(3)]
    capture_file.write_text(json.dumps({"eval_set_id": "howtobench", "tasks": tasks}), "utf-8")
    written = {p.name for p in split(capture_file, workers, tmp_path / "shards")}
    ran = set()
    for index in range(workers):
        env = pod_environment(container, index)
        selection = Path(env["INSPECT_EVAL_SET_SELECTION"])
        assert selection.parent == shards
        ran.add(selection.name)
        # a reply store of the index's own, on the claim: the index's next pod reads it
        assert env["INSPECT_CACHE_DIR"].endswith(f"worker-{index}")
        assert kubernetes.store_problems(objects, container, env["INSPECT_CACHE_DIR"]) == []
        # connections set, as the worker reads them: a share of the judge's slots
        assert limits(env)["max_connections"]
        for name in ("WRITERS", "PLAN", "JUDGE", "LOG_DIR"):
            assert env[f"HOWTOBENCH_{name}"]
    assert ran == written  # every worker file is run, by exactly one pod


@pytest.mark.parametrize("version", VERSIONS)
def test_the_manifest_is_what_the_api_server_accepts(version: str) -> None:
    objects, job, _ = the_job()
    assert [doc["kind"] for doc in objects] == ["PersistentVolumeClaim", "Job"]
    for document in objects:
        assert kubernetes.schema_problem(document, version) is None
    assert kubernetes.job_problems(job) == []


def test_the_checks_refuse_the_recipes_old_mistakes() -> None:
    """The first recipe: backoffLimitPerIndex with restartPolicy OnFailure, and the reply
    store on an emptyDir, which the next pod of an index gets new and empty; and what a
    hand edit could break."""
    objects, job, container = the_job()
    store = "/cache/worker-0"
    pod = job["spec"]["template"]["spec"]
    pod["restartPolicy"] = "OnFailure"
    assert kubernetes.job_problems(job) == [
        "backoffLimitPerIndex: requires restartPolicy Never, not OnFailure",
        "podFailurePolicy: requires restartPolicy Never, not OnFailure",
    ]
    pod["restartPolicy"] = "Never"
    cache = next(v for v in pod["volumes"] if v["name"] == "cache")
    claim = cache.pop("persistentVolumeClaim")
    cache["emptyDir"] = {}
    assert kubernetes.store_problems(objects, container, store) == [
        f"INSPECT_CACHE_DIR {store}: on volume cache (emptyDir), new in each pod"
    ]
    cache.pop("emptyDir")
    cache["persistentVolumeClaim"] = claim
    kubernetes.of_kind(objects, "PersistentVolumeClaim")[0]["spec"]["accessModes"] = [
        "ReadWriteOnce"
    ]
    assert kubernetes.store_problems(objects, container, store) == [
        "the claim howtobench-cache: not ReadWriteMany, so pods on other nodes cannot mount it"
    ]
    del job["spec"]["completions"]
    assert kubernetes.job_problems(job) == ["completions: required when completionMode is Indexed"]
    job["spec"]["completions"] = 8
    job["spec"]["backoffLimitPerIndx"] = 3  # a misspelt field: the strict schema refuses it
    problem = kubernetes.schema_problem(job, VERSIONS[-1])
    assert problem is not None and "backoffLimitPerIndx" in problem


def test_the_worker_image_is_built_from_what_its_context_holds() -> None:
    """No Docker here: the Dockerfile's COPY sources are in the repository and in its
    build context (Dockerfile.dockerignore), the package's build finds what pyproject.toml
    names, the image holds the file the Job runs, and it installs s3fs."""
    copies = kubernetes.copies(DOCKERFILE)
    sources = {source for copy in copies for source in copy.sources}
    for source in sources:
        assert (ROOT / source).exists(), source
        assert kubernetes.in_context(source, DOCKERIGNORE), source
    for path in (".git/config", ".venv/bin/python", "tests/test_cluster.py", "docs/cluster.md"):
        assert not kubernetes.in_context(path, DOCKERIGNORE), path
    assert not kubernetes.in_context(
        "howtobench_inspect/howtobench/__pycache__/x.pyc", DOCKERIGNORE
    )
    # what `pip install .` reads: pyproject.toml, the readme it names, the package's folder
    pyproject = (ROOT / "pyproject.toml").read_text("utf-8")  # no tomllib in 3.10
    readme = re.search(r'^readme = "(.+)"$', pyproject, re.M)
    where = re.search(r'^where = \["(.+)"\]$', pyproject, re.M)
    assert readme and where
    assert {"pyproject.toml", readme.group(1), where.group(1)} <= sources
    # the Job's command runs the recipe the image holds
    _, _, container = the_job()
    recipe = next(c for c in copies if c.sources == ("docs/examples/scale_out.py",))
    assert container["command"] == ["python", recipe.destination]
    # this package, and s3fs for an s3:// log folder (which the tests use too)
    wanted = kubernetes.pip_requirements(DOCKERFILE)
    assert wanted[0] == "."
    assert [re.split(r"[<>=!~\[]", w)[0] for w in wanted[1:]] == ["s3fs"]
    assert '"s3fs>=' in pyproject
