"""The paper's numbers that need no LLM judge, recomputed from the published data.

docs/reproduction.md lists each number with ours beside it. Tests that need the data skip
with the reason where it is absent (`shared_data`). Every expected value is computed here
from the raw JSONL files or from the paper's printed tables, not with the code under test.

The full length study (all 10 models x 2 tasks through inspect, 6 to 17 minutes on a
shared 2-core machine) and Table 7's BLEU on every writing (4 to 7 minutes) are too slow for
the suite; they run with HOWTOBENCH_FULL_REPRODUCTION=1, each under its own time limit
(the suite's is 120 s). The suite runs the length study on a subset and checks it against an
independent computation, and Table 7 on 50 writings, as the paper did.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
from collections import Counter
from pathlib import Path
from statistics import fmean
from typing import NamedTuple

import jieba
import pytest
from rouge_chinese import Rouge
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh
from scipy import optimize, stats

from howtobench import guide, open_writing
from howtobench.baselines.overlap import bleu, rouge_l_f1, tokenize
from howtobench.dataset import open_source
from howtobench.studies import lengths
from howtobench.vocabulary.words import TASKS
from howtobench.writing.damages import drop, repeat
from support.evals import run_eval
from support.paper import TABLE4_ALL, TABLE4_GENRES

MODELS = (
    "deepseek-r1",
    "o3-mini-2025-01-31",
    "gpt-4o-2024-11-20",
    "claude-3-5-sonnet-20241022",
    "gemini-2.0-flash",
    "deepseek-chat",
    "doubao-pro-32k-241215",
    "glm-4-plus-250111",
    "claude-3-haiku-20240307",
    "Llama-3.3-70B-Instruct",
)
COUNTS = {"completion": 379, "guide": 456, "open": 467}  # 1,302 instructions (abstract, §4.4)
# Table 4's task rows, model cells in the table's column order (as MODELS above).
TABLE4_TASKS = {
    "completion": [6.10, 6.16, 6.60, 5.55, 5.43, 5.44, 5.58, 5.19, 5.12, 4.36],
    "guide": [6.15, 5.80, 5.61, 5.76, 5.53, 5.52, 5.24, 5.51, 5.08, 4.89],
    "open": [6.06, 5.69, 5.36, 5.43, 5.33, 5.31, 5.14, 5.28, 4.85, 4.47],
}
# Table 4's AVG column of the genre rows.
TABLE4_AVG = {
    "argumentative": 5.68,
    "comment": 5.48,
    "poem": 5.40,
    "prose": 5.32,
    "fiction": 5.07,
    "letters": 6.02,
    "others": 5.97,
    "speech": 5.60,
    "report": 5.42,
    "contract": 5.17,
    "plan": 5.03,
    "regulation": 4.90,
}
DOUBAO = MODELS.index("doubao-pro-32k-241215")
FULL = pytest.mark.skipif(
    os.environ.get("HOWTOBENCH_FULL_REPRODUCTION") != "1",
    reason="minutes on all writings: set HOWTOBENCH_FULL_REPRODUCTION=1 to run it",
)
# Table 7's printed rows used here (Init column, then Drop and Rep).
TABLE7_BLEU = (24.66, -7.27, 4.23)
TABLE7_TOW = 5.41
TABLE7_NODES = {"content": 5.82, "format": 5.77, "impression": 6.76}


class Fit(NamedTuple):
    slope: float
    rvalue: float
    pvalue: float


def raw(shared_data: Path, task: str) -> list[dict]:
    return [
        json.loads(line) for line in (shared_data / task / "aligned.jsonl").open(encoding="utf-8")
    ]


def outputs(shared_data: Path, task: str, model: str) -> dict[str, str]:
    path = shared_data / task / "inferences" / f"{model}.jsonl"
    rows = (json.loads(line) for line in path.open(encoding="utf-8"))
    return {r["infer_id"]: r["output"] for r in rows}


def length_fit(
    shared_data: Path, task: str, first: int | None = None, models: tuple[str, ...] = MODELS
) -> Fit:
    """Least-squares line of output characters on input characters (instruction plus
    grounding), over the writings of `models` on the first `first` instructions."""
    records = raw(shared_data, task)[:first]
    xs, ys = [], []
    for model in models:
        written = outputs(shared_data, task, model)
        for r in records:
            xs.append(len(r["basic_instruction"]) + len(r["information"]))
            ys.append(len(written[r["infer_id"]]))
    fit = stats.linregress(xs, ys)
    return Fit(float(fit.slope), float(fit.rvalue), float(fit.pvalue))


def study_slopes(
    shared_data: Path, log_dir: Path, limit: int | None, models: tuple[str, ...] = MODELS
) -> dict[str, float]:
    """Replay `models` on guide and open through inspect, then `howtobench lengths`."""
    tasks = [make(dataset=str(shared_data), scorers="rouge_l") for make in (guide, open_writing)]
    run_eval(tasks, log_dir, limit=limit, model=[f"replay/{model}" for model in models])
    table = lengths([log_dir], scores=("rouge_l",)).tables["correlations"]
    fits = table[(table["x"] == "input_length") & (table["y"] == "output_length")]
    return dict(zip(fits["task"], fits["slope"], strict=True))


# --- task counts (abstract, §4.4) ------------------------------------------------------


def test_task_counts(shared_data: Path) -> None:
    assert {t: len(raw(shared_data, t)) for t in TASKS} == COUNTS
    assert {t: len(open_source(str(shared_data)).records(t)) for t in TASKS} == COUNTS
    assert sum(COUNTS.values()) == 1302


# --- Table 4's own arithmetic (§5.4) ---------------------------------------------------


def test_table4_all_row_is_the_count_weighted_mean_of_the_task_rows() -> None:
    """Within rounding (each printed cell ±0.005, so at most 0.01 apart), except Doubao,
    whose All cell (5.34) is 0.037 above its task rows' mean (5.303)."""
    total = sum(COUNTS.values())
    for m, printed in enumerate(TABLE4_ALL):
        weighted = sum(COUNTS[t] * TABLE4_TASKS[t][m] for t in TASKS) / total
        if m == DOUBAO:
            assert printed - weighted == pytest.approx(0.037, abs=0.001)
        else:
            assert abs(printed - weighted) < 0.01, MODELS[m]


