"""`howtobench build`: a corpus of human texts in, a benchmark data folder out.

The paper's steps (sections 4.3-4.6), after one of ours that drops second copies before
any model is asked. The LLM steps run with `eval_set` (`construct.runs`): resumable,
cached, every call in the logs. Every corpus text ends up in exactly one item or one line
of `rejected.jsonl`.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from howtobench.commandline.constants import LOCK_FILE
from howtobench.construct.backconstruct import backconstruct_step
from howtobench.construct.classify import classify_step
from howtobench.construct.completion import Gap, choose_gap
from howtobench.construct.corpus import CorpusText, read_corpus, write_jsonl
from howtobench.construct.deidentify import deidentified, masked
from howtobench.construct.duplicates import Duplicates, find_duplicates
from howtobench.construct.items import Item, completion_item, constructed_item
from howtobench.construct.ledger import (
    BELOW_THRESHOLD,
    DUPLICATE,
    FLAGGED,
    NO_REPLY,
    NO_TASK,
    OVER_CAP,
    Ledger,
)
from howtobench.construct.manifest import manifest
from howtobench.construct.options import BuildOptions
from howtobench.construct.quality import quality_step
from howtobench.construct.report import summary
from howtobench.construct.runs import EvalOptions, Runs
from howtobench.construct.screen import HARMFUL, PERSONAL, screen_step
from howtobench.construct.selection import assign_tasks, cap_per_genre
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.words import TASKS

__all__ = ["BuildResult", "build_benchmark"]


@dataclass(frozen=True)
class BuildResult:
    """Where the build wrote what, and how long each step took."""

    out: Path
    items: dict[str, int]  # by task
    rejected: int
    seconds: dict[str, float] = field(default_factory=dict)  # by step


def build_benchmark(
    corpus: Path, out: Path, evals: EvalOptions, options: BuildOptions | None = None
) -> BuildResult:
    """Build a benchmark folder from `corpus`, the LLM steps run as `evals` says.

    Raises `UserError` (`DataError` for a bad corpus line) before any call, and
    `BuildIncomplete` when a step did not finish (run again to resume).
    """
    texts = read_corpus(corpus)
    duplicates = find_duplicates(texts)  # before any step, so no call is paid for a copy
    evals.check()
    out.mkdir(parents=True, exist_ok=True)
    # two builds in one folder would step on each other's eval_set logs
    try:
        with FileLock(out / LOCK_FILE, timeout=0):
            return _build(texts, duplicates, corpus, out, evals, options or BuildOptions())
    except Timeout:
        raise UserError(
            f"--out {out}: another howtobench build is writing this folder; "
            "wait for it to finish, or give another --out"
        ) from None


def _build(
    texts: list[CorpusText],
    duplicates: Duplicates,
    corpus: Path,
    out: Path,
    evals: EvalOptions,
    options: BuildOptions,
) -> BuildResult:
    ledger = Ledger(texts)
    ledger.near = duplicates.near
    runs = Runs(out, evals)
    texts = _deduplicated(duplicates, ledger)
    texts = _classified(texts, ledger, runs)
    texts = _rated(texts, ledger, runs, options.threshold)
    if options.per_genre is not None:
        texts = _capped(texts, ledger, options.per_genre, options.seed)
    items = _items(texts, ledger, runs, options)
    _screened(items, ledger, runs)
    ledger.check_complete()
    digest = hashlib.sha256(corpus.read_bytes()).hexdigest()
    corpus_facts = {"path": str(corpus), "sha256": digest, "texts": len(ledger.texts)}
    facts = manifest(ledger, options, runs, corpus_facts, str(evals.model))
    _write(out, ledger, facts)
    return BuildResult(
        out=out,
        items=facts["counts"]["items"],
        rejected=len(ledger.rejected),
        seconds=dict(runs.seconds),
    )


def _deduplicated(duplicates: Duplicates, ledger: Ledger) -> list[CorpusText]:
    """A second copy of a text is out, naming the text kept; near-duplicates stay."""
    for copy, kept in duplicates.copies:
        reason = (
            f"the same text as '{kept.id}' (line {kept.line}) once whitespace, punctuation "
            "and case are set aside; the first is kept"
        )
        ledger.reject(copy, "deduplicate", DUPLICATE, reason, duplicate_of=kept.id)
    return duplicates.kept


def _classified(texts: list[CorpusText], ledger: Ledger, runs: Runs) -> list[CorpusText]:
    """Texts without a genre get the classifier's; those it could not classify are out."""
    unlabelled = [t for t in texts if not t.genre_raw]
    if not unlabelled:
        return texts
    path = runs.input("classify", (t.record() for t in unlabelled))
    outcomes = runs.run("classify", classify_step(corpus=str(path)))
    genres: dict[str, str] = {}
    for text in unlabelled:
        outcome = outcomes[text.id]
        if outcome.value is None:
            ledger.reject(text, "classify", NO_REPLY, str(outcome.error))
        else:
            genres[text.id] = outcome.value["genre"]
    return [replace(t, genre_raw=genres.get(t.id, t.genre_raw)) for t in ledger.live(texts)]


