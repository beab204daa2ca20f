"""One row per judged writing from inspect's own `samples_df`: the writer, the task, the
genre, and ToW's overall score with every node and leaf as a column of its own
(docs/lm-eval.md, "One row per writing"). This module imports inspect's analysis (and
pandas) when imported: the registry never imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from inspect_ai.analysis import Column, EvalColumn, SampleColumn, samples_df

from howtobench.vocabulary.metadata import SampleKey, TaskKey
from howtobench.vocabulary.words import writer_of

if TYPE_CHECKING:
    import pandas as pd
    from inspect_ai.log import EvalLog

__all__ = ["TowColumns", "tow_samples"]


TowColumns: list[Column] = [
    EvalColumn(
        "writer", path="eval.model", required=True, value=lambda model: writer_of(str(model))
    ),
    EvalColumn("task", path=f"eval.metadata.{TaskKey.HOWTOBENCH_TASK}"),
    SampleColumn("id", path="id", required=True, type=str),
    SampleColumn("epoch", path="epoch", required=True),
    SampleColumn("genre", path=f"metadata.{SampleKey.GENRE}"),
    SampleColumn("writing", path=f"metadata.{SampleKey.WRITING}.state"),
    SampleColumn("tow_*", path="scores.tow.value"),
    SampleColumn("rouge_l", path="scores.rouge_l.value"),
    SampleColumn("*", path="scores.bleu.value"),  # bleu_1, bleu_4
]
"""Column definitions for `samples_df` (listed in docs/lm-eval.md)."""


def tow_samples(logs: str | Sequence[str] | Sequence[EvalLog]) -> pd.DataFrame:
    """`samples_df(logs, columns=TowColumns)`: one row per sample of the logs (log files,
    folders of them, or logs read already)."""
    return samples_df(logs, columns=TowColumns, quiet=True)
