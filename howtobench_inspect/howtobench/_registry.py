"""Entry point of group `inspect_ai`: makes `howtobench/<task>`, the build steps
(`howtobench/classify`, `quality`, `backconstruct`, `screen`), our scorers and the
`replay/<writer>` model provider of stored writings and the `towsim/<name>` provider
of the judge simulator in process known.

inspect imports this module whole, at the start of every eval (to collect hooks, whose
ever the tasks are) and when it meets a `howtobench/...` name it has not registered yet, and then
looks the name up among what the `@task`, `@scorer` and `@solver` decorators have
registered (`inspect_ai._util.registry.registry_lookup`): it has no way to register one
name when that name is asked for. So everything is registered here at once, and what
must stay light is what these modules import: inspect itself, not the studies, the
rating studio, pandas, scipy or matplotlib (`tests/test_startup.py`).
"""

# ruff: noqa: F401
from inspect_ai.model import ModelAPI, modelapi

from howtobench.baselines.autoplan import autoplan
from howtobench.baselines.bleurt import bleurt
from howtobench.baselines.overlap import bleu_scorer, rouge_l
from howtobench.baselines.rubric import rubric
from howtobench.construct.backconstruct import backconstruct_step
from howtobench.construct.classify import classify_step
from howtobench.construct.quality import quality_step
from howtobench.construct.screen import screen_step
from howtobench.tasks import completion, guide, negotiate, open_writing
from howtobench.tree.negotiation import negotiation
from howtobench.tree.scorer import tree_of_writing
from howtobench.vocabulary import REPLAY_API, SIMULATOR_API


@modelapi(name=REPLAY_API)
def replay() -> type[ModelAPI]:
    """`--model replay/<writer>`: a writer's stored writings as a model (the provider is
    imported when a replay model is first made, as inspect's own providers are)."""
    from howtobench.replay import ReplayAPI

    return ReplayAPI


@modelapi(name=SIMULATOR_API)
def towsim() -> type[ModelAPI]:
    """`--model-role grader=towsim/judge`: the judge simulator answering in process, with no
    server (imported when such a model is first made: the simulator stays out of every
    eval's start)."""
    from howtobench.simulator.embedded import SimulatorAPI

    return SimulatorAPI
