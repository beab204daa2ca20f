"""The published writings' artifacts, as docs/data.md gives them, recomputed from the data;
and the two deepseek-r1 writings that open with a reasoning trace judged without it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from howtobench import completion
from howtobench.vocabulary.metadata import SampleKey
from howtobench.vocabulary.words import TASKS
from howtobench.writing.state import examine
from support.evals import run_eval
from support.judges import Serve

DOCS = Path(__file__).parents[1] / "docs" / "data.md"
TABLE = re.compile(
    r"<!-- stored-writings table: begin -->\n(.*?)<!-- stored-writings table: end -->", re.S
)


def _measured(root: Path, writer: str) -> list[str]:
    """One row of the table, computed from the writer's files."""
    writings, mid, empty, explained, tagged, reasoned = [], [], 0, 0, 0, 0
    for task in TASKS:
        path = root / task / "inferences" / f"{writer}.jsonl"
        found, cut = 0, 0
        for line in path.read_text("utf-8").splitlines():
            output = json.loads(line)["output"] or ""
            if not output.strip():
                empty += 1
                continue
            found += 1
            _, state = examine(output, "unknown")  # the text judged: artifacts stripped
            cut += state.mid_sentence
            explained += "explanation_blocks" in state.artifacts
            tagged += "generation_tags" in state.artifacts
            reasoned += state.reasoning_chars > 0
        writings.append(found)
        mid.append(cut)
    return [
        writer,
        " / ".join(map(str, writings)),
        str(empty),
        " / ".join(map(str, mid)),
        str(explained),
        str(tagged),
        str(reasoned),
    ]


def test_the_docs_table_of_stored_writings_is_the_data(shared_data: Path) -> None:
    match = TABLE.search(DOCS.read_text("utf-8"))
    assert match, "docs/data.md lost its stored-writings table markers"
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in match.group(1).strip().splitlines()[2:]
    ]
    writers = sorted(p.stem for p in (shared_data / "open" / "inferences").glob("*.jsonl"))
    assert [row[0] for row in rows] == writers
    for row in rows:
        assert row == _measured(shared_data, row[0])


def test_the_official_document_references_that_end_mid_sentence(shared_data: Path) -> None:
    cut = {}
    for task in ("guide", "open"):
        rows = [json.loads(line) for line in (shared_data / task / "aligned.jsonl").open()]
        official = [r["reference"] for r in rows if r["sub_task"] == "公文"]
        cut[task] = (sum(examine(r, "unknown")[1].mid_sentence for r in official), len(official))
    assert cut == {"guide": (36, 87), "open": (40, 91)}  # docs/data.md: 76 of 178


def test_the_stored_reasoning_traces_are_never_judged(
    shared_data: Path, tmp_path: Path, serve: Serve
) -> None:
    simulator = serve(record=True)
    [log] = run_eval(
        completion(dataset=str(shared_data)),
        tmp_path,
        simulator,
        model="replay/deepseek-r1",
        sample_id=["infer_1190", "infer_1278"],
    )
    for sample in log.samples or []:
        record = (sample.metadata or {})[SampleKey.WRITING]
        assert record["reasoning_chars"] > 50 and record["artifacts_removed"]
        assert (sample.scores or {})["tow"].metadata["writing"] == record
    judged = [s.text for r in simulator.requests for s in r.segments]
    assert len(judged) >= 10
    # the traces' own words (infer_1190's and infer_1278's), and their closing tag
    for trace in ("</think>", "用户似乎只需要生成内容", "先完成填充内容", "解释部分："):
        assert not any(trace in text for text in judged), trace
