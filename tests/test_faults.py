"""Fault tolerance through the real stack: inspect, the openai client, HTTP, the simulator."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from inspect_ai import eval_set
from inspect_ai.log import list_eval_logs, read_eval_log
from inspect_ai.model import GenerateConfig, get_model

from howtobench import guide, open_writing
from howtobench.simulator import Faults
from howtobench.tree.spec import tree_for
from support.data import write_jsonl
from support.evals import run_eval
from support.judges import Serve
from support.signals import default_sigint


@pytest.mark.slow
def test_thirty_percent_transient_failures_still_score_everything(
    serve: Serve, tmp_path: Path
) -> None:
    faults = Faults(
        rate_429=0.1, rate_500=0.1, rate_drop=0.05, rate_hang=0.05, hang_seconds=5, seed=3
    )
    simulator = serve(faults=faults)
    grader = get_model(
        "openai-api/sim/judge", config=GenerateConfig(attempt_timeout=1, max_retries=20)
    )
    [log] = run_eval(guide(dataset="demo"), tmp_path, grader, model="replay/demo-writer-a")
    assert sum(simulator.faults_sent.values()) >= 5  # faults really happened
    assert set(simulator.faults_sent) >= {"429", "500"}
    assert all(isinstance(s.scores["tow"].value, dict) for s in log.samples)
    # the log is complete: every sample, every leaf, the weights
    assert len(log.samples) == 3
    for sample in log.samples:
        assert sample.scores["tow"].metadata["weights"]
        tree = tree_for(sample.metadata["task"])
        assert len(sample.scores["tow"].value) == len(
            {"overall", *tree.nodes, *(leaf.id for leaf in tree.leaves)}
        )


def _many_writings(path: Path, count: int) -> Path:
    rows = [
        {
            "id": f"w{i}",
            "task": "guide",
            "instruction": f"请写一篇关于第{i}个社区花园的文章。",
            "grounding": "- 缘起\n- 做法\n- 收获",
            "reference": "社区花园让邻里走近。",
            "generations": {"m": f"第{i}个社区花园的故事。\n\n大家一起种花。\n\n收获了友谊。"},
        }
        for i in range(count)
    ]
    return write_jsonl(path, rows)


@pytest.mark.slow
@pytest.mark.nightly
def test_interrupted_run_resumes_with_eval_retry_without_repeating_work(
    serve: Serve, tmp_path: Path
) -> None:
    simulator = serve(latency=0.5)  # 122 calls left after the interrupt: 15 s of margin
    data = _many_writings(tmp_path / "writings.jsonl", 24)
    env = {**os.environ, "INSPECT_CACHE_DIR": str(tmp_path / "cache")}
    inspect = [sys.executable, "-m", "inspect_ai"]
    logs = tmp_path / "logs"
    first = subprocess.Popen(
        [
            *inspect,
            "eval",
            "howtobench/guide",
            "-T",
            f"dataset={data}",
            "--model",
            "replay/m",
            "--model-role",
            "grader=openai-api/sim/judge",
            "--max-connections",
            "4",
            "--max-samples",
            "4",
            "--log-dir",
            str(logs),
            "--display",
            "none",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=default_sigint,
    )
    deadline = time.monotonic() + 60  # inside the suite's 120 s per test
    while sum(simulator.calls.values()) < 70 and time.monotonic() < deadline:
        time.sleep(0.1)
    first.send_signal(signal.SIGINT)
    first.communicate(timeout=30)
    [interrupted_info] = list_eval_logs(str(logs))
    interrupted = read_eval_log(interrupted_info)
    assert interrupted.status in ("cancelled", "error")
    done_before = {s.id for s in interrupted.samples or [] if s.scores}
    assert 0 < len(done_before) < 24
    calls_before = dict(simulator.questions)

    retry = subprocess.run(
        [
            *inspect,
            "eval-retry",
            interrupted_info.name,
            "--log-dir",
            str(logs),
            "--display",
            "none",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert retry.returncode == 0, retry.stderr
    final = read_eval_log(max(list_eval_logs(str(logs)), key=lambda info: info.mtime))
    assert final.status == "success"
    assert len(final.samples) == 24
    assert all(isinstance(s.scores["tow"].value, dict) for s in final.samples)
    # no finished sample was judged again: each of its questions was asked once in all
    for sample in final.samples:
        if sample.id in done_before:
            writing = sample.output.completion
            asked = {k: v for k, v in simulator.questions.items() if k[1] == writing}
            assert asked and all(v == 1 for v in asked.values()), sample.id
            assert asked == {k: v for k, v in calls_before.items() if k[1] == writing}
    # and nothing at all was asked twice: cut-off calls were cached or never answered
    repeated = {k: v for k, v in simulator.questions.items() if v > 1}
    assert len(repeated) <= 4  # at most the calls in flight when the run was stopped


@pytest.mark.slow
def test_eval_set_over_several_models_is_resumable(serve: Serve, tmp_path: Path) -> None:
    simulator = serve()
    grader = get_model("openai-api/sim/judge")
    writers = ["openai-api/sim/writer-a", "openai-api/sim/writer-b"]
    tasks = [
        guide(dataset="demo", scorers="tow,rouge_l"),
        open_writing(dataset="demo", genre="poem"),
    ]
    success, logs = eval_set(
        tasks,
        log_dir=str(tmp_path),
        model=writers,
        model_roles={"grader": grader},
        retry_attempts=2,
        display="none",
    )
    assert success and len(logs) == 4
    assert {log.eval.model for log in logs} == set(writers)
    assert simulator.calls["writer"] == 2 * (3 + 1)
    calls = sum(simulator.calls.values())
    success, again = eval_set(
        tasks, log_dir=str(tmp_path), model=writers, model_roles={"grader": grader}, display="none"
    )
    assert success and len(again) == 4
    assert sum(simulator.calls.values()) == calls  # finished logs are reused, not rerun
