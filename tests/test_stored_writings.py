"""The published writings' artifacts, and what each rule of the judged text does to them,
as docs/data.md gives them, recomputed from the data; and the two deepseek-r1 writings
that open with a reasoning trace judged without it."""

from __future__ import annotations

import json
import re
from collections import Counter
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
RULES_TABLE = re.compile(
    r"<!-- stored-rules table: begin -->\n(.*?)<!-- stored-rules table: end -->", re.S
)
# The rules' rows of docs/data.md: what each touched (an artifact kind, or a state flag).
RULES = {
    "explanation blocks dropped": "explanation_blocks",
    "explanation blocks kept as the fill's continuation": "explanations_kept",
    "later answers dropped": "later_answers",
    "generation or frame tags removed": "generation_tags",
    "stray or cut tags removed": "stray_tags",
    "a blank left unfilled: `empty`": "marker_only",
    "more than 75 % artifacts: `heavy_strip`": "heavy_strip",
    "refusals: `refused`": "refused",
    "a leading reasoning trace removed": "reasoning",
}


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
            _, state = examine(output, "unknown", task)  # the text judged: artifacts stripped
            cut += state.mid_sentence
            explained += bool({"explanation_blocks", "explanations_kept"} & set(state.artifacts))
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


def _touched(root: Path) -> dict[str, list[Counter[str]]]:
    """Per rule, per task, the writings each writer has that it touched."""
    touched: dict[str, list[Counter[str]]] = {kind: [] for kind in RULES.values()}
    for task in TASKS:
        for counts in touched.values():
            counts.append(Counter())
        for path in sorted((root / task / "inferences").glob("*.jsonl")):
            for line in path.read_text("utf-8").splitlines():
                output = json.loads(line)["output"] or ""
                if not output.strip():
                    continue
                _, state = examine(output, "unknown", task)
                flags = {
                    "heavy_strip": state.heavy_strip,
                    "refused": state.state == "refused",
                    "reasoning": bool(state.reasoning_chars),
                }
                for kind, counts in touched.items():
                    if kind in state.artifacts or flags.get(kind):
                        counts[-1][path.stem] += 1
    return touched


def test_the_docs_table_of_what_each_rule_does_is_the_data(shared_data: Path) -> None:
    match = RULES_TABLE.search(DOCS.read_text("utf-8"))
    assert match, "docs/data.md lost its stored-rules table markers"
    rows = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in match.group(1).strip().splitlines()[2:]
    ]
    touched = _touched(shared_data)
    assert [row[0] for row in rows] == list(RULES)
    for rule, per_task, writers in rows:
        counts = touched[RULES[rule]]
        assert per_task == " / ".join(str(sum(c.values())) for c in counts), rule
        total = sum(counts, Counter())
        ranked = sorted(total.items(), key=lambda item: (-item[1], item[0]))
        assert writers == (", ".join(f"{w} {n}" for w, n in ranked) or "none"), rule


def test_the_official_document_references_that_end_mid_sentence(shared_data: Path) -> None:
    cut = {}
    for task in ("guide", "open"):
        rows = [json.loads(line) for line in (shared_data / task / "aligned.jsonl").open()]
        official = [r["reference"] for r in rows if r["sub_task"] == "公文"]
        cut[task] = (
            sum(examine(r, "unknown", task)[1].mid_sentence for r in official),
            len(official),
        )
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
