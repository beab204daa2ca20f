"""HoWToBench writing tasks and their scorers for inspect-ai, and the steps that build
such a benchmark from a corpus of your own (`build_benchmark`)."""

from howtobench.baselines.autoplan import autoplan
from howtobench.baselines.bleurt import bleurt
from howtobench.baselines.overlap import bleu_scorer, rouge_l
from howtobench.baselines.rubric import rubric
from howtobench.build.backconstruct import backconstruct_step
from howtobench.build.classify import classify_step
from howtobench.build.pipeline import BuildOptions, build_benchmark
from howtobench.build.quality import quality_step
from howtobench.build.runs import EvalOptions
from howtobench.build.screen import screen_step
from howtobench.tasks import completion, guide, howtobench_task, open_writing
from howtobench.tree.scorer import tree_of_writing

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
    "howtobench_task",
    "open_writing",
    "quality_step",
    "rouge_l",
    "rubric",
    "screen_step",
    "tree_of_writing",
]
