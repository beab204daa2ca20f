"""Entry point of group `inspect_ai`: makes `howtobench/<task>`, our scorers, the
`replay/<writer>` model provider of stored writings and the `towsim/<name>` provider of
the judge simulator in process known.

inspect imports this module whole, at the start of every eval (to collect hooks, whose
ever the tasks are) and when it meets a `howtobench/...` name it has not registered yet, and then
looks the name up among what the `@task`, `@scorer` and `@solver` decorators have
registered (`inspect_ai._util.registry.registry_lookup`): it has no way to register one
name when that name is asked for. So everything an eval can name is registered here at
once, and what must stay light is what these modules import: inspect itself, not the
construction pipeline, the studies, the rating studio, the simulator, the judge check or
the workers, nor pandas, scipy or matplotlib; jieba, sacrebleu and rapidfuzz load when
an overlap scorer first cuts a text (`tests/test_startup.py` checks all this).

The build's steps (`howtobench/classify`, `quality`, `backconstruct`, `screen`) are not
registered here: `howtobench build` (`construct.pipeline`) imports them itself, and a
step runs alone from Python (`docs/construction.md`).
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
