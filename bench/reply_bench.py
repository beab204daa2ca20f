"""The client's peak memory under a judge whose replies have no end, with the bounds and without.

    python bench/reply_bench.py
    python bench/reply_bench.py --seconds 60 --huge 13300000

A judge that ignores `max_tokens` answers every question of one demo guide writing (the
negotiator and 7 experts, 8 questions in flight, each asked 3 times):

- runaway: the simulator's `--rate-runaway 1`, a body that never ends (a chat
  completion whose text repeats one sentence), each attempt abandoned after `--seconds`
  (the role's `attempt_timeout`, no retry);
- huge: a complete reply of `--huge` characters (`好` again and again, 6 bytes each as
  JSON), from a scripted simulator in a process of its own.

Each is run twice (beside a run whose replies are the simulator's own valid ones), each
run in a process of its own: with the package's bounds, and with
them lifted in that process (`reply_size.LONGEST_REPLY` and `replies.ECHOED_REPLY` set
past any reply: the client reads every byte, and the re-ask sends the reply back), as
before judge replies were bounded. Printed per run: the client's peak RSS (the kernel's
VmHWM, taken before the log is read back), its wall time, the requests the simulator
saw, and the first reason the writing was left unscored.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bench import PEAK_RSS, table
from howtobench.simulator.process import served

# One run in a process of its own: argv[1] its JSON settings; its JSON measures last.
RUN = textwrap.dedent(
    """
    import json, sys, tempfile, time
    from inspect_ai import eval
    from inspect_ai.log import read_eval_log
    from inspect_ai.model import GenerateConfig, get_model
    from howtobench import guide
    from howtobench.judge import replies, reply_size

    given = json.loads(sys.argv[1])
    if not given["bounded"]:
        reply_size.LONGEST_REPLY = replies.ECHOED_REPLY = 10**15
    grader = get_model(
        "openai-api/sim/judge", base_url=given["sim"] + "/v1", api_key="none",
        config=GenerateConfig(attempt_timeout=given["seconds"], max_retries=0), memoize=False,
    )
    start = time.perf_counter()
    [log] = eval(
        guide(dataset="demo"), model="replay/demo-writer-a", model_roles={"grader": grader},
        limit=1, log_dir=tempfile.mkdtemp(), display="none", log_header_only=True,
    )
    wall, peak = time.perf_counter() - start, PEAK_RSS
    [sample] = read_eval_log(log.location).samples
    tow = (sample.scores or {}).get("tow")
    reason = tow.explanation if tow else f"{log.status}: {sample.error and sample.error.message}"
    print(json.dumps({"peak": peak, "wall": wall, "reason": str(reason)}))
    """
).replace("PEAK_RSS", PEAK_RSS)

# A simulator answering every question with `huge` characters, in a process of its own:
# prints its base URL, then serves until killed.
SCRIPTED = textwrap.dedent(
    """
    import sys, time
    from howtobench.simulator import JudgeSimulator
    huge = "好" * int(sys.argv[1])
    simulator = JudgeSimulator(script=lambda question: huge, record=False).start()
    print(simulator.root_url, flush=True)
    while True:
        time.sleep(60)
    """
)


def one_run(sim: str, bounded: bool, seconds: float) -> dict[str, Any]:
    """One run's measures (`RUN`), in a process of its own."""
    given = {"sim": sim, "bounded": bounded, "seconds": seconds}
    done = subprocess.run(
        [sys.executable, "-c", RUN, json.dumps(given)], capture_output=True, text=True
    )
    if done.returncode:
        raise SystemExit(f"the run failed: {done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def row(case: str, bounded: bool, measured: dict[str, Any], calls: int) -> dict[str, Any]:
    return {
        "reply": case,
        "bounds": "on" if bounded else "lifted",
        "peak RSS MB": round(measured["peak"] / 2**20),
        "wall s": round(measured["wall"], 1),
        "requests": calls,
        "explanation (its first part)": measured["reason"].split("; ")[0].split("\n")[0][:160],
    }


@contextmanager
def scripted(characters: int) -> Iterator[str]:
    """A simulator answering every question with `characters` characters (`SCRIPTED`),
    in a process of its own: its root URL."""
    child = subprocess.Popen(
        [sys.executable, "-c", SCRIPTED, str(characters)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None
        yield child.stdout.readline().strip()
    finally:
        child.kill()
        child.wait()


def calls_of(root: str) -> int:
    with urllib.request.urlopen(f"{root}/stats", timeout=10) as answer:
        return sum(json.load(answer)["calls"].values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0, help="each runaway attempt")
    parser.add_argument("--huge", type=int, default=5_000_000, help="characters of a huge reply")
    args = parser.parse_args()
    with served() as sim:  # the baseline: the simulator's own valid replies
        rows = [row("valid", True, one_run(sim.root_url, True, args.seconds), sim.calls())]
    for bounded in (True, False):
        with served(rate_runaway=1) as sim:
            measured = one_run(sim.root_url, bounded, args.seconds)
            rows.append(row("runaway", bounded, measured, sim.calls()))
        with scripted(args.huge) as root:
            measured = one_run(root, bounded, args.seconds)
            rows.append(row(f"huge ({args.huge:,} characters)", bounded, measured, calls_of(root)))
    print(table(rows))


if __name__ == "__main__":
    main()
