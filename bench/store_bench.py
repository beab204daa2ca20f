"""The reply store's own costs per judge question: the key, a read, a write, the lock.

    python bench/store_bench.py --data ../shared/howtobench-data
    python bench/store_bench.py --data ../shared/howtobench-data --questions 4000 --json store.json
    python bench/store_bench.py --data ../shared/howtobench-data --lock-before 33e6b0f

Every new judge question computes its reply key (`ReplyStore.key`), reads the store
once, takes the question's lock (`question_locks.held`) and, once answered, writes the
reply (`ReplyStore.put`); a stored one is a key, the lock and a read. This times each of
them alone, in CPU milliseconds per question (the process's CPU time over `--questions`
questions, best of `--repeats`), on the real ToW expert prompts of the first guide
writings of one stored writer (7 leaves each, about 4,400 characters a prompt) and a
reply of the simulator's size, in a fresh store under the system's temporary folder:

- key: the question's key (model, endpoint, settings, messages, scope);
- get, a miss / get, a hit: one read of the store;
- put: one checked reply kept (written to a temporary file and renamed);
- lock, store used by this process alone: taking and giving back a question's lock when
  no other process uses the store, one question at a time and overlapping (another
  question held meanwhile, as in a run);
- lock, store shared with another process: the same, overlapping, while a second process
  uses the store (it holds a question of its own the whole time).

`--lock-before REV` times the lock rows of `howtobench/judge/question_locks.py` as it was
at the git revision REV too (read with `git show`, loaded as a module of its own, its
second process running it as well), beside today's: each repeat runs the two in turn.

A figure here is this machine's at the time: the load is printed with it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
from inspect_ai.model import ChatMessage, get_model

from bench import MODEL, table
from howtobench.judge import question_locks
from howtobench.judge.inputs import JudgeInput
from howtobench.judge.settings import judge_config
from howtobench.judge.store import ReplyStore
from howtobench.tree.experts import expert_messages
from howtobench.tree.spec import tree_for

# What a judge's checked reply looks like (a score and a reason of a few sentences).
REPLY = json.dumps({"score": 7, "reason": "结构清晰，论证充分，但个别段落略显冗长。" * 4})

LOCKS = "howtobench_inspect/howtobench/judge/question_locks.py"


def loaded(path: Path) -> ModuleType:
    """The module in the file `path`, under a name of its own."""
    name = f"bench_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # for its dataclasses
    spec.loader.exec_module(module)
    return module


# A second process on the store: with the question locks of the file argv[2], it holds a
# question of its own until told to stop.
OTHER_USER = textwrap.dedent(
    """
    import sys, anyio
    from pathlib import Path
    sys.path.insert(0, sys.argv[3])
    from store_bench import loaded
    from howtobench.judge.store import ReplyStore

    async def hold() -> None:
        held = loaded(Path(sys.argv[2])).held
        async with held(ReplyStore(Path(sys.argv[1])), "another-process-question"):
            print("held", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.readline)

    anyio.run(hold)
    """
)


def prompts(data: Path, writings: int) -> list[list[ChatMessage]]:
    """The ToW expert prompts of the first `writings` guide writings of `MODEL`."""
    tree = tree_for("guide")
    items = {}
    with (data / "guide" / "aligned.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            items[row["infer_id"]] = row
    found: list[list[ChatMessage]] = []
    with (data / "guide" / "inferences" / f"{MODEL}.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            written = json.loads(line)
            item = items[written["infer_id"]]
            judge_input = JudgeInput(
                task="guide",
                genre="argumentative",
                genre_raw=item["sub_task"],
                language="zh",
                instruction=item["basic_instruction"],
                grounding=item["information"],
                reference=item["reference"],
                writing=written["output"],
                anchor=item["reference"],
                anchor_source="human",
            )
            found += [
                expert_messages(leaf, judge_input, with_anchor=True)
                for leaf in tree.leaves
                if leaf.judge == "llm"
            ]
            if len(found) >= writings * 7:
                break
    return found


def cpu_ms(count: int, repeats: int, *runs: Callable[[], object]) -> list[float]:
    """CPU milliseconds per question of each of `runs` (each does `count` questions), best
    of `repeats`; each repeat runs them all in turn, so that they share the machine's state."""
    best = [float("inf")] * len(runs)
    for _ in range(repeats):
        for n, run in enumerate(runs):
            start = time.process_time()
            run()
            best[n] = min(best[n], time.process_time() - start)
    return [round(b / count * 1000, 4) for b in best]


