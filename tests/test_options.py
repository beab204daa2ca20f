"""Bad options refused in one line; a failed unattended run seen by scripts; messages
printed as written.

Every numeric option of the `howtobench` commands is checked while argparse parses it
(status 2, argparse's `error:` line, nothing run), `--out` of a build must be a folder
a build can use, inspect's `--max-connections` is refused when our tasks are built,
`howtobench check-logs` exits 1 on a log that did not finish (where `inspect eval`
exits 0), the bleurt install hint keeps its `[bleurt]` through inspect's rich print, and
every registered scorer refuses an `-S` name it does not take in one line, as the tasks
refuse a `-T` one (with the new name of one that task version 4 renamed).
"""

from __future__ import annotations

import inspect
import io
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest
import rich.console
from inspect_ai import Task, task
from inspect_ai._util.registry import registry_find, registry_info
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import GenerateConfig

from howtobench import open_writing
from howtobench.baselines import bleurt as bleurt_module
from howtobench.cli import build_parser, main
from howtobench.construct.commands import check_out
from howtobench.construct.pipeline import LOCK_FILE
from howtobench.parameters.run_options import check_run_options
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.parameter_values import ParameterError, ScorerParameterError
from support.evals import run_eval

BUILD = ["build", "corpus.jsonl", "--out", "out", "--model", "mockllm/model"]
METAEVAL = ["metaeval", "logs", "--ratings", "ratings.csv"]
NEW = ["annotate", "new", "db.sqlite", "--logs", "logs"]
SERVE = ["annotate", "serve", "db.sqlite"]

REFUSED = [
    (BUILD, "--max-connections", "0", "expected a whole number of at least 1, got 0"),
    (BUILD, "--max-connections", "-3", "expected a whole number of at least 1, got -3"),
    (BUILD, "--max-connections", "many", "expected a whole number of at least 1, got 'many'"),
    (BUILD, "--max-retries", "-1", "expected a whole number of at least 0, got -1"),
    (BUILD, "--retry-attempts", "-2", "expected a whole number of at least 0, got -2"),
    (BUILD, "--threshold", "0", "expected a whole number from 1 to 5, got 0"),
    (BUILD, "--threshold", "6", "expected a whole number from 1 to 5, got 6"),
    (BUILD, "--per-genre", "0", "expected a whole number of at least 1, got 0"),
    (BUILD, "--seed", "-1", "expected a whole number of at least 0, got -1"),
    (METAEVAL, "--bootstrap", "-1", "expected a whole number of at least 0, got -1"),
    (METAEVAL, "--seed", "-5", "expected a whole number of at least 0, got -5"),
    (NEW, "--instructions", "0", "expected a whole number of at least 1, got 0"),
    (NEW, "--raters-per-writing", "0", "expected a whole number of at least 1, got 0"),
    (NEW, "--seed", "-1", "expected a whole number of at least 0, got -1"),
    (SERVE, "--port", "70000", "expected a whole number from 0 to 65535 (0: any free port)"),
    (SERVE, "--port", "-1", "expected a whole number from 0 to 65535 (0: any free port)"),
]


