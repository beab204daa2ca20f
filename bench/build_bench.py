"""`howtobench build` at scale, against the judge simulator in its own process.

    python bench/build_bench.py                       # 10,000 texts, 0.5 s a call, 50 connections
    python bench/build_bench.py --texts 2000 --json build.json

A synthetic corpus (Chinese and English texts of several genres, half of them without a
genre, a few short or carrying a phone number) goes through every step. Reported: the
wall time of the build against the ideal bound (calls x latency / connections), per step
and in all; calls per text; the peak memory of the process (`ru_maxrss`); and a second
run of the same build, which must make no call.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import table
from howtobench.construct.corpus import write_jsonl
from howtobench.construct.options import BuildOptions
from howtobench.construct.pipeline import BuildResult, build_benchmark
from howtobench.construct.runs import EvalOptions
from howtobench.simulator.process import Served, served

MODEL = "openai-api/sim/judge"
# Words of the synthetic texts, and genre cues the simulator's classifier reads.
_ZH = "城市 公园 河水 秋天 老人 孩子 灯光 街道 书店 季节 工作 社区 学校 记忆 道路 风景".split()
_EN = "city park river autumn neighbour child lamp street bookshop season work school road".split()
_GENRES = {
    "zh": [("议论文", "因此"), ("散文", ""), ("", "尊敬的"), ("", "甲方"), ("", "")],
    "en": [("argumentative", "Therefore"), ("prose", ""), ("", "Dear "), ("", "")],
}


def synthetic_corpus(count: int, seed: int) -> Iterator[dict[str, Any]]:
    """`count` texts: 3-8 paragraphs of 2-4 sentences, a Chinese text in three; 4% too
    short for the quality filter, 2% with a phone number for screening."""
    rng = random.Random(seed)
    for index in range(count):
        language = "zh" if index % 3 else "en"
        words = _ZH if language == "zh" else _EN
        genre, cue = rng.choice(_GENRES[language])
        end, gap = ("。", "") if language == "zh" else (". ", " ")
        paragraphs = [
            cue
            + "".join(
                gap.join(rng.choice(words) for _ in range(rng.randint(6, 14))) + end
                for _ in range(rng.randint(2, 4))
            )
            for _ in range(rng.randint(3, 8))
        ]
        if index % 25 == 0:
            paragraphs = [paragraphs[0][:30]]
        if index % 50 == 7:
            paragraphs[-1] += "电话 13812345678。" if language == "zh" else "Call 555-201-7788."
        row: dict[str, Any] = {"id": f"t{index:05d}", "text": "\n\n".join(paragraphs)}
        if genre:
            row["genre"] = genre
        row["source"] = f"site-{index % 5}"
        yield row


def measure(
    corpus: Path, out: Path, simulator: Served, connections: int
) -> tuple[float, int, BuildResult]:
    """Wall seconds, calls made and the result of one build."""
    calls = simulator.calls()
    evals = EvalOptions(
        MODEL, model_base_url=simulator.base_url, max_connections=connections, display="none"
    )
    start = time.perf_counter()
    result = build_benchmark(corpus, out, evals, BuildOptions())
    return time.perf_counter() - start, simulator.calls() - calls, result


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--texts", type=int, default=10_000)
    parser.add_argument("--latency", type=float, default=0.5)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="keep the numbers in this file")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="build-bench-"))
    os.environ["INSPECT_CACHE_DIR"] = str(work / "cache")  # a fresh reply store
    os.environ["SIM_API_KEY"] = "none"
    corpus = write_jsonl(work / "corpus.jsonl", synthetic_corpus(args.texts, args.seed))
    with served(latency=args.latency) as simulator:
        wall, calls, result = measure(corpus, work / "out", simulator, args.connections)
        by_step = simulator.stats()["calls"]
        again, repeated, _ = measure(corpus, work / "out", simulator, args.connections)
    ideal = calls * args.latency / args.connections
    rows = [
        {
            "step": step,
            "calls": by_step.get(step, 0),
            "wall s": round(seconds, 1),
            "ideal s": round(by_step.get(step, 0) * args.latency / args.connections, 1),
            "wall/ideal": round(seconds / (by_step[step] * args.latency / args.connections), 2)
            if by_step.get(step)
            else "-",
        }
        for step, seconds in result.seconds.items()
    ]
    numbers = {
        "texts": args.texts,
        "latency": args.latency,
        "connections": args.connections,
        "items": result.items,
        "rejected": result.rejected,
        "calls": calls,
        "calls_per_text": round(calls / args.texts, 2),
        "wall_s": round(wall, 1),
        "ideal_s": round(ideal, 1),
        "wall_over_ideal": round(wall / ideal, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "rerun_calls": repeated,
        "rerun_wall_s": round(again, 1),
        "steps": rows,
    }
    print(table(rows))
    print(
        f"\n{args.texts} texts: {calls} calls ({numbers['calls_per_text']} a text), wall "
        f"{numbers['wall_s']} s against an ideal {numbers['ideal_s']} s "
        f"({numbers['wall_over_ideal']}x); peak memory {numbers['peak_rss_mb']} MB; "
        f"items {result.items}, rejected {result.rejected}; a rerun made {repeated} calls "
        f"in {numbers['rerun_wall_s']} s"
    )
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