def _rated(texts: list[CorpusText], ledger: Ledger, runs: Runs, threshold: int) -> list[CorpusText]:
    """Texts rated below `threshold`, or not rated at all, are out."""
    path = runs.input("quality", (t.record() for t in texts))
    outcomes = runs.run("quality", quality_step(corpus=str(path), threshold=threshold))
    for text in texts:
        outcome = outcomes[text.id]
        if outcome.value is None:
            ledger.reject(text, "quality", NO_REPLY, str(outcome.error))
            continue
        score = outcome.value["score"]
        ledger.quality[text.id] = score
        if score < threshold:
            reason = (
                f"quality {score} is below the threshold {threshold}: {outcome.value['reason']}"
            )
            ledger.reject(text, "quality", BELOW_THRESHOLD, reason.rstrip(": "), score=score)
    return ledger.live(texts)


def _capped(texts: list[CorpusText], ledger: Ledger, limit: int, seed: int) -> list[CorpusText]:
    kept, left_out = cap_per_genre(texts, limit, seed)
    for text in left_out:
        reason = f"genre {text.genre} has more than {limit} kept texts (--per-genre {limit})"
        ledger.reject(text, "per_genre", OVER_CAP, reason)
    return kept


def _items(
    texts: list[CorpusText], ledger: Ledger, runs: Runs, options: BuildOptions
) -> list[Item]:
    """Each text's item for its task; a text that fits no task, or was not
    back-constructed, is out."""
    gaps: dict[str, Gap | str] = {}
    if "completion" in options.tasks:
        gaps = {t.id: choose_gap(t.text, options.seed, t.id) for t in texts}
    assigned, unfit = assign_tasks(texts, options.tasks, options.seed, gaps)
    items: list[Item] = []
    for text in texts:
        task = assigned.get(text.id)
        gap = gaps.get(text.id)
        if task is None:
            ledger.reject(text, "assign", NO_TASK, unfit[text.id])
        elif task == "completion" and isinstance(gap, Gap):
            items.append(completion_item(text, gap))
    constructed = [t for t in texts if assigned.get(t.id) in ("guide", "open")]
    if constructed:
        path = runs.input("backconstruct", (t.record() for t in constructed))
        outcomes = runs.run(
            "backconstruct", backconstruct_step(corpus=str(path), seed=options.seed)
        )
        for text in constructed:
            outcome = outcomes[text.id]
            if outcome.value is None:
                ledger.reject(text, "backconstruct", NO_REPLY, str(outcome.error))
            else:
                items.append(constructed_item(text, assigned[text.id], outcome.value))
    return items


def _screened(items: list[Item], ledger: Ledger, runs: Runs) -> None:
    """Items with unsafe content or advertising, or not screened, are out; the rest have
    their personal details replaced (in a rejected item's quotes too)."""
    if not items:
        return
    path = runs.input("screen", (item.user_record() for item in items))
    outcomes = runs.run("screen", screen_step(dataset=str(path)))
    for item in items:
        outcome = outcomes[item.infer_id]
        if outcome.value is None:
            ledger.reject(item.text, "screen", NO_REPLY, str(outcome.error), task=item.task)
            continue
        flags = outcome.value["flags"]
        personal = flags[PERSONAL]
        harmful = {
            kind: [masked(q, personal, item.text.language) for q in flags[kind]]
            for kind in HARMFUL
            if flags[kind]
        }
        if harmful:
            found = "; ".join(f"{kind}: {' | '.join(quotes)}" for kind, quotes in harmful.items())
            details = Counter(detail["kind"] for detail in personal)
            extra = {"personal_info": dict(details)} if details else {}
            ledger.reject(
                item.text, "screen", FLAGGED, found, task=item.task, flags=harmful, **extra
            )
        else:
            ledger.keep(*deidentified(item, personal))


def _write(out: Path, ledger: Ledger, facts: dict[str, Any]) -> None:
    """The benchmark files; a task without items has no `aligned.jsonl` (one left by an
    earlier build of this folder is removed, so it cannot pass for this build's)."""
    order = list(ledger.texts)
    items = [ledger.items[i] for i in order if i in ledger.items]
    for task in TASKS:
        path = out / task / "aligned.jsonl"
        chosen = [item.aligned() for item in items if item.task == task]
        if chosen:
            write_jsonl(path, chosen)
        elif path.is_file():
            path.unlink()
    write_jsonl(out / "items.jsonl", (item.user_record() for item in items))
    write_jsonl(
        out / "rejected.jsonl", (ledger.rejected[i].record() for i in order if i in ledger.rejected)
    )
    (out / "manifest.json").write_text(
        json.dumps(facts, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
    )
    (out / "summary.md").write_text(summary(facts), encoding="utf-8")