@pytest.mark.parametrize(("command", "option", "value", "message"), REFUSED)
def test_an_option_out_of_range_is_refused_in_one_line_with_status_2(
    command: list[str],
    option: str,
    value: str,
    message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    start = time.monotonic()
    with pytest.raises(SystemExit) as stopped:
        main([*command, option, value])
    assert stopped.value.code == 2
    assert time.monotonic() - start < 5  # refused while parsing: nothing was started
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 1  # the error alone, without argparse's usage block
    prog = "annotate " + command[1] if command[0] == "annotate" else command[0]
    assert errors[0].startswith(f"howtobench {prog}: error: argument {option}: {message}")


@pytest.mark.parametrize(
    ("argv", "name", "value"),
    [
        ([*BUILD, "--max-connections", "1"], "max_connections", 1),
        ([*BUILD, "--max-retries", "0"], "max_retries", 0),
        ([*BUILD, "--retry-attempts", "0"], "retry_attempts", 0),
        ([*BUILD, "--threshold", "5"], "threshold", 5),
        ([*METAEVAL, "--bootstrap", "0"], "bootstrap", 0),
        ([*SERVE, "--port", "0"], "port", 0),
        ([*SERVE, "--port", " 65535 "], "port", 65535),
    ],
)
def test_values_at_the_ends_of_a_range_are_taken(argv: list[str], name: str, value: int) -> None:
    assert getattr(build_parser().parse_args(argv), name) == value


def _out(tmp_path: Path, case: str) -> Path:
    """An --out that a build cannot use."""
    if case == "a file":
        (tmp_path / "out").write_text("x", "utf-8")
        return tmp_path / "out"
    if case == "under a file":
        (tmp_path / "f").write_text("x", "utf-8")
        return tmp_path / "f" / "out"
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("x", "utf-8")
    return tmp_path / "out"


@pytest.mark.parametrize(
    ("case", "says"),
    [
        ("a file", "is a file, not a folder"),
        ("under a file", "is inside"),
        ("a folder of other files", "holds files, and no earlier build's"),
    ],
)
def test_out_that_a_build_cannot_use_is_refused_in_one_line(
    case: str, says: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _out(tmp_path, case)
    corpus = tmp_path / "corpus.jsonl"  # never read: --out is checked first
    assert main(["build", str(corpus), "--out", str(out), "--model", "mockllm/model"]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith(f"howtobench build: error: --out {out}: ")
    assert says in line


def test_out_may_be_new_empty_or_an_earlier_builds(tmp_path: Path) -> None:
    check_out(tmp_path / "new" / "deeper")
    (tmp_path / "empty").mkdir()
    check_out(tmp_path / "empty")
    earlier = tmp_path / "earlier"
    (earlier / "logs").mkdir(parents=True)
    (earlier / LOCK_FILE).write_text("")
    check_out(earlier)
    with pytest.raises(UserError, match="holds files"):
        check_out(tmp_path)  # holds the folders above, and no build's own files


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            GenerateConfig(max_connections=0),
            "--max-connections: expected a whole number of at least 1, got 0",
        ),
        (GenerateConfig(max_connections=-3), "--max-connections: .* at least 1, got -3"),
        (GenerateConfig(max_retries=-1), "--max-retries: .* at least 0, got -1"),
        (GenerateConfig(timeout=0), "--timeout: .* at least 1, got 0"),
        (GenerateConfig(attempt_timeout=-2), "--attempt-timeout: .* at least 1, got -2"),
    ],
)
def test_run_options_out_of_range_are_refused(config: GenerateConfig, message: str) -> None:
    with pytest.raises(UserError, match=f"^{message}$"):
        check_run_options(config)


def test_run_options_in_range_or_unset_pass() -> None:
    check_run_options(GenerateConfig())
    check_run_options(GenerateConfig(max_connections=1, max_retries=0, timeout=1))


@task
def _probe() -> Task:
    check_run_options()
    return Task(dataset=[Sample(input="x", target="y")])


def test_a_task_sees_max_connections_while_inspect_builds_it(tmp_path: Path) -> None:
    """inspect makes the eval's settings active while it builds the tasks, so a task
    that calls the check refuses `--max-connections 0` before it would wait forever."""
    start = time.monotonic()
    with pytest.raises(UserError, match="^--max-connections: .* got 0$"):
        run_eval(_probe, tmp_path / "logs", model="mockllm/model", max_connections=0)
    assert time.monotonic() - start < 10


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.slow
def test_check_logs_exits_1_on_a_run_that_ended_in_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real run against a writer that is not there ends in error (and `inspect eval`
    would exit 0); `howtobench check-logs` names it and exits 1."""
    monkeypatch.setenv("DEAD_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.setenv("DEAD_API_KEY", "none")
    good, bad = tmp_path / "good", tmp_path / "bad"
    run_eval(
        open_writing(dataset="demo", scorers="rouge_l"), good, limit=1, model="replay/demo-writer-a"
    )
    [failed] = run_eval(
        open_writing(dataset="demo", scorers="rouge_l"),
        bad,
        model="openai-api/dead/writer",
        status="error",
        limit=1,
        max_retries=0,
    )
    capsys.readouterr()

    assert main(["check-logs", str(good)]) == 0
    assert capsys.readouterr().out == "all 1 run(s) finished\n"

    assert main(["check-logs", str(good), str(bad)]) == 1
    first, summary = capsys.readouterr().out.splitlines()
    assert first.startswith(f"{failed.location}: error: ")
    assert summary == "1 of 2 run(s) did not finish"


def test_check_logs_on_no_log_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["check-logs", str(tmp_path / "empty")]) == 2
    [line] = capsys.readouterr().err.splitlines()
    assert line.startswith("howtobench check-logs: error: ")


def _as_inspect_prints(message: object) -> str:
    """What inspect's exception hook shows: `rich.print(f"\\n{message}\\n")`."""
    out = io.StringIO()
    rich.console.Console(file=out, width=300).print(f"\n{message}\n")
    return out.getvalue()


