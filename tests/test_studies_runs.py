"""Imperfect logs: an interrupted run, its `inspect eval-retry` continuation, two separate
runs of the same task, and files that are no logs at all.

The run that fails is real: a live writer (a model provider registered here, so that
`eval_retry` can rebuild it from the log) crashes once on one instruction; one sample at
a time, so the crash stops the run part way. The retry then finishes it. Expected numbers
are read from the logs with inspect's reader and a plain loop.
"""

from __future__ import annotations

import os
import shutil
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task, eval_retry
from inspect_ai.log import read_eval_log, write_eval_log
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

from howtobench import guide
from howtobench.cli import main
from howtobench.studies import StudyError, consistency, load_samples, report
from howtobench.studies.token_costs import cost
from support.data import demo_record
from support.evals import run_eval
from support.judges import ScriptedJudge, hashed_judge

JUDGE = ScriptedJudge(hashed_judge("judge-1"), name="judge")
CRASH_ONCE: set[str] = set()  # instructions on which the writer's next call crashes


class FlakyModels(ModelAPI):
    """`flaky/writer` writes a text from a hash of the prompt (and crashes once on an
    instruction in CRASH_ONCE); `flaky/judge` answers as the scripted judge."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (inspect's signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        if self.model_name == "judge":
            return JUDGE(input)
        prompt = input[-1].text
        for instruction in list(CRASH_ONCE):
            if instruction in prompt:
                CRASH_ONCE.discard(instruction)
                raise RuntimeError("writer crashed")
        text = "".join(
            "春夏秋冬山水风月"[(zlib.crc32(prompt.encode()) >> i) % 8] for i in range(60)
        )
        output = ModelOutput.from_content("flaky/writer", f"{text[:30]}\n\n{text[30:]}")
        output.usage = ModelUsage(input_tokens=100, output_tokens=60, total_tokens=160)
        return output


@modelapi(name="flaky")
def flaky() -> type[ModelAPI]:
    return FlakyModels


def live_guide() -> Task:
    """The demo's guide instructions, to be written live by `flaky/writer` (two epochs)."""
    return guide(dataset="demo", scorers="tow,rouge_l")


def raw(path: str | Path) -> dict[tuple[str, int], Any]:
    """(id, epoch) -> sample, read with inspect's reader."""
    return {(str(s.id), s.epoch): s for s in read_eval_log(str(path)).samples or []}


