"""The judge simulator: an OpenAI- and Anthropic-compatible chat server for tests and
benchmarks that answers by what each judge prompt asks.

`protocol` reads what a prompt asks, `replies` answers it, `answers` chooses and bills
whatever carries it: the HTTP `server` (with `routes`, `wire`, `batches`, `profiles` and
`faults`), or `embedded`, the `towsim/<name>` inspect model provider in process.
"""

from howtobench.simulator.faults import Faults
from howtobench.simulator.profiles import PROFILES, get_profile
from howtobench.simulator.protocol import Asked, asked_dimensions, asked_ids, classify
from howtobench.simulator.refusals import Profile
from howtobench.simulator.replies import out_of_range_reply, valid_reply, valid_weights
from howtobench.simulator.server import Fault, JudgeSimulator, Request, Script

__all__ = [
    "PROFILES",
    "Asked",
    "Fault",
    "Faults",
    "JudgeSimulator",
    "Profile",
    "Request",
    "Script",
    "asked_dimensions",
    "asked_ids",
    "classify",
    "get_profile",
    "out_of_range_reply",
    "valid_reply",
    "valid_weights",
]
