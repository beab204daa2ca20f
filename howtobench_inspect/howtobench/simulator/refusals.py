"""What a profiled server refuses, and how it words and wraps the refusal.

A profile (`profiles.py`, where the sources are) lists a server's refusals as data; this
module applies them to a request. `check` finds the refusal a request meets, in the order
a server meets them, and `error_body` wraps a message in each server's own error body.
`MEANT` says what each refusal means, as the judge reads it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from howtobench.simulator.profiles import Profile

__all__ = ["MEANT", "ErrorShape", "Refusal", "Refused", "check", "error_body"]

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


def error_body(
    shape: ErrorShape,
    status: int,
    message: str,
    refusal: Refusal | None = None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """How each server wraps an error message (with a refusal's type, code and param
    where its shape has them; sources in `profiles.py`)."""
    kind, code, param = (refusal.type, refusal.code, refusal.param) if refusal else (None,) * 3
    if shape == "openai":
        if kind is None:  # a simulated fault, in the shape the simulator always sent
            return {"error": {"message": message, "type": "simulated"}}
        return {"error": {"message": message, "type": kind, "param": param, "code": code}}
    if shape in ("vllm", "sglang"):
        error_type = kind or ("BadRequestError" if status == 400 else "InternalServerError")
        error = {"message": message, "type": error_type, "param": param, "code": status}
        return {"error": error} if shape == "vllm" else {"object": "error", **error}
    if shape == "llama-cpp":
        error_type = kind or ("invalid_request_error" if status < 500 else "server_error")
        return {"error": {"code": status, "message": message, "type": error_type, **(extra or {})}}
    if shape == "llama-cpp-python":
        error_type = kind or ("invalid_request_error" if status < 500 else "internal_server_error")
        return {"error": {"message": message, "type": error_type, "param": param, "code": code}}
    if shape == "ollama":
        error_type = {400: "invalid_request_error", 404: "not_found_error"}.get(status, "api_error")
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