@pytest.fixture(scope="module")
def retried(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    """(folder, interrupted log, its retry): demo_guide_2 crashes the first run."""
    folder = tmp_path_factory.mktemp("retried")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("INSPECT_CACHE_DIR", str(folder / "cache"))
        CRASH_ONCE.add(demo_record("demo_guide_2")["instruction"])
        [first] = run_eval(
            live_guide(),
            folder / "logs",
            "flaky/judge",
            model="flaky/writer",
            status="error",
            epochs=2,
            max_samples=1,
        )
        assert not CRASH_ONCE
        time.sleep(1.1)  # a retry comes later; log times are in whole seconds
        [second] = eval_retry(first.location, log_dir=str(folder / "logs"), display="none")
    assert second.status == "success"
    return folder / "logs", Path(first.location), Path(second.location)


@pytest.mark.slow
def test_what_inspect_writes_for_a_retry(retried: tuple[Path, Path, Path]) -> None:
    """The facts the merging rests on (inspect 0.3.285)."""
    _, first, second = retried
    a, b = read_eval_log(str(first)), read_eval_log(str(second))
    assert a.eval.task_id == b.eval.task_id
    assert a.eval.eval_id != b.eval.eval_id and a.eval.run_id != b.eval.run_id
    assert a.eval.created < b.eval.created
    done = {k for k, s in raw(first).items() if s.error is None}
    assert 0 < len(done) < 6 and len(raw(second)) == 6
    # the completed samples are carried over, not run again
    assert all(raw(second)[k].uuid == raw(first)[k].uuid for k in done)
    # and the usage of the first log is rolled into the second's
    writer_a = a.stats.model_usage["flaky/writer"].output_tokens
    writer_b = b.stats.model_usage["flaky/writer"].output_tokens
    assert writer_b == writer_a + 60 * (6 - len(done))


def test_an_interrupted_log_is_used_and_says_what_it_lacks(
    retried: tuple[Path, Path, Path],
) -> None:
    _, first, _ = retried
    samples = raw(first)
    done = sorted(k for k, s in samples.items() if s.error is None)
    errored = sum(1 for s in samples.values() if s.error is not None)
    loaded = load_samples([first])
    assert sorted(zip(loaded.frame["id"], loaded.frame["epoch"], strict=True)) == done
    assert loaded.notes() == [
        f"{first}: interrupted (status 'error': RuntimeError('writer crashed')); it lacks "
        f"{6 - len(done)} of its 6 samples (3 ids × 2 epochs): {6 - len(samples)} never "
        f"run, {errored} ended in an error; the studies use the {len(done)} it has"
    ]
    board = report([first], metric="rouge_l")
    assert board.tables["counts"].loc["All", "flaky/writer"] == len({i for i, _ in done})
    assert board.notes[0] == loaded.notes()[0]


def test_a_log_and_its_retry_count_each_sample_once(retried: tuple[Path, Path, Path]) -> None:
    folder, first, second = retried
    loaded = load_samples([folder])
    final = raw(second)
    assert len(loaded.frame) == 6
    assert set(loaded.frame["run"]) == set(loaded.frame["log"]) == {str(second)}
    for row in loaded.frame.itertuples():
        assert row.rouge_l == pytest.approx(final[(row.id, row.epoch)].scores["rouge_l"].value)
    assert loaded.notes() == [
        f"{second} continues {first} (eval-retry, task id "
        f"{read_eval_log(str(second), header_only=True).eval.task_id}): one run, each sample "
        "counted once, from the newest log holding it"
    ]
    board = report([folder]).tables["leaderboard"]
    overall = {
        i: sum(s.scores["tow"].value["overall"] for (j, _), s in final.items() if j == i) / 2
        for i in ("demo_guide_1", "demo_guide_2", "demo_guide_3")
    }
    assert board.loc["All", "flaky/writer"] == pytest.approx(sum(overall.values()) / 3)


def test_a_retry_with_a_sample_only_the_old_log_has(
    retried: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    """Each sample from the newest log that holds it: an older copy fills a gap."""
    _, first, second = retried
    done = sorted(k for k, s in raw(first).items() if s.error is None)
    newer = read_eval_log(str(second))
    newer.samples = [s for s in newer.samples if (str(s.id), s.epoch) != done[0]]
    write_eval_log(newer, str(tmp_path / "retry.eval"))
    loaded = load_samples([first, tmp_path / "retry.eval"]).frame.set_index(["id", "epoch"])
    assert len(loaded) == 6
    assert loaded.loc[done[0], "log"] == str(first)
    assert (loaded.drop(index=done[0])["log"] == str(tmp_path / "retry.eval")).all()


def test_cost_counts_a_retried_run_once(retried: tuple[Path, Path, Path]) -> None:
    folder, first, second = retried
    result = cost([folder])
    usage = result.tables["usage"]
    assert set(usage["log"]) == {second.name}
    final = read_eval_log(str(second), header_only=True).stats
    writer = usage[usage["model"] == "flaky/writer"].iloc[0]
    assert writer["output_tokens"] == final.model_usage["flaky/writer"].output_tokens
    grader = usage[usage["role"] == "grader"].iloc[0]
    assert grader["input_tokens"] == final.role_usage["grader"].input_tokens
    assert any(note.startswith(f"{second} continues {first}") for note in result.notes)
    alone = cost([first])
    assert any(
        "interrupted (status 'error'" in note and "no dollars per writing" in note
        for note in alone.notes
    )


@pytest.mark.parametrize("status", ["cancelled", "started"])
def test_a_cancelled_or_unfinished_log(
    retried: tuple[Path, Path, Path], tmp_path: Path, status: str
) -> None:
    """What a stopped run leaves: status not success, no results, samples missing."""
    _, _, second = retried
    log = read_eval_log(str(second))
    log.status, log.results = status, None  # type: ignore[assignment]
    log.samples = [s for s in log.samples if s.epoch == 1]
    path = tmp_path / f"{status}.eval"
    write_eval_log(log, str(path))
    loaded = load_samples([path])
    assert len(loaded.frame) == 3
    assert loaded.notes() == [
        f"{path}: interrupted (status '{status}'); it lacks 3 of its 6 samples "
        "(3 ids × 2 epochs): 3 never run, 0 ended in an error; the studies use the 3 it has"
    ]
    log.samples = []
    write_eval_log(log, str(path))
    with pytest.raises(StudyError, match=r"no completed sample in the logs \(.*lacks 6 of its 6"):
        load_samples([path])


@pytest.mark.slow
def test_two_separate_runs_stay_apart(tmp_path: Path) -> None:
    """Two `inspect eval` runs of the same task, writer and judge are two runs: the
    consistency study counts each run's samples, and the report refuses to count the same
    writings twice."""
    logs = tmp_path / "logs"
    [first] = run_eval(live_guide(), logs, "flaky/judge", model="flaky/writer", epochs=2)
    time.sleep(1.1)
    [second] = run_eval(live_guide(), logs, "flaky/judge", model="flaky/writer", epochs=2)
    assert first.eval.task_id != second.eval.task_id
    loaded = load_samples([tmp_path / "logs"])
    assert len(loaded.frame) == 12 and loaded.frame["run"].nunique() == 2
    assert not any("continues" in note for note in loaded.notes())
    summary = consistency([tmp_path / "logs"]).tables["summary"].set_index(["source", "task"])
    assert summary.loc[("tow", "all"), "samples"] == 6
    with pytest.raises(StudyError, match="scored by 'tow' in 2 logs .*judged alike; keep the"):
        report([tmp_path / "logs"])


def truncated(source: Path, path: Path) -> Path:
    path.write_bytes(source.read_bytes()[: os.path.getsize(source) // 2])
    return path


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        ("truncated", "the zip archive is cut short (an incomplete copy or write)"),
        ("random", "an .eval log is a zip archive and this file is not one"),
        ("empty", "the file is empty"),
    ],
)
def test_files_that_are_no_logs_end_the_command_with_one_line(
    retried: tuple[Path, Path, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    reason: str,
) -> None:
    _, _, second = retried
    path = tmp_path / "logs" / f"{kind}.eval"
    path.parent.mkdir()
    if kind == "truncated":
        truncated(second, path)
    else:
        path.write_bytes(zlib.compress(b"not a log" * 50) if kind == "random" else b"")
    shutil.copy(second, tmp_path / "logs" / second.name)
    for study in ("cost", "report", "consistency"):
        for given in (path, path.parent):
            assert main([study, str(given)]) == 2
            err = capsys.readouterr().err
            assert err.startswith(
                f"howtobench {study}: error: {path}: cannot read it as an inspect log: {reason}"
            )
            assert err.count("\n") == 1  # one line, no traceback


def test_a_folder_named_twice_through_a_link(
    retried: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    folder, _, second = retried
    (tmp_path / "link").symlink_to(folder, target_is_directory=True)
    loaded = load_samples([folder, tmp_path / "link"])
    assert len(loaded.frame) == 6 and set(loaded.frame["log"]) == {str(second)}
