"""Entry point of group `inspect_ai`: makes our tasks, scorers and the `replay/` and
`towsim/` model providers known.

inspect imports this module whole at the start of every eval (it cannot register a name
when it is asked for), so what these modules import must stay light: not the construction
pipeline (`howtobench build` registers its steps itself), the studies, the studio, the
simulator, the judge check or the workers, nor pandas, scipy or matplotlib
(`tests/test_startup.py` checks it).
"""

# ruff: noqa: F401
from inspect_ai.model import ModelAPI, modelapi

from howtobench.baselines.autoplan import autoplan
from howtobench.baselines.bleurt import bleurt
from howtobench.baselines.overlap import bleu_scorer, rouge_l
from howtobench.baselines.rubric import rubric
from howtobench.tasks import completion, guide, negotiate, open_writing
from howtobench.tree.negotiation import negotiation
from howtobench.tree.scorer import tree_of_writing
from howtobench.vocabulary.words import REPLAY_API, SIMULATOR_API

__all__ = ["replay", "towsim"]


@modelapi(name=REPLAY_API)
def replay() -> type[ModelAPI]:
    """`--model replay/<writer>`: a writer's stored writings as a model, imported when one
    is first made (as inspect's own providers are)."""
    from howtobench.writing.replay import ReplayAPI

    return ReplayAPI


@modelapi(name=SIMULATOR_API)
def towsim() -> type[ModelAPI]:
    """`--model-role grader=towsim/judge`: the judge simulator answering in process,
    imported when such a model is first made (it stays out of every eval's start)."""
    from howtobench.simulator.embedded import SimulatorAPI

    return SimulatorAPI
