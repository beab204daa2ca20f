"""A campaign's plan: which instructions are rated, by whom, in what order, under the
paper's protocol (section 5.2; docs/studio.md). Every rater sees the instructions and
writings in an order of their own, so that neither position nor a neighbour's order tells
which model wrote what; everything random comes from one seed.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import zip_longest

from howtobench.annotate.campaign_options import Options
from howtobench.annotate.protocol import MAX_CANDIDATES
from howtobench.annotate.sources import Instruction
from howtobench.studies.log_files import StudyError

__all__ = ["Plan", "REFERENCE", "eligible", "plan", "sample_evenly"]

REFERENCE = ""  # the candidate that is the human reference (pick campaigns)
RATER_NAME_LIMIT = 40


@dataclass(frozen=True)
class Assignment:
    """One rater's instruction: its candidates (writer models, or `REFERENCE`) in the
    order this rater sees them."""

    rater: str
    infer_id: str
    candidates: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    """What `schema.create` writes; the assignments in the order the raters rate them."""

    kind: str
    reference: str
    seed: int
    language: str
    instructions: tuple[Instruction, ...]
    raters: tuple[str, ...]
    assignments: tuple[Assignment, ...]


def check_raters(names: Sequence[str], per_writing: int) -> tuple[str, ...]:
    """The rater names (blanks dropped by `commandline.names`), or a `StudyError` about
    `--raters`."""
    raters = tuple(names)
    if not raters:
        raise StudyError("--raters: give a comma list of names, e.g. ana,ben")
    twice = sorted(name for name, n in Counter(raters).items() if n > 1)
    if twice:
        raise StudyError(f"--raters: {', '.join(twice)} named more than once")
    odd = [n for n in raters if len(n) > RATER_NAME_LIMIT or not n.isprintable()]
    if odd:
        raise StudyError(
            f"--raters: {odd[0]!r} is not a usable name (printable, at most "
            f"{RATER_NAME_LIMIT} characters)"
        )
    if len(raters) < per_writing:
        raise StudyError(
            f"--raters: {len(raters)} rater(s) cannot give each writing {per_writing} "
            f"ratings by different raters (--raters-per-writing {per_writing})"
        )
    return raters


def eligible(instructions: Sequence[Instruction]) -> list[Instruction]:
    """The instructions that every writer of the logs wrote, in id order."""
    models = sorted({m for item in instructions for m in item.writings})
    if len(models) > MAX_CANDIDATES - 1:
        raise StudyError(
            f"the logs hold {len(models)} writers; one instruction's writings are rated side "
            f"by side, so at most {MAX_CANDIDATES - 1} can be ({', '.join(models)})"
        )
    complete = [item for item in instructions if len(item.writings) == len(models)]
    if not complete:
        raise StudyError(
            f"no instruction was written by all {len(models)} writers of the logs "
            f"({', '.join(models)}); give logs of the same instructions"
        )
    return sorted(complete, key=lambda item: item.infer_id)


def sample_evenly(
    items: Sequence[Instruction], count: int, rng: random.Random
) -> list[Instruction]:
    """`count` instructions evenly over the genres: taken round them one at a time, each
    genre's in a random order."""
    by_genre: dict[str, list[Instruction]] = {}
    for item in items:
        by_genre.setdefault(item.genre, []).append(item)
    queues = [by_genre[genre] for genre in sorted(by_genre)]
    for queue in queues:
        rng.shuffle(queue)
    rng.shuffle(queues)
    rounds = zip_longest(*(reversed(queue) for queue in queues))  # one of each genre a round
    return [item for taken in rounds for item in taken if item is not None][:count]


def assign(
    items: Sequence[Instruction], raters: Sequence[str], per_writing: int, rng: random.Random
) -> dict[str, list[str]]:
    """Rater -> the ids of their instructions: each instruction to the `per_writing` raters
    with the fewest writings so far, ties broken at random."""
    load = dict.fromkeys(raters, 0)
    given: dict[str, list[str]] = {rater: [] for rater in raters}
    for item in items:
        ranked = sorted(raters, key=lambda rater: (load[rater], rng.random()))
        for rater in ranked[:per_writing]:
            load[rater] += len(item.writings)
            given[rater].append(item.infer_id)
    return given


def plan(instructions: Sequence[Instruction], options: Options) -> Plan:
    """The campaign for these instructions, or a `StudyError` naming the bad option."""
    kind, reference, seed = options.kind, options.reference, options.seed
    names = check_raters(options.raters, options.per_writing)
    usable = eligible(instructions)
    wanted = len(usable) if options.count is None else options.count
    if wanted > len(usable):
        raise StudyError(
            f"--instructions {wanted}: the logs hold {len(usable)} instruction(s) written by "
            "every writer"
        )
    if kind == "pick" and reference == "hide" and len(usable[0].writings) < 2:
        raise StudyError("--kind pick: one writer and no reference leave nothing to choose from")
    rng = random.Random(seed)
    chosen = sample_evenly(usable, wanted, rng)
    by_id = {item.infer_id: item for item in chosen}
    assignments: list[Assignment] = []
    for rater, ids in assign(chosen, names, options.per_writing, rng).items():
        rng.shuffle(ids)
        for infer_id in ids:
            candidates = sorted(by_id[infer_id].writings)
            if kind == "pick" and reference == "show":
                candidates.append(REFERENCE)
            rng.shuffle(candidates)
            assignments.append(Assignment(rater, infer_id, tuple(candidates)))
    languages = Counter(item.language for item in chosen)
    language = "zh" if languages["zh"] * 2 >= len(chosen) else "en"
    return Plan(kind, reference, seed, language, tuple(chosen), names, tuple(assignments))
