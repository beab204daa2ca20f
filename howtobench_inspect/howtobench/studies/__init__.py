"""The paper's analyses on inspect logs of our tasks: each study takes logs (or loaded
`Samples`) and returns a `StudyResult` of tables and figures.

One module per study, named for what it measures: `human_correlation` (`metaeval`, Table
3), `judge_agreement` (`judges`, figure 4), `weight_consistency` (`consistency`, section
5.3), `perturbation_effects` (`robustness`, Table 7), `length_bias` (`lengths`, Table 6),
`leaderboard_report` (`report`, Table 4; the board's intervals in `leaderboard`, its page
in `page`) and `cost`. They stand on `logs` (reading logs from any fsspec URL), `runs`,
`ratings`, `correlation`, `bootstrap`, `weighting`, `plots` and `tables` (showing and
writing a result); `plans` exports judge plans. `commands` registers the studies and
`plan export` as `howtobench` commands, from light modules alone.

The public names load on first use (PEP 562, `howtobench.lazy`), so that `howtobench
--help` and the commands' parsers do not pay for pandas, scipy, matplotlib or inspect-ai:
`from howtobench.studies import report` imports the report's module then. No module is
named as a public name, so `report` is the function whatever has been imported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from howtobench.lazy import lazy_names

if TYPE_CHECKING:
    from howtobench.studies.human_correlation import metaeval
    from howtobench.studies.judge_agreement import judges
    from howtobench.studies.leaderboard_report import report
    from howtobench.studies.length_bias import lengths
    from howtobench.studies.logs import Samples, StudyError, load_samples
    from howtobench.studies.perturbation_effects import robustness
    from howtobench.studies.ratings import read_ratings
    from howtobench.studies.tables import StudyResult, show, write
    from howtobench.studies.weight_consistency import consistency

# Each public name and the module that defines it.
_HOMES = {
    "Samples": "howtobench.studies.logs",
    "StudyError": "howtobench.studies.logs",
    "StudyResult": "howtobench.studies.tables",
    "consistency": "howtobench.studies.weight_consistency",
    "judges": "howtobench.studies.judge_agreement",
    "lengths": "howtobench.studies.length_bias",
    "load_samples": "howtobench.studies.logs",
    "metaeval": "howtobench.studies.human_correlation",
    "read_ratings": "howtobench.studies.ratings",
    "report": "howtobench.studies.leaderboard_report",
    "robustness": "howtobench.studies.perturbation_effects",
    "show": "howtobench.studies.tables",
    "write": "howtobench.studies.tables",
}

__all__ = [
    "Samples",
    "StudyError",
    "StudyResult",
    "consistency",
    "judges",
    "lengths",
    "load_samples",
    "metaeval",
    "read_ratings",
    "report",
    "robustness",
    "show",
    "write",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
