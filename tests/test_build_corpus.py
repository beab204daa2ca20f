"""The corpus format: what a line may hold, and one clean line naming file, line and field
for every line that cannot be used (from Python and from `howtobench build`); a text's
second copies, dropped before any model is asked, and its near-duplicates, reported."""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from build_support import DEMO_CORPUS, Recorder, read_rows, run_build, write_rows
from rapidfuzz import fuzz, process

from howtobench.cli import main
from howtobench.construct.corpus import CorpusText, read_corpus, write_jsonl
from howtobench.construct.duplicates import (
    NEAR_DUPLICATE,
    find_duplicates,
    near_duplicates,
    normalised,
)
from howtobench.construct.options import BuildOptions
from howtobench.dataset.records import DataError
from howtobench.simulator import JudgeSimulator


def test_the_demo_corpus_reads_with_languages_detected_and_genres_mapped() -> None:
    texts = read_corpus(DEMO_CORPUS)
    assert len(texts) == 21
    assert {t.language for t in texts} == {"zh", "en"}
    by_id = {t.id: t for t in texts}
    assert by_id["zh-reading"].genre_raw == "议论文"
    assert by_id["zh-reading"].genre == "argumentative"  # a raw label of the published data
    assert by_id["zh-queue"].genre == ""  # left to the classifier
    assert by_id["en-bicycle"].language == "en" and by_id["en-bicycle"].source == "demo-essays"


def test_defaults_and_a_round_trip_through_a_corpus_file(tmp_path: Path) -> None:
    path = write_rows(
        tmp_path / "c.jsonl",
        [
            {"text": "一段中文。"},
            {"text": "Some English.", "language": "en-GB", "genre": "haiku", "id": " x "},
        ],
    )
    first, second = read_corpus(path)
    assert (first.id, first.language, first.line) == ("c_1", "zh", 1)
    assert (second.id, second.language, second.genre) == ("x", "en", "haiku")  # own label kept
    again = read_corpus(
        write_jsonl(tmp_path / "again.jsonl", [t.record() for t in (first, second)])
    )
    assert [(t.id, t.text, t.genre_raw, t.language) for t in again] == [
        (t.id, t.text, t.genre_raw, t.language) for t in (first, second)
    ]


BAD_LINES = [
    ('{"text": "ok"}\n{"text": "broken"', 2, None, "malformed JSON"),
    ('{"id": "a"}', 1, "text", "missing"),
    ('{"text": "   "}', 1, "text", "is empty"),
    ('{"text": 42}', 1, "text", "must be a string, got int"),
    ('{"text": "ok", "genere": "poem"}', 1, "genere", "unknown field"),
    ('{"text": "前文[fill in the blank]后文"}', 1, "text", "the completion task reserves"),
    ('{"text": "bad \\ud800 half"}', 1, "text", "lone surrogate"),
    ('{"text": "ok", "language": "Chinese!"}', 1, "language", "not a language code"),
    ('{"text": "ok", "genre": ""}', 1, "genre", "is empty"),
    (
        '{"text": "a", "id": "x"}\n\n{"text": "b", "id": "x"}',
        3,
        "id",
        "duplicate id 'x' (lines 1 and 3)",
    ),
    ("[1, 2]", 1, None, "must be a JSON object"),
]


@pytest.mark.parametrize(("content", "line", "field", "message"), BAD_LINES)
def test_a_bad_line_names_file_line_and_field(
    tmp_path: Path, content: str, line: int, field: str | None, message: str
) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text(content + "\n", "utf-8")
    with pytest.raises(DataError) as error:
        read_corpus(path)
    assert (error.value.source, error.value.line, error.value.field) == (str(path), line, field)
    assert message in str(error.value)
    assert "\n" not in str(error.value)


def test_the_command_stops_on_a_bad_line_with_status_2_before_any_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write_rows(tmp_path / "corpus.jsonl", [{"text": "第一篇。"}, {"id": "b"}])
    out = tmp_path / "out"
    # the model is never reached: no simulator runs, and none is needed
    status = main(["build", str(path), "--out", str(out), "--model", "openai-api/sim/judge"])
    err = capsys.readouterr().err
    assert status == 2
    assert err == f"howtobench build: error: {path}, line 2, field 'text': missing\n"
    assert not out.exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--tasks", "guide,essay"], "--tasks: expected a comma list of completion, guide, open"),
        (["--threshold", "6"], "argument --threshold: expected a whole number from 1 to 5, got 6"),
        (
            ["--per-genre", "0"],
            "argument --per-genre: expected a whole number of at least 1, got 0",
        ),
    ],
)
def test_bad_options_stop_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    argv = ["build", str(DEMO_CORPUS), "--out", str(tmp_path / "o"), "--model", "m/x", *option]
    try:
        status = main(argv)
    except SystemExit as stop:  # refused by argparse, as the option is read
        status = stop.code
    assert status == 2
    [line] = capsys.readouterr().err.splitlines()
    assert message in line


