"""What a profiled server refuses, and how it words and wraps the refusal.

A profile (`Profile`) lists a server's refusals as data, with its context and its reply's
shape; the table of profiles (`profiles.py`) imports it. `check` finds the refusal a
request meets, in the order a server meets them, and `error_body` wraps a message in the
server's own error body. `MEANT` says what each refusal means, as the judge reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["MEANT", "ErrorShape", "Profile", "Refusal", "Refused", "check"]

ErrorShape = Literal[
    "openai", "vllm", "sglang", "llama-cpp", "llama-cpp-python", "ollama", "lmstudio", "tgi"
]


@dataclass(frozen=True)
class Refusal:
    """An error answer: its status, the message (a template filled with `context`,
    `prompt`, `max_tokens`, `total`, `count`, `temperature`), and the body's `type` and
    `code` where the server's error shape has them."""

    status: int
    message: str
    type: str | None = None
    code: str | None = None
    param: str | None = None

    def text(self, **values: Any) -> str:
        return self.message.format(**values)


# What a server means by each refusal (`Refused.reason`): the judge reads the first two
# from the words alone (`howtobench.judge.server_words.PHRASES`); the others it tells by
# the status, or by a tiny request that still gets an answer.
MEANT: dict[str, str] = {
    "context": "context too long",
    "max_tokens": "context too long",
    "system_role": "system role refused",
    "list_content": "refused shape",
    "temperature": "refused parameter",
    "n": "refused parameter",
    "stop": "refused parameter",
}


@dataclass(frozen=True)
class Refused:
    """A request the profile's server refuses: why (a short name), status and body."""

    reason: str
    status: int
    body: dict[str, Any]


@dataclass(frozen=True)
class Profile:
    """One server's behaviour towards a chat-completions request."""

    name: str
    server: str  # the server, and the version its behaviour was read from
    error_shape: ErrorShape
    context: int  # tokens, by the simulator's rule
    context_error: Refusal | None  # None: the server truncates the prompt instead
    max_tokens_error: Refusal | None = None  # prompt + max_tokens over the context
    list_content: Refusal | None = None  # None: text parts are accepted
    system_refusal: Refusal | None = None  # what a template without a system role sends
    system_role: bool = True  # False: the model's chat template refuses a system role
    zero_temperature: Refusal | None = None
    several_choices: Refusal | None = None  # n > 1
    max_stop: int | None = None  # the most stop sequences taken
    stop_error: Refusal | None = None
    # Where a thinking model's think text goes: a message field, "think-tags" (left in
    # the content), or None (the model does not think)
    reasoning: str | None = None
    cached_tokens: bool = True  # usage has prompt_tokens_details.cached_tokens
    keep: int = 4  # tokens a truncating server keeps from the start of the prompt
    usage_read: bool = False  # a truncating server's usage counts the context it read
    # usage counts only the prompt tokens past the prefix the server reused from an earlier
    # prompt's cache (Ollama 0.30.x, ollama#16414, fixed by its PR 16428), without saying so
    uncached_usage: bool = False
    reply_extra: Mapping[str, Any] = field(default_factory=dict)  # top-level reply fields
    choice_extra: Mapping[str, Any] = field(default_factory=dict)
    message_extra: Mapping[str, Any] = field(default_factory=dict)

    def refusals(self) -> dict[str, Refusal]:
        """Every refusal this server can send, by the reason `refusals.check` names it
        with (a key of `refusals.MEANT`); the system-role refusal too, which it sends when
        it plays a template without a system role (`system_role=False`)."""
        sent = {
            "temperature": self.zero_temperature,
            "n": self.several_choices,
            "stop": self.stop_error,
            "list_content": self.list_content,
            "system_role": self.system_refusal,
            "context": self.context_error,
            "max_tokens": self.max_tokens_error,
        }
        return {reason: refusal for reason, refusal in sent.items() if refusal is not None}

    def error_body(
        self, status: int, message: str, refusal: Refusal | None = None, **extra: Any
    ) -> dict[str, Any]:
        """An error in this server's own body shape, with a refusal's type, code and
        param where the shape has them (sources: docs/judges.md)."""
        shape = self.error_shape
        kind, code, param = (refusal.type, refusal.code, refusal.param) if refusal else (None,) * 3
        if shape == "openai" and kind is None:  # a simulated fault, as the simulator always sent
            return {"error": {"message": message, "type": "simulated"}}
        if shape in ("openai", "llama-cpp-python"):
            error_type = kind or (
                "invalid_request_error" if status < 500 else "internal_server_error"
            )
            return {"error": {"message": message, "type": error_type, "param": param, "code": code}}
        if shape in ("vllm", "sglang"):
            error_type = kind or ("BadRequestError" if status == 400 else "InternalServerError")
            error = {"message": message, "type": error_type, "param": param, "code": status}
            return {"error": error} if shape == "vllm" else {"object": "error", **error}
        if shape == "llama-cpp":
            error_type = kind or ("invalid_request_error" if status < 500 else "server_error")
            return {"error": {"code": status, "message": message, "type": error_type, **extra}}
        if shape == "ollama":
            error_type = {400: "invalid_request_error", 404: "not_found_error"}.get(
                status, "api_error"
            )
            return {"error": {"message": message, "type": error_type, "param": None, "code": None}}
        if shape == "lmstudio":
            return {"error": message}
        # tgi
        return {"error": message, "error_type": kind or "validation"}


