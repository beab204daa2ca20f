"""HoWToBench in lm-evaluation-harness, and its writings judged by ToW in inspect.

The task files ask the inspect tasks' items with their writer prompts and length limit,
and report the `rouge_l` and `bleu` scorers' own numbers; `howtobench lm-eval import`
makes lm-eval's `--log_samples` output a data folder that `--model replay/<writer>`
judges, refusing in one line what cannot make one; `TowColumns` give one row per sample
with every node and leaf. The slow test runs the whole way offline: lm-eval's
`local-chat-completions` against the judge simulator as the writer, the import, and ToW
with the simulator as judge, and compares the requests lm-eval sent with inspect's.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
import yaml
from inspect_ai import Task
from inspect_ai.model import get_model

from howtobench import completion, guide, open_writing
from howtobench.cli import main
from howtobench.dataset import open_source
from howtobench.lmeval import TASKS_DIR
from howtobench.lmeval.imports import import_output
from howtobench.lmeval.tasks import hooks
from howtobench.simulator import JudgeSimulator
from howtobench.tree.columns import TowColumns, tow_samples
from howtobench.tree.spec import tree_for
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.words import TASKS
from howtobench.writing.writer import WRITER_MAX_TOKENS
from support.data import write_jsonl
from support.evals import run_eval, scores
from support.lm_eval_output import MODEL_ARGS, lm_eval_run, writing

TASK_FUNCTIONS = {"completion": completion, "guide": guide, "open": open_writing}


class _TaskFileLoader(yaml.SafeLoader):
    """YAML as lm-eval reads it: `!function module.name` kept as its text."""


_TaskFileLoader.add_constructor("!function", lambda loader, node: f"!function {node.value}")


def _task_file(name: str) -> dict[str, Any]:
    found = yaml.load((TASKS_DIR / name).read_text("utf-8"), Loader=_TaskFileLoader)  # noqa: S506
    assert isinstance(found, dict)
    return found


def test_the_task_files_are_the_three_tasks_with_the_inspect_writer_settings() -> None:
    """Each task file names its task and its items' function, which `hooks` defines; the
    shared settings are the inspect writer's length limit and no stop sequence; the
    group runs the three; `howtobench lm-eval path` prints the folder."""
    shared = _task_file("_default_template_yaml")
    assert shared["generation_kwargs"] == {"until": [], "max_gen_toks": WRITER_MAX_TOKENS}
    assert shared["output_type"] == "generate_until"
    assert [m["metric"] for m in shared["metric_list"]] == ["rouge_l", "bleu_1", "bleu_4"]
    for task in TASKS:
        found = _task_file(f"howtobench_{task}.yaml")
        assert found["task"] == f"howtobench_{task}"
        assert found["include"] == "_default_template_yaml"
        function = found["custom_dataset"].removeprefix("!function hooks.")
        assert callable(getattr(hooks, function))
    assert _task_file("_howtobench.yaml")["task"] == [f"howtobench_{t}" for t in TASKS]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        assert main(["lm-eval", "path"]) == 0
    assert printed.getvalue() == f"{TASKS_DIR}\n"


@pytest.mark.parametrize("task", TASKS)
def test_the_items_and_prompts_are_the_inspect_tasks(task: str) -> None:
    """Given lm-eval's metadata (its own keys and the model's arguments beside ours), the
    items are the inspect task's samples, in order, each with its input as prompt."""
    metadata = {"version": 1, "model": "writer", "dataset": "demo"}
    rows = list(hooks.docs(task, metadata)["test"])
    built = TASK_FUNCTIONS[task](dataset="demo")
    assert isinstance(built, Task)
    assert [(r["infer_id"], r["prompt"]) for r in rows] == [
        (str(s.id), s.input) for s in built.dataset
    ]
    assert {r["dataset"] for r in rows} == {"demo"}