def test_a_model_that_cannot_be_used_stops_with_status_2_before_any_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["build", str(DEMO_CORPUS), "--out", str(out), "--model", "nowhere/model"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("howtobench build: error: --model: cannot use 'nowhere/model': ")
    assert len(err.strip().splitlines()) == 1 and not out.exists()


# --- duplicates -------------------------------------------------------------------------


def _text(id: str, text: str, line: int = 0) -> CorpusText:
    return CorpusText(id=id, text=text, genre_raw="", language="zh", line=line)


def test_normalising_sets_aside_spacing_punctuation_width_and_case() -> None:
    assert normalised("Ｈｅｌｌｏ，  World！\u200b《春》——“好”\n\t 123") == "helloworld春好123"
    assert normalised("Straße ﬁne ⒈") == "strassefine1"  # case-folded, NFKC
    assert normalised("……！？ \n") == ""


def test_equal_texts_once_normalised_are_one_and_the_first_is_kept() -> None:
    texts = [
        _text("a", "春天来了，花开了。", 1),
        _text("b", "秋天到了。", 2),
        _text("a2", "春天来了  花开了！！", 3),  # re-punctuated and re-spaced
        _text("c", "Spring came. Flowers opened.", 4),
        _text("c2", "SPRING CAME ― FLOWERS OPENED", 5),
        _text("a3", "春天来了花开了", 6),
        _text("p1", "……", 7),  # punctuation only: compared as written
        _text("p2", "！！", 8),
        _text("p3", "……", 9),
    ]
    found = find_duplicates(texts)
    assert [t.id for t in found.kept] == ["a", "b", "c", "p1", "p2"]
    assert [(copy.id, kept.id) for copy, kept in found.copies] == [
        ("a2", "a"),
        ("c2", "c"),
        ("a3", "a"),
        ("p3", "p1"),
    ]
    assert found.near == []


def _edited(text: str, share: float, rng: random.Random) -> str:
    """`text` with about `share` of its characters replaced, deleted or inserted."""
    chars = list(text)
    for _ in range(max(1, round(len(chars) * share))):
        where, what = rng.randrange(len(chars)), rng.random()
        if what < 1 / 3:
            chars[where] = chr(0x4E00 + rng.randrange(200))
        elif what < 2 / 3 and len(chars) > 1:
            del chars[where]
        else:
            chars.insert(where, chr(0x4E00 + rng.randrange(200)))
    return "".join(chars)


def test_the_near_duplicate_filters_drop_no_pair_that_reaches_the_threshold() -> None:
    """Against every pair checked with rapidfuzz: texts from a small alphabet (so that
    unrelated texts share many q-grams) and edited copies on both sides of 90."""
    rng = random.Random(7)
    forms = ["".join(chr(0x4E00 + rng.randrange(200)) for _ in range(rng.randrange(2, 400)))]
    while len(forms) < 240:
        if rng.random() < 0.5:
            forms.append(_edited(rng.choice(forms), rng.uniform(0.0, 0.12), rng))
        else:
            n = rng.choice([1, 2, 3, 5, 20, 100, 300])
            forms.append("".join(chr(0x4E00 + rng.randrange(200)) for _ in range(n)))
    forms.append("")
    scores = process.cdist(forms, forms, scorer=fuzz.ratio, score_cutoff=NEAR_DUPLICATE)
    every = {
        (i, j) for i, j in zip(*np.nonzero(scores), strict=True) if i < j and forms[i] and forms[j]
    }
    found = near_duplicates(forms)
    assert {(i, j) for i, j, _ in found} == every
    assert len(every) > 30 and min(s for _, _, s in found) < 92  # near the line, too
    assert all(fuzz.ratio(forms[i], forms[j]) == pytest.approx(s, abs=0.05) for i, j, s in found)


@pytest.mark.slow
def test_a_corpus_with_copies_builds_once_per_text_and_reports_near_duplicates(
    serve: Callable[..., JudgeSimulator], tmp_path: Path
) -> None:
    rows = {
        json.loads(line)["id"]: json.loads(line)
        for line in DEMO_CORPUS.read_text("utf-8").splitlines()
    }
    reading, stove, bicycle = rows["zh-reading"], rows["zh-stove"], rows["en-bicycle"]
    again = reading["text"].replace("，", ", ").replace("。", "！ ")
    loud = " ".join(bicycle["text"].upper().split())
    edited = stove["text"].replace("外婆做饭", "外婆烧饭", 1)
    corpus = write_rows(
        tmp_path / "corpus.jsonl",
        [
            reading,
            stove,
            bicycle,
            {"id": "zh-reading-again", "text": again, "genre": "议论文"},
            {"id": "en-bicycle-loud", "text": loud},
            {"id": "zh-stove-edited", "text": edited},
        ],
    )
    assert edited != stove["text"]
    recorder = Recorder()
    out = tmp_path / "out"
    result = run_build(corpus, out, serve(script=recorder), BuildOptions(tasks=("open",)))
    rejected = {r["id"]: r for r in read_rows(out / "rejected.jsonl")}
    for copy, kept, line in (
        ("zh-reading-again", "zh-reading", 1),
        ("en-bicycle-loud", "en-bicycle", 3),
    ):
        row = rejected[copy]
        assert (row["step"], row["code"], row["duplicate_of"]) == ("deduplicate", "duplicate", kept)
        assert f"'{kept}' (line {line})" in row["reason"]
    asked = {text for _, text, _ in recorder.asked}
    assert again not in asked and loud not in asked  # no call spent on a copy
    assert any(edited in text for text in asked)  # a near-duplicate is kept
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    assert manifest["steps"]["deduplicate"] == {"in": 6, "rejected": {"duplicate": 2}, "out": 4}
    assert manifest["steps"]["classify"]["in"] == 4
    near = manifest["duplicates"]["near"]
    assert near["count"] == 1 and near["threshold"] == NEAR_DUPLICATE
    [pair] = near["pairs"]
    assert (pair["first"], pair["second"]) == ("zh-stove", "zh-stove-edited")
    assert 90 <= pair["ratio"] < 100
    summary = (out / "summary.md").read_text("utf-8")
    assert "## Duplicates" in summary and "Second copies rejected: 2" in summary
    assert re.search(r"\| zh-stove +\| zh-stove-edited +\| +9\d\.\d \|", summary)
    assert result.items["open"] + result.rejected == 6
