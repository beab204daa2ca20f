"""The corpus format: what a line may hold, and one clean line naming file, line and field
for every line that cannot be used (from Python and from `howtobench build`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from build_support import DEMO_CORPUS, write_rows

from howtobench.build.corpus import read_corpus, write_corpus
from howtobench.cli import main
from howtobench.dataset import DataError


def test_the_demo_corpus_reads_with_languages_detected_and_genres_mapped() -> None:
    texts = read_corpus(DEMO_CORPUS)
    assert len(texts) == 21
    assert {t.language for t in texts} == {"zh", "en"}
    by_id = {t.id: t for t in texts}
    assert by_id["zh-reading"].genre_raw == "议论文"
    assert by_id["zh-reading"].genre == "argumentative"  # a raw label of the published data
    assert by_id["zh-queue"].genre == ""  # left to the classifier
    assert by_id["en-bicycle"].language == "en" and by_id["en-bicycle"].source == "demo-essays"


def test_defaults_and_a_round_trip_through_write_corpus(tmp_path: Path) -> None:
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
    again = read_corpus(write_corpus(tmp_path / "again.jsonl", [first, second]))
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
        (["--threshold", "6"], "--threshold: expected 1-5, got 6"),
        (["--per-genre", "0"], "--per-genre: expected at least 1, got 0"),
    ],
)
def test_bad_options_stop_with_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], message: str
) -> None:
    argv = ["build", str(DEMO_CORPUS), "--out", str(tmp_path / "o"), "--model", "m/x", *option]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_a_model_that_cannot_be_used_stops_with_status_2_before_any_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    assert main(["build", str(DEMO_CORPUS), "--out", str(out), "--model", "nowhere/model"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("howtobench build: error: --model: cannot use 'nowhere/model': ")
    assert len(err.strip().splitlines()) == 1 and not out.exists()