def test_the_bleurt_hints_keep_their_brackets(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ParameterError) as no_checkpoint:
        bleurt_module.bleurt()
    monkeypatch.setattr(bleurt_module.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(UserError) as no_extra:
        bleurt_module.load("any")
    for error in (no_checkpoint.value, no_extra.value):
        assert "pip install 'howtobench[bleurt]'" in _as_inspect_prints(error.message)
        assert "pip install 'howtobench[bleurt]'" in str(error)  # plain for our CLI
        assert "\\[" not in str(error)


@pytest.mark.slow
def test_inspect_eval_prints_the_bleurt_hint_as_written(tmp_path: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-m", "inspect_ai", "eval", "howtobench/open"),
            *("-T", "dataset=demo", "-T", "scorers=bleurt"),
            *("--model", "replay/demo-writer-a", "--log-dir", str(tmp_path / "logs")),
        ],
        capture_output=True,
        text=True,
        timeout=90,
        env={**os.environ, "COLUMNS": "300"},  # one line, so the hint is not wrapped
    )
    assert done.returncode == 1
    printed = done.stdout + done.stderr
    assert "-T bleurt_checkpoint: the bleurt scorer needs a checkpoint" in printed
    assert "pip install 'howtobench[bleurt]'" in printed


@pytest.mark.slow
def test_the_build_command_refuses_zero_connections_within_seconds(tmp_path: Path) -> None:
    """The landed bug: 0 connections made no call and waited forever."""
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "howtobench.cli", *BUILD, "--max-connections", "0"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [  # one line, without argparse's usage block
        "howtobench build: error: argument --max-connections: "
        "expected a whole number of at least 1, got 0 (see howtobench build --help)"
    ]
    assert time.monotonic() - start < 60


# `-S` names: every registered scorer refuses a name it does not take -----------------------

# What inspect knows as our scorers once our entry point is imported (`howtobench._registry`,
# as inspect imports it): the writing scorers, the writing-state counts and the
# negotiation's; and the build steps', registered when the build imports them.
REGISTERED = {
    f"howtobench/{name}"
    for name in (
        *("tow", "rubric", "autoplan", "rouge_l", "bleu", "bleurt", "negotiation"),
        "writing_state",
        *("genre", "quality", "construction", "screen"),
    )
}
JUDGE_SCORERS = ("howtobench/tow", "howtobench/rubric", "howtobench/autoplan")
RENAMED = [
    ("reference", "anchor"),
    ("samples", "judge_samples"),
    ("temperature", "judge_temperature"),
]


def _registered_scorers() -> dict[str, Callable[..., Any]]:
    """Our scorer factories as inspect's registry holds them (what `--scorer` finds), by
    registered name; read from the registry, so that a new scorer is checked too."""
    # our entry point, loaded as inspect loads it: it registers every task and scorer an eval
    # can name
    [entry] = entry_points(group="inspect_ai", name="howtobench")
    entry.load()
    import howtobench.construct.pipeline  # noqa: F401  # the build's steps, as the build does

    found = registry_find(lambda i: i.type == "scorer" and i.name.startswith("howtobench/"))
    return {registry_info(factory).name: factory for factory in found}


def test_the_registered_scorers_are_the_ones_checked_here() -> None:
    assert set(_registered_scorers()) == REGISTERED


