"""The report counts every writer: one whose writings were all left unscored keeps its
rows and a ranking line saying why it has no mean; the HTML board marks cut writers as the
text ranking does; and what cut a writer's writings is named (lm-eval's `max_gen_toks`
for writings imported from lm-eval, the storing for the paper's)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from howtobench.lmeval.imports import import_output
from howtobench.studies.leaderboard_report import publish, report
from support.evals import run_eval
from support.lm_eval_output import lm_eval_run

CLAUSE = "\n\n他们走进古镇，"  # a last line ending in a comma: the writing stops mid-sentence


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder of the demo's four open items: lm-eval's writer `lmw` (imported, its
    first writing cut mid-sentence) and a stored writer `allcut`, every writing cut."""
    root = tmp_path_factory.mktemp("imported")
    results = lm_eval_run(root / "out", {"open": 4})
    samples = results.with_name(f"samples_howtobench_open_{results.stem[8:]}.jsonl")
    lines = [json.loads(line) for line in samples.read_text("utf-8").splitlines()]
    lines[0]["filtered_resps"] = [lines[0]["filtered_resps"][0] + CLAUSE]
    samples.write_text("".join(json.dumps(line) + "\n" for line in lines), "utf-8")
    folder = root / "data"
    import_output(root / "out", "lmw", folder)
    stored = folder / "open" / "inferences"
    rows = [json.loads(line) for line in (stored / "lmw.jsonl").read_text("utf-8").splitlines()]
    (stored / "allcut.jsonl").write_text(
        "".join(json.dumps({**row, "output": row["output"] + CLAUSE}) + "\n" for row in rows),
        "utf-8",
    )
    return folder


def _logs(folder: Path, logs: Path, cut: str, writers: list[str]) -> Path:
    """The open task on `folder` by name (built inside the eval, as `inspect eval` builds
    it, so the log records the writer's provenance), rouge_l only."""
    run_eval(
        "howtobench/open",
        logs,
        model=[f"replay/{writer}" for writer in writers],
        task_args={"dataset": str(folder), "scorers": "rouge_l", "cut": cut},
    )
    return logs


def test_a_writer_left_all_unscored_keeps_its_rows_and_says_why(
    imported: Path, tmp_path: Path
) -> None:
    logs = _logs(imported, tmp_path / "logs", "unscored", ["lmw", "allcut"])
    found = report([logs], metric="rouge_l", bootstrap=0)
    states = found.tables["writings"]
    allcut, lmw = states.loc[("all", "allcut")], states.loc[("all", "lmw")]
    assert (allcut["writings"], allcut["cut"], allcut["scored"]) == (4, 4, 0)
    assert (lmw["writings"], lmw["cut"], lmw["scored"]) == (4, 1, 3)
    assert lmw["cut_by"] == "by lm-eval's max_gen_toks=16384"
    assert allcut["cut_by"].startswith("when stored (they end mid-sentence")
    ranking = found.tables["ranking"]
    lines = ranking[ranking["writer"] == "allcut [cut 100%]"].to_dict("records")
    # a line in each task scope, after its ranked writers (the scope's 3 instructions
    # with a score: no writer has one for the first)
    assert [row["task (instr.)"] for row in lines] == ["open (3)", "all (3)"]
    assert ranking["writer"].tolist() == ["lmw [cut 25%]", "allcut [cut 100%]"] * 2
    for row in lines:
        assert (row["rank"], row["n"]) == ("-", "0")
        assert (
            row["mean [95% CI]"] == "no mean: all 4 writings cut, left unscored (-T cut=unscored)"
        )
    assert ranking.loc[ranking["writer"] == "lmw [cut 25%]", "n"].tolist() == ["3", "3"]
    assert (
        "lmw: 1 of 4 writings cut (25%) by lm-eval's max_gen_toks=16384; left unscored "
        "(-T cut=unscored): its mean is that of its whole writings only, 3 of 4 "
        "(marked [cut] in the ranking)"
    ) in found.notes
    assert (
        "allcut: 4 of 4 writings cut (100%) when stored (they end mid-sentence), no stop "
        "reason recorded: a live rerun of this model is not comparable; left unscored "
        "(-T cut=unscored): it has no mean (marked [cut] in the ranking)"
    ) in found.notes
    json_path, html_path = publish(found, tmp_path / "out")
    saved = json.loads(json_path.read_text("utf-8"))["writings"]
    assert {"task": "all", "writer": "allcut", "scored": 0, "cut": 4}.items() <= next(
        row for row in saved if (row["task"], row["writer"]) == ("all", "allcut")
    ).items()
    html = html_path.read_text("utf-8")
    board = html[html.index('id="board"') : html.index('id="writings"')]
    assert board.count("<span class=cut>[cut 25%]</span>") == 2  # lmw, in open and all tasks
    assert board.count("<span class=cut>[cut 100%]</span>") == 2
    assert board.count("no mean: all 4 writings cut, left unscored") == 2


def test_imported_writings_cut_and_scored_are_named_by_max_gen_toks(
    imported: Path, tmp_path: Path
) -> None:
    logs = _logs(imported, tmp_path / "logs", "scored", ["lmw"])
    found = report([logs], metric="rouge_l", bootstrap=0)
    assert (
        "lmw: 1 of 4 writings cut (25%) by lm-eval's max_gen_toks=16384; scored as written, "
        "so its mean is not that of whole writings (marked [cut] in the ranking)"
    ) in found.notes
    assert not any("live rerun" in note for note in found.notes)
    assert found.tables["ranking"]["n"].tolist() == ["4", "4"]
