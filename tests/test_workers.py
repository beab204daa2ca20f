"""Workers that own their bookkeeping (`howtobench.scale.workers`) and worker files of equal work
(`howtobench shards split`), run as a job runner runs them: the recipe's definition file
as a process, a simulator process as the judge over HTTP, `kill -9` at two points and the
same command again, into a local folder and into a bucket of an S3-compatible server.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from howtobench.scale import workers
from howtobench.scale.limits import VARIABLES, limits
from howtobench.scale.shards import Task, cut, read_capture, split, writing_calls
from howtobench.scale.workers import CAPTURE, SELECTION
from howtobench.simulator.process import Served, served
from howtobench.vocabulary.errors import UserError
from support.evals import run_eval
from support.judges import experts, llm_calls
from support.local_http import closed_port
from support.scale_out import (
    capture,
    finished,
    job_settings,
    one_finished_log_per_unit,
    recipe,
    wait_asked,
)

# --- the calls a writing costs, from the tree (quick)


def test_the_calls_of_a_writing_come_from_the_tree() -> None:
    # on the paper's tree: 5 for completion (4 content leaves and the impression), 7 for
    # guide and open (+ plots, paragraphing), one more for the negotiator
    plan = {"weights": "plan.jsonl"}
    assert writing_calls("completion", plan) == llm_calls("completion")
    assert writing_calls("guide", plan) == writing_calls("open", plan) == llm_calls("open")
    assert writing_calls("guide", {}) == llm_calls("guide") + 1  # and the negotiator
    assert writing_calls("guide", {"weights": "uniform"}) == llm_calls("guide")
    narrowed = len(experts("open", ("content", "impression")))
    assert writing_calls("open", {**plan, "nodes": "content,impression"}) == narrowed
    assert writing_calls("open", {**plan, "judges": "a,b", "judge_samples": 3}) == 6 * llm_calls(
        "open"
    )
    assert writing_calls("open", {**plan, "scorers": ["tow", "rubric"]}) == llm_calls("open") + 1
    assert writing_calls("open", {"scorers": "rouge_l,bleu"}) == 0


# The published benchmark's instructions per task.
PAPER_SIZES = {"completion": 379, "guide": 456, "open": 467}


def paper_tasks(writers: int = 10) -> list[Task]:
    """The whole benchmark's tasks for `writers` writers, judged from a plan."""
    return [
        Task(f"{kind}-{w}", size, writing_calls(kind, {"weights": "plan.jsonl"}))
        for w in range(writers)
        for kind, size in PAPER_SIZES.items()
    ]


@pytest.mark.parametrize("workers", [1, 2, 7, 8, 64])
def test_workers_get_nearly_equal_judge_calls(workers: int) -> None:
    tasks = paper_tasks()
    stretches = cut(tasks, workers)
    assert len(stretches) == workers
    calls = [sum(p.samples * p.task.calls for p in pieces) for pieces in stretches]
    total = sum(t.samples * t.calls for t in tasks)
    # the count for the full benchmark on the paper's tree, 84,862, less its 1,302
    # negotiator calls (a plan): 10 writers × (379·5 + 456·7 + 467·7)
    expected = 10 * sum(size * llm_calls(kind) for kind, size in PAPER_SIZES.items())
    assert sum(calls) == total == expected
    heaviest = max(t.calls for t in tasks)
    # each worker within one writing's calls of its share (each end within half of one)
    assert all(abs(c - total / workers) <= heaviest for c in calls)
    # every sample of every task exactly once, each worker a task at most once
    covered: dict[str, list[int]] = {t.identifier: [] for t in tasks}
    for pieces in stretches:
        assert len({p.task.identifier for p in pieces}) == len(pieces)
        assert sum(not p.whole for p in pieces) <= 2
        for piece in pieces:
            covered[piece.task.identifier] += range(piece.start, piece.stop)
    assert all(
        sorted(v) == list(range(t.samples)) for t, v in zip(tasks, covered.values(), strict=True)
    )


