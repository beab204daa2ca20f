"""The paper's analyses on inspect logs of our tasks: each study takes logs (or loaded
`Samples`) and returns a `StudyResult` of tables and figures.

One module per study, named for what it measures: `human_correlation` (`metaeval`, Table
3), `judge_agreement` (`judges`, figure 4), `weight_consistency` (`consistency`, section
5.3), `perturbation_effects` (`robustness`, Table 7), `length_bias` (`lengths`, Table 6),
`leaderboard_report` (`report`, Table 4; the board's intervals in `leaderboard`, what
it stands on in `provenance`, what its writers wrote in `writings`, its page in `page`) and `token_costs` (`cost`). They stand
on `log_files` (finding and reading logs, from any fsspec URL), `logs` (their samples as
one table), `runs`, `ratings`, `correlation`, `bootstrap`, `weighting`, `plots` and
`tables` (showing and writing a result); `plans` exports judge plans. `commands` registers the studies and
`plan export` as `howtobench` commands, from light modules alone: its table `STUDIES` has
one entry per study (its module, summary, options and call), from which the commands and
the public names below both come.

The public names load on first use (PEP 562, `howtobench.commandline.lazy`), so that `howtobench
--help` and the commands' parsers do not pay for pandas, scipy, matplotlib or inspect-ai:
`from howtobench.studies import report` imports the report's module then. No module is
named as a public name, so `report` is the function whatever has been imported.
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

# Each public name and the module that defines it: every study of the command table
# (`commands.STUDIES`, one entry per study), and what the studies stand on.
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