def test_table4_avg_column_is_the_mean_of_the_model_cells() -> None:
    for genre, cells in TABLE4_GENRES.items():
        assert abs(fmean(cells) - TABLE4_AVG[genre]) < 0.01, genre


def test_gpt4o_drops_15_and_18_8_percent_from_completion() -> None:
    """§5.4: "GPT-4o's performance drop of 15% and 18.8% on the Guide and Open tasks"."""
    gpt4o = MODELS.index("gpt-4o-2024-11-20")
    completion = TABLE4_TASKS["completion"][gpt4o]
    drops = [
        round(100 * (completion - TABLE4_TASKS[t][gpt4o]) / completion, 1)
        for t in ("guide", "open")
    ]
    assert drops == [15.0, 18.8]


# --- §6.1: output length on input length -----------------------------------------------


def test_length_slopes_of_all_generations(shared_data: Path) -> None:
    """§6.1: "For the Guide and Open, we perform linear fitting on the generation results of
    all models. The slopes are 1.4 and 6.1" (ours: 1.375 and 6.090), and "a significant
    positive correlation between output length and input length" (ours: r = 0.24, 0.32,
    0.25 for completion, guide, open; p < 1e-50 each)."""
    fits = {task: length_fit(shared_data, task) for task in TASKS}
    assert round(fits["guide"].slope, 1) == 1.4
    assert round(fits["open"].slope, 1) == 6.1
    for fit in fits.values():
        assert fit.rvalue > 0.2 and fit.pvalue < 0.05


@pytest.mark.slow
def test_length_study_on_replay_logs_fits_the_same_line(shared_data: Path, tmp_path: Path) -> None:
    """The study on real inspect logs of replay runs fits the line computed from the raw
    files. A subset (3 models, the first 20 instructions of each task) keeps this fast; its
    slopes are not the paper's: subsets scatter widely (every second guide instruction gives
    1.20 or 1.59; one model alone 0.75 to 2.09), so only the full data gives 1.4 and 6.1."""
    models = (MODELS[0], MODELS[4], MODELS[9])
    slopes = study_slopes(shared_data, tmp_path / "logs", limit=20, models=models)
    for task in ("guide", "open"):
        expected = length_fit(shared_data, task, first=20, models=models).slope
        assert slopes[task] == pytest.approx(expected, rel=1e-9)


@pytest.mark.slow
@pytest.mark.timeout(2400)  # 737 s at load 5-9, 1,015 s at load 9-13 (2 cores)
@FULL
def test_length_study_reproduces_the_paper_slopes(shared_data: Path, tmp_path: Path) -> None:
    """§6.1 through `howtobench lengths` on all 9,230 guide and open writings."""
    slopes = study_slopes(shared_data, tmp_path / "logs", limit=None)
    assert round(slopes["guide"], 1) == 1.4 and round(slopes["open"], 1) == 6.1