def test_more_workers_than_samples_is_refused() -> None:
    with pytest.raises(UserError, match="more than the 3 samples"):
        cut([Task("a", 3, 5)], 4)


def test_a_file_that_is_no_capture_is_refused_in_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "tasks.json"
    bad.write_text('{"tasks": []}', "utf-8")
    with pytest.raises(UserError, match="not an inspect eval-set capture"):
        read_capture(bad)


# --- the line a worker starts with: its judge connections (quick: the entry in process)


def start(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], **env: str
) -> tuple[int, list[str], int]:
    """`workers.run` as the recipe calls it, outside selection and capture mode, with these
    of inspect's variables: its status, its stderr's lines, and how often it called the
    definition (which reads the limits as the recipe does)."""
    for name in (*VARIABLES.values(), SELECTION, CAPTURE):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    defined: list[dict[str, int | None]] = []
    status = workers.run(lambda: defined.append(limits()), "unused", ["openai-api/sim/judge"])
    return status, capsys.readouterr().err.splitlines(), len(defined)


def test_a_worker_says_its_connections_are_inspects_adaptive_limit_when_unset(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """inspect-ai 0.3.285 leaves an unset limit to its adaptive concurrency (20 at the
    start, up to 100: seen in a worker's logs as the judge's limit going 20, 40, 80)."""
    status, lines, defined = start(monkeypatch, capsys)
    assert (status, defined) == (0, 1)
    assert lines[0].startswith(
        "howtobench worker: judge connections: INSPECT_EVAL_MAX_CONNECTIONS unset, so "
        "inspect's adaptive concurrency per judge model: 20 at the start, "
    )
    assert "up to 100 " in lines[0] and "no less than 10)" in lines[0]


def test_a_worker_says_the_connections_it_was_given(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines, defined = start(monkeypatch, capsys, INSPECT_EVAL_MAX_CONNECTIONS="12")
    assert (status, defined) == (0, 1)
    assert lines[0] == (
        "howtobench worker: judge connections: 12 per judge model (INSPECT_EVAL_MAX_CONNECTIONS)"
    )


@pytest.mark.parametrize("name", list(VARIABLES.values()))
def test_a_limit_that_is_no_whole_number_stops_the_worker_in_one_line(
    name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines, defined = start(monkeypatch, capsys, **{name: "0"})
    assert (status, defined) == (1, 0)
    assert lines == [f"{name}='0': give a whole number above 0, or leave it unset"]


def test_a_capture_says_nothing_of_connections(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    status, lines, defined = start(monkeypatch, capsys, **{CAPTURE: str(tmp_path / "tasks.json")})
    assert (status, lines, defined) == (0, [], 1)


# --- the real stack: capture, split, workers killed and run again


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    return job_settings(tmp_path_factory.mktemp("job"))


@pytest.fixture(scope="module")
def judge() -> Iterator[Served]:
    """A slow judge (0.2 s a call), so a worker can be killed while it judges."""
    with served(latency=0.2) as simulator:
        yield simulator


@pytest.fixture(scope="module")
def other_judge() -> Iterator[Served]:
    """A second host's judge, as slow."""
    with served(latency=0.2) as simulator:
        yield simulator


@pytest.fixture(scope="module")
def manifest(job: dict[str, str]) -> dict[str, Any]:
    """The capture, run with no judge endpoint in the environment at all."""
    return capture(job, Path(job["FOLDER"]), None)


@pytest.mark.slow
def test_the_capture_needs_no_judge_endpoint_and_keeps_identities(
    job: dict[str, str], manifest: dict[str, Any], judge: Served
) -> None:
    with_endpoint = capture(job, Path(job["FOLDER"]), judge.base_url)
    assert [t["identifier"] for t in manifest["tasks"]] == [
        t["identifier"] for t in with_endpoint["tasks"]
    ]
    assert len(manifest["tasks"]) == 6


def calls(judge: Served) -> int:
    """Questions the judge has been asked so far."""
    return judge.calls()


def kill_after(process: subprocess.Popen[str], judge: Served, answered: int) -> None:
    """`kill -9` the worker once the judge has been asked `answered` more questions."""
    wait_asked(judge, answered, lambda: process.poll() is None)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(90)


@pytest.mark.slow
@pytest.mark.timeout(300)  # s3: 74 s idle, 90-120 s at load 4 (2 cores); local about half
@pytest.mark.parametrize("where", ["local", pytest.param("s3", marks=pytest.mark.nightly)])
def test_a_worker_killed_twice_resumes_with_only_in_flight_questions_asked_again(
    where: str,
    job: dict[str, str],
    manifest: dict[str, Any],
    judge: Served,
    other_judge: Served,
    tmp_path: Path,
    request: pytest.FixtureRequest,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if where == "s3":
        server = request.getfixturevalue("s3_server")
        server.environment(monkeypatch, tmp_path / "no-aws-config")
        log_dir = f"{server.bucket('workers')}/logs"
    else:
        log_dir = str(tmp_path / "logs")
    (tmp_path / "tasks.json").write_text(json.dumps(manifest), "utf-8")
    split(tmp_path / "tasks.json", 3, tmp_path / "shards")
    env = {**job, "HOWTOBENCH_LOG_DIR": log_dir}
    files = [tmp_path / "shards" / f"worker-{k}.json" for k in range(3)]
    planned = [json.loads(f.read_text("utf-8"))["howtobench"]["judge_calls"] for f in files]
    assert len(json.loads(files[1].read_text("utf-8"))["howtobench"]["limits"]) == 2  # two cut

    other_before = calls(other_judge)

    def worker(index: int, host: Served) -> subprocess.Popen[str]:
        return recipe(
            env,
            host.base_url,
            tmp_path / f"cache-{index}",  # each worker its own reply store, kept across kills
            INSPECT_EVAL_SET_SELECTION=str(files[index]),
        )

    # workers 0 and 2 run through once, on one host: the judge is asked what the split planned
    before = calls(judge)
    straight = [worker(0, judge), worker(2, judge)]
    # meanwhile worker 1, on a host of its own: killed a third of the way in, then again a
    # third further into its continuation, then run out
    kill_after(worker(1, other_judge), other_judge, planned[1] // 3)
    kill_after(worker(1, other_judge), other_judge, planned[1] // 3)
    output = finished(worker(1, other_judge))
    for process in straight:
        finished(process)
    assert calls(judge) - before == planned[0] + planned[2]
    assert "continuing" in output
    assert "judge connections: INSPECT_EVAL_MAX_CONNECTIONS unset" in output
    asked = calls(other_judge) - other_before
    in_flight = other_judge.stats()["peak"]  # the most questions ever in flight at once
    assert planned[1] <= asked <= planned[1] + 2 * in_flight
    print(f"{where}: worker 1 asked {asked} questions for {planned[1]} planned (peak {in_flight})")
    one_finished_log_per_unit(log_dir, tmp_path / "shards")
    if where == "s3":
        return  # the rerun below reads the folder as above, only slower
    # and the same command once more: nothing left to do, nothing asked
    before = calls(other_judge)
    again = finished(worker(1, other_judge))
    assert calls(other_judge) == before
    assert again.count("skipped") == len(json.loads(files[1].read_text("utf-8"))["tasks"])


@pytest.mark.slow
def test_a_worker_whose_judge_went_away_ends_with_the_reason(
    job: dict[str, str],
    manifest: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A worker file of six tasks and a judge that is gone: the first task stops, the
    rest never start, and after everything inspect drew, the worker's last line says
    what did not finish, why, and to run the same command again."""
    from inspect_ai import eval_set

    from howtobench import tasks

    (tmp_path / "tasks.json").write_text(json.dumps(manifest), "utf-8")
    split(tmp_path / "tasks.json", 1, tmp_path / "shards")
    url = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv("SIM_BASE_URL", url)
    monkeypatch.setenv("SIM_API_KEY", "none")
    monkeypatch.setenv(SELECTION, str(tmp_path / "shards" / "worker-0.json"))
    monkeypatch.delenv(CAPTURE, raising=False)
    log_dir = str(tmp_path / "logs")
    made = {"completion": tasks.completion, "guide": tasks.guide, "open": tasks.open_writing}

    def define() -> bool:  # the recipe's eval set, without inspect's retries (a slower end)
        success, _ = eval_set(
            [made[name](dataset="demo", weights=job["HOWTOBENCH_PLAN"]) for name in made],
            log_dir=log_dir,
            model=[f"replay/{writer}" for writer in job["HOWTOBENCH_WRITERS"].split(",")],
            model_roles={"grader": job["HOWTOBENCH_JUDGE"]},
            eval_set_id="howtobench",
            max_retries=0,
            display="none",
        )
        return success

    assert workers.run(define, log_dir, [job["HOWTOBENCH_JUDGE"]]) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("howtobench worker: ") and "did not finish" in last, last
    assert f"(the first stopped: judge openai-api/sim/judge at {url} did not answer" in last
    assert last.endswith("run the same command again to continue them"), last


@pytest.mark.slow
@pytest.mark.nightly
def test_a_finished_log_left_beside_its_stopped_one_is_tidied_on_the_next_start(
    job: dict[str, str], manifest: dict[str, Any], judge: Served, tmp_path: Path
) -> None:
    """A kill after the retry's log finished but before the stopped log was removed: the
    next start removes it and runs nothing."""
    (tmp_path / "tasks.json").write_text(json.dumps(manifest), "utf-8")
    split(tmp_path / "tasks.json", 1, tmp_path / "shards")
    env = {**job, "HOWTOBENCH_LOG_DIR": str(tmp_path / "logs")}
    selection = str(tmp_path / "shards" / "worker-0.json")
    kill_after(
        recipe(env, judge.base_url, tmp_path / "cache", INSPECT_EVAL_SET_SELECTION=selection),
        judge,
        20,
    )
    stopped = {p.name: p.read_bytes() for p in (tmp_path / "logs").glob("*.eval")}
    finished(recipe(env, judge.base_url, tmp_path / "cache", INSPECT_EVAL_SET_SELECTION=selection))
    for name, content in stopped.items():  # put the replaced logs back, as if not removed
        if not (tmp_path / "logs" / name).exists():
            (tmp_path / "logs" / name).write_bytes(content)
    before = calls(judge)
    output = finished(
        recipe(env, judge.base_url, tmp_path / "cache", INSPECT_EVAL_SET_SELECTION=selection)
    )
    assert "removed" in output and calls(judge) == before
    one_finished_log_per_unit(str(tmp_path / "logs"), tmp_path / "shards")


@pytest.mark.slow
@pytest.mark.nightly
def test_a_worker_takes_its_connections_from_inspects_variable(
    job: dict[str, str], manifest: dict[str, Any], tmp_path: Path
) -> None:
    """`INSPECT_EVAL_MAX_CONNECTIONS` bounds the judge calls a worker has in flight (seen
    at the judge); a value that is no whole number stops it in one line, before any run;
    left unset, inspect's adaptive limit starts at 20 and doubles (the logs' record of it),
    so the judge sees more than 20 calls at once."""
    (tmp_path / "tasks.json").write_text(json.dumps(manifest), "utf-8")
    split(tmp_path / "tasks.json", 1, tmp_path / "shards")
    env = {
        **job,
        "HOWTOBENCH_LOG_DIR": str(tmp_path / "logs"),
        "INSPECT_EVAL_SET_SELECTION": str(tmp_path / "shards" / "worker-0.json"),
    }
    cache = tmp_path / "cache"
    with served(latency=0.2) as judge:
        bad = recipe(env, judge.base_url, cache, INSPECT_EVAL_MAX_CONNECTIONS="ten")
        output, _ = bad.communicate(timeout=110)
        assert bad.returncode == 1
        assert output.strip().splitlines() == [
            "INSPECT_EVAL_MAX_CONNECTIONS='ten': give a whole number above 0, or leave it unset"
        ]
        assert judge.calls() == 0
        output = finished(recipe(env, judge.base_url, cache, INSPECT_EVAL_MAX_CONNECTIONS="2"))
        assert judge.calls() > 0 and judge.stats()["peak"] == 2
        assert "judge connections: 2 per judge model" in output
        unset = {**env, "HOWTOBENCH_LOG_DIR": str(tmp_path / "adaptive")}
        finished(recipe(unset, judge.base_url, tmp_path / "adaptive-cache"))
        assert 20 < judge.stats()["peak"] <= 100
    one_finished_log_per_unit(str(tmp_path / "logs"), tmp_path / "shards")
    from inspect_ai.log import list_eval_logs, read_eval_log

    changes = [
        (change.old_limit, change.new_limit, change.reason)
        for info in list_eval_logs(str(tmp_path / "adaptive"))
        for change in read_eval_log(info, header_only=True).stats.connection_limit_history
        if change.model == job["HOWTOBENCH_JUDGE"]
    ]
    assert (20, 40, "slow_start") in changes
    assert all(new <= 100 for _, new, _ in changes)


# --- a folder the worker shares with other logs: nothing finished is deleted, no overlap


def one_task(manifest: dict[str, Any], folder: Path) -> Path:
    """A capture of the eval set's largest task alone (a small job)."""
    largest = max(manifest["tasks"], key=lambda task: task["samples"])
    path = folder / "one-task.json"
    path.write_text(json.dumps({**manifest, "tasks": [largest]}), "utf-8")
    return path


def limit_of(worker: Path) -> tuple[int, int]:
    [limit] = json.loads(worker.read_text("utf-8"))["howtobench"]["limits"].values()
    return (limit[0], limit[1])


def exited(process: subprocess.Popen[str], status: int) -> str:
    output, _ = process.communicate(timeout=110)
    assert process.returncode == status, output[-3000:]
    return output


def test_a_second_split_into_one_folder_is_refused_or_replaced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capture_file = tmp_path / "tasks.json"
    capture_file.write_text(
        json.dumps({"eval_set_id": "s", "tasks": [{"identifier": "a", "samples": 30}]}), "utf-8"
    )
    shards = tmp_path / "shards"
    split(capture_file, 3, shards)
    split(capture_file, 3, shards)  # the same split again: the same files
    with pytest.raises(UserError, match=r"holds the worker files of another split .*--replace"):
        split(capture_file, 2, shards)
    assert len(list(shards.glob("worker-*.json"))) == 3  # refused: nothing touched
    split(capture_file, 2, shards, replace=True)
    assert sorted(p.name for p in shards.glob("*.json")) == ["worker-0.json", "worker-1.json"]
    assert "deleted the worker files of an earlier split" in capsys.readouterr().out
    with pytest.raises(UserError, match=r"^--out .*: a file, not a folder"):
        split(capture_file, 2, capture_file)


@pytest.fixture(scope="module")
def first_split_done(
    job: dict[str, str],
    manifest: dict[str, Any],
    judge: Served,
    tmp_path_factory: pytest.TempPathFactory,
) -> Path:
    """One task split in two, its first worker run through: the folder holds the capture
    (`one-task.json`), the split (`first/`) and the finished log folder (`logs/`), which
    each test below copies before it adds to it."""
    folder = tmp_path_factory.mktemp("first-split")
    split(one_task(manifest, folder), 2, folder / "first")
    env = {**job, "HOWTOBENCH_LOG_DIR": str(folder / "logs")}
    selection = str(folder / "first" / "worker-0.json")
    finished(recipe(env, judge.base_url, folder / "cache", INSPECT_EVAL_SET_SELECTION=selection))
    return folder


def copied_logs(done: Path, folder: Path) -> Path:
    """A copy of the finished log folder, for a test to add to."""
    return Path(shutil.copytree(done / "logs", folder / "logs"))


@pytest.mark.slow
def test_a_copied_finished_log_is_kept_and_named_not_deleted(
    job: dict[str, str], first_split_done: Path, judge: Served, tmp_path: Path
) -> None:
    """A finished log of the unit that is newer than the worker's own (a copy brought in
    by hand) is no reason to delete either: both stay, the worker names them and exits 1,
    and check-logs fails on the folder as report refuses it."""
    from howtobench.cli import main as howtobench

    logs = copied_logs(first_split_done, tmp_path)
    env = {**job, "HOWTOBENCH_LOG_DIR": str(logs)}
    selection = str(first_split_done / "first" / "worker-0.json")
    [own] = logs.glob("*.eval")
    copy = logs / f"zz-copy-{own.name}"
    copy.write_bytes(own.read_bytes())  # written after: the newer file
    before = calls(judge)
    output = exited(
        recipe(env, judge.base_url, tmp_path / "cache", INSPECT_EVAL_SET_SELECTION=selection), 1
    )
    assert own.exists() and copy.exists() and calls(judge) == before
    [line] = [row for row in output.splitlines() if "finished logs" in row]
    assert own.name in line and copy.name in line and "the same log copied" in line
    assert howtobench(["check-logs", str(logs)]) == 1


@pytest.mark.slow
def test_a_resplit_over_one_log_folder_is_refused_before_it_runs(
    job: dict[str, str], first_split_done: Path, judge: Served, tmp_path: Path
) -> None:
    """Two splits of one task cut it at different samples: a worker of the second split
    refuses a folder holding finished ranges of the first that overlap its own, in one
    line, asking the judge nothing."""
    split(first_split_done / "one-task.json", 3, tmp_path / "second")
    env = {**job, "HOWTOBENCH_LOG_DIR": str(copied_logs(first_split_done, tmp_path))}
    done = limit_of(first_split_done / "first" / "worker-0.json")
    # a worker of the second split whose range overlaps the finished one without being it
    second = next(
        str(path)
        for path in sorted((tmp_path / "second").glob("worker-*.json"))
        if (limit := limit_of(path)) != done and limit[0] < done[1]
    )
    before = calls(judge)
    output = exited(
        recipe(env, judge.base_url, tmp_path / "cache", INSPECT_EVAL_SET_SELECTION=second), 2
    )
    assert calls(judge) == before
    [line] = [row for row in output.splitlines() if "another split" in row]
    assert line.startswith("howtobench worker: ")
    assert "already holds finished logs of another split of these tasks" in line
    assert second in line and "a log folder of its own" in line


def test_a_one_process_run_takes_eval_sets_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without worker files the recipe is eval-set's one-process run: when `define`
    returns eval_set's verdict, an unfinished run (a judge that went away) exits 1,
    where inspect's own `eval` exits 0."""
    from howtobench.scale import workers

    for name in ("INSPECT_EVAL_SET_SELECTION", "INSPECT_EVAL_SET_CAPTURE"):
        monkeypatch.delenv(name, raising=False)
    assert workers.run(lambda: False, "unused", []) == 1
    assert workers.run(lambda: True, "unused", []) == 0
    assert workers.run(lambda: None, "unused", []) == 0  # a define that says nothing


@pytest.mark.slow
def test_a_one_process_run_whose_judge_went_away_ends_with_the_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The run's last line says why it did not finish, after everything inspect drew."""
    from inspect_ai.model import get_model

    from howtobench.tasks import guide

    for name in ("INSPECT_EVAL_SET_SELECTION", "INSPECT_EVAL_SET_CAPTURE"):
        monkeypatch.delenv(name, raising=False)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    dead = get_model("openai-api/sim/judge", base_url=url, api_key="none")

    def define() -> bool:  # as the recipe's: eval_set's verdict on a task left in error
        task = guide(dataset="demo")
        model = "replay/demo-writer-a"
        # no retry of inspect's: its backoff (3 s or more) only delays the same end
        run_eval(task, tmp_path, dead, status="error", max_retries=0, limit=1, model=model)
        return False

    assert workers.run(define, str(tmp_path), []) == 1
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("howtobench worker: did not finish: ") and ": error: " in last
    assert f"judge openai-api/sim/judge at {url} did not answer" in last