@pytest.mark.parametrize("name", sorted(REGISTERED))
def test_every_registered_scorer_refuses_a_name_it_does_not_take(name: str) -> None:
    """A misspelt parameter, answered with the one meant, or with `it takes none`; the
    signature inspect reads and records is the factory's own, with no `**kwargs`."""
    factory = _registered_scorers()[name]
    taken = inspect.signature(factory).parameters.values()
    assert all(p.kind is p.POSITIONAL_OR_KEYWORD for p in taken)
    first = next((p.name for p in taken), None)
    wrong, hint = (first[:-1], f"did you mean {first}?") if first else ("tokenize", "it takes none")
    with pytest.raises(ScorerParameterError) as refused:
        factory(**{wrong: 1})
    assert str(refused.value) == f"-S {wrong}: not a parameter of {name}; {hint}"
    # not a ValueError, which inspect's loader would report as "no such scorer"
    assert isinstance(refused.value, TypeError) and not isinstance(refused.value, ValueError)


@pytest.mark.parametrize(
    ("name", "old", "new"),
    [(name, old, new) for name in JUDGE_SCORERS for old, new in RENAMED]
    + [("howtobench/negotiation", "temperature", "judge_temperature")],
)
def test_a_name_renamed_in_task_version_4_is_answered_with_its_new_name(
    name: str, old: str, new: str
) -> None:
    with pytest.raises(ScorerParameterError, match=f"^-S {old}: renamed {new} in task version 4$"):
        _registered_scorers()[name](**{old: 1})


def test_an_old_name_is_renamed_only_where_its_new_name_is_taken() -> None:
    """The negotiator takes no `samples` (nor a task `-T samples`): no rename to name."""
    with pytest.raises(
        ScorerParameterError,
        match="^-S samples: not a parameter of howtobench/negotiation; the parameters are judge_temperature, cache, tries$",
    ):
        _registered_scorers()["howtobench/negotiation"](samples=2)
    with pytest.raises(
        ParameterError,
        match="^-T samples: not a parameter of the writing tasks; did you mean judge_samples\\?$",
    ):
        open_writing(dataset="demo", samples=2)


def test_the_log_records_each_scorers_own_parameters(tmp_path: Path) -> None:
    """What `inspect score` and `eval-retry` make the scorers again from."""
    [log] = run_eval(
        open_writing(dataset="demo", scorers="rouge_l,bleu"),
        tmp_path,
        limit=1,
        model="replay/demo-writer-a",
    )
    stored = read_eval_log(log.location, header_only=True)
    assert stored.eval.scorers is not None
    assert {s.name: s.options for s in stored.eval.scorers} == {
        "rouge_l": {},
        "bleu": {"tokenize": "char"},
        "writing_state": {},  # every writing task's: the writings counted by state
    }


@pytest.fixture(scope="module")
def overlap_log(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real log of the overlap scorers, for `inspect score` to read."""
    root = tmp_path_factory.mktemp("scored")
    [log] = run_eval(
        open_writing(dataset="demo", scorers="rouge_l,bleu"),
        root / "logs",
        cache_dir=root / "cache",
        model="replay/demo-writer-a",
    )
    return log.location


def _inspect_score(log: str, *args: str) -> list[str]:
    """`inspect score LOG ...` as typed, without a terminal (stdin not a tty, and rich's
    80 columns): the lines it printed, once it has exited with status 1."""
    done = subprocess.run(
        [sys.executable, "-m", "inspect_ai", "score", log, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "80"},
    )
    printed = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 1, printed
    return printed


@pytest.mark.slow
def test_inspect_score_refuses_a_wrong_scorer_name_in_one_line(overlap_log: str) -> None:
    """The mistake stops the command before inspect would ask anything (no `--action`
    given), in one line where it printed 72 lines of traceback."""
    printed = _inspect_score(overlap_log, "--scorer", "howtobench/bleu", "-S", "tokenise=char")
    assert printed == ["-S tokenise: not a parameter of howtobench/bleu; did you mean tokenize?"]


@pytest.mark.slow
@pytest.mark.nightly(
    "in CI test_inspect_score_refuses_a_wrong_scorer_name_in_one_line prints a refused -S "
    "name from `inspect score`, and test_a_name_renamed_in_task_version_4_is_answered_with_"
    "its_new_name this message"
)
def test_inspect_score_answers_an_old_scorer_name_with_its_new_one(overlap_log: str) -> None:
    printed = _inspect_score(overlap_log, "--scorer", "howtobench/tow", "-S", "samples=3")
    assert printed == ["-S samples: renamed judge_samples in task version 4"]
