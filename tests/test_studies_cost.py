"""The cost study: logged tokens per role, priced with a cost file, per scored writing."""

from pathlib import Path

import pytest
from inspect_ai import eval
from judges import SCORES, ScriptedJudge, fixed_scores

from howtobench import open_writing
from howtobench.cli import main
from howtobench.studies import StudyError
from howtobench.studies.cost import cost


def test_cost_per_role_and_writing(tmp_path: Path) -> None:
    judge = ScriptedJudge(fixed_scores(SCORES), name="priced-judge")
    [log] = eval(
        open_writing(dataset="demo", replay="demo-writer-a", genre="poem"),
        model="none",
        model_roles={"grader": judge.model()},
        log_dir=str(tmp_path / "logs"),
        display="none",
    )
    usage = log.stats.role_usage["grader"]
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        "mockllm/priced-judge:\n  input: 2.0\n  output: 8.0\n  input_cache_write: 2.5\n  input_cache_read: 0.5\n"
    )
    result = cost([tmp_path / "logs"], prices)
    [row] = result.tables["usage"].to_dict("records")
    expected = usage.input_tokens * 2.0 / 1e6 + usage.output_tokens * 8.0 / 1e6
    assert (
        row["role"] == "grader" and row["model"] == "mockllm/priced-judge" and row["writings"] == 1
    )
    assert row["input_tokens"] == usage.input_tokens > 0
    assert row["dollars"] == pytest.approx(expected)
    assert row["dollars_per_writing"] == pytest.approx(expected)
    assert (
        main(
            [
                "cost",
                str(tmp_path / "logs"),
                "--prices",
                str(prices),
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    assert (tmp_path / "out" / "cost_usage.csv").is_file()


def test_bad_price_file(tmp_path: Path) -> None:
    prices = tmp_path / "prices.json"
    prices.write_text('{"m": {"input": "cheap"}}')
    with pytest.raises(StudyError, match="not a model cost file"):
        cost([tmp_path], prices)
