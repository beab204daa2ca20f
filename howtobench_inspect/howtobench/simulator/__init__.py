"""The judge simulator: an OpenAI- and Anthropic-compatible chat server for tests and
benchmarks that answers by what each judge prompt asks.

Its parts: `protocol` (what a prompt asks, read by its tag), `replies` (valid and unusable
replies), `faults`, `billing` (tokens and simulated prompt caching), `wire` (the two APIs'
shapes), `batches` (run alike for `openai_batches` and `anthropic_batches`), `profiles`
(what other OpenAI-compatible servers refuse, rename or add; `refusals` applies them),
`answers` (the answer chosen and billed, whatever carries it), `server` (the state and
the answer to a request), `routes` (its HTTP side), `command` (`python -m
howtobench.simulator`), `process` (the server as a child process) and `embedded` (the
`towsim/<name>` inspect model provider: the same answers in process, with no server).
"""

from howtobench.simulator.billing import Segment, Usage, tokens
from howtobench.simulator.command import main
from howtobench.simulator.faults import FAULTS, Faults
from howtobench.simulator.profiles import PROFILES, get_profile
from howtobench.simulator.protocol import Asked, asked_dimensions, asked_ids, classify
from howtobench.simulator.refusals import Profile, Refusal
from howtobench.simulator.replies import (
    out_of_range_reply,
    simulated_score,
    valid_plan,
    valid_reply,
    valid_rubric,
    valid_score,
    valid_weights,
)
from howtobench.simulator.server import Fault, JudgeSimulator, Request, Script

__all__ = [
    "FAULTS",
    "PROFILES",
    "Asked",
    "Fault",
    "Faults",
    "JudgeSimulator",
    "Profile",
    "Refusal",
    "Request",
    "Script",
    "Segment",
    "Usage",
    "asked_dimensions",
    "asked_ids",
    "classify",
    "get_profile",
    "main",
    "out_of_range_reply",
    "simulated_score",
    "tokens",
    "valid_plan",
    "valid_reply",
    "valid_rubric",
    "valid_score",
    "valid_weights",
]