def test_the_items_of_one_genre_and_what_is_refused(tmp_path: Path) -> None:
    rows = list(hooks.docs("open", {"dataset": "demo", "genre": "poem"})["test"])
    assert rows and {r["genre"] for r in rows} == {"poem"}
    with pytest.raises(UserError, match="^--metadata genre: no records of genre 'ballad'"):
        hooks.docs("open", {"dataset": "demo", "genre": "ballad"})
    mine = write_jsonl(tmp_path / "mine.jsonl", [{"id": "x1", "instruction": "写一首诗。"}])
    with pytest.raises(UserError, match="item 'x1' has no reference") as refused:
        hooks.docs("open", {"dataset": str(mine)})
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("task", ["completion", "open"])
def test_lm_eval_reports_the_overlap_scorers_numbers(task: str, tmp_path: Path) -> None:
    """On the same writings (a stored writer's, the completion ones with the artifacts
    inspect strips), `process_results` gives what inspect's `rouge_l` and `bleu` store."""
    [log] = run_eval(
        TASK_FUNCTIONS[task](dataset="demo", scorers="rouge_l,bleu"),
        tmp_path,
        model="replay/demo-writer-a",
    )
    stored = open_source("demo").generations(task, "demo-writer-a")
    rouge, bleu = scores(log, "rouge_l"), scores(log, "bleu")
    rows = list(hooks.docs(task, {"dataset": "demo"})["test"])
    assert len(rows) == len(rouge) > 0
    for row in rows:
        found = hooks.process_results(row, [stored[row["infer_id"]]])
        expected = {"rouge_l": rouge[row["infer_id"]].value, **bleu[row["infer_id"]].value}  # type: ignore[dict-item]
        assert found == expected


def _import(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["lm-eval", "import", *argv])
    return status, out.getvalue(), err.getvalue()


def _samples(results: Path) -> Path:
    """The samples file of `howtobench_open` beside a results file."""
    return results.with_name(f"samples_howtobench_open_{results.stem[8:]}.jsonl")


def test_the_import_makes_a_data_folder_of_the_answered_items(tmp_path: Path) -> None:
    """The items lm-eval answered, its writings under the writer's name, and what made
    them (credentials left out); a second writer of the same items joins the folder."""
    output = tmp_path / "out"
    lm_eval_run(output, {"open": 2, "guide": 3})
    status, printed, err = _import([str(output), "--writer", "lmw", "--out", str(tmp_path / "d")])
    assert (status, err) == (0, "")
    assert "inspect eval-set howtobench/guide howtobench/open" in printed
    source = open_source(str(tmp_path / "d"))
    for task, count in (("open", 2), ("guide", 3)):
        rows = list(hooks.docs(task, {"dataset": "demo"})["test"])[:count]
        records = source.records(task)
        assert [r.id for r in records] == [r["infer_id"] for r in rows]
        assert [hooks.row(r, "demo")["prompt"] for r in records] == [r["prompt"] for r in rows]
        assert source.generations(task, "lmw") == {r["infer_id"]: writing(r) for r in rows}
        provenance = source.provenance(task, "lmw")
        assert provenance is not None
        assert provenance["model_args"] == {k: v for k, v in MODEL_ARGS.items() if k != "api_key"}
        assert provenance["generation_kwargs"] == {"until": [], "max_gen_toks": WRITER_MAX_TOKENS}
        assert (provenance["writer"], provenance["limit"]) == ("lmw", 2.0)
    assert source.tasks() == ["guide", "open"]
    other = tmp_path / "other"
    lm_eval_run(other, {"open": 2}, model="second")
    lines = import_output(other, None, tmp_path / "d")  # lm-eval's name of the model
    assert lines[0].startswith("open: 2 writings of second (local-chat-completions second)")
    assert open_source(str(tmp_path / "d")).models("open") == ["lmw", "second"]


SENTINEL = "hunter2"  # in every credential below, and nowhere else

