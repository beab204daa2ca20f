"""The cost study: logged tokens per model and role (cache writes and reads included),
priced with a cost file, per scored writing.

The judges here come from a model provider registered in this file (`caching/<name>`), so
that a panel named by `-T judges=...` and a role bound to a list of models both reach
them by name; each call reports cache writes and reads, as a provider with prompt
caching does. Expected numbers are read from the log with inspect's reader.
"""

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai import Task
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    get_model,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from howtobench import open_writing
from howtobench.cli import main
from howtobench.simulator.protocol import Asked
from howtobench.studies import StudyError
from howtobench.studies.token_costs import cost
from support.evals import run_eval
from support.judges import SCORES, Reply, ScriptedJudge, fixed_scores

PRICES = (
    "{model}:\n  input: 2.0\n  output: 8.0\n  input_cache_write: 2.5\n  input_cache_read: 0.5\n"
)


def _answer(question: Asked) -> Reply:
    """The scripted judge, which also writes when it is the evaluated model."""
    return "一首短诗。\n\n第二节。" if question.kind == "writer" else fixed_scores(SCORES)(question)


class CachingModels(ModelAPI):
    """`caching/<name>` answers as the scripted judge; of each prompt a fifth is billed as
    cache read, a tenth as cache write, the rest as input."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (inspect's signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.judge = ScriptedJudge(_answer, name=model_name)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        output = self.judge(input)
        prompt = sum(len(message.text) for message in input)
        read, write = prompt // 5, prompt // 10
        output.usage = ModelUsage(
            input_tokens=prompt - read - write,
            output_tokens=len(output.completion),
            total_tokens=prompt + len(output.completion),
            input_tokens_cache_write=write,
            input_tokens_cache_read=read,
        )
        return output


@modelapi(name="caching")
def caching() -> type[ModelAPI]:
    return CachingModels


WRITER = "replay/demo-writer-a"  # the model `poem` is run with


def poem(**kwargs: Any) -> Task:
    """The demo's one poem, to be replayed: run it with `WRITER`."""
    return open_writing(dataset="demo", genre="poem", **kwargs)


def _tokens(usage: ModelUsage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "cache_write_tokens": usage.input_tokens_cache_write or 0,
        "cache_read_tokens": usage.input_tokens_cache_read or 0,
        "output_tokens": usage.output_tokens,
    }


def _dollars(usage: ModelUsage) -> float:
    """The PRICES of a usage, by hand."""
    tokens = _tokens(usage)
    rates = {
        "input_tokens": 2.0,
        "cache_write_tokens": 2.5,
        "cache_read_tokens": 0.5,
        "output_tokens": 8.0,
    }
    return sum(tokens[k] * rate for k, rate in rates.items()) / 1e6


def test_cost_per_model_role_and_writing_with_cache_tokens(tmp_path: Path) -> None:
    [log] = run_eval(poem(), tmp_path / "logs", "caching/priced-judge", model=WRITER)
    usage = log.stats.role_usage["grader"]
    assert usage.input_tokens_cache_read and usage.input_tokens_cache_write
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES.format(model="caching/priced-judge"))
    result = cost([tmp_path / "logs"], prices)
    [row] = result.tables["usage"].to_dict("records")
    assert (row["role"], row["model"], row["writings"]) == ("grader", "caching/priced-judge", 1)
    assert {k: row[k] for k in _tokens(usage)} == _tokens(usage)
    assert row["dollars"] == pytest.approx(_dollars(usage))
    assert row["dollars_per_writing"] == pytest.approx(_dollars(usage))
    out = tmp_path / "out"
    assert main(["cost", str(tmp_path / "logs"), "--prices", str(prices), "--out", str(out)]) == 0
    [written] = pd.read_csv(out / "cost_usage.csv").to_dict("records")
    assert {k: written[k] for k in _tokens(usage)} == _tokens(usage)
    by_model = pd.read_csv(out / "cost_by_model.csv").set_index("model")
    assert (
        by_model.loc["caching/priced-judge", "cache_read_tokens"] == usage.input_tokens_cache_read
    )


