"""Stored writings as a model: `--model replay/<writer>` (howtobench/writing/replay.py).

The writer is inspect's evaluated model, so the log, `evals_df`, the
studies and eval-set's model axis name it; what it answers is read back against the data
files themselves, not through the code under test.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai import Task
from inspect_ai.analysis import evals_df
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, read_eval_log
from inspect_ai.model import get_model
from inspect_ai.solver import Generate, Solver, TaskState, solver

from howtobench import guide, open_writing
from howtobench.cli import main as howtobench
from howtobench.dataset.jsonl import DEMO_FILE
from howtobench.dataset.records import DataError
from howtobench.simulator.process import served
from howtobench.tasks import TASK_VERSION
from howtobench.vocabulary.parameter_values import ParameterError
from support.doc_pages import Pages, matching, reads_page
from support.evals import run_eval

BIN = Path(sys.executable).parent
WRITER = "demo-writer-b"
TASKS = ("howtobench/completion", "howtobench/guide", "howtobench/open")


def demo_writings(writer: str) -> dict[str, str]:
    """The demo file's stored writings of `writer`, by id, read straight from the file."""
    rows = [json.loads(line) for line in DEMO_FILE.read_text("utf-8").splitlines() if line]
    return {row["id"]: row["generations"][writer] for row in rows if writer in row["generations"]}