def check(profile: Profile, body: dict[str, Any], prompt_tokens: int) -> Refused | None:
    """The refusal this server sends for this request, or None when it answers: checked
    in the order a server meets them (parameters, the chat template, the context)."""
    messages = body.get("messages") or []
    temperature = body.get("temperature")
    if profile.zero_temperature and temperature is not None and temperature <= 0:
        return _refused("temperature", profile, profile.zero_temperature, temperature=temperature)
    if profile.several_choices and (body.get("n") or 1) > 1:
        return _refused("n", profile, profile.several_choices)
    stop = body.get("stop")
    stops = [stop] if isinstance(stop, str) else list(stop or [])
    if profile.max_stop is not None and profile.stop_error and len(stops) > profile.max_stop:
        return _refused("stop", profile, profile.stop_error, count=len(stops))
    if profile.list_content and any(isinstance(m.get("content"), list) for m in messages):
        return _refused("list_content", profile, profile.list_content)
    if (
        not profile.system_role
        and profile.system_refusal
        and any(m.get("role") in ("system", "developer") for m in messages)
    ):
        return _refused("system_role", profile, profile.system_refusal)
    max_tokens = body.get("max_completion_tokens") or body.get("max_tokens")
    values: dict[str, Any] = {
        "context": profile.context,
        "prompt": prompt_tokens,
        "max_tokens": max_tokens,
        "total": prompt_tokens + (max_tokens or 0),
    }
    if profile.context_error and prompt_tokens >= profile.context:
        extra = (
            {"n_prompt_tokens": prompt_tokens, "n_ctx": profile.context}
            if profile.error_shape == "llama-cpp"
            else {}
        )
        if profile.error_shape == "tgi":
            values["max_tokens"] = max_tokens or 0
        return _refused("context", profile, profile.context_error, extra=extra, **values)
    if profile.max_tokens_error and max_tokens and prompt_tokens + max_tokens > profile.context:
        return _refused("max_tokens", profile, profile.max_tokens_error, **values)
    return None


def _refused(
    reason: str,
    profile: Profile,
    refusal: Refusal,
    extra: dict[str, Any] | None = None,
    **values: Any,
) -> Refused:
    body = profile.error_body(refusal.status, refusal.text(**values), refusal, **(extra or {}))
    return Refused(reason, refusal.status, body)