def test_a_role_bound_to_a_panel_counts_each_model_once(tmp_path: Path) -> None:
    """`--model-role grader=a,b -T judges=a,b`: one row per judge model, its own tokens,
    priced at its own rate (the study once named the role's model "a,b" and counted the
    grader's tokens twice, or crashed on the list)."""
    panel = ["caching/judge-a", "caching/judge-b"]
    [log] = run_eval(poem(judges=panel), tmp_path / "logs", panel, model=WRITER)
    used = log.stats.model_usage
    # the replayed writer answers at zero tokens, and the study leaves it out
    assert used.pop("replay/demo-writer-a").total_tokens == 0
    assert set(used) == set(panel) and all(used[m].output_tokens for m in panel)
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES.format(model=panel[0]) + PRICES.format(model=panel[1]))
    table = cost([tmp_path / "logs"], prices).tables
    rows = table["usage"].set_index("model")
    assert list(rows.index) == panel
    for model in panel:
        assert rows.loc[model, "role"] == "grader, judges"
        assert {k: rows.loc[model, k] for k in _tokens(used[model])} == _tokens(used[model])
        assert rows.loc[model, "dollars"] == pytest.approx(_dollars(used[model]))
    assert table["by_role"].loc["grader, judges", "output_tokens"] == sum(
        used[m].output_tokens for m in panel
    )


def test_a_replay_run_without_a_judge_has_nothing_to_price(tmp_path: Path) -> None:
    """The replayed writer costs nothing and the overlap scorers call no model: an empty
    usage table and a note naming the log, not a crash."""
    [log] = run_eval(poem(scorers="rouge_l"), tmp_path / "logs", model=WRITER)
    result = cost([tmp_path / "logs"])
    assert result.tables["usage"].empty and result.tables["by_model"].empty
    name = Path(log.location).name
    assert f"{name}: nothing to price (its writer replays stored writings" in result.notes[0]


def test_a_model_that_writes_and_judges_is_split_by_role(tmp_path: Path) -> None:
    model = "caching/writer-and-judge"
    [log] = run_eval(
        open_writing(dataset="demo", genre="poem"), tmp_path / "logs", model, model=model
    )
    rows = cost([tmp_path / "logs"]).tables["usage"].set_index("role")
    grader, total = log.stats.role_usage["grader"], log.stats.model_usage[model]
    assert {k: rows.loc["grader", k] for k in _tokens(grader)} == _tokens(grader)
    writer = {k: rows.loc["model", k] for k in _tokens(total)}
    assert writer == {k: v - _tokens(grader)[k] for k, v in _tokens(total).items()}
    assert writer["output_tokens"] == len(log.samples[0].output.completion) > 0


@pytest.mark.parametrize(
    ("rule", "share"),
    [
        ("", 0.5),  # the providers' published rule: half price
        ("  batch: 0.25\n", 0.25),
        # batch prices of its own, at a third of PRICES
        (
            "  batch: {input: 0.6666666667, output: 2.6666666667, "
            "input_cache_write: 0.8333333333, input_cache_read: 0.1666666667}\n",
            1 / 3,
        ),
    ],
)
@pytest.mark.slow
def test_calls_in_batches_are_priced_at_the_batch_rate(
    rule: str, share: float, tmp_path: Path
) -> None:
    """The log's usage does not say a call was batched; its header says the role ran in
    batch mode (the role's own `batch` setting, or `--batch` for the evaluated model)."""
    judge = get_model("caching/batch-judge", config=GenerateConfig(batch=True), memoize=False)
    [log] = run_eval(poem(), tmp_path / "logs", judge, model=WRITER)
    assert log.eval.model_roles and log.eval.model_roles["grader"].config.batch
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES.format(model="caching/batch-judge") + rule)
    [row] = cost([tmp_path / "logs"], prices).tables["usage"].to_dict("records")
    usage = log.stats.role_usage["grader"]
    assert (row["role"], row["batch"]) == ("grader", True)
    assert row["dollars"] == pytest.approx(_dollars(usage) * share, rel=1e-9)


def test_batch_mode_of_the_evaluated_model_is_its_own(tmp_path: Path) -> None:
    """`--batch` reaches the evaluated model only: the writer's calls are priced at the
    batch rate, the grader's (a role without a `batch` of its own) at the standard one."""
    writer, judge = "caching/batch-writer", "caching/direct-judge"
    [log] = run_eval(
        open_writing(dataset="demo", genre="poem"),
        tmp_path / "logs",
        judge,
        model=writer,
        batch=True,
    )
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES.format(model=writer) + PRICES.format(model=judge))
    rows = cost([tmp_path / "logs"], prices).tables["usage"].set_index("model")
    assert rows.loc[writer, "batch"] and not rows.loc[judge, "batch"]
    used = log.stats.model_usage
    assert rows.loc[writer, "dollars"] == pytest.approx(_dollars(used[writer]) / 2)
    assert rows.loc[judge, "dollars"] == pytest.approx(_dollars(used[judge]))


def test_bad_price_file(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"m": {"input": "cheap"}}')
    with pytest.raises(StudyError, match="not a model cost file"):
        cost([tmp_path], prices)
    prices.write_text(PRICES.format(model="m") + "  batch: half\n")
    with pytest.raises(StudyError, match="batch"):
        cost([tmp_path], prices.rename(tmp_path / "prices.yaml"))
