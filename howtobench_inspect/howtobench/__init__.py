"""HoWToBench writing tasks and their scorers for inspect-ai, and the steps that build
such a benchmark from a corpus of your own (`build_benchmark`).

The public names load on first use (PEP 562), so that `import howtobench`, the
`howtobench` command's parser and its `--help` do not pay for inspect-ai, pandas, scipy
or matplotlib; `from howtobench import completion` imports the tasks then.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from howtobench.commandline.lazy import lazy_names

if TYPE_CHECKING:
    from howtobench.baselines.autoplan import autoplan
    from howtobench.baselines.bleurt import bleurt
    from howtobench.baselines.overlap import bleu_scorer, rouge_l
    from howtobench.baselines.rubric import rubric
    from howtobench.construct.backconstruct import backconstruct_step
    from howtobench.construct.classify import classify_step
    from howtobench.construct.options import BuildOptions
    from howtobench.construct.pipeline import build_benchmark
    from howtobench.construct.quality import quality_step
    from howtobench.construct.runs import EvalOptions
    from howtobench.construct.screen import screen_step
    from howtobench.parameters.writing import writing_parameters
    from howtobench.tasks import completion, guide, negotiate, open_writing, writing_task
    from howtobench.tree.scorer import tree_of_writing

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

__all__ = [
    "BuildOptions",
    "EvalOptions",
    "autoplan",
    "backconstruct_step",
    "bleurt",
    "bleu_scorer",
    "build_benchmark",
    "classify_step",
    "completion",
    "guide",
    "negotiate",
    "open_writing",
    "quality_step",
    "rouge_l",
    "rubric",
    "screen_step",
    "tree_of_writing",
    "writing_parameters",
    "writing_task",
]


__getattr__, __dir__ = lazy_names(__name__, _HOMES)
