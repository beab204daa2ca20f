"""Entry point of group `inspect_ai`: makes `howtobench/<task>`, the build steps
(`howtobench/classify`, `quality`, `backconstruct`, `screen`) and our scorers known."""

# ruff: noqa: F401
from howtobench.baselines.autoplan import autoplan
from howtobench.baselines.bleurt import bleurt
from howtobench.baselines.overlap import bleu_scorer, rouge_l
from howtobench.baselines.rubric import rubric
from howtobench.build.backconstruct import backconstruct_step
from howtobench.build.classify import classify_step
from howtobench.build.quality import quality_step
from howtobench.build.screen import screen_step
from howtobench.tasks import completion, guide, negotiate, open_writing
from howtobench.tree.negotiation import negotiation
from howtobench.tree.scorer import tree_of_writing
