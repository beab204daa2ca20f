"""`howtobench report` over the logs of every stored writing, with its paired bootstrap.

    python bench/report_bench.py --data ../shared/howtobench-data
    python bench/report_bench.py --data ../shared/howtobench-data --bootstrap 1000 --json r.json

The logs: all 13,020 stored writings (3 tasks x 10 writers, 1302 instructions) scored
by `tow` against the judge simulator (latency 0). Every instruction is negotiated once
(`howtobench/negotiate`) and the plan exported, so that all writers are judged with
one set of weights, as a leaderboard must be; then the 30 runs are scored from the plan
in worker processes. Making them takes a long while (minutes per thousand writings on a
small machine), so they are kept in `--cache` and reused by the next measurement
(`--fresh` makes them again).

Measured: the wall time of `howtobench report LOGS --out DIR` in a new process, reading
the logs included, and of the report function alone in a warmed-up process (the reading
of the logs, the bootstrap and the writing of the files timed apart).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import platform
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from inspect_ai import eval, task_with
from inspect_ai.model import GenerateConfig, get_model

from bench import TASK_FUNCTIONS, table
from howtobench.simulator.process import served
from howtobench.studies import load_samples, report, write
from howtobench.studies.leaderboard_report import publish
from howtobench.studies.plans import export_plan
from howtobench.tasks import negotiate
from howtobench.vocabulary.words import TASKS

CONNECTIONS = 40
DONE = "complete.json"  # written last: a folder without it is an interrupted making


def _grader(base_url: str) -> Any:
    return get_model(
        "openai-api/sim/judge",
        base_url=base_url,
        config=GenerateConfig(max_connections=CONNECTIONS),
    )


def _scored_share(jobs: list[tuple[str, str, str]], plan: str, base_url: str, logs: str) -> int:
    """One worker: its share of the (task, writer) runs, scored by tow from the plan."""
    tasks = [  # each task with its writer's replay model
        task_with(
            TASK_FUNCTIONS[task](dataset=data, scorers="tow", weights=plan),
            model=f"replay/{writer}",
        )
        for data, task, writer in jobs
    ]
    done = eval(
        tasks,
        model_roles={"grader": _grader(base_url)},
        log_dir=logs,
        log_realtime=False,  # the README's advice for large runs
        score_display=False,
        max_tasks=len(tasks),
        max_samples=2 * CONNECTIONS,
        display="none",
    )
    if any(log.status != "success" for log in done):
        raise RuntimeError("a scoring run failed")
    return sum(len(log.samples or []) for log in done)


def make_logs(data: Path, cache: Path, workers: int) -> dict[str, Any]:
    """Negotiate every instruction, export the plan, score every stored writing from it."""
    cache.mkdir(parents=True, exist_ok=True)
    os.environ["INSPECT_CACHE_DIR"] = str(cache / "inspect-cache")
    os.environ["SIM_API_KEY"] = "none"
    with served() as simulator:
        start = time.perf_counter()
        [log] = eval(
            negotiate(dataset=str(data)),
            model="none",
            model_roles={"grader": _grader(simulator.base_url)},
            log_dir=str(cache / "negotiate"),
            log_realtime=False,
            max_samples=2 * CONNECTIONS,
            display="none",
        )
        if log.status != "success":
            raise RuntimeError("the negotiation failed")
        plan = cache / "plan.jsonl"
        export_plan([str(cache / "negotiate")], plan)
        negotiated = time.perf_counter() - start
        jobs = [
            (str(data), task, p.stem)
            for task in TASKS
            for p in sorted((data / task / "inferences").glob("*.jsonl"))
        ]
        shares = [jobs[k::workers] for k in range(workers)]
        start = time.perf_counter()
        # spawned, not forked: this process has run an eval (its event loop, its models)
        spawn = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=spawn) as pool:
            counts = pool.map(
                _scored_share,
                shares,
                [str(plan)] * workers,
                [simulator.base_url] * workers,
                [str(cache / "logs")] * workers,
            )
            writings = sum(counts)
        made = {
            "runs": len(jobs),
            "writings": writings,
            "negotiate s": round(negotiated, 1),
            "scoring s": round(time.perf_counter() - start, 1),
            "workers": workers,
        }
    (cache / DONE).write_text(json.dumps(made, indent=2))
    return made


def measure(logs: Path, bootstrap: int, out: Path) -> list[dict[str, Any]]:
    """The command in a fresh process, then its parts in this (warmed-up) one; the
    files end up in `out`."""
    command = [sys.executable, "-m", "howtobench.cli", "report", str(logs), "--out", str(out)]
    start = time.perf_counter()
    subprocess.run([*command, "--bootstrap", str(bootstrap)], check=True, capture_output=True)
    cli = time.perf_counter() - start
    start = time.perf_counter()
    samples = load_samples([logs])
    read = time.perf_counter() - start
    start = time.perf_counter()
    result = report(samples, bootstrap=bootstrap, seed=0)
    computed = time.perf_counter() - start
    start = time.perf_counter()
    files = len(write(result, out)) + len(publish(result, out))
    written = time.perf_counter() - start
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    return [
        {
            "writings": len(samples.frame),
            "writers": samples.frame["model"].nunique(),
            "resamples": bootstrap,
            "board rows": len(board["rows"]),
            "`howtobench report --out` (new process) s": round(cli, 1),
            "read logs s": round(read, 1),
            "report (bootstrap, ranks, figures) s": round(computed, 1),
            f"write {files} files (CSV, MD, PNG, JSON, HTML) s": round(written, 1),
        }
    ]


def screenshot(page: Path, image: Path) -> None:
    """The top of the page in the system's Chromium (the README's picture)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium", headless=True)
        opened = browser.new_page(viewport={"width": 1200, "height": 1000})
        opened.goto(page.as_uri())
        opened.screenshot(path=str(image))
        browser.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="a data folder like data/")
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(tempfile.gettempdir()) / "howtobench-report-bench",
        help="where the scored logs are kept between measurements",
    )
    parser.add_argument("--fresh", action="store_true", help="make the logs again")
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--screenshot", type=Path, metavar="PNG", help="keep a picture of report.html here"
    )
    args = parser.parse_args()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}\n"
    )
    results: dict[str, Any] = {}
    if args.fresh or not (args.cache / DONE).is_file():
        results["made"] = [make_logs(args.data, args.cache, args.workers)]
        print(f"### the scored logs (made now)\n\n{table(results['made'])}\n", flush=True)
    else:
        made = json.loads((args.cache / DONE).read_text())
        print(f"### the scored logs (from {args.cache})\n\n{table([made])}\n", flush=True)
    out = Path(tempfile.mkdtemp(prefix="report-bench-"))
    results["report"] = measure(args.cache / "logs", args.bootstrap, out)
    print(f"### howtobench report\n\n{table(results['report'])}\n")
    print((out / "report_ranking.md").read_text(encoding="utf-8"))
    if args.screenshot:
        screenshot(out / "report.html", args.screenshot)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
