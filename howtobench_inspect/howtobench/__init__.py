"""HoWToBench writing tasks and their scorers for inspect-ai, and the steps that build
such a benchmark from a corpus of your own (`build_benchmark`).

The public names load on first use (PEP 562), so that `import howtobench`, the
`howtobench` command's parser and its `--help` do not pay for inspect-ai, pandas, scipy
or matplotlib; `from howtobench import completion` imports the tasks then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from howtobench.commandline.lazy import lazy_names

if TYPE_CHECKING:  # the types of the names below (re-exported, for mypy and ruff)
    from howtobench.baselines.autoplan import autoplan as autoplan
    from howtobench.baselines.bleurt import bleurt as bleurt
    from howtobench.baselines.overlap import bleu_scorer as bleu_scorer
    from howtobench.baselines.overlap import rouge_l as rouge_l
    from howtobench.baselines.rubric import rubric as rubric
    from howtobench.construct.backconstruct import backconstruct_step as backconstruct_step
    from howtobench.construct.classify import classify_step as classify_step
    from howtobench.construct.options import BuildOptions as BuildOptions
    from howtobench.construct.pipeline import build_benchmark as build_benchmark
    from howtobench.construct.quality import quality_step as quality_step
    from howtobench.construct.runs import EvalOptions as EvalOptions
    from howtobench.construct.screen import screen_step as screen_step
    from howtobench.parameters.writing import writing_parameters as writing_parameters
    from howtobench.tasks import completion as completion
    from howtobench.tasks import guide as guide
    from howtobench.tasks import negotiate as negotiate
    from howtobench.tasks import open_writing as open_writing
    from howtobench.tasks import writing_task as writing_task
    from howtobench.tree.scorer import tree_of_writing as tree_of_writing

# Each public name and the module that defines it.
_HOMES = {
    "BuildOptions": "howtobench.construct.options",
    "EvalOptions": "howtobench.construct.runs",
    "autoplan": "howtobench.baselines.autoplan",
    "backconstruct_step": "howtobench.construct.backconstruct",
    "bleurt": "howtobench.baselines.bleurt",
    "bleu_scorer": "howtobench.baselines.overlap",
    "build_benchmark": "howtobench.construct.pipeline",
    "classify_step": "howtobench.construct.classify",
    "completion": "howtobench.tasks",
    "guide": "howtobench.tasks",
    "negotiate": "howtobench.tasks",
    "open_writing": "howtobench.tasks",
    "quality_step": "howtobench.construct.quality",
    "rouge_l": "howtobench.baselines.overlap",
    "rubric": "howtobench.baselines.rubric",
    "screen_step": "howtobench.construct.screen",
    "tree_of_writing": "howtobench.tree.scorer",
    "writing_parameters": "howtobench.parameters.writing",
    "writing_task": "howtobench.tasks",
}

__all__ = sorted(_HOMES)  # derived from the table above


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
