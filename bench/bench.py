"""Throughput and cost of the judges, measured against the judge simulator.

    python bench/bench.py --data ../shared/howtobench-data            # everything
    python bench/bench.py --data ../shared/howtobench-data --only judges --writings 100

Parts (each prints a Markdown table; `--json FILE` keeps the numbers):
- judges: for `tow` and each judge baseline, N guide writings of one replayed model at a
  fixed simulated latency and connection limit, in a warmed-up process: judge calls and
  prompt characters per writing, wall time of the eval, its ratio to the ideal bound
  (calls x latency / connections), the span from the first request to the last answer,
  and the calls and time of a repeated run (answered from the reply store).
- reuse: judge calls per writing when the same instructions are judged for all 10 stored
  models (the negotiator runs once per instruction).
- overhead: the ToW scorer's own work per writing (prompts, reply checks, formatting rule,
  aggregation, rendering), timed by re-scoring a log with inspect's `score()`: the judge
  replies come from the reply store (no model call at all), or from an in-process model
  that answers at once (inspect's model-call work included); what re-scoring costs with
  a scorer that does nothing is subtracted.
- plan: `howtobench/negotiate` over every instruction of the data (its wall time against
  the bound instructions x latency / connections), the plan exported from its log, and N
  guide writings scored from the plan beside the same writings negotiated afresh: calls
  per writing, negotiator calls, wall time and its ratio to the ideal bound.
- overlap: `rouge_l` and `bleu` over every stored generation (3 tasks x 10 models), in
  one inspect run per task and model, spread over the machine's cores.
- overlap-cost (`--only overlap-cost`, not in the default set): `rouge_l` and `bleu` over
  the first 456 and 4,000 guide writings (`--overlap-sizes`), each in one process: peak
  RSS and CPU per writing, against the paper code's ROUGE-L loop on `--paper-writings`.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from inspect_ai import Task, eval, score, task_with
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Solver, TaskState, solver

from howtobench import completion, guide, open_writing, tree_of_writing
from howtobench.simulator.process import Served, served
from howtobench.simulator.protocol import classify
from howtobench.simulator.replies import valid_reply
from howtobench.studies.plans import export_plan
from howtobench.tasks import negotiate
from howtobench.vocabulary.words import TASKS

MODEL = "gpt-4o-2024-11-20"
JUDGE_SCORERS = ("tow", "rubric", "autoplan")
TASK_FUNCTIONS = {"completion": completion, "guide": guide, "open": open_writing}


def table(rows: list[dict[str, Any]]) -> str:
    header = list(rows[0])
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(row[h]) for h in header) + " |" for row in rows]
    return "\n".join(lines)


def scored(found: Score | None) -> bool:
    """A judge's score: a dict (tow) or a number (rubric, autoplan); unscored is NaN."""
    value = found.value if found is not None else None
    return isinstance(value, dict) or (isinstance(value, int | float) and math.isfinite(value))


def judged_run(
    data: Path,
    scorer: str,
    writings: int,
    connections: int,
    writer: str = MODEL,
    weights: str = "negotiated",
) -> float:
    """Wall seconds of one guide run of `writer`'s stored writings (`replay/<writer>`)
    judged by the simulator (already started)."""
    grader = get_model(
        "openai-api/sim/judge",
        base_url=os.environ["SIM_BASE_URL"],  # this run's simulator, not a cached model's
        config=GenerateConfig(max_connections=connections),
    )
    start = time.perf_counter()
    [log] = eval(
        guide(dataset=str(data), scorers=scorer, weights=weights),
        model=f"replay/{writer}",
        model_roles={"grader": grader},
        limit=writings,
        max_samples=writings,
        log_dir=tempfile.mkdtemp(prefix="bench-logs-"),
        score_display=False,  # no live metrics: recomputing them per sample costs CPU
        display="none",
    )
    elapsed = time.perf_counter() - start
    unscored = sum(1 for s in log.samples or [] if not scored((s.scores or {}).get(scorer)))
    if log.status != "success" or unscored:
        raise RuntimeError(f"{scorer}: run {log.status}, {unscored} writings unscored")
    return elapsed