# Each shape a credential takes in lm-eval's model arguments (as its results file records
# them: a dict, or the string it was given), and what the provenance keeps of them.
CREDENTIALS: dict[str, tuple[dict[str, Any] | str, dict[str, Any]]] = {
    "userinfo in a URL": (
        {"model": "writer", "base_url": f"http://me:{SENTINEL}@127.0.0.1:9/v1/chat/completions"},
        {"model": "writer", "base_url": "http://127.0.0.1:9/v1/chat/completions"},
    ),
    "a secret query parameter": (
        {"model": "writer", "base_url": f"http://127.0.0.1:9/v1?api-version=2&api_key={SENTINEL}"},
        {"model": "writer", "base_url": "http://127.0.0.1:9/v1?api-version=2"},
    ),
    "an Authorization header": (
        {"model": "writer", "headers": {"Authorization": f"Bearer sk-{SENTINEL}", "X-Team": "ml"}},
        {"model": "writer", "headers": {"X-Team": "ml"}},
    ),
    "an auth value": ({"model": "writer", "auth": ["me", SENTINEL]}, {"model": "writer"}),
    "a string with api_key": (
        f"model=writer,base_url=http://127.0.0.1:9/v1,api_key=sk-{SENTINEL},num_concurrent=2",
        {"model": "writer", "base_url": "http://127.0.0.1:9/v1", "num_concurrent": "2"},
    ),
    "nested": (
        {
            "model": "writer",
            "client": {
                "proxy": {"url": f"http://u:{SENTINEL}@proxy:3128", "password": SENTINEL},
                "extra": [{"Cookie": f"s={SENTINEL}"}, f"Authorization: Basic {SENTINEL}", "k"],
                "tokenizer": "Qwen/Qwen2.5-7B",
            },
        },
        {
            "model": "writer",
            "client": {
                "proxy": {"url": "http://proxy:3128"},
                "extra": [{}, "k"],
                "tokenizer": "Qwen/Qwen2.5-7B",
            },
        },
    ),
}


@pytest.mark.parametrize("shape", sorted(CREDENTIALS))
def test_no_credential_is_kept_or_printed_by_the_import(shape: str, tmp_path: Path) -> None:
    """Whatever shape a credential takes in lm-eval's model arguments, neither the data
    folder (any file), the terminal nor the ToW log made from the folder holds it; the
    rest of the arguments are kept, as pairs when lm-eval recorded a string."""
    model_args, kept = CREDENTIALS[shape]
    lm_eval_run(tmp_path / "out", {"open": 1}, limit=1, model_args=model_args)
    folder = tmp_path / "d"
    status, printed, err = _import([str(tmp_path / "out"), "--writer", "w", "--out", str(folder)])
    assert (status, err) == (0, "")
    assert "open: 1 writings of w (local-chat-completions writer)" in printed
    assert SENTINEL not in printed
    files = [path for path in folder.rglob("*") if path.is_file()]
    assert len(files) == 3 and not any(SENTINEL in p.read_text("utf-8") for p in files)
    provenance = open_source(str(folder)).provenance("open", "w")
    assert provenance is not None and provenance["model_args"] == kept
    [log] = run_eval(
        "howtobench/open",
        tmp_path / "logs",
        "towsim/judge",
        model="replay/w",
        task_args={"dataset": str(folder)},
    )
    assert (log.eval.metadata or {})["writer_provenance"]["model_args"] == kept
    assert SENTINEL not in log.model_dump_json()


def test_a_folder_an_earlier_import_wrote_gives_the_log_no_credential(tmp_path: Path) -> None:
    """A `provenance.json` holding credentials (written by an earlier import, or by hand)
    is read without them, so the log's `writer_provenance` carries none."""
    lm_eval_run(tmp_path / "out", {"open": 1}, limit=1)
    import_output(tmp_path / "out", "w", tmp_path / "d")
    kept = {"api_key": f"sk-{SENTINEL}", "base_url": f"http://u:{SENTINEL}@127.0.0.1:9/v1"}
    path = tmp_path / "d" / "open" / "inferences" / "w.provenance.json"
    path.write_text(json.dumps({"writer": "w", "model_args": kept}), "utf-8")
    provenance = open_source(str(tmp_path / "d")).provenance("open", "w")
    assert provenance == {"writer": "w", "model_args": {"base_url": "http://127.0.0.1:9/v1"}}


