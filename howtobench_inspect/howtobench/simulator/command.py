"""A judge simulator: a small chat server on 127.0.0.1 for tests and benchmarks.

It speaks OpenAI's chat completions and Anthropic's Messages API (`POST /v1/messages`,
streamed or not) and both providers' batch APIs (`batches.py`), plays writer,
negotiator, leaf experts and the rubric and auto-plan baseline judges with valid
replies, chosen from what the prompt asks (never from call order), bills tokens with
simulated prompt caching, and can add latency and inject faults: 429 and 500 answers,
hung requests (for client timeouts), dropped connections, malformed replies,
out-of-range scores and replies without end (`--rate-runaway`). With `--profile` it
plays another OpenAI-compatible server (`profiles.py`): what that server refuses (list
content, a system role, temperature 0, a prompt over its context), in its own error
bodies, and the fields it adds (reasoning). Point inspect at it with the
`openai-api/<service>/<model>` provider, or with `anthropic/<model>` (and
`openai/<model>` in batch mode, below):

    python -m howtobench.simulator --port 8765 --latency 0.5
    python -m howtobench.simulator --profile vllm --context 8192   # plays vLLM, 8k context
    curl http://127.0.0.1:8765/stats      # calls by kind, faults, characters, tokens, peak load
    SIM_BASE_URL=http://127.0.0.1:8765/v1 SIM_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role grader=openai-api/sim/judge
    ANTHROPIC_BASE_URL=http://127.0.0.1:8765 ANTHROPIC_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role grader=anthropic/claude-sim
    # a judge in batch mode; --batch-delay inf: batches never end, --no-batch-api: 404
    OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=none \\
      inspect eval howtobench/guide ... --model-role \\
      'grader={model: openai/gpt-4o-mini, batch: {size: 100, send_delay: 1, tick: 1}}'
"""

from __future__ import annotations

import argparse
import threading

from howtobench.simulator.faults import FAULTS, Faults
from howtobench.simulator.profiles import DEFAULT_PROFILE, PROFILES, get_profile
from howtobench.simulator.server import JudgeSimulator

__all__ = ["main"]


def main() -> None:
    parser = argparse.ArgumentParser(
        prog="python -m howtobench.simulator",
        description=__doc__,  # this module's: the server, and how to point inspect at it
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer")
    for name in FAULTS:
        parser.add_argument(f"--rate-{name.replace('_', '-')}", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--profile",
        choices=sorted(PROFILES),
        default=DEFAULT_PROFILE,
        help="the OpenAI-compatible server to play (default: openai, the simulator as always)",
    )
    # what changes the profile played, each given only when asked for
    changes = parser.add_argument_group("profile changes", argument_default=argparse.SUPPRESS)
    changes.add_argument(
        "--context", type=int, help="the profile's context size in tokens (two characters a token)"
    )
    changes.add_argument(
        "--usage-read",
        action="store_true",
        help="a truncating profile's usage counts the context it read, not the prompt sent "
        "(Ollama past num_ctx): --profile ollama --context 1024 --usage-read",
    )
    changes.add_argument(
        "--uncached-usage",
        action="store_true",
        help="usage counts only the prompt tokens past a prefix reused from an earlier "
        "prompt, without saying so (Ollama 0.30.x)",
    )
    changes.add_argument(
        "--no-system-role",
        action="store_false",
        dest="system_role",
        help="play a chat template that refuses a system role (Gemma's), in the profile's words",
    )
    parser.add_argument(
        "--batch-delay",
        type=float,
        default=0.0,
        help="seconds from a batch's creation to its end at the earliest (inf: never ends)",
    )
    parser.add_argument(
        "--no-batch-api",
        action="store_true",
        help="answer 404 on the batch APIs' paths, as a server without them",
    )
    args = parser.parse_args()
    faults = Faults(**{f"rate_{n}": getattr(args, f"rate_{n}") for n in FAULTS}, seed=args.seed)
    changed = ("context", "usage_read", "uncached_usage", "system_role")
    profile = get_profile(
        args.profile, **{name: getattr(args, name) for name in changed if name in args}
    )
    # a served simulator may answer long runs: it keeps counts, not every request's text
    simulator = JudgeSimulator(
        latency=args.latency,
        faults=faults,
        port=args.port,
        record=False,
        batch_delay=args.batch_delay,
        batch_api=not args.no_batch_api,
        profile=profile,
    ).start()
    playing = "" if profile.name == DEFAULT_PROFILE else f" as {profile.server}"
    # the line that says it listens, and where: `process.served` waits for it
    print(f"judge simulator on {simulator.base_url}{playing}", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        simulator.stop()
