"""Server profiles: what each OpenAI-compatible server refuses, renames or adds.

The ToW judge is pointed at vLLM, SGLang, llama.cpp, llama-cpp-python, Ollama, LM Studio
and TGI as often as at OpenAI, and each answers the same chat request a little
differently (list content, temperature 0, its context-length refusal and error body, the
field the think text goes in). A profile (`refusals.Profile`) writes those differences
down, so that the simulator can play that server and a test can show that the judge
scores every writing the server would answer; `openai` is the default. What each server
does, and the source it was read from: docs/judges.md, "Where each profile was read".
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from howtobench.simulator.refusals import Profile, Refusal

__all__ = ["DEFAULT_PROFILE", "PROFILES", "get_profile"]


_TGI_CONTEXT = Refusal(
    422,
    "Input validation error: `inputs` tokens + `max_new_tokens` must be <= {context}. "
    "Given: {prompt} `inputs` tokens and {max_tokens} `max_new_tokens`",
    type="validation",
)

# llama-cpp-python's refusal of a prompt (plus max_tokens) over the context
# (llama_cpp/server/errors.py)
_LLAMA_CPP_PYTHON_CONTEXT = Refusal(
    400,
    "This model's maximum context length is {context} tokens. However, you "
    "requested {total} tokens ({prompt} in the messages, {max_tokens} in the "
    "completion). Please reduce the length of the messages or completion.",
    type="invalid_request_error",
    code="context_length_exceeded",
    param="messages",
)

PROFILES: dict[str, Profile] = {
    profile.name: profile
    for profile in (
        Profile(
            name="openai",
            server="OpenAI chat completions (the simulator's own behaviour)",
            error_shape="openai",
            context=128_000,
            context_error=Refusal(
                400,
                "This model's maximum context length is {context} tokens. However, your "
                "messages resulted in {prompt} tokens. Please reduce the length of the messages.",
                type="invalid_request_error",
                code="context_length_exceeded",
                param="messages",
            ),
        ),
        Profile(
            name="vllm",
            server="vLLM >= 0.11 (OpenAI-compatible server, with a reasoning parser)",
            error_shape="vllm",
            context=32_768,
            context_error=Refusal(
                400,
                "This model's maximum context length is {context} tokens. However, your "
                "request has {prompt} input tokens. Please reduce the length of the input "
                "messages.",
            ),
            max_tokens_error=Refusal(
                400,
                "'max_tokens' or 'max_completion_tokens' is too large: {max_tokens}. This "
                "model's maximum context length is {context} tokens and your request has "
                "{prompt} input tokens ({max_tokens} > {context} - {prompt}).",
            ),
            system_refusal=Refusal(400, "System role not supported"),
            reasoning="reasoning",
            choice_extra={"stop_reason": None, "logprobs": None},
            message_extra={"tool_calls": [], "refusal": None},
            reply_extra={"prompt_logprobs": None, "kv_transfer_params": None},
        ),
        Profile(
            name="sglang",
            server="SGLang (OpenAI-compatible server, with a reasoning parser)",
            error_shape="sglang",
            context=32_768,
            context_error=Refusal(
                400,
                "The input ({prompt} tokens) is longer than the model's context length "
                "({context} tokens).",
            ),
            max_tokens_error=Refusal(
                400,
                "Requested token count exceeds the model's maximum context length of "
                "{context} tokens. You requested a total of {total} tokens: {prompt} tokens "
                "from the input messages and {max_tokens} tokens for the completion. Please "
                "reduce the number of tokens in the input messages or the completion to fit "
                "within the limit.",
            ),
            system_refusal=Refusal(400, "System role not supported"),
            reasoning="reasoning_content",
            cached_tokens=False,
            choice_extra={"matched_stop": None},
        ),
        Profile(
            name="llama-cpp",
            server="llama.cpp llama-server (--jinja, --reasoning-format deepseek)",
            error_shape="llama-cpp",
            context=4096,
            context_error=Refusal(
                400,
                "request ({prompt} tokens) exceeds the available context size ({context} "
                "tokens), try increasing it",
                type="exceed_context_size_error",
            ),
            several_choices=Refusal(500, "Only one completion choice is allowed"),
            system_refusal=Refusal(500, "System role not supported"),
            reasoning="reasoning_content",
            cached_tokens=False,
            reply_extra={"system_fingerprint": "b6000-sim", "timings": {"prompt_n": 0}},
        ),
        Profile(
            name="llama-cpp-python",
            server="llama-cpp-python's server (llama_cpp.server, Jinja chat template)",
            error_shape="llama-cpp-python",
            context=2048,
            context_error=_LLAMA_CPP_PYTHON_CONTEXT,
            list_content=Refusal(500, 'can only concatenate str (not "list") to str'),
            # it counts max_tokens in the same context check, with the same words
            max_tokens_error=_LLAMA_CPP_PYTHON_CONTEXT,
            system_refusal=Refusal(500, "System role not supported"),
            cached_tokens=False,
        ),
        Profile(
            name="ollama",
            server="Ollama (/v1 OpenAI compatibility)",
            error_shape="ollama",
            context=4096,
            context_error=None,
            reasoning="reasoning",
            cached_tokens=False,
            reply_extra={"system_fingerprint": "fp_ollama"},
        ),
        Profile(
            name="lmstudio",
            server="LM Studio (OpenAI-compatible endpoints)",
            error_shape="lmstudio",
            context=4096,
            context_error=Refusal(
                400,
                "The number of tokens to keep from the initial prompt is greater than the "
                "context length (n_keep: {prompt}>= n_ctx: {context}). Try to load the model "
                "with a larger context length, or provide a shorter input.",
            ),
            reasoning="reasoning_content",
            cached_tokens=False,
            reply_extra={"system_fingerprint": "lmstudio-sim", "stats": {}},
        ),
        Profile(
            name="tgi",
            server="text-generation-inference >= 2.0.2 (Messages API)",
            error_shape="tgi",
            context=4096,
            context_error=_TGI_CONTEXT,
            max_tokens_error=_TGI_CONTEXT,
            system_refusal=Refusal(
                422, "Template error: System role not supported", type="template_error"
            ),
            max_stop=4,
            stop_error=Refusal(
                422,
                "Input validation error: `stop` supports up to 4 stop sequences. Given: {count}",
                type="validation",
            ),
            reasoning="think-tags",
            cached_tokens=False,
            reply_extra={"system_fingerprint": "3.3.6-sha-sim-native"},
        ),
    )
}
# TGI before v2.0.2 (still seen on older images): temperature 0 is refused
PROFILES["tgi-1"] = replace(
    PROFILES["tgi"],
    name="tgi-1",
    server="text-generation-inference < 2.0.2 (Messages API)",
    zero_temperature=Refusal(
        422, "Input validation error: `temperature` must be strictly positive", type="validation"
    ),
)
DEFAULT_PROFILE = "openai"


def get_profile(profile: str | Profile = DEFAULT_PROFILE, **changes: Any) -> Profile:
    """A profile by name (or as given), with `changes` (e.g. `context=3000`,
    `system_role=False`, `reasoning=None`)."""
    if isinstance(profile, str) and profile not in PROFILES:
        raise ValueError(f"no server profile {profile!r}: one of {', '.join(PROFILES)}")
    found = PROFILES[profile] if isinstance(profile, str) else profile
    return replace(found, **changes) if changes else found