def with_simulator(latency: float, body: Callable[[Served], Any]) -> Any:
    """`body` against a fresh simulator process and cache (each task builds a scorer of
    its own, with no weights settled yet): a first run."""
    with served(latency=latency) as simulator:
        os.environ["SIM_BASE_URL"] = simulator.base_url
        os.environ["SIM_API_KEY"] = "none"
        os.environ["INSPECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
        return body(simulator)


def measure_judge(
    simulator: Served,
    data: Path,
    scorer: str,
    writings: int,
    latency: float,
    connections: int,
) -> dict[str, Any]:
    wall = judged_run(data, scorer, writings, connections)
    first = simulator.stats()
    calls = sum(first["calls"].values())
    prompt_chars, reply_chars = first["characters"]["prompt"], first["characters"]["completion"]
    repeat_wall = judged_run(data, scorer, writings, connections)
    ideal = calls * latency / connections
    return {
        "scorer": scorer,
        "writings": writings,
        "calls/writing": round(calls / writings, 2),
        "prompt chars/writing": round(prompt_chars / writings),
        "reply chars/writing": round(reply_chars / writings),
        "peak connections": first["peak"],
        "wall s": round(wall, 1),
        "ideal s": round(ideal, 1),
        "wall/ideal": round(wall / ideal, 2) if ideal else "-",
        "judging s": round(first["span"][1] - first["span"][0], 1),
        "repeat-run calls": simulator.calls() - calls,
        "repeat-run wall s": round(repeat_wall, 1),
    }


def bench_judges(
    data: Path, writings: int, latency: float, connections: int, scorers: list[str]
) -> list[dict[str, Any]]:
    # Warm the process up first (imports, providers: about 2.5 s once per process), so
    # that the numbers are those of the run itself.
    with_simulator(0.0, lambda _: judged_run(data, "tow", 2, connections))
    return [
        with_simulator(
            latency,
            partial(
                measure_judge,
                data=data,
                scorer=scorer,
                writings=writings,
                latency=latency,
                connections=connections,
            ),
        )
        for scorer in scorers
    ]


def bench_reuse(data: Path, instructions: int) -> list[dict[str, Any]]:
    models = sorted(p.stem for p in (data / "guide" / "inferences").glob("*.jsonl"))

    def measure(simulator: Served) -> dict[str, Any]:
        for model in models:
            judged_run(data, "tow", instructions, 50, writer=model)
        writings = instructions * len(models)
        calls = simulator.stats()["calls"]
        return {
            "writings": writings,
            "models": len(models),
            "negotiator calls": calls["negotiator"],
            "calls/writing": round(sum(calls.values()) / writings, 2),
        }

    return [with_simulator(0.0, measure)]


def instant_grader() -> Model:
    """A grader in this process that answers at once with the simulator's valid reply to
    what each prompt asks: the scorer's work with no wait for a judge."""

    def answer(messages: list[ChatMessage], *_: object) -> ModelOutput:
        output = ModelOutput.from_content("mockllm/instant", valid_reply(classify(messages)))
        output.usage = ModelUsage()  # given, so mockllm counts no tokens with a tokenizer
        return output

    return get_model("mockllm/instant", custom_outputs=answer)


@scorer(metrics=[mean()])
def no_work() -> Scorer:
    """What re-scoring a log costs inspect by itself, to subtract."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=0)

    return score


def rescoring_seconds(log: EvalLog, scorer: Scorer, grader: Model, repeats: int) -> float:
    """The fastest of `repeats` re-scorings of every writing of `log` with `scorer`."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        score(
            log,
            scorer,
            model_roles={"grader": grader},
            action="overwrite",
            display="none",
            copy=False,
        )
        times.append(time.perf_counter() - start)
    return min(times)