def inspect_cli(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 110):
    return subprocess.run(
        [str(BIN / "inspect"), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
        env={**os.environ, **(env or {})},
    )


def refusal(result: subprocess.CompletedProcess[str]) -> str:
    """What inspect printed of a refused task, on one line (rich wraps it to the width)."""
    return " ".join((result.stdout + result.stderr).split())


def assert_replayed(log: EvalLog, writer: str) -> None:
    """Each sample answered with the writer's stored writing, at zero tokens."""
    stored = demo_writings(writer)
    assert log.samples
    for sample in log.samples:
        assert sample.output.completion == stored[str(sample.id)]
        assert sample.output.model == writer
    usage = log.stats.model_usage[f"replay/{writer}"]
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (0, 0, 0)


@pytest.mark.slow
@reads_page("README.md")
def test_the_writer_is_the_model_of_the_log(doc_pages: Pages) -> None:
    """On the command line: the README's first command, `inspect eval howtobench/open
    --model replay/demo-writer-a ...` (its page's run, shared with the page's test)."""
    writer = "demo-writer-a"
    [block] = matching("README.md", "python -m pytest -q -ra")  # the README's that runs
    assert f"inspect eval howtobench/open -T dataset=demo --model replay/{writer} " in block.text
    logs = doc_pages.outputs("README.md") / "logs"
    [path] = logs.glob("*.eval")
    log = read_eval_log(str(path))
    assert log.eval.model == f"replay/{writer}"
    assert log.eval.metadata["replay"] == writer  # known as the task was built
    assert log.eval.task_version == TASK_VERSION
    assert not log.eval.tags  # the model names the writer
    assert_replayed(log, writer)
    assert {s.metadata["dataset"] for s in log.samples} == {"demo"}
    frame = evals_df(str(logs), quiet=True)
    assert frame["model"].tolist() == [f"replay/{writer}"]


def test_a_task_built_from_python_replays_through_the_model(tmp_path: Path) -> None:
    """Built before `eval()` knows its model, the task still replays: the model reads the
    sample's source; the studies' writer is the model's writer."""
    from howtobench.studies.runs import writer_model

    [log] = run_eval(
        open_writing(dataset="demo", scorers="rouge_l"), tmp_path, model=f"replay/{WRITER}"
    )
    assert_replayed(log, WRITER)
    assert log.eval.metadata["replay"] is None  # not known while the task was built
    assert writer_model(log) == WRITER


def test_the_old_form_is_refused_naming_the_model_form() -> None:
    """`-T replay=<writer>` with `--model none`, removed in task version 7: one line that
    names the model to give instead."""
    with pytest.raises(ParameterError) as refused:
        open_writing(dataset="demo", replay=WRITER, scorers="rouge_l")
    assert str(refused.value) == (
        f"-T replay: removed in task version 7; use --model replay/{WRITER}"
    )
    with pytest.raises(ParameterError, match=r"^-T replay: .*use --model replay/<writer>$"):
        guide(dataset="demo", replay="")


@pytest.mark.slow
def test_the_old_form_is_one_line_on_the_command_line(tmp_path: Path) -> None:
    result = inspect_cli(
        *("eval", "howtobench/guide", "-T", "dataset=demo", "-T", "replay=demo-writer-a"),
        *("--model", "none", "--log-dir", "logs"),
        cwd=tmp_path,
        env={"COLUMNS": "80"},  # as inspect prints without a terminal
    )
    assert result.returncode == 1
    printed = [line for line in (result.stdout + result.stderr).splitlines() if line.strip()]
    assert printed == ["-T replay: removed in task version 7; use --model replay/demo-writer-a"]
    assert not list(tmp_path.rglob("*.eval"))  # refused before anything ran


@pytest.mark.slow
def test_a_sample_without_a_stored_writing_is_refused_in_one_line(
    data_folder: Path, tmp_path: Path
) -> None:
    # model-b has no writing for infer_2 (conftest.data_folder)
    args = ["-T", f"dataset={data_folder}", "-T", "scorers=rouge_l", "--log-dir", "logs"]
    result = inspect_cli(
        "eval", "howtobench/guide", *args, "--model", "replay/model-b", cwd=tmp_path
    )
    said = refusal(result)
    assert "no stored writing of 'model-b' for 'infer_2'" in said, said
    assert "Traceback" not in said and "model-b.jsonl" in said
    nobody = inspect_cli(
        "eval", "howtobench/guide", *args, "--model", "replay/nobody", cwd=tmp_path
    )
    assert "no stored writings of 'nobody' (stored: model-a, model-b)" in refusal(nobody)


def test_a_missing_writing_is_the_sample_error_when_built_from_python(
    data_folder: Path, tmp_path: Path
) -> None:
    [log] = run_eval(
        guide(dataset=str(data_folder), scorers="rouge_l"),
        tmp_path,
        model="replay/model-b",
        status="error",
    )
    assert log.error is not None
    assert "replay/model-b: no stored writing of model-b for sample 'infer_2'" in log.error.message


@pytest.mark.parametrize("name", ["../model-a", "../..", "..\\model-a"])
def test_a_writer_name_that_leads_out_of_the_data_folder_is_refused(
    name: str, data_folder: Path, tmp_path: Path
) -> None:
    """`replay/../model-a` would read `<task>/model-a.jsonl`, outside `inferences/` (put
    there below), and `replay/../..` files above the data folder: the writer's name is
    refused in one line naming the folder, before anything runs."""
    inferences = data_folder / "guide" / "inferences"
    shutil.copy(inferences / "model-a.jsonl", data_folder / "guide" / "model-a.jsonl")
    with pytest.raises(DataError) as refused:
        run_eval(
            "howtobench/guide",
            tmp_path / "logs",
            model=f"replay/{name}",
            task_args={"dataset": str(data_folder), "scorers": "rouge_l"},
        )
    message = str(refused.value)
    assert message.startswith(f"{inferences}: '{name}' is no writer's name in a data folder")
    assert "\n" not in message
    assert not list(tmp_path.rglob("*.eval"))


@pytest.mark.slow
def test_an_unbound_grader_never_falls_back_to_the_writer(tmp_path: Path) -> None:
    result = inspect_cli(
        "eval", "howtobench/open", "-T", "dataset=demo", "--model", f"replay/{WRITER}", cwd=tmp_path
    )
    said = refusal(result)
    assert (
        "-T scorers: the judge scorers need a judge model: bind one with --model-role grader=<model>"
        in said
    )
    assert f"(replay/{WRITER} only replays stored writings)" in said and "Traceback" not in said
    assert not list(tmp_path.rglob("*.eval"))  # refused before anything ran


def test_an_unbound_grader_is_refused_when_built_from_python(tmp_path: Path) -> None:
    [log] = run_eval(
        open_writing(dataset="demo"), tmp_path, model=f"replay/{WRITER}", status="error"
    )
    assert log.error is not None
    assert "bind one with --model-role grader=<model>" in log.error.message


def test_a_replay_model_answers_no_other_question(tmp_path: Path) -> None:
    """However a question reaches it (a role left unbound, a panel), a replay model does
    not hand a stored writing back as a judge's answer."""

    @solver
    def ask_it_to_judge() -> Solver:
        async def solve(state: TaskState, generate: Generate) -> TaskState:
            state.output = await get_model(f"replay/{WRITER}").generate("Score this writing 1-10.")
            return state

        return solve

    sample = Sample(id="demo_open_1", input="写", metadata={"dataset": "demo", "task": "open"})
    [log] = run_eval(Task(dataset=[sample], solver=ask_it_to_judge()), tmp_path, status="error")
    assert log.error is not None
    assert "only replays writings and cannot answer another question" in log.error.message
    with pytest.raises(Exception, match="replays stored writings and cannot judge"):
        open_writing(dataset="demo", judges=f"replay/{WRITER}")


def _finished(folder: Path) -> dict[str, str]:
    """Log file -> eval id of every log in `folder` that finished successfully."""
    done = {}
    for path in folder.glob("*.eval"):
        try:
            header = read_eval_log(str(path), header_only=True)
        except Exception:  # being written
            continue
        if header.status == "success":
            done[path.name] = header.eval.eval_id
    return done


@pytest.mark.slow
def test_an_eval_set_over_writers_completes_and_resumes_on_the_model_axis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two stored writers × three tasks with inspect's own model axis; killed (SIGKILL)
    once the first log finished, then run again: every (task, writer) ends with one
    finished log, the logs finished before the kill are kept as they were, and the
    studies read the folder and name both writers."""
    models = "replay/demo-writer-a,replay/demo-writer-b"
    logs = tmp_path / "logs"
    with served(latency=0.4) as simulator:
        env = {
            "SIM_BASE_URL": simulator.base_url,
            "SIM_API_KEY": "none",
            "INSPECT_CACHE_DIR": str(tmp_path / "cache"),
        }
        command = [
            str(BIN / "inspect"),
            "eval-set",
            *TASKS,
            "-T",
            "dataset=demo",
            "--model",
            models,
            "--model-role",
            "grader=openai-api/sim/judge",
            "--log-dir",
            str(logs),
            "--display",
            "none",
        ]
        first = subprocess.Popen(
            command,
            cwd=tmp_path,
            env={**os.environ, **env},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 100
        while not _finished(logs) and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        before = _finished(logs)
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
        assert before, "no log finished before the kill"
        assert len(before) < 6, "every log finished before the kill: nothing was resumed"

        again = subprocess.run(
            command,
            cwd=tmp_path,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=110,
        )
        assert again.returncode == 0, again.stderr
    after = _finished(logs)
    assert len(after) == 6
    assert all(after[name] == eval_id for name, eval_id in before.items())
    # what else is there is the killed process's `started` logs, which inspect keeps (it
    # cannot know that another process stopped writing them)
    stale = [
        read_eval_log(str(p), header_only=True) for p in logs.glob("*.eval") if p.name not in after
    ]
    assert all(h.status == "started" for h in stale)
    headers = [read_eval_log(str(logs / name), header_only=True) for name in after]
    pairs = sorted((h.eval.task, h.eval.model) for h in headers)
    assert pairs == sorted((t, m) for t in TASKS for m in models.split(","))

    assert howtobench(["report", str(logs)]) == 0  # in process: the command is test_studies_cli's
    shown = capsys.readouterr().out
    assert "demo-writer-a" in shown and "demo-writer-b" in shown
    assert "replay/" not in shown


def test_an_unbound_perturber_is_the_grader_not_the_writer(tmp_path: Path) -> None:
    """`-T perturb=transfer:...` with no perturber bound: the grader rewrites (a replay
    model would refuse the question, and must never be asked it)."""
    from inspect_ai.model import ChatMessage, ModelOutput, ModelUsage

    from support.judges import SCORES, ScriptedJudge, fixed_scores

    judge = ScriptedJudge(fixed_scores(SCORES))
    letter = "亲爱的朋友：\n\n改写成的信。\n\n此致\n敬礼"

    def grade(messages: list[ChatMessage], *rest: object) -> ModelOutput:
        if "一封书信" not in messages[-1].text:  # not the perturber's question
            return judge(messages, *rest)
        out = ModelOutput.from_content("mockllm/grader", letter)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    task = open_writing(dataset="demo", genre="poem", perturb="transfer:letter")
    [log] = run_eval(
        task,
        tmp_path,
        get_model("mockllm/grader", custom_outputs=grade),
        model=f"replay/{WRITER}",
    )
    [sample] = log.samples
    assert sample.output.completion == letter
    assert sample.metadata["perturbation"]["model"] == "mockllm/grader"
    assert not math.isnan(sample.scores["tow"].value["overall"])  # scored


def test_your_own_jsonl_file_replays_from_any_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative `-T dataset=` path: each sample carries the absolute one, so the replay
    model reads the same file whatever folder it runs in."""
    from support.data import write_jsonl

    write_jsonl(
        tmp_path / "data" / "mine.jsonl",
        [
            {"id": "a", "instruction": "写一首诗", "generations": {"m1": "春风", "m2": "秋雨"}},
            {"id": "b", "instruction": "写一段话", "generations": {"m1": "", "m2": "夏日"}},
        ],
    )
    monkeypatch.chdir(tmp_path)
    task = open_writing(dataset="data/mine.jsonl", scorers="rouge_l")
    monkeypatch.chdir(tmp_path / "data")  # elsewhere by the time the samples run
    [log] = run_eval(task, tmp_path / "logs", model="replay/m1")
    assert {s.id: s.output.completion for s in log.samples} == {"a": "春风", "b": ""}
    assert {s.metadata["dataset"] for s in log.samples} == {str(tmp_path / "data" / "mine.jsonl")}


def test_a_replay_model_without_a_writer_or_with_model_arguments_is_refused() -> None:
    from howtobench.writing.replay import ReplayError

    with pytest.raises(ReplayError, match="^--model replay/: name the writer"):
        get_model("replay/")
    with pytest.raises(ReplayError, match="^-M foo: replay/demo-writer-a takes no model arguments"):
        get_model("replay/demo-writer-a", foo=1)
