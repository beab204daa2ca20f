"""The rating studio under the paper's load: 36 raters at once on MetaEditor's shape.

    python bench/annotate_bench.py                      # 221 instructions x 9 writings x 2 raters
    python bench/annotate_bench.py --json studio.json   # keep the numbers too
    python bench/annotate_bench.py --pause 0.25         # raters who pause before each writing

A campaign of made-up instructions and writings (Chinese text of realistic length, the
paper's 67/83/71 split over the tasks, 12 genres) is written to a temporary file and
served by `howtobench annotate serve` in a process of its own. Then every rater, each in
a thread with a keep-alive connection of their own, starts at the same moment: opens
their link (the HTML, then `GET /api/assignments`: the list of their instructions and
ratings, then `GET /api/assignments/<id>`: the texts of the instruction they are at) and
saves every writing of that instruction twice, as the page's autosave does (a score,
then a note); then opens the link again for the next instruction, as a rater coming back
does, and so on, with no pause between requests: the worst case, far denser than people
rating (`--pause S` waits S seconds before each writing's two saves). Reported per kind
of request, and per page load (the three requests summed; once when all raters open
their links at the same instant, then while the others save): the server's own time
(its `Server-Timing` header: from the request reaching the app to the response
starting, lock waits and the fsync of each save included) and the time the client
waited, as median and 99th percentile; then the campaign file's size with its ratings.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import random
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from bench import table  # bench/bench.py: the Markdown table of every benchmark
from howtobench.annotate.campaign import Options, plan
from howtobench.annotate.schema import create
from howtobench.annotate.sources import Instruction
from howtobench.annotate.store import Store
from howtobench.vocabulary.genres import CANONICAL_GENRES

TASK_SHARE = {"completion": 67, "guide": 83, "open": 71}  # MetaEditor's split (section 5.2)
# a pool of common characters and punctuation for made-up Chinese text
CHARACTERS = (
    "的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质争空万收率"
    + "，。；：！？、"
)


# the requests timed, then what opening a rater's link costs (the page, the list and one
# instruction's texts, summed): when all raters open theirs at the same instant, and
# later, when a rater comes back while the others save
ROWS: tuple[str, ...] = (
    "html",
    "assignments",
    "instruction",
    "save",
    "page load, all at once",
    "page load, others working",
)


def made_up(rng: random.Random, length: int) -> str:
    """Text of about `length` characters in paragraphs."""
    paragraphs = []
    while sum(map(len, paragraphs)) < length:
        paragraphs.append("".join(rng.choices(CHARACTERS, k=rng.randint(80, 240))))
    return "\n\n".join(paragraphs)


def instructions(count: int, writers: int, rng: random.Random) -> list[Instruction]:
    """`count` instructions with the paper's task split, round the 12 genres, each written
    by `writers` models; writings of 300-3,000 characters (completions 60-400)."""
    total = sum(TASK_SHARE.values())
    tasks = [t for t, n in TASK_SHARE.items() for _ in range(round(n * count / total))]
    tasks = (tasks + ["open"] * count)[:count]
    found = []
    for i, task in enumerate(tasks):
        short = task == "completion"
        grounding = {
            "completion": made_up(rng, 600) + "\n\n[fill in the blank]\n\n" + made_up(rng, 600),
            "guide": made_up(rng, 200),
            "open": "",
        }[task]
        found.append(
            Instruction(
                infer_id=f"bench_{i}",
                task=task,
                genre=CANONICAL_GENRES[i % len(CANONICAL_GENRES)],
                language="zh",
                instruction=made_up(rng, 60),
                grounding=grounding,
                reference=made_up(rng, 200 if short else 1500),
                writings={
                    f"writer-{k}": made_up(
                        rng, rng.randint(60, 400) if short else rng.randint(300, 3000)
                    )
                    for k in range(writers)
                },
            )
        )
    return found


class Rater(threading.Thread):
    """One rater: open the link, save every writing of an instruction twice, then open the
    link again for the next instruction (as a rater coming back does), timing it all."""

    def __init__(self, base: str, token: str, start: threading.Barrier, pause: float) -> None:
        super().__init__(daemon=True)
        parts = urlsplit(base)
        self.host, self.port = parts.hostname or "127.0.0.1", parts.port or 80
        self.token = token
        self.start_together = start
        self.pause = pause
        self.timings: dict[str, list[tuple[float, float]]] = {kind: [] for kind in ROWS}
        self.failures: list[str] = []

    def request(
        self,
        connection: http.client.HTTPConnection,
        kind: str,
        method: str,
        path: str,
        body: Any = None,
    ) -> Any:
        """The JSON answer (None for the page); its times go to `kind`."""
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json"}
        payload = None if body is None else json.dumps(body).encode("utf-8")
        began = time.perf_counter()
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        data = response.read()
        waited = (time.perf_counter() - began) * 1000
        timing = re.search(r"dur=([0-9.]+)", response.getheader("Server-Timing") or "")
        if response.status != 200 or not timing:
            self.failures.append(f"{method} {path}: {response.status}")
        else:
            self.timings[kind].append((float(timing.group(1)), waited))
        return json.loads(data) if method != "GET" or path.startswith("/api/") else None

    def open_link(self, connection: http.client.HTTPConnection, position: int, kind: str) -> Any:
        """The page, the list and the texts of the instruction at `position`, their times
        summed under `kind`; returns the list."""
        self.request(connection, "html", "GET", f"/r/{self.token}")
        found = self.request(connection, "assignments", "GET", "/api/assignments")
        item = found["instructions"][position]
        self.request(connection, "instruction", "GET", f"/api/assignments/{item['id']}")
        last = [self.timings[k][-1] for k in ("html", "assignments", "instruction")]
        self.timings[kind].append((sum(s for s, _ in last), sum(c for _, c in last)))
        return found

    def run(self) -> None:
        connection = http.client.HTTPConnection(self.host, self.port, timeout=60)
        rng = random.Random(self.token)
        self.start_together.wait()
        found = self.open_link(connection, 0, "page load, all at once")
        for position, item in enumerate(found["instructions"]):
            if position:
                self.open_link(connection, position, "page load, others working")
            for writing in item["writings"]:
                score = rng.randint(1, 5)
                rating = {"score": score, "errors": ["off_request"] if score < 3 else []}
                path = f"/api/ratings/{writing['id']}"
                time.sleep(self.pause)
                self.request(connection, "save", "PUT", path, rating)
                note = {**rating, "note": "略显空泛" * rng.randint(1, 20)}
                self.request(connection, "save", "PUT", path, note)
        connection.close()


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def measure(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        db = Path(folder) / "campaign.db"
        began = time.perf_counter()
        raters = tuple(f"rater-{i + 1:02d}" for i in range(args.raters))
        options = Options(raters=raters, per_writing=args.per_writing, seed=args.seed)
        made = plan(instructions(args.instructions, args.writers, rng), options)
        create(db, made)
        created = time.perf_counter() - began
        empty = db.stat().st_size  # texts and plan, before any rating
        store = Store(db)
        tokens = {name: token for name, (_, token) in store.settings().raters.items()}
        store.close()
        server = subprocess.Popen(
            [sys.executable, "-m", "howtobench.cli", "annotate", "serve", str(db), "--port", "0"],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            base = re.search(r"at (http://\S+) ", server.stdout.readline())
            assert base, "the server did not start"
            together = threading.Barrier(len(tokens))
            threads = [
                Rater(base.group(1), token, together, args.pause) for token in tokens.values()
            ]
            began = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            wall = time.perf_counter() - began
        finally:
            server.terminate()
            server.wait(timeout=30)
        failures = [f for thread in threads for f in thread.failures]
        size = sum(p.stat().st_size for p in Path(folder).glob("campaign.db*"))
        store = Store(db)
        kept = len(store.ratings())
        store.close()  # the last connection folds the WAL into the file
        folded = db.stat().st_size
        rows = []
        for kind in ROWS:
            pairs = [t for thread in threads for t in thread.timings[kind]]
            server_ms = [s for s, _ in pairs]
            client_ms = [c for _, c in pairs]
            rows.append(
                {
                    "request": kind,
                    "n": len(pairs),
                    "server median ms": round(statistics.median(server_ms), 2),
                    "server p99 ms": round(percentile(server_ms, 0.99), 2),
                    "client median ms": round(statistics.median(client_ms), 2),
                    "client p99 ms": round(percentile(client_ms, 0.99), 2),
                }
            )
        saves = rows[ROWS.index("save")]["n"]
        return {
            "machine": f"{platform.platform()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "campaign": f"{args.instructions} instructions x {args.writers} writings x {args.per_writing} raters, {args.raters} raters, pause {args.pause} s",
            "created_s": round(created, 2),
            "wall_s": round(wall, 2),
            "saves_per_s": round(saves / wall, 1),
            "ratings_kept": kept,
            "failures": failures[:5],
            "db_bytes": size,
            "db_bytes_folded": folded,
            "db_bytes_before_ratings": empty,
            "rows": rows,
        }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--raters", type=int, default=36)
    parser.add_argument("--instructions", type=int, default=221)
    parser.add_argument("--writers", type=int, default=9)
    parser.add_argument("--per-writing", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--pause", type=float, default=0.0, metavar="S", help="seconds before each writing's saves"
    )
    parser.add_argument("--json", type=Path, metavar="FILE", help="also write the numbers here")
    args = parser.parse_args()
    found = measure(args)
    print(f"{found['campaign']}; {found['machine']}")
    print(
        f"campaign file made in {found['created_s']} s; all raters done in {found['wall_s']} s "
        f"({found['saves_per_s']} saves/s); {found['ratings_kept']} ratings kept; "
        f"file {found['db_bytes_before_ratings'] / 1e6:.1f} MB before the ratings, "
        f"{found['db_bytes'] / 1e6:.1f} MB after with its WAL, {found['db_bytes_folded'] / 1e6:.1f} MB "
        f"once that is folded in; failures: {len(found['failures'])}"
    )
    print(table(found["rows"]))
    if args.json:
        args.json.write_text(json.dumps(found, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
