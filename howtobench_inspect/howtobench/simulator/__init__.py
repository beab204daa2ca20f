"""The judge simulator: an OpenAI- and Anthropic-compatible chat server for tests and
benchmarks that answers by what each judge prompt asks.

Its parts: `protocol` (what a prompt asks, read by its tag), `replies` (valid and faulty
replies, the fault catalogue), `billing` (tokens and simulated prompt caching), `wire`
(the two APIs' request and reply shapes), `batches` (both providers' batch APIs, answered
by the same code), `profiles` (what other OpenAI-compatible servers refuse, rename or
add), `answers` (the answer chosen and billed, whatever carries it), `server` (the HTTP
server), `process` (the server as a child process, the one way tests and benchmarks start
it so) and `embedded` (the `towsim/<name>` inspect model provider: the same answers in
process, with no server). Run the server with `python -m howtobench.simulator`.
"""

from howtobench.simulator.billing import Segment, Usage, tokens
from howtobench.simulator.profiles import PROFILES, Profile, Refusal, get_profile
from howtobench.simulator.protocol import Asked, asked_dimensions, asked_ids, classify
from howtobench.simulator.replies import (
    FAULTS,
    Faults,
    out_of_range_reply,
    simulated_score,
    valid_plan,
    valid_reply,
    valid_rubric,
    valid_score,
    valid_weights,
)
from howtobench.simulator.server import Fault, JudgeSimulator, Request, Script, main

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
