"""The paper's analyses on inspect logs of our tasks: each study takes logs (or loaded
`Samples`) and returns a `StudyResult` of tables and figures; `howtobench.cli` runs them.
"""

from howtobench.studies.consistency import consistency
from howtobench.studies.judges import judges
from howtobench.studies.lengths import lengths
from howtobench.studies.logs import Samples, StudyError, load_samples
from howtobench.studies.metaeval import metaeval
from howtobench.studies.ratings import read_ratings
from howtobench.studies.report import report
from howtobench.studies.robustness import robustness
from howtobench.studies.tables import StudyResult, show, write

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