# --- Table 7, BLEU row: its level on characters; Drop lowers BLEU, Repeat raises it -------


def references(shared_data: Path) -> dict[str, str]:
    return {r["infer_id"]: r["reference"] for t in TASKS for r in raw(shared_data, t)}


def chars(text: str) -> tuple[str, ...]:
    """The `bleu` scorer's default tokens: Chinese characters (sacrebleu's zh tokenizer)."""
    return tokenize(text, unit="char")


def bleu_changes(shared_data: Path, writings: list[tuple[str, str, str]]) -> tuple[float, ...]:
    """Mean BLEU-1 (x100, on characters) of the writings, and the mean change under drop
    and repeat, each drawn as the `perturb` solver draws it (seed 0, the sample id)."""
    found = references(shared_data)
    clean, dropped, repeated = [], [], []
    for _, infer_id, text in writings:
        reference = chars(found[infer_id])
        score = bleu(chars(text), reference)[0] * 100
        clean.append(score)
        for kind, into in ((drop, dropped), (repeat, repeated)):
            changed, _ = kind(text, random.Random(f"0:{infer_id}"), "zh")
            into.append(bleu(chars(changed), reference)[0] * 100 - score)
    return fmean(clean), fmean(dropped), fmean(repeated)


def stored_writings(shared_data: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Every non-empty stored writing, by model: (task, infer_id, text)."""
    return {
        model: [
            (task, infer_id, text)
            for task in TASKS
            for infer_id, text in outputs(shared_data, task, model).items()
            if text.strip()
        ]
        for model in MODELS
    }


def textbook_bleu_1(hypothesis: list[str], reference: list[str]) -> float:
    """BLEU-1 x100 as Papineni et al. (2002) define it: the clipped unigram precision times
    the brevity penalty min(1, exp(1 - r/c))."""
    matched = sum((Counter(hypothesis) & Counter(reference)).values())
    penalty = min(1.0, math.exp(1 - len(reference) / len(hypothesis)))
    return 100 * matched / len(hypothesis) * penalty


@pytest.mark.slow
def test_table7_bleu_on_fifty_writings(shared_data: Path) -> None:
    """§6.2: 50 writings, 5 per model; Table 7's BLEU: Init 24.66, Drop -7.27, Rep +4.23.

    On characters, this draw (seed 0) gives 25.59, -6.17 and +4.03 (on jieba words 19.46,
    -4.43 and +2.96, too low a level for this check). A sound metric drops under both;
    BLEU rises under Repeat, the change Table 7 marks as undesired. 200 draws:
    docs/reproduction.md."""
    rng = random.Random(0)
    writings = [w for ws in stored_writings(shared_data).values() for w in rng.sample(ws, 5)]
    assert len(writings) == 50
    init, dropped, repeated = bleu_changes(shared_data, writings)
    assert abs(init - TABLE7_BLEU[0]) < 1.5
    assert dropped < 0 < repeated
    found, zh = references(shared_data), TokenizerZh()
    textbook = [textbook_bleu_1(zh(text).split(), zh(found[i]).split()) for _, i, text in writings]
    assert init == pytest.approx(fmean(textbook), rel=1e-9)


@pytest.mark.slow
@pytest.mark.timeout(2400)  # 254 s and 386 s at load 4-8, 1,072 s at load 17-52 (2 cores): 2x
@FULL
def test_table7_bleu_on_all_writings(shared_data: Path) -> None:
    """Table 7's BLEU over all 12,969 non-empty writings, on characters (ours: 24.31,
    -6.00, +3.50; on jieba words 18.51, -4.54, +2.58)."""
    writings = [w for ws in stored_writings(shared_data).values() for w in ws]
    assert len(writings) == 13020 - 51
    init, dropped, repeated = bleu_changes(shared_data, writings)
    assert abs(init - TABLE7_BLEU[0]) < 1
    assert dropped < 0 < repeated


# --- Table 7's ToW row against its node rows (§3.3) ------------------------------------


def test_table7_tow_init_lies_below_all_its_node_rows() -> None:
    """On one tree the root is a convex combination of its nodes, so ToW's Init can be no
    lower than its lowest node row (format, 5.77); at §3.3's 4:3:1 it is 5.92 (5.91 at the
    paper code's 5:3:1), not the printed 5.41. Only a mix of trees reaches 5.41: completion
    (4:1, no format) with guide and open (4:3:1), and then only if the completion writings
    scored the floor, 1, on content and impression (a linear programme over the group
    means; with 30 % completion writings the lowest ToW mean is 5.38)."""
    content, form, impression = TABLE7_NODES.values()
    assert round((4 * content + 3 * form + impression) / 8, 2) == 5.92
    assert round((5 * content + 3 * form + impression) / 9, 2) == 5.91
    assert TABLE7_TOW < min(TABLE7_NODES.values())
    # group means: completion content, impression; guide/open content, format, impression
    share = 0.3
    lowest = optimize.linprog(
        [share * 0.8, share * 0.2, (1 - share) * 4 / 8, (1 - share) * 3 / 8, (1 - share) / 8],
        A_eq=[[share, 0, 1 - share, 0, 0], [0, 0, 0, 1, 0], [0, share, 0, 0, 1 - share]],
        b_eq=[content, form, impression],
        bounds=[(1, 10), (1, 10), (1, 10), (0, 10), (1, 10)],
    )
    assert lowest.success and lowest.fun < TABLE7_TOW
    assert lowest.x[:2] == pytest.approx([1, 1])


# --- the data against the task descriptions ---------------------------------------------


def test_completion_references_with_more_than_ten_blank_line_units(shared_data: Path) -> None:
    """The passage cut out of a completion text is mostly a few paragraphs, but 34 of 379
    have more than 10 blank-line-separated units (up to 55): 21 prose (散文), 10 fiction
    (小说) and 3 others, mostly short verse or dialogue lines."""
    records = raw(shared_data, "completion")
    units = [len([u for u in re.split(r"\n\s*\n", r["reference"]) if u.strip()]) for r in records]
    many = [r["sub_task"] for r, n in zip(records, units, strict=True) if n > 10]
    assert (len(many), len(records), max(units)) == (34, 379, 55)
    assert Counter(many) == {"散文": 21, "小说": 10, "纪实": 2, "文章": 1}


def test_open_instructions_that_are_one_sentence(shared_data: Path) -> None:
    """The open task's instruction is one sentence in 226 of 467 (split at 。！？); 225 if
    the half-width "!" inside infer_292's quoted title "老师，您好!" ends a sentence too."""
    instructions = [r["basic_instruction"] for r in raw(shared_data, "open")]

    def one_sentence(ends: str) -> int:
        return sum(len([s for s in re.split(ends, t) if s.strip()]) == 1 for t in instructions)

    assert (one_sentence("[。！？]"), one_sentence("[。！？!?]"), len(instructions)) == (
        226,
        225,
        467,
    )