def measure(
    data: Path, questions: int, repeats: int, lock_before: str | None = None
) -> list[dict[str, Any]]:
    model = get_model(
        "openai-api/sim/judge", base_url="http://127.0.0.1:9/v1", api_key="none", memoize=False
    )
    config = judge_config(model, None, 0.0)
    asked = prompts(data, questions // 7 + 1)
    messages = [asked[n % len(asked)] for n in range(questions)]
    prompt_chars = sum(len(m.text) for ms in asked for m in ms) / len(asked)
    folder = Path(tempfile.mkdtemp(prefix="bench-store-"))
    rows: list[dict[str, Any]] = []
    round_ = [0]
    # the question locks timed: today's, and those of `lock_before` if asked
    files = [Path(question_locks.__file__)]
    if lock_before:
        source = subprocess.run(
            ["git", "show", f"{lock_before}:{LOCKS}"],
            cwd=Path(__file__).parent.parent,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        files.append(folder / "question_locks_before.py")
        files[-1].write_text(source, "utf-8")
    helds = [question_locks.held, *(loaded(file).held for file in files[1:])]

    def fresh() -> tuple[ReplyStore, list[str]]:
        """A new store, and keys no earlier repeat used (scope: the repeat)."""
        round_[0] += 1
        store = ReplyStore(folder / f"store-{round_[0]}")
        scope = {"epoch": str(round_[0])}
        return store, [
            store.key(model, m, config, {**scope, "n": str(n)}) for n, m in enumerate(messages)
        ]

    def row(what: str, ms: float, before: float | str = "") -> None:
        rows.append({"step": what, "ms CPU/question": ms})
        if lock_before:
            rows[-1][f"ms CPU/question, {lock_before}"] = before

    row(
        "key",
        *cpu_ms(questions, repeats, lambda: [ReplyStore.key(model, m, config, {"epoch": "1"}) for m in messages]),
    )  # fmt: skip
    stores: list[tuple[ReplyStore, list[str]]] = []

    def puts() -> None:
        store, keys = fresh()
        stores.append((store, keys))
        for key in keys:
            store.put(key, REPLY)

    def misses() -> None:
        store, keys = fresh()
        for key in keys:
            store.get(key)

    row("get, a miss", *cpu_ms(questions, repeats, misses))
    row("put", *cpu_ms(questions, repeats, puts))
    store, keys = stores[-1]
    row("get, a hit", *cpu_ms(questions, repeats, lambda: [store.get(k) for k in keys]))

    async def locks(held: Any, store: ReplyStore, keys: list[str], during: bool) -> None:
        """Take and give back each key's lock in turn; `during`: while another question
        of the store is held, as in a run, where questions overlap."""
        async with held(store, "held-meanwhile") if during else nullcontext():
            for key in keys:
                async with held(store, key):
                    pass

    def locked(held: Any, during: bool, store: ReplyStore | None = None) -> Callable[[], None]:
        def run() -> None:
            fresh_store, keys = fresh()
            anyio.run(locks, held, store or fresh_store, keys, during)

        return run

    row(
        "lock, store used by this process alone, one question at a time",
        *cpu_ms(questions, repeats, *(locked(held, False) for held in helds)),
    )
    row(
        "lock, store used by this process alone, questions overlapping",
        *cpu_ms(questions, repeats, *(locked(held, True) for held in helds)),
    )
    others: list[subprocess.Popen[str]] = []
    shared: list[Callable[[], None]] = []
    try:
        for held, file in zip(helds, files, strict=True):  # each with a store of its own
            store, keys = fresh()
            others.append(
                subprocess.Popen(
                    [sys.executable, "-c", OTHER_USER, str(store.root), str(file), str(Path(__file__).parent)],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
            )  # fmt: skip
            assert others[-1].stdout is not None and others[-1].stdout.readline().strip() == "held"
            anyio.run(locks, held, store, keys[:1], False)  # joined once (waits for the other)
            shared.append(locked(held, True, store))
        row("lock, store shared with another process, questions overlapping",
            *cpu_ms(questions, repeats, *shared))  # fmt: skip
    finally:
        for other in others:
            other.communicate("stop\n", timeout=30)
    for entry in rows:
        entry["prompt chars"] = round(prompt_chars)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, required=True, help="a data folder like the paper's")
    parser.add_argument("--questions", type=int, default=2000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", type=Path)
    parser.add_argument(
        "--lock-before", metavar="REV", help="also time the question locks of git revision REV"
    )
    args = parser.parse_args()
    load = os.getloadavg()
    rows = measure(args.data, args.questions, args.repeats, args.lock_before)
    after = os.getloadavg()
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python "
        f"{platform.python_version()}; load (1 min) {load[0]:.1f} before, {after[0]:.1f} after\n"
    )
    print(table(rows), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"load": [load[0], after[0]], "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