def test_a_generation_an_api_withheld_is_imported_as_an_empty_writing(tmp_path: Path) -> None:
    """lm-eval keeps None for a reply with no text (a content filter): an empty writing,
    which ToW scores at every leaf's lowest, not a reason to refuse the whole output."""
    samples = _samples(lm_eval_run(tmp_path / "out", {"open": 2}))
    lines = [json.loads(line) for line in samples.read_text("utf-8").splitlines()]
    lines[1]["filtered_resps"] = [None]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    import_output(tmp_path / "out", "w", tmp_path / "d")
    stored = open_source(str(tmp_path / "d")).generations("open", "w")
    assert list(stored.values())[1] == "" and list(stored.values())[0]


def _runs(case: str, output: Path) -> None:
    """lm-eval output that cannot make one writer's data folder."""
    if case == "another task":
        results = lm_eval_run(output, {"open": 1})
        found = json.loads(results.read_text("utf-8"))
        found["configs"] = {"arc_easy": found["configs"].pop("howtobench_open")}
        results.write_text(json.dumps(found), "utf-8")
    elif case == "no samples":
        lm_eval_run(output, {"open": 2}, samples=False)
    elif case == "mixed limits":
        lm_eval_run(output, {"open": 2}, date="a", limit=2)
        lm_eval_run(output, {"guide": 5}, date="b", limit=5)
    elif case == "one task twice":
        lm_eval_run(output, {"open": 2}, date="a")
        lm_eval_run(output, {"open": 2}, date="b")
    elif case == "two models":
        lm_eval_run(output, {"open": 2}, model="m1")
        lm_eval_run(output, {"guide": 2}, model="m2")
    elif case == "cut short":
        results = lm_eval_run(output, {"open": 2})
        found = json.loads(results.read_text("utf-8"))
        found["n-samples"]["howtobench_open"]["effective"] = 3
        results.write_text(json.dumps(found), "utf-8")
    elif case == "samples of another task":
        samples = _samples(lm_eval_run(output, {"open": 2}))
        samples.write_text(samples.read_text("utf-8").replace('"open"', '"guide"'), "utf-8")
    elif case in ("nested too deep", "answered twice", "too long"):
        samples = _samples(lm_eval_run(output, {"open": 2}))
        lines = samples.read_text("utf-8").splitlines()
        if case == "nested too deep":  # 100,000 lists deep
            lines[1] = '{"doc": ' + "[" * 100_000 + "]" * 100_000 + "}"
        elif case == "answered twice":
            lines[1] = lines[0]
        else:  # over the 50,000 characters a judge is sent
            line = json.loads(lines[0])
            line["filtered_resps"] = ["字" * 50_001]
            lines[0] = json.dumps(line, ensure_ascii=False)
        samples.write_text("\n".join(lines) + "\n", "utf-8")
    elif case == "results nested too deep":
        results = lm_eval_run(output, {"open": 2})
        results.write_text('{"config": ' + "[" * 100_000 + "]" * 100_000 + "}", "utf-8")


