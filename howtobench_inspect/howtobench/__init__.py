"""HoWToBench writing tasks and their scorers for inspect-ai."""

from howtobench.baselines.autoplan import autoplan
from howtobench.baselines.bleurt import bleurt
from howtobench.baselines.overlap import bleu_scorer, rouge_l
from howtobench.baselines.rubric import rubric
from howtobench.tasks import completion, guide, howtobench_task, open_writing
from howtobench.tree.scorer import tree_of_writing

__all__ = [
    "autoplan",
    "bleurt",
    "bleu_scorer",
    "completion",
    "guide",
    "howtobench_task",
    "open_writing",
    "rouge_l",
    "rubric",
    "tree_of_writing",
]
