"""A tenth of the full benchmark on worker processes: does the client keep up?

    python bench/workers_bench.py --data ../shared/howtobench-data
    python bench/workers_bench.py --data ../shared/howtobench-data --latency 0.5 --connections 100 --workers 1,2

All 1,302 instructions of one stored writer (completion, guide, open: 8,356 judge calls
from a plan) judged by the simulator at a fixed latency per call, with `--connections` in
all. The parts, each against a fresh simulator process and reply store:

- plan: `howtobench/negotiate` over every instruction (simulator at latency 0, not
  timed), exported; every scoring run below reads it and asks no negotiator.
- configurations: in one warmed-up process, the writer's three tasks with inspect's
  defaults and with the large-run configuration (`log_realtime=False`,
  `score_display=False`, what `docs/examples/scale_out.py` uses), side by side: client CPU
  per judge call is the process's CPU time over the eval divided by the calls the
  simulator counted.
- connections: client CPU per judge call against the connections of one process
  (large-run configuration, `--sweep-writings` guide writings): what the projection reads.
- workers: K worker processes (each K of `--workers`) of `docs/examples/scale_out.py`,
  as docs/cluster.md runs them (capture, `howtobench shards split --workers K`, each
  worker with its file and `connections / K` connections, all started at once): wall time
  from the first start to the last exit, each worker's CPU (start-up included, from the
  operating system's accounting of the child), the simulator's CPU, and the bound
  max(calls x latency / connections, client CPU / min(K, cores)): a single-threaded
  client uses at most one core.
- projection: the full benchmark (10 writers, 83,560 calls from a plan) at 20, 100 and
  500 connections with 1, 2 and 8 worker processes, each on a core of its own: from the
  bound (the measured CPU per call at a worker's connections) to the bound times the
  worst measured ratio of wall time to bound.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil  # comes with inspect-ai
from inspect_ai import eval
from inspect_ai.model import GenerateConfig, get_model

from bench import MODEL, TASK_FUNCTIONS, table
from howtobench.simulator.process import served
from howtobench.studies.plans import export_plan
from howtobench.tasks import negotiate

SCALE_OUT = Path(__file__).resolve().parent.parent / "docs" / "examples" / "scale_out.py"
FULL_BENCHMARK_CALLS = 83_560  # 10 writers x 8,356 calls from a plan (docs/cluster.md)
CONFIGURATIONS = {
    "inspect's defaults": {},
    "large-run configuration": {"log_realtime": False, "score_display": False},
}


def cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return float(times.user + times.system)


def make_plan(data: Path, folder: Path) -> Path:
    """Negotiate every instruction once (latency 0) and export the plan."""
    plan = folder / "plan.jsonl"
    with served(latency=0) as simulator:
        grader = get_model(
            "openai-api/sim/judge",
            base_url=simulator.base_url,
            api_key="none",
            config=GenerateConfig(max_connections=50),
        )
        logs = folder / "negotiate"
        eval(
            negotiate(dataset=str(data)),
            model="none",
            model_roles={"grader": grader},
            log_dir=str(logs),
            log_realtime=False,
            score_display=False,
            display="none",
        )
    export_plan([str(logs)], plan)
    return plan


def in_process(
    data: Path,
    plan: Path,
    latency: float,
    connections: int,
    config: dict[str, Any],
    tasks: tuple[str, ...] = tuple(TASK_FUNCTIONS),
    limit: int | None = None,
) -> dict[str, float]:
    """One writer's `tasks` judged in this process: calls, wall and CPU seconds."""
    with served(latency=latency) as simulator:
        os.environ["INSPECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
        grader = get_model(
            "openai-api/sim/judge",
            base_url=simulator.base_url,
            api_key="none",
            config=GenerateConfig(max_connections=connections),
        )
        start, cpu = time.perf_counter(), time.process_time()
        logs = eval(
            [TASK_FUNCTIONS[name](dataset=str(data), weights=str(plan)) for name in tasks],
            model=f"replay/{MODEL}",
            model_roles={"grader": grader},
            limit=limit,
            log_dir=tempfile.mkdtemp(prefix="bench-logs-"),
            display="none",
            **config,
        )
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        calls = simulator.calls()
    failed = [log.eval.task for log in logs if log.status != "success"]
    if failed:
        raise RuntimeError(f"runs that did not succeed: {failed}")
    return {"calls": calls, "wall": wall, "cpu": cpu}


def bench_configurations(
    data: Path, plan: Path, latency: float, connections: int
) -> list[dict[str, Any]]:
    in_process(data, plan, latency, connections, {}, tasks=("guide",), limit=2)  # warm up
    rows = []
    for name, config in CONFIGURATIONS.items():
        run = in_process(data, plan, latency, connections, config)
        rows.append(
            {
                "configuration": name,
                "judge calls": run["calls"],
                "wall s": round(run["wall"], 1),
                "client CPU s": round(run["cpu"], 1),
                "ms CPU/call": round(run["cpu"] / run["calls"] * 1000, 2),
                "latency bound s": round(run["calls"] * latency / connections, 1),
            }
        )
    return rows


def bench_connections(
    data: Path, plan: Path, latency: float, writings: int, sweep: list[int]
) -> list[dict[str, Any]]:
    rows = []
    for connections in sweep:
        run = in_process(
            data, plan, latency, connections, CONFIGURATIONS["large-run configuration"],
            tasks=("guide",), limit=writings,
        )  # fmt: skip
        rows.append(
            {
                "connections": connections,
                "judge calls": run["calls"],
                "wall s": round(run["wall"], 1),
                "ms CPU/call": round(run["cpu"] / run["calls"] * 1000, 2),
            }
        )
    return rows


def run_workers(
    data: Path, plan: Path, latency: float, connections: int, workers: int
) -> dict[str, Any]:
    """K workers of scale_out.py against one simulator, started at once."""
    folder = Path(tempfile.mkdtemp(prefix=f"bench-workers-{workers}-"))
    environment = {
        **os.environ,
        "HOWTOBENCH_WRITERS": MODEL,
        "HOWTOBENCH_DATASET": str(data),
        "HOWTOBENCH_PLAN": str(plan),
        "HOWTOBENCH_JUDGE": "openai-api/judge/sim",
        "HOWTOBENCH_LOG_DIR": str(folder / "logs"),
        "INSPECT_DISPLAY": "none",
    }
    capture = folder / "tasks.json"
    subprocess.run(
        [sys.executable, str(SCALE_OUT)],
        env={**environment, "INSPECT_EVAL_SET_CAPTURE": str(capture)},
        check=True,
    )
    split = subprocess.run(
        ["howtobench", "shards", "split", str(capture), "--workers", str(workers),
         "--out", str(folder / "shards")],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    with served(latency=latency) as simulator:
        server = psutil.Process(simulator.process.pid)
        server_cpu = cpu_seconds(server)
        start = time.perf_counter()
        children = [
            subprocess.Popen(
                [sys.executable, str(SCALE_OUT)],
                env={
                    **environment,
                    "INSPECT_EVAL_SET_SELECTION": str(folder / "shards" / f"worker-{k}.json"),
                    "INSPECT_CACHE_DIR": str(folder / f"cache-{k}"),
                    "JUDGE_BASE_URL": simulator.base_url,
                    "JUDGE_API_KEY": "none",
                    "INSPECT_EVAL_MAX_CONNECTIONS": str(connections // workers),
                },
                stderr=subprocess.DEVNULL,
            )
            for k in range(workers)
        ]
        cpus = []
        for child in children:
            _, status, usage = os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            cpus.append(usage.ru_utime + usage.ru_stime)
        wall = time.perf_counter() - start
        stats = simulator.stats()
        server_cpu = cpu_seconds(server) - server_cpu
    if any(child.returncode for child in children):
        raise RuntimeError(f"workers exited {[c.returncode for c in children]}: {split.stdout}")
    checked = subprocess.run(
        ["howtobench", "check-logs", str(folder / "logs")], capture_output=True, text=True
    )
    if checked.returncode:
        raise RuntimeError(f"check-logs: {checked.stdout}{checked.stderr}")
    calls = sum(stats["calls"].values())
    cores = min(workers, os.cpu_count() or 1)
    latency_bound = calls * latency / connections
    cpu_bound = sum(cpus) / cores
    return {
        "workers": workers,
        "connections each": connections // workers,
        "judge calls": calls,
        "peak in flight": stats["peak"],
        "wall s": round(wall, 1),
        "client CPU s": " + ".join(f"{cpu:.1f}" for cpu in cpus),
        "ms CPU/call": round(sum(cpus) / calls * 1000, 2),
        "simulator CPU s": round(server_cpu, 1),
        "latency bound s": round(latency_bound, 1),
        "CPU bound s": round(cpu_bound, 1),
        "wall/bound": round(wall / max(latency_bound, cpu_bound), 2),
    }


def projection(
    sweep: list[dict[str, Any]], measured: list[dict[str, Any]], latency: float
) -> list[dict[str, Any]]:
    """The full benchmark's wall time, each worker on a core of its own: from the bound
    (the CPU per call at a worker's connections: the sweep, interpolated; beyond it, the
    line through its last two points) to the bound times the worst measured wall/bound."""
    points = np.array([row["connections"] for row in sweep], dtype=float)
    costs = np.array([row["ms CPU/call"] for row in sweep], dtype=float) / 1000
    slope = (costs[-1] - costs[-2]) / (points[-1] - points[-2])

    def cost(connections: float) -> float:
        if connections <= points[-1]:
            return float(np.interp(connections, points, costs))
        return float(costs[-1] + slope * (connections - points[-1]))

    overhead = max(row["wall/bound"] for row in measured)
    rows = []
    for connections in (20, 100, 500):
        row: dict[str, Any] = {
            "connections": connections,
            "latency bound min": round(FULL_BENCHMARK_CALLS * latency / connections / 60, 1),
        }
        for workers in (1, 2, 8):
            bound = max(
                FULL_BENCHMARK_CALLS * latency / connections,
                FULL_BENCHMARK_CALLS * cost(connections / workers) / workers,
            )
            name = f"{workers} worker{'s' if workers > 1 else ''} min"
            row[name] = f"{bound / 60:.1f} to {bound * overhead / 60:.1f}"
        rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="a data folder like the paper's")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--connections", type=int, default=100, help="in all, over the workers")
    parser.add_argument("--workers", default="1,2", help="comma list of worker counts")
    parser.add_argument("--sweep", default="20,50,100,250,500", help="connections of one process")
    parser.add_argument("--sweep-writings", type=int, default=200)
    parser.add_argument("--parts", default="configurations,connections,workers")
    parser.add_argument("--plan", type=Path, help="a plan of the data (default: negotiated anew)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}\n"
    )
    plan = args.plan or make_plan(args.data, Path(tempfile.mkdtemp(prefix="bench-plan-")))
    results: dict[str, Any] = {}
    parts = {
        "configurations": lambda: bench_configurations(
            args.data, plan, args.latency, args.connections
        ),
        "connections": lambda: bench_connections(
            args.data,
            plan,
            args.latency,
            args.sweep_writings,
            [int(c) for c in args.sweep.split(",")],
        ),  # fmt: skip
        "workers": lambda: [
            run_workers(args.data, plan, args.latency, args.connections, int(k))
            for k in args.workers.split(",")
        ],
    }
    for name in args.parts.split(","):
        results[name] = parts[name]()
        print(f"### {name}\n\n{table(results[name])}\n", flush=True)
    if "connections" not in results or "workers" not in results:
        return
    results["projection"] = projection(results["connections"], results["workers"], args.latency)
    print(f"### projection (full benchmark, {FULL_BENCHMARK_CALLS:,} calls)\n")
    print(table(results["projection"]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