# --- ROUGE-L against the paper's code (rouge-chinese over jieba words) -------------------


def paper_words(text: str) -> list[str]:
    """The words the paper's code scores: rouge-chinese splits the jieba-joined text into
    sentences at line breaks and sentence ends, and a sentence of spaces alone (what a line
    break leaves) becomes one empty word."""
    sentences = Rouge().cut_sent(" ".join(jieba.cut(text)))
    return [w for s in sentences if s for w in " ".join(s.split()).split(" ")]


@pytest.mark.slow
def test_rouge_l_differs_from_the_paper_code_only_by_its_empty_words(
    shared_data: Path,
) -> None:
    """Whole multi-paragraph writings (8 completion writings, short enough for the paper's
    pure-Python LCS): the paper's ROUGE-L is the token-LCS F1 over its words, and without
    the empty words those are ours. docs/reproduction.md gives the gap over a whole task."""
    records = raw(shared_data, "completion")[:8]
    written = outputs(shared_data, "completion", "gpt-4o-2024-11-20")
    gaps = []
    for r in records:
        writing, reference = written[r["infer_id"]], r["reference"]
        assert "\n\n" in writing and "\n\n" in reference  # several paragraphs each
        paper = Rouge().get_scores(" ".join(jieba.cut(writing)), " ".join(jieba.cut(reference)))
        paper_f = paper[0]["rouge-l"]["f"]
        hypothesis, target = paper_words(writing), paper_words(reference)
        assert "" in hypothesis and "" in target
        assert rouge_l_f1(tuple(hypothesis), tuple(target)) == pytest.approx(paper_f, abs=1e-6)
        without_empty = (tuple(w for w in hypothesis if w), tuple(w for w in target if w))
        ours = rouge_l_f1(tokenize(writing), tokenize(reference))
        assert without_empty == (tokenize(writing), tokenize(reference))
        gaps.append(paper_f - ours)
    assert 0 < max(gaps) < 0.02
