"""Server profiles: what each OpenAI-compatible server refuses, renames or adds.

The ToW judge is pointed at vLLM, SGLang, llama.cpp's `llama-server`, llama-cpp-python's
server, Ollama, LM Studio and TGI as often as at OpenAI. Each of them answers the same
chat request a little differently: one refuses message content given as a list of text
parts, one refuses temperature 0, each words its context-length refusal its own way and
wraps errors in its own body, and the reasoning parsers put the think text in a field
of their own. A profile writes those differences down, so that the simulator can play
that server and a test can show that the judge scores every writing the server would
answer (`JudgeSimulator(profile="vllm")`, `python -m howtobench.simulator --profile vllm`).

A profile (`refusals.Profile`) is declarative: the refusals (`refusals.Refusal`: the status
and the message the server really sends, in its own error body; `refusals.check` applies
them), the context size in tokens (counted by the simulator's rule, `billing.tokens`: two
characters a token), and the reply's shape (the reasoning field, extra fields, whether
usage reports cached tokens). This module holds the table of them (`PROFILES`); `openai`
is the simulator as it always was, and the default.

What each server does, with the source it was read from (code as of the snapshots named;
the table's messages are quoted from the code, numbers filled in by the simulator):

- list content (`[{"type": "text", ...}]`): accepted by OpenAI, vLLM and SGLang (text
  parts; `ChatCompletionMessageContentTextPart` in sglang
  `python/sglang/srt/entrypoints/openai/protocol.py`), llama.cpp, Ollama (each text part
  becomes a message of its own: ollama `openai/openai.go`, `FromChatRequest`), LM Studio
  and TGI (parts joined with "": huggingface/text-generation-inference
  `router/src/lib.rs`, `impl From<Message> for TextMessage`). llama-cpp-python renders the
  model's Jinja chat template with the messages as given (abetlen/llama-cpp-python
  `llama_cpp/llama_chat_format.py`, `Jinja2ChatFormatter.__call__`), so a template that
  concatenates `'...' + message['content']` raises a `TypeError`, which its route handler
  answers as 500 `internal_server_error` (`llama_cpp/server/errors.py`,
  `RouteErrorHandler`; issue abetlen/llama-cpp-python#1080).
- system role: a chat template may refuse it (Gemma's: `raise_exception('System role
  not supported')`). Off by default in every profile (`system_role=True`); set
  `system_role=False` to play a Gemma-like template: vLLM answers 400 with the
  template's message, llama-cpp-python 500 (its `raise_exception` raises `ValueError`),
  TGI 422 `template_error` (`router/src/server.rs`, `impl From<InferError>`); Ollama's own
  templates fold the system prompt in, so it never refuses.
- temperature 0: TGI's chat route takes 0 as greedy since v2.0.2 (PR
  huggingface/text-generation-inference#1749, `router/src/lib.rs`: `Some(0.0) => (false,
  None)`); before it, and on `/generate` still, it answers 422 (issue #1236;
  `router/src/validation.rs`). Profile `tgi-1` plays the older TGI. The others accept 0.
- context length: OpenAI 400 `context_length_exceeded`; vLLM 400 `BadRequestError`
  (`vllm/entrypoints/openai/serving_engine.py`; errors as `{"error": {..., "code": 400}}`,
  `vllm/entrypoints/openai/engine/protocol.py` `ErrorResponse`); SGLang 400 with a
  top-level error body `{"object": "error", ...}`
  (`python/sglang/srt/managers/tokenizer_manager.py`, `protocol.py` `ErrorResponse`);
  llama.cpp 400 `exceed_context_size_error`, with `n_prompt_tokens` and `n_ctx` in the
  body (`tools/server/server-context.cpp`, `server-task.cpp`
  `server_task_result_error::to_json`); llama-cpp-python 400 `context_length_exceeded` in
  OpenAI's words (`llama_cpp/server/errors.py`); LM Studio 400 with a string error body
  (issues Gitlawb/openclaude#353, lmstudio-ai/lmstudio-bug-tracker#237); TGI 422
  (`router/src/validation.rs`; without `max_tokens` it asks for the rest of the context,
  so only a prompt over the context is refused). Ollama refuses nothing: it truncates the
  prompt to `num_ctx` (default 4096), keeping its first `num_keep` (4) tokens and the
  tail (ollama `llm/llama_server.go`, "truncating input prompt"; `server/sched.go`
  enables the context shift by default), so the judge reads a prompt cut in the middle
  and answers something else. Its usage then counts the prompt it read
  (`prompt_eval_count`), not the prompt sent, as llama.cpp with a small `-c` and context
  shift does: `get_profile("ollama", context=1024, usage_read=True)` plays that (the
  profile as listed bills the prompt sent).
- `max_tokens` over what is left of the context: vLLM and SGLang answer 400, TGI 422
  (above); llama-cpp-python counts it into its context check (above).
- `n` > 1: llama.cpp throws from its parameter parsing, answered 500 `server_error`
  (`tools/server/server-common.cpp`, `oaicompat_chat_params_parse`); Ollama documents `n`
  as unsupported (docs `api/openai-compatibility.mdx`) and answers one choice; the
  others serve `n`.
- `stop`: TGI takes at most `--max-stop-sequences` (default 4) and answers 422 past them
  (`router/src/validation.rs`).
- reasoning: vLLM's reasoning parsers put the think text in `message.reasoning` (called
  `reasoning_content` before v0.11: docs.vllm.ai/en/v0.11.2/features/reasoning_outputs/);
  SGLang (`--reasoning-parser`) and llama.cpp (`--reasoning-format deepseek`) in
  `reasoning_content`; LM Studio in `reasoning_content` (developer setting); Ollama in
  `message.reasoning` (`openai/openai.go`, `Message.Reasoning`). TGI and llama-cpp-python
  have no reasoning parser: the think block stays in `content`.
- unknown fields: ignored (vLLM logs "The following fields were present in the request
  but ignored", `OpenAIBaseModel` with `extra="allow"`; TGI's serde structs do not deny
  unknown fields); usage reports `prompt_tokens_details.cached_tokens` on OpenAI and vLLM
  (SGLang only with `--enable-cache-report`).

Not modelled: streaming replies, `response_format`, `seed`, model names (vLLM and Ollama
answer 404 for a name they do not serve), and a reasoning parser's null `content` when
the think block is cut off by `max_tokens`. The system-role refusals of llama.cpp,
SGLang and vLLM are the template's message passed through their generic error handlers
(500 on llama.cpp, 400 on the others); LM Studio's was not checked and is not played.
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
    if isinstance(profile, str):
        try:
            found = PROFILES[profile]
        except KeyError:
            raise ValueError(
                f"no server profile {profile!r}: one of {', '.join(PROFILES)}"
            ) from None
    else:
        found = profile
    return replace(found, **changes) if changes else found
