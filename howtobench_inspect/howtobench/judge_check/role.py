"""The judge that `judge-check` checks, as `--model-role grader=...` names it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml
from inspect_ai.model import GenerateConfig, Model, get_model
from pydantic import ValidationError

from howtobench._inspect import error_message
from howtobench.judge_check.text import one_line
from howtobench.vocabulary.errors import UserError

__all__ = ["JudgeSpec", "ROLE", "parse_role"]

ROLE = "grader"


@dataclass(frozen=True)
class JudgeSpec:
    """A judge model as the role names it: its name, generate settings and model args.

    Kept as a recipe, not a `Model`: the probes and the eval run in different event
    loops, and an SDK client made in one must not be used in the other.
    """

    name: str
    config: GenerateConfig = field(default_factory=GenerateConfig)
    args: Mapping[str, Any] = field(default_factory=dict)

    def model(self) -> Model:
        """A new model for this judge; a name inspect cannot use is a `UserError`."""
        try:
            return get_model(self.name, config=self.config, memoize=False, **self.args)
        except Exception as error:  # inspect raises several kinds; each means "unusable"
            raise UserError(
                f"--model-role {ROLE}: cannot use '{self.name}': {error_message(error)}"
            ) from None


def parse_role(roles: Sequence[str]) -> JudgeSpec:
    """The judge of `--model-role grader=VALUE`, read as inspect reads the option: the text
    after the first `=` is YAML, a mapping names the model and its settings (inspect's own
    parser is private in 0.3.285). A list (a panel) is refused: the check is of one judge.
    """
    judge: JudgeSpec | None = None
    for text in roles:
        role, equals, raw = text.partition("=")
        role = role.strip().replace("-", "_")
        if not equals or not raw.strip():
            raise UserError(f"--model-role {text!r}: give {ROLE}=MODEL")
        if role != ROLE:
            raise UserError(f"--model-role {role}: judge-check checks the {ROLE} role only")
        try:
            value = yaml.safe_load(raw)
        except yaml.YAMLError as error:
            raise UserError(
                f"--model-role {ROLE}: not a model name or YAML/JSON ({one_line(str(error))})"
            ) from None
        judge = _spec(value)
    if judge is None:
        raise UserError(f"give the judge with --model-role {ROLE}=MODEL")
    return judge


def _spec(value: Any) -> JudgeSpec:
    if isinstance(value, str) and "," not in value:
        return JudgeSpec(value.strip())
    if isinstance(value, dict):
        settings = dict(value)
        name = settings.pop("model", None)
        args = settings.pop("model_args", {})
        if not isinstance(name, str) or not name.strip():
            raise UserError(f"--model-role {ROLE}: the mapping needs `model: <name>`")
        if not isinstance(args, dict):
            raise UserError(f"--model-role {ROLE}: model_args must be a mapping")
        try:
            config = GenerateConfig(**settings)
        except ValidationError as error:
            said = "; ".join(
                ".".join(str(part) for part in e["loc"])
                + (": " if e["loc"] else "")
                + str(e["msg"]).removeprefix("Value error, ")
                for e in error.errors()
            )
            raise UserError(f"--model-role {ROLE}: {one_line(said)}") from None
        return JudgeSpec(name.strip(), config, args)
    if isinstance(value, list) or (isinstance(value, str) and "," in value):
        raise UserError(f"--model-role {ROLE}: judge-check checks one judge, not a list")
    raise UserError(f"--model-role {ROLE}: {value!r} is not a model name")
