"""The published benchmark on the Hugging Face hub (the default source), checked by content
against the data published with the paper (`dataset.fingerprint`). It holds no model's
writings, so replay needs a local source; `datasets` is imported on first use.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from functools import cached_property
from typing import Any, NoReturn

from howtobench.dataset.base import DataSource
from howtobench.dataset.fingerprint import difference
from howtobench.dataset.records import DataError, WritingRecord, parse_benchmark_record
from howtobench.vocabulary.reachable import unreachable
from howtobench.vocabulary.words import TASKS

__all__ = [
    "HF_REPO",
    "HF_REVISION",
    "HUB_UNREACHABLE_HELP",
    "HubSource",
    "logger",
]

logger = logging.getLogger(__name__)

HF_REPO = "andrewzhuoerfeng/HowToBench"
# The hub repository publishes no tags or releases, so the revision is its moving `main`;
# what pins the data is its content: `records` checks each task against the fingerprint
# of the paper's published data (`howtobench.dataset.fingerprint.PUBLISHED`).
HF_REVISION = "main"
PAPER_REPOSITORY = "https://github.com/ZhuoerFeng/ACL2026-Tree-of-Writing"
_PAPER_DATA = f"git clone {PAPER_REPOSITORY}, then -T dataset=ACL2026-Tree-of-Writing/data"
# Offline, the hub cannot be read: say what works without it, in one line.
HUB_UNREACHABLE_HELP = (
    "without network access run -T dataset=demo, or use the paper's data folder: "
    f"{_PAPER_DATA} (replay needs that folder too)"
)
SOURCE = f"hf://{HF_REPO}@{HF_REVISION}"


class HubSource(DataSource):
    id_field = "infer_id"
    stores_writings = False

    def __init__(self) -> None:
        super().__init__("hub")

    @cached_property
    def _rows(self) -> list[Mapping[str, Any]]:
        """The split's rows (needs network access on first use).

        The hub is tried once first (`vocabulary.reachable`; its client retries for 32 s
        offline), unless `HF_HUB_OFFLINE=1`; whatever `load_dataset` raises then becomes a
        one-line `DataError` saying what works offline.
        """
        from datasets import config, load_dataset
        from huggingface_hub import constants

        why = None if config.HF_HUB_OFFLINE else unreachable(constants.ENDPOINT)
        if why:
            raise DataError(
                SOURCE,
                f"cannot reach the hub at {constants.ENDPOINT} ({why}); {HUB_UNREACHABLE_HELP}; "
                "or read a copy already downloaded with HF_HUB_OFFLINE=1",
            )
        try:
            rows = load_dataset(HF_REPO, revision=HF_REVISION, split="train")
        except Exception as err:  # the datasets library raises many kinds; all mean "no data"
            reason = " ".join(str(err).split())[:160] or "no message"
            raise DataError(
                SOURCE,
                f"cannot load the benchmark ({type(err).__name__}: {reason}); "
                + HUB_UNREACHABLE_HELP,
            ) from err
        return list(rows)

    def tasks(self) -> list[str]:
        return list(TASKS)

    def models(self, task: str) -> list[str]:
        return []

    def generations(self, task: str, model: str) -> dict[str, str]:
        _no_writings()

    def _read(self, task: str) -> list[WritingRecord]:
        """Records that differ from the paper's published data are used, with one warning
        line saying what differs (the hub's `main` may have changed since the paper)."""
        records = (
            parse_benchmark_record(row, SOURCE, index)
            for index, row in enumerate(self._rows, start=1)
        )
        kept = [r for r in records if r.task == task]
        differs = difference(task, kept)
        if differs:
            logger.warning("%s: %s; scores may not compare with the paper's", SOURCE, differs)
        return kept

    def _stored_at(self, task: str, model: str) -> tuple[str, str]:
        _no_writings()


def _no_writings() -> NoReturn:
    raise DataError(
        f"hf://{HF_REPO}",
        f"replay needs stored generations: point dataset= at a local data folder ({_PAPER_DATA})"
        " or a JSONL file with 'generations'",
    )
