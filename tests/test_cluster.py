"""The job runners of docs/cluster.md: the Slurm array job run for real on a single-node
Slurm started here (cancelled mid-run with scancel, then resubmitted), and the Kubernetes
Indexed Job's worker contract read from its manifest (no cluster: the index each pod gets
→ the worker file its container runs).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from howtobench.shards import split
from howtobench.simulator.process import served
from support.scale_out import (
    RECIPE,
    capture,
    job_settings,
    judge_environment,
    one_finished_log_per_unit,
    wait_asked,
)
from support.slurm import single_node, unavailable

EXAMPLES = Path(__file__).parents[1] / "docs" / "examples"
SBATCH = EXAMPLES / "slurm" / "howtobench-array.sbatch"
MANIFEST = EXAMPLES / "kubernetes" / "howtobench-job.yaml"
WORKERS = 2


@pytest.mark.slow
@pytest.mark.nightly
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
        wait_asked(judge, 40, lambda: bool(slurm.jobs(first)))
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


def test_the_indexed_job_runs_worker_k_in_pod_k(tmp_path: Path) -> None:
    manifest = yaml.safe_load(MANIFEST.read_text("utf-8"))
    spec = manifest["spec"]
    assert (manifest["kind"], spec["completionMode"]) == ("Job", "Indexed")
    workers = spec["completions"]
    assert spec["parallelism"] == workers
    (container,) = spec["template"]["spec"]["containers"]
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
        assert env["INSPECT_CACHE_DIR"].endswith(f"worker-{index}")
        for name in ("WRITERS", "PLAN", "JUDGE", "LOG_DIR"):
            assert env[f"HOWTOBENCH_{name}"]
    assert ran == written  # every worker file is run, by exactly one pod