REFUSED = {
    "another task": "no lm-eval output of howtobench_completion, howtobench_guide, howtobench_open",
    "no samples": "rerun lm_eval with --log_samples",
    "mixed limits": "mixed limits: results_a.json ran --limit 2, results_b.json --limit 5",
    "one task twice": "howtobench_open was answered in two runs",
    "two models": "runs of different models",
    "cut short": "2 samples where results_2026-12-04T10-00-00.000000.json says 3",
    "samples of another task": "an item of task 'guide' in the samples of howtobench_open",
    "nested too deep": ".jsonl, line 2: the record is nested too deep to read as JSON",
    "answered twice": ".jsonl, line 2: item 'demo_open_1' answered twice (lines 1 and 2)",
    "too long": ".jsonl, line 1: a generation of 50,001 characters, more than the 50,000 a "
    "judge is sent: rerun lm_eval with a lower max_gen_toks",
    "results nested too deep": ".json: not an lm-eval results file (nested too deep)",
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_the_import_refuses_output_it_cannot_use_in_one_line(case: str, tmp_path: Path) -> None:
    _runs(case, tmp_path / "out")
    out = tmp_path / "d"
    status, printed, err = _import([str(tmp_path / "out"), "--writer", "w", "--out", str(out)])
    assert (status, printed) == (2, "")
    assert err.startswith("howtobench lm-eval import: error: ") and err.count("\n") == 1, err
    assert REFUSED[case] in err
    assert not out.exists()


def test_an_out_that_is_a_file_or_cannot_be_written_is_refused_and_nothing_is_left(
    tmp_path: Path,
) -> None:
    """`--out` naming a file is refused in one line; an import whose second task cannot
    be written (a file stands where its folder goes) removes what it made for the first."""
    output = tmp_path / "out"
    lm_eval_run(output, {"open": 2, "guide": 2})
    file = tmp_path / "notes.txt"
    file.write_text("mine", "utf-8")
    status, printed, err = _import([str(output), "--out", str(file)])
    assert (status, printed) == (2, "") and err.count("\n") == 1
    assert f"--out {file}: a file, not a folder: give the folder to write" in err
    assert file.read_text("utf-8") == "mine"
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "open").write_text("a file where the task's folder goes", "utf-8")
    status, printed, err = _import([str(output), "--writer", "w", "--out", str(folder)])
    assert (status, printed) == (2, "") and err.count("\n") == 1
    assert f"--out {folder}: cannot write {folder / 'open'}" in err
    assert "nothing was imported" in err
    assert sorted(p.name for p in folder.rglob("*")) == ["open"]  # guide's folder is gone


def test_the_import_refuses_a_bad_name_and_keeps_what_is_there(tmp_path: Path) -> None:
    output, folder = tmp_path / "out", tmp_path / "d"
    lm_eval_run(output, {"open": 2})
    status, _, err = _import([str(output), "--writer", "org/model", "--out", str(folder)])
    assert status == 2 and "--writer 'org/model': a writer's name is letters" in err
    assert _import([str(output), "--writer", "w", "--out", str(folder)])[0] == 0
    status, _, err = _import([str(output), "--writer", "w", "--out", str(folder)])
    assert status == 2 and "w's writings are already there" in err
    more = tmp_path / "more"
    lm_eval_run(more, {"open": 3})
    status, _, err = _import([str(more), "--writer", "v", "--out", str(folder)])
    assert status == 2 and "holds other items than lm-eval answered" in err
    assert open_source(str(folder)).models("open") == ["w"]


def test_the_columns_give_the_writer_and_every_node_and_leaf(tmp_path: Path) -> None:
    """`samples_df` with `TowColumns`: one row per writing, the stored writer by its name,
    and a number in every node's and leaf's column of the task's tree."""
    run_eval(
        [open_writing(dataset="demo"), completion(dataset="demo")],
        tmp_path,
        "towsim/judge",
        model="replay/demo-writer-b",
    )
    table = tow_samples(str(tmp_path))
    assert {c.name for c in TowColumns} <= {*table.columns, "tow_*", "*", "bleu_1"} | {"rouge_l"}
    assert set(table["writer"]) == {"demo-writer-b"}
    for task, rows in table.groupby("task"):
        tree = tree_for(str(task))
        columns = ["tow_overall", *(f"tow_{n}" for n in tree.nodes)]
        columns += [f"tow_{leaf.id}" for leaf in tree.leaves]
        assert rows[columns].notna().all().all(), task
        assert len(rows) == len(open_source("demo").records(str(task)))
    assert set(table["genre"]) >= {"poem"}
    assert set(table["writing"]) <= {"complete", "cut"}


# --- the whole way, offline: lm-eval, the import, ToW --------------------------------------


