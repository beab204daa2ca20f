"""The client's CPU per judge call, ours beside inspect_evals' writingbench, and our memory.

    python bench/client_bench.py --data ../shared/howtobench-data --peer-python ../venv-peer/bin/python
    python bench/client_bench.py --data ../shared/howtobench-data --parts tow --writings 100

One judge simulator process (`howtobench.simulator`, `--latency` seconds a call) answers
every run; each run is a process of its own (so the peer runs in the interpreter it is
installed in), which imports, warms up on two samples against a store of its own, then
times one eval: its CPU time (`time.process_time`) over the judge calls the simulator
counted meanwhile, its wall time, and its resident memory before the eval and at its
peak (`bench.PEAK_RSS`: the kernel's VmHWM, not `ru_maxrss`). The 1-minute load
average is sampled every 2 s while each run lasts.
Runs, side by side:

- tow, inspect's defaults: `howtobench/guide` with `tow` over the first `--writings`
  stored guide writings of gpt-4o-2024-11-20 (`replay/`), weights negotiated;
- tow, large-run configuration: the same with `log_realtime=False, score_display=False`
  (docs/large-runs.md);
- writingbench, inspect's defaults: inspect_evals' `writingbench` (5 judge calls a sample,
  its own prompts and `model_graded_qa`), the first `--peer-samples` samples, written by
  `mockllm/model` (each answer the first stored guide writing of gpt-4o-2024-11-20, so
  that its judge reads a writing of the benchmark's length), its judge pointed at the simulator (which answers its prompt with a
  JSON score, `howtobench.simulator.protocol.FOREIGN_JUDGE`). It needs inspect_evals,
  which howtobench does not depend on: `--peer-python` is an interpreter that has it and
  the same inspect-ai (docs/benchmarks.md says how to make one); without it the row is
  left out. The same in the large-run configuration, to tell what the two settings cost
  each task from what its own work does.

Every run's judge has `--connections` connections and the eval `max_samples` as many, so
that concurrency is set alike. Each eval returns its log's header only
(`log_header_only=True`, as `inspect eval` and `eval_set()` do): by default `eval()`
reads every sample of the finished log back into memory, which would be counted here as
the run's own. RSS per sample is (peak - before) / samples: what one process's memory
grew by per writing judged (the samples in flight at once are in it, so it is no
constant: it falls as a run gets longer).

- whole (`--parts whole`, not by default: it judges every stored writing): the whole
  benchmark (3 tasks x 10 writers, or the first `--whole-writers`) in one process in the
  large-run configuration, at `--whole-latency`, `--whole-max-tasks` tasks at once (1, as
  `docs/examples/scale_out.py` runs them unless told otherwise; the samples in flight,
  and so the memory, grow with it): its peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

from bench import MODEL, PEAK_RSS, table
from howtobench.simulator.process import served

LARGE_RUN = {"log_realtime": False, "score_display": False}

# One timed run, in a process of its own: argv[1] is its JSON settings; prints its JSON
# measures on the last line.
RUN = textwrap.dedent(
    """
    import json, os, sys, tempfile, time, urllib.request
    import psutil
    from inspect_ai import eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import GenerateConfig, get_model

    given = json.loads(sys.argv[1])

    def calls():
        with urllib.request.urlopen(given["sim"] + "/stats") as answer:
            return sum(json.load(answer)["calls"].values())

    grader = get_model(
        "openai-api/sim/judge", base_url=given["sim"] + "/v1", api_key="none",
        config=GenerateConfig(max_connections=given["connections"]), memoize=False,
    )
    if given["task"] == "writingbench":
        from inspect_ai.model import ModelOutput, ModelUsage
        from inspect_evals.writingbench import writingbench

        def written(*_):  # a stored writing, its usage given (no tokenizer to fetch)
            output = ModelOutput.from_content("mockllm/model", given["writing"])
            output.usage = ModelUsage(input_tokens=1000, output_tokens=1000, total_tokens=2000)
            return output

        def build(): return writingbench(judge_model=grader)
        run = {"model": get_model("mockllm/model", custom_outputs=written, memoize=False)}
    else:
        from howtobench import tasks
        def build(): return tasks.guide(dataset=given["data"], scorers="tow", **given.get("task_args", {}))
        run = {"model": "replay/" + given["writer"], "model_roles": {"grader": grader}}

    def timed(limit):
        os.environ["INSPECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
        return eval(build(), limit=limit, max_samples=given["connections"],
                    log_dir=tempfile.mkdtemp(prefix="bench-logs-"), display="none",
                    log_header_only=True, **run, **given["config"])

    timed(2)  # warm up: imports, providers, the first connections
    process = psutil.Process()
    before, start = calls(), time.perf_counter()
    rss, cpu = process.memory_info().rss, time.process_time()
    [log] = timed(given["limit"])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - start
    peak = PEAK_RSS
    if log.status != "success":
        raise SystemExit(f"run {log.status}: {log.error}")
    log = read_eval_log(log.location)  # checked once measured: every sample scored
    values = [next(iter(s.scores.values())).value for s in log.samples or [] if s.scores]
    read = [v for v in values if isinstance(v, dict) or (isinstance(v, float) and v >= 1)]
    if len(read) != given["limit"]:  # a judge reply not read would make a call cheaper
        raise SystemExit(f"{given['limit'] - len(read)} samples not scored: {values[:5]}")
    print(json.dumps({
        "calls": calls() - before, "cpu": cpu, "wall": wall, "samples": len(log.samples or []),
        "rss_before": rss, "rss_peak": peak, "rss_after": process.memory_info().rss,
    }))
    """
)


class Load:
    """The 1-minute load average sampled every 2 s while a run lasts."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.sample, daemon=True)

    def sample(self) -> None:
        while True:
            self.samples.append(os.getloadavg()[0])
            if self.done.wait(2.0):
                return

    def __enter__(self) -> Load:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.done.set()
        self.thread.join()

    def said(self) -> str:
        return f"{min(self.samples):.1f}-{max(self.samples):.1f}"


def timed_run(python: str, settings: dict[str, Any]) -> tuple[dict[str, Any], str]:
    """One run's measures and the load while it ran."""
    with Load() as load:
        done = subprocess.run(
            [python, "-c", RUN.replace("PEAK_RSS", PEAK_RSS), json.dumps(settings)],
            capture_output=True,
            text=True,
        )
    if done.returncode:
        raise RuntimeError(f"{settings['task']} run failed: {done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1]), load.said()


def row(
    name: str, measured: dict[str, Any], load: str, latency: float, connections: int
) -> dict[str, Any]:
    calls, samples = measured["calls"], measured["samples"]
    grown = measured["rss_peak"] - measured["rss_before"]
    return {
        "run": name,
        "samples": samples,
        "judge calls": calls,
        "wall s": round(measured["wall"], 1),
        "latency bound s": round(calls * latency / connections, 1),
        "client CPU s": round(measured["cpu"], 1),
        "ms CPU/call": round(measured["cpu"] / calls * 1000, 2),
        "load (1 min)": load,
        "RSS before MB": round(measured["rss_before"] / 2**20),
        "peak RSS MB": round(measured["rss_peak"] / 2**20),
        "KB RSS/sample": round(grown / samples / 1024),
    }


def first_writing(data: Path) -> str:
    """The first stored guide writing of `MODEL`: what the peer's writer answers every
    sample with, so that its judge reads a writing of the benchmark's length."""
    with (data / "guide" / "inferences" / f"{MODEL}.jsonl").open(encoding="utf-8") as lines:
        return str(json.loads(next(lines))["output"])


def bench_side_by_side(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows = []
    with served(latency=args.latency) as simulator:
        common = {
            "writing": first_writing(args.data),
            "sim": simulator.root_url,
            "connections": args.connections,
            "data": str(args.data.resolve()),
            "writer": MODEL,
        }
        runs: list[tuple[str, str, dict[str, Any]]] = [
            ("tow, inspect's defaults", sys.executable,
             {"task": "tow", "config": {}, "limit": args.writings}),
            ("tow, large-run configuration", sys.executable,
             {"task": "tow", "config": LARGE_RUN, "limit": args.writings}),
        ]  # fmt: skip
        if args.peer_python:
            runs += [
                ("writingbench (inspect_evals), inspect's defaults", args.peer_python,
                 {"task": "writingbench", "config": {}, "limit": args.peer_samples}),
                ("writingbench (inspect_evals), large-run configuration", args.peer_python,
                 {"task": "writingbench", "config": LARGE_RUN, "limit": args.peer_samples}),
            ]  # fmt: skip
        for name, python, settings in runs:
            measured, load = timed_run(python, {**common, **settings})
            rows.append(row(name, measured, load, args.latency, args.connections))
            print(table(rows[-1:]), flush=True)
    return rows


def bench_whole(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Every stored writing of every writer and task in one process: its peak RSS."""
    writers = sorted(p.stem for p in (args.data / "guide" / "inferences").glob("*.jsonl"))
    writers = writers[: args.whole_writers]
    script = textwrap.dedent(
        """
        import json, os, sys, tempfile, time
        from inspect_ai import eval, task_with
        from inspect_ai.model import GenerateConfig, get_model
        from howtobench import tasks
        given = json.loads(sys.argv[1])
        os.environ["INSPECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
        grader = get_model("openai-api/sim/judge", base_url=given["sim"] + "/v1", api_key="none",
                           config=GenerateConfig(max_connections=given["connections"]))
        runs = [task_with(getattr(tasks, name)(dataset=given["data"]), model="replay/" + writer)
                for writer in given["writers"] for name in ("completion", "guide", "open_writing")]
        start, cpu = time.perf_counter(), time.process_time()
        logs = eval(runs, model_roles={"grader": grader}, max_tasks=given["max_tasks"],
                    max_samples=given["connections"], log_dir=tempfile.mkdtemp(prefix="bench-logs-"),
                    display="none", log_realtime=False, score_display=False, log_header_only=True)
        print(json.dumps({
            "failed": [log.eval.task for log in logs if log.status != "success"],
            "samples": sum(log.results.completed_samples for log in logs if log.results),
            "cpu": time.process_time() - cpu, "wall": time.perf_counter() - start,
            "rss_peak": PEAK_RSS,
        }))
        """
    )
    with served(latency=args.whole_latency) as simulator, Load() as load:
        settings = {
            "sim": simulator.root_url,
            "connections": args.connections,
            "data": str(args.data.resolve()),
            "writers": writers,
            "max_tasks": args.whole_max_tasks,
        }
        done = subprocess.run(
            [sys.executable, "-c", script.replace("PEAK_RSS", PEAK_RSS), json.dumps(settings)],
            capture_output=True,
            text=True,
        )
        calls = simulator.calls()
    if done.returncode:
        raise RuntimeError(f"whole benchmark failed: {done.stderr[-3000:]}")
    measured = json.loads(done.stdout.strip().splitlines()[-1])
    return [
        {
            "writers": len(writers),
            "tasks at once": args.whole_max_tasks,
            "writings in flight at most": args.whole_max_tasks * args.connections,
            "writings": measured["samples"],
            "judge calls": calls,
            "failed runs": len(measured["failed"]),
            "wall s": round(measured["wall"], 1),
            "client CPU s": round(measured["cpu"], 1),
            "ms CPU/call": round(measured["cpu"] / calls * 1000, 2),
            "load (1 min)": load.said(),
            "peak RSS MB": round(measured["rss_peak"] / 2**20),
        }
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="a data folder like the paper's")
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--writings", type=int, default=456, help="guide writings (456: all)")
    parser.add_argument("--peer-python", help="an interpreter with inspect_evals installed")
    parser.add_argument("--peer-samples", type=int, default=640, help="writingbench samples")
    parser.add_argument("--parts", default="side-by-side", help="side-by-side,whole")
    parser.add_argument("--whole-latency", type=float, default=0.0)
    parser.add_argument("--whole-writers", type=int, default=10, help="the first N writers")
    parser.add_argument("--whole-max-tasks", type=int, default=1, help="tasks run at once")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}\n"
    )
    parts = {"side-by-side": bench_side_by_side, "whole": bench_whole}
    results = {}
    for name in args.parts.split(","):
        results[name] = parts[name](args)
        print(f"### {name}\n\n{table(results[name])}\n", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