def bench_overhead(data: Path, writings: int, repeats: int = 3) -> list[dict[str, Any]]:
    """The ToW scorer's own work per writing: `tree_of_writing` itself re-scores a judged
    log, with every judge reply at hand."""
    os.environ["INSPECT_CACHE_DIR"] = tempfile.mkdtemp(prefix="bench-cache-")
    grader = instant_grader()
    [log] = eval(  # judged once, which also fills the reply store
        guide(dataset=str(data), scorers="tow"),
        model=f"replay/{MODEL}",
        model_roles={"grader": grader},
        limit=writings,
        log_dir=tempfile.mkdtemp(prefix="bench-logs-"),
        score_display=False,
        display="none",
    )
    count = len(log.samples or [])
    base = rescoring_seconds(log, no_work(), grader, repeats)
    ways = {
        "reply store, no model call": tree_of_writing(),
        "instant in-process model": tree_of_writing(cache=False),
    }
    return [
        {
            "judge replies from": way,
            "writings": count,
            "ms/writing": round(
                (rescoring_seconds(log, tow, grader, repeats) - base) / count * 1000, 2
            ),
            "re-scoring with no work, ms/writing": round(base / count * 1000, 2),
        }
        for way, tow in ways.items()
    ]


def _overlap_share(jobs: list[tuple[str, str, str]]) -> int:
    """One worker: its share of the (task, model) runs, as one inspect eval in one process."""
    tasks = [  # each task with its writer's replay model
        task_with(
            TASK_FUNCTIONS[task](dataset=data, scorers="rouge_l,bleu"), model=f"replay/{model}"
        )
        for data, task, model in jobs
    ]
    logs = eval(
        tasks,
        log_dir=tempfile.mkdtemp(prefix="bench-overlap-"),
        log_realtime=False,
        max_samples=64,
        display="none",
    )
    if any(log.status != "success" for log in logs):
        raise RuntimeError("an overlap run failed")
    return sum(len(log.samples or []) for log in logs)


def bench_overlap(data: Path, workers: int) -> list[dict[str, Any]]:
    jobs = [
        (str(data), task, p.stem)
        for task in TASKS
        for p in sorted((data / task / "inferences").glob("*.jsonl"))
    ]
    shares = [jobs[k::workers] for k in range(workers)]  # models interleaved: even loads
    start = time.perf_counter()
    with ProcessPoolExecutor(workers) as pool:
        writings = sum(pool.map(_overlap_share, shares))
    wall = time.perf_counter() - start
    return [
        {
            "runs": len(jobs),
            "writings": writings,
            "workers": workers,
            "wall s": round(wall, 1),
            "ms/writing": round(wall / writings * 1000, 1),
        }
    ]


# A child process's peak RSS in bytes, as code its script puts where it says PEAK_RSS:
# the kernel's VmHWM of the process. `ru_maxrss` is carried over from the parent across
# fork and exec on Linux, so a child of a larger parent would report the parent's.
PEAK_RSS = 'int(next(line for line in open("/proc/self/status") if line.startswith("VmHWM")).split()[1]) * 1024'

# One overlap run in a process of its own (argv: data, writers, limit per writer): the
# eval's CPU time, wall time and peak RSS, as JSON on the last line.
_OVERLAP_RUN = """
import json, sys, tempfile, time
import psutil
from inspect_ai import eval, task_with
from howtobench import guide
data, writers, limit = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
tasks = [task_with(guide(dataset=data, scorers="rouge_l,bleu"), model="replay/" + w) for w in writers]
before = psutil.Process().memory_info().rss
start, cpu = time.perf_counter(), time.process_time()
logs = eval(tasks, limit=limit, log_dir=tempfile.mkdtemp(prefix="bench-overlap-"), log_realtime=False,
            score_display=False, max_samples=64, max_tasks=1, display="none", log_header_only=True)
print(json.dumps({
    "failed": [log.eval.task for log in logs if log.status != "success"],
    "writings": sum(log.results.completed_samples for log in logs if log.results),
    "cpu": time.process_time() - cpu, "wall": time.perf_counter() - start, "rss_before": before,
    "rss_peak": PEAK_RSS,
}))
"""