def _lm_eval(simulator: JudgeSimulator, output: Path, task: str, limit: int) -> str:
    """`lm_eval` on the task files against the simulator as the writer: its stdout."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lm_eval",
            "--model",
            "local-chat-completions",
            "--model_args",
            f"model=writer,base_url={simulator.base_url}/chat/completions,max_retries=1",
            "--include_path",
            str(TASKS_DIR),
            "--tasks",
            f"howtobench_{task}",
            "--limit",
            str(limit),
            "--apply_chat_template",
            "--metadata",
            json.dumps({"dataset": "demo"}),
            "--log_samples",
            "--output_path",
            str(output),
        ],
        capture_output=True,
        text=True,
        timeout=110,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"},
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def _asked(simulator: JudgeSimulator, since: int) -> list[list[tuple[str, str]]]:
    """The writer requests the simulator answered after the first `since`: each as its
    messages (role, text), sorted for comparing two runs' sets."""
    return sorted(
        [(s.role, s.text) for s in request.segments]
        for request in simulator.requests[since:]
        if request.kind == "writer"
    )


@pytest.mark.slow
@pytest.mark.skipif(find_spec("lm_eval") is None, reason="lm-eval is not installed")
def test_lm_eval_writes_inspect_judges_and_both_name_the_writer(tmp_path: Path) -> None:
    task, limit = "open", 2
    with JudgeSimulator() as simulator:
        printed = _lm_eval(simulator, tmp_path / "out", task, limit)
        sent = _asked(simulator, 0)
        writer = get_model("openai-api/sim/writer", base_url=simulator.base_url, api_key="none")
        before = len(simulator.requests)
        [live] = run_eval(
            open_writing(dataset="demo", scorers="rouge_l,bleu"),
            tmp_path / "inspect",
            model=writer,
            limit=limit,
        )
        inspected = _asked(simulator, before)
    # the same messages, byte for byte: the writer prompt as the one user message
    assert len(sent) == limit and sent == inspected
    assert all(len(messages) == 1 and messages[0][0] == "user" for messages in sent)
    # lm-eval prints the package's numbers, which are inspect's on the same writings
    for metric in ("rouge_l", "bleu_1", "bleu_4"):
        assert re.search(rf"\|{metric} *\|.*\|\d\.\d{{4}}\|", printed), printed
    [results] = (tmp_path / "out").rglob("results_*.json")
    reported = json.loads(results.read_text("utf-8"))["results"][f"howtobench_{task}"]
    rouge, bleu = scores(live, "rouge_l"), scores(live, "bleu")
    per_sample = [{"rouge_l": rouge[i].value, **bleu[i].value} for i in rouge]  # type: ignore[dict-item]
    for metric in ("rouge_l", "bleu_1", "bleu_4"):
        mean = sum(float(values[metric]) for values in per_sample) / len(per_sample)
        assert reported[f"{metric},none"] == pytest.approx(mean, abs=1e-9)
    # the import, then ToW on the imported writings, the writer named in the log
    folder = tmp_path / "data"
    lines = import_output(tmp_path / "out", "lmw", folder)
    assert lines[0].startswith(f"{task}: {limit} writings of lmw (local-chat-completions writer)")
    # built by name inside the eval, as `inspect eval` builds it: the writer is known
    [judged] = run_eval(
        "howtobench/open",
        tmp_path / "tow",
        "towsim/judge",
        model="replay/lmw",
        task_args={"dataset": str(folder)},
    )
    assert judged.eval.model == "replay/lmw"
    provenance = (judged.eval.metadata or {})["writer_provenance"]
    assert provenance["model_args"]["model"] == "writer"
    assert provenance["generation_kwargs"]["max_gen_toks"] == WRITER_MAX_TOKENS
    assert provenance["apply_chat_template"] is True
    assert [str(s.id) for s in judged.samples or []] == [str(s.id) for s in live.samples or []]
    table = tow_samples(str(tmp_path / "tow"))
    assert set(table["writer"]) == {"lmw"} and table["tow_overall"].notna().all()
