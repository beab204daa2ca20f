"""The paper's analyses on inspect logs of our tasks: each study takes logs (or loaded
`Samples`) and returns a `StudyResult` of tables and figures.

One module per study, named for what it measures (`human_correlation` is `metaeval`,
`leaderboard_report` is `report`, ...). `commands.STUDIES` has one entry per study, from
which both the `howtobench` commands and the public names below come. The public names
load on first use (PEP 562, `commandline.lazy`), so that `howtobench --help` does not pay
for pandas, scipy, matplotlib or inspect-ai.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from howtobench.commandline.lazy import lazy_names
from howtobench.studies.commands import STUDIES

if TYPE_CHECKING:  # the types of the names below (re-exported, for mypy and ruff)
    from howtobench.studies.human_correlation import metaeval as metaeval
    from howtobench.studies.judge_agreement import judges as judges
    from howtobench.studies.leaderboard_report import report as report
    from howtobench.studies.length_bias import lengths as lengths
    from howtobench.studies.log_files import StudyError as StudyError
    from howtobench.studies.logs import Samples as Samples
    from howtobench.studies.logs import load_samples as load_samples
    from howtobench.studies.perturbation_effects import robustness as robustness
    from howtobench.studies.ratings import read_ratings as read_ratings
    from howtobench.studies.tables import StudyResult as StudyResult
    from howtobench.studies.tables import show as show
    from howtobench.studies.tables import write as write
    from howtobench.studies.token_costs import cost as cost
    from howtobench.studies.weight_consistency import consistency as consistency

# Each public name and the module that defines it: the studies, and what they stand on.
_HOMES = {
    **{name: study.module for name, study in STUDIES.items()},
    "Samples": "howtobench.studies.logs",
    "StudyError": "howtobench.studies.log_files",
    "StudyResult": "howtobench.studies.tables",
    "load_samples": "howtobench.studies.logs",
    "read_ratings": "howtobench.studies.ratings",
    "show": "howtobench.studies.tables",
    "write": "howtobench.studies.tables",
}

__all__ = sorted(_HOMES)  # derived from the table above

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