def paper_rouge_l_seconds(data: Path, writings: int) -> float:
    """CPU seconds per writing of the paper code's ROUGE-L loop (its `compute_rouge`:
    rouge-chinese over jieba words, a pure-Python LCS) over the first `writings` guide
    writings of `MODEL` that are not empty (the paper's code skips those)."""
    import jieba
    from rouge_chinese import Rouge

    references = {}
    with (data / "guide" / "aligned.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            references[row["infer_id"]] = row["reference"]
    pairs = []
    with (data / "guide" / "inferences" / f"{MODEL}.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["output"].strip() and len(pairs) < writings:
                pairs.append((row["output"], references[row["infer_id"]]))
    jieba.initialize()  # its dictionary, loaded once, as the paper's loop does
    start = time.process_time()
    for writing, reference in pairs:
        Rouge().get_scores(" ".join(jieba.cut(writing)), " ".join(jieba.cut(reference)))
    return (time.process_time() - start) / len(pairs)


def bench_overlap_cost(data: Path, sizes: list[int], paper_writings: int) -> list[dict[str, Any]]:
    """`rouge_l` and `bleu` over the first N guide writings (456 a writer, writers in
    turn, one task at a time, 64 writings in flight), each N in a fresh process: its peak
    RSS and CPU per writing, against the paper code's ROUGE-L loop (timed on
    `paper_writings` writings: about 1 s each)."""
    import subprocess
    import sys

    writers = sorted(p.stem for p in (data / "guide" / "inferences").glob("*.jsonl"))
    writers.remove(MODEL)
    writers.insert(0, MODEL)
    paper = paper_rouge_l_seconds(data, paper_writings)
    rows = []
    for size in sizes:
        count = -(-size // 456)  # writers needed
        limit = min(456, size) if count == 1 else 456
        done = subprocess.run(
            [sys.executable, "-c", _OVERLAP_RUN.replace("PEAK_RSS", PEAK_RSS), str(data),
             ",".join(writers[:count]), str(limit)],
            capture_output=True, text=True,
        )  # fmt: skip
        if done.returncode:
            raise RuntimeError(f"overlap run failed: {done.stderr[-3000:]}")
        run = json.loads(done.stdout.strip().splitlines()[-1])
        per_writing = run["cpu"] / run["writings"]
        rows.append(
            {
                "writings": run["writings"],
                "failed runs": len(run["failed"]),
                "wall s": round(run["wall"], 1),
                "CPU ms/writing": round(per_writing * 1000, 1),
                "RSS before MB": round(run["rss_before"] / 2**20),
                "peak RSS MB": round(run["rss_peak"] / 2**20),
                f"paper's ROUGE-L loop, CPU ms/writing ({paper_writings} writings)": round(
                    paper * 1000, 1
                ),
                "times less CPU than the paper's loop": round(paper / per_writing, 1),
            }
        )
    return rows


@solver
def _no_writer() -> Solver:
    async def solve(state: TaskState, generate: Any) -> TaskState:
        return state

    return solve


@scorer(metrics=[mean()])
def _one_plain_call() -> Scorer:
    """One uncached grader call per sample and nothing else: the least inspect does for a
    task of one judge call per sample, the floor the negotiate task is measured against."""

    async def score(state: TaskState, target: Target) -> Score:
        await get_model(role="grader").generate(state.input_text, cache=False)
        return Score(value=1.0)

    return score


def one_call_task(task: Task) -> Task:
    """`task`'s samples with one plain grader call each."""
    return Task(dataset=task.dataset, solver=_no_writer(), scorer=_one_plain_call())


def bench_plan(data: Path, writings: int, latency: float, connections: int) -> list[dict[str, Any]]:
    """Negotiate every instruction once, export the plan, then score from it beside a
    negotiated run of the same writings."""
    plan = Path(tempfile.mkdtemp(prefix="bench-plan-")) / "plan.jsonl"
    rows: list[dict[str, Any]] = []

    def negotiate_all(simulator: Served) -> None:
        grader = get_model(
            "openai-api/sim/judge",
            base_url=simulator.base_url,
            config=GenerateConfig(max_connections=connections),
        )
        logs = tempfile.mkdtemp(prefix="bench-logs-")
        task = negotiate(dataset=str(data))
        for name, run in (("negotiate", task), ("inspect's floor", one_call_task(task))):
            before = simulator.calls()
            start = time.perf_counter()
            [log] = eval(
                run,
                model="none",
                model_roles={"grader": grader},
                max_samples=5 * connections,
                log_dir=logs if name == "negotiate" else tempfile.mkdtemp(prefix="bench-logs-"),
                score_display=False,
                log_realtime=False,  # what a large run should use (README, "Large runs")
                display="none",
            )
            wall = time.perf_counter() - start
            calls = simulator.calls() - before
            ideal = len(log.samples or []) * latency / connections
            rows.append(
                {
                    "run": f"{name} ({len(log.samples or [])} instructions, {calls} calls)",
                    "calls/writing": "-",
                    "negotiator calls": calls if name == "negotiate" else "-",
                    "wall s": round(wall, 1),
                    "ideal s": round(ideal, 1),
                    "wall/ideal": round(wall / ideal, 2),
                }
            )
        export_plan([logs], plan)

    def scored(weights: str, simulator: Served) -> None:
        wall = judged_run(data, "tow", writings, connections, weights=weights)
        calls = simulator.stats()["calls"]
        ideal = sum(calls.values()) * latency / connections
        rows.append(
            {
                "run": f"tow, {writings} guide writings, weights {'plan' if weights != 'negotiated' else weights}",
                "calls/writing": round(sum(calls.values()) / writings, 2),
                "negotiator calls": calls.get("negotiator", 0),
                "wall s": round(wall, 1),
                "ideal s": round(ideal, 1),
                "wall/ideal": round(wall / ideal, 2),
            }
        )

    with_simulator(0.0, lambda _: judged_run(data, "tow", 2, connections))  # warm up
    with_simulator(latency, negotiate_all)
    with_simulator(latency, partial(scored, "negotiated"))
    with_simulator(latency, partial(scored, str(plan)))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data", type=Path, required=True, help="a data folder like the paper's data/"
    )
    parser.add_argument(
        "--only",
        choices=["judges", "reuse", "overhead", "plan", "overlap", "overlap-cost"],
        action="append",
    )
    parser.add_argument("--overlap-sizes", default="456,4000", help="writings, for overlap-cost")
    parser.add_argument("--paper-writings", type=int, default=40, help="for overlap-cost")
    parser.add_argument("--writings", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--connections", type=int, default=20)
    parser.add_argument("--scorers", default=",".join(JUDGE_SCORERS))
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    parts = args.only or ["judges", "reuse", "overhead", "plan", "overlap"]  # not overlap-cost
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}\n"
    )
    results: dict[str, Any] = {}
    for part in parts:
        if part == "judges":
            rows = bench_judges(
                args.data, args.writings, args.latency, args.connections, args.scorers.split(",")
            )
            title = f"judges ({args.latency} s latency, {args.connections} connections)"
        elif part == "reuse":
            rows, title = bench_reuse(args.data, 20), "calls per writing over 10 models"
        elif part == "overhead":
            rows, title = (
                bench_overhead(args.data, args.writings),
                "ToW scorer overhead, no model calls",
            )
        elif part == "plan":
            rows = bench_plan(args.data, args.writings, args.latency, args.connections)
            title = f"judge plan ({args.latency} s latency, {args.connections} connections)"
        elif part == "overlap-cost":
            sizes = [int(n) for n in args.overlap_sizes.split(",")]
            rows = bench_overlap_cost(args.data, sizes, args.paper_writings)
            title = "overlap scorers: memory, and CPU against the paper code's ROUGE-L loop"
        else:
            rows, title = (
                bench_overlap(args.data, args.workers),
                "overlap scorers over all stored generations",
            )
        results[part] = rows
        print(f"### {title}\n\n{table(rows)}\n", flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
