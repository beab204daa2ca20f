"""What the package's two in-process model providers share (`replay/`, `towsim/`): no
server, URL, key or tools, so a request is its messages and settings (`answer`); and
neither fails by chance, so no error is retried (`ModelAPI.should_retry`'s default).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelCall, ModelOutput
from inspect_ai.tool import ToolChoice, ToolInfo

__all__ = ["InProcessModelAPI"]


class InProcessModelAPI(ModelAPI):
    """A provider answering in the process: `take_args` reads its model arguments."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config or GenerateConfig())
        self.take_args(model_args)

    def take_args(self, model_args: dict[str, Any]) -> None:
        """Check and keep the model arguments (`-M name=value`); refuse what is unknown."""
        raise NotImplementedError

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput | tuple[ModelOutput, ModelCall]:
        return await self.answer(input, config)

    async def answer(
        self, input: list[ChatMessage], config: GenerateConfig
    ) -> ModelOutput | tuple[ModelOutput, ModelCall]:
        """The reply to `input`, with the call's request and response where there is one."""
        raise NotImplementedError
