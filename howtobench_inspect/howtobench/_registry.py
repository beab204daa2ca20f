"""Entry point of group `inspect_ai`: makes `howtobench/<task>`, our scorers, the
`replay/<writer>` model provider of stored writings and the `towsim/<name>` provider of
the judge simulator in process known.

inspect imports this module whole at the start of every eval, and has no way to
register one name when that name is asked for; so everything an eval can name is
registered here at once, and what must stay light is what these modules import: not the
construction pipeline, the studies, the studio, the simulator, the judge check or the
workers, nor pandas, scipy or matplotlib (`tests/test_startup.py` checks it). The build's
steps are registered by `howtobench build` itself (`construct.pipeline`).
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
    """`--model replay/<writer>`: a writer's stored writings as a model (the provider is
    imported when a replay model is first made, as inspect's own providers are)."""
    from howtobench.writing.replay import ReplayAPI

    return ReplayAPI


@modelapi(name=SIMULATOR_API)
def towsim() -> type[ModelAPI]:
    """`--model-role grader=towsim/judge`: the judge simulator answering in process, with no
    server (imported when such a model is first made: the simulator stays out of every
    eval's start)."""
    from howtobench.simulator.embedded import SimulatorAPI

    return SimulatorAPI
