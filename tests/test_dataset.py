"""Data sources, validation with file/line/field errors, genre filter and the sample shape."""

import json
from pathlib import Path

import pytest
from inspect_ai.event import LoggerEvent

from howtobench import completion
from howtobench.dataset import hub, open_source
from howtobench.dataset import records as ds
from howtobench.dataset.records import LONGEST_FIELD, DataError, record_to_sample
from support.data import MARKER, aligned_row, write_jsonl
from support.evals import run_eval


def test_folder_source_records_and_sample_metadata(data_folder: Path) -> None:
    records = open_source(str(data_folder)).records("guide")
    assert [r.id for r in records] == ["infer_1", "infer_2"]
    sample = record_to_sample(records[1], "prompt")
    assert sample.id == "infer_2"
    assert sample.target == "公园让城市更宜居。我们要爱护公园。"
    meta = sample.metadata
    assert meta["genre"] == "speech" and meta["genre_raw"] == "演讲稿"
    assert meta["task"] == "guide" and meta["bench_id"] == "bench_infer_2"
    assert meta["language"] == "zh"
    assert meta["input_length"] == len("请写一篇关于城市公园的议论文。") + len(
        "- 公园的作用\n- 如何保护"
    )
    assert meta["instruction"] and meta["grounding"] and meta["reference"]


def test_full_local_copy_counts(shared_data: Path) -> None:
    counts = {t: len(open_source(str(shared_data)).records(t)) for t in ds.TASKS}
    assert counts == {"completion": 379, "guide": 456, "open": 467}


def test_every_stored_generation_of_the_local_copy_replays(shared_data: Path) -> None:
    source = open_source(str(shared_data))
    records = source.records("open")
    outputs = source.generations_for("open", "deepseek-chat", records)
    assert len(outputs) == 467
    assert sum(1 for text in outputs.values() if text == "") == 9  # kept, never dropped


def test_user_jsonl_source(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            {"instruction": "Write a short essay about trains.", "reference": "Trains are slow."},
            {
                "id": "x",
                "task": "guide",
                "instruction": "写一封信。",
                "grounding": "- 问候",
                "genre": "letters",
            },
            {"task": "completion", "instruction": "补全。", "grounding": f"甲{MARKER}乙"},
        ],
    )
    open_records = open_source(str(path)).records("open")
    assert [r.id for r in open_records] == ["mine_1"]
    assert open_records[0].language == "en" and open_records[0].genre == "others"
    guide_records = open_source(str(path)).records("guide")
    assert [(r.id, r.language, r.genre) for r in guide_records] == [
        ("mine_1", "en", "others"),
        ("x", "zh", "letters"),
    ]
    # A record without `task` belongs to the task being run, so it must suit it.
    with pytest.raises(DataError, match=r"mine.jsonl, line 1, field 'grounding'"):
        open_source(str(path)).records("completion")


def test_demo_source_has_all_tasks_and_two_writers() -> None:
    source = open_source("demo")
    for task in ds.TASKS:
        records = source.records(task)
        assert records, task
        for model in ("demo-writer-a", "demo-writer-b"):
            outputs = source.generations_for(task, model, records)
            assert set(outputs) == {r.id for r in records}
    assert any(r.language == "en" for r in source.records("open"))


def _hub_reachable(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read rows through a stand-in for `load_dataset`, without the network:
    the hub's address counts as reachable (what `unreachable` says of a dead address is
    tested over a real socket in tests/test_preflight.py)."""
    monkeypatch.setattr(hub, "unreachable", lambda url: None)


def test_hub_source_goes_through_the_same_record_path(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = [aligned_row("infer_7", "open", information=""), aligned_row("infer_8", "guide")]
    calls = []

    def fake_load_dataset(path: str, revision: str, split: str) -> list[dict]:
        calls.append((path, revision, split))
        return rows

    monkeypatch.setattr("datasets.load_dataset", fake_load_dataset)
    _hub_reachable(monkeypatch)
    records = open_source("hub").records("open")
    assert [r.id for r in records] == ["infer_7"]
    assert calls == [(hub.HF_REPO, hub.HF_REVISION, "train")]
    rows.append({**aligned_row("infer_9", "open"), "basic_instruction": ""})
    with pytest.raises(DataError, match=r"hf://.*line 3, field 'basic_instruction': is empty"):
        open_source("hub").records("open")
    with pytest.raises(DataError, match="replay needs stored generations"):
        open_source("hub").generations_for("open", "gpt-4o", records)


def _published_rows(shared_data: Path) -> list[dict]:
    return [
        json.loads(line)
        for task in ds.TASKS
        for line in (shared_data / task / "aligned.jsonl").open(encoding="utf-8")
    ]


def _serve(monkeypatch: pytest.MonkeyPatch, rows: list[dict]) -> None:
    monkeypatch.setattr("datasets.load_dataset", lambda path, revision, split: rows)
    _hub_reachable(monkeypatch)


def _fingerprint_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "published" in r.getMessage()]


def test_published_fingerprint_is_that_of_the_paper_data(shared_data: Path) -> None:
    """The stored pin, recomputed here from the raw files without the package's code."""
    import hashlib

    from howtobench.dataset.fingerprint import PUBLISHED

    for task in ds.TASKS:
        rows = [
            json.loads(line)
            for line in (shared_data / task / "aligned.jsonl").open(encoding="utf-8")
        ]
        digest = hashlib.sha256()
        for key in sorted((r["infer_id"], r["basic_instruction"], r["reference"]) for r in rows):
            digest.update(("\x1f".join(key) + "\x1e").encode("utf-8"))
        assert (PUBLISHED[task].count, PUBLISHED[task].sha256) == (len(rows), digest.hexdigest())


def test_hub_rows_equal_to_the_paper_data_load_without_a_warning(
    shared_data: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    rows = _published_rows(shared_data)
    _serve(monkeypatch, rows[::-1])  # the hub's row order does not matter
    counts = {task: len(open_source("hub").records(task)) for task in ds.TASKS}
    assert counts == {"completion": 379, "guide": 456, "open": 467}
    assert _fingerprint_warnings(caplog) == []


def test_hub_rows_that_differ_are_used_with_one_warning_line_per_task(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # as many open records as published (467), other content; guide: a count that differs
    rows = [aligned_row(f"infer_{i}", "open", information="") for i in range(467)]
    rows += [aligned_row("infer_guide", "guide")]
    _serve(monkeypatch, rows)
    assert len(open_source("hub").records("open")) == 467
    assert len(open_source("hub").records("guide")) == 1
    warnings = _fingerprint_warnings(caplog)
    assert len(warnings) == 2 and all("\n" not in w for w in warnings)
    assert "467 open records differ from the published ones" in warnings[0]
    assert "content hash" in warnings[0]
    assert "1 guide records, the published benchmark has 456" in warnings[1]


def test_hub_unreachable_is_one_line_saying_what_works_offline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def offline(path: str, revision: str, split: str) -> list[dict]:
        raise ConnectionError(
            "Couldn't reach 'andrewzhuoerfeng/HowToBench' on the Hub (LocalEntryNotFoundError)\n"
        )

    monkeypatch.setattr("datasets.load_dataset", offline)
    _hub_reachable(monkeypatch)
    with pytest.raises(DataError) as caught:
        open_source("hub").records("guide")
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(f"hf://{hub.HF_REPO}@{hub.HF_REVISION}: cannot load the benchmark")
    assert "ConnectionError: Couldn't reach" in message
    assert "-T dataset=demo" in message
    assert "git clone https://github.com/ZhuoerFeng/ACL2026-Tree-of-Writing" in message
    assert "-T dataset=ACL2026-Tree-of-Writing/data" in message


def test_unknown_source_path() -> None:
    with pytest.raises(DataError, match="dataset not found"):
        open_source("/no/such/place").records("open")


@pytest.mark.parametrize(
    ("line_text", "message"),
    [
        ("{not json", r"line 2: malformed JSON"),
        (
            json.dumps(aligned_row("b", basic_instruction="")),
            r"line 2, field 'basic_instruction': is empty",
        ),
        (
            json.dumps({k: v for k, v in aligned_row("b").items() if k != "basic_instruction"}),
            r"line 2, field 'basic_instruction': missing",
        ),
        (
            json.dumps(aligned_row("b", task_type="poetry")),
            r"line 2, field 'task_type': unknown task 'poetry'",
        ),
        (json.dumps(aligned_row("b", reference=3)), r"line 2, field 'reference': must be a string"),
        (json.dumps(aligned_row("a")), r"field 'infer_id': duplicate id 'a' \(lines 1 and 2\)"),
        (
            json.dumps(aligned_row("b", reference="文" * 5_000_000)),
            r"line 2, field 'reference': has 5,000,000 characters, more than the 50,000",
        ),
        (
            json.dumps(aligned_row("b", basic_instruction="写" * (LONGEST_FIELD + 1))),
            r"line 2, field 'basic_instruction': has 50,001 characters",
        ),
        ("[" * 100_000 + "]" * 100_000, r"line 2: the record is nested too deep"),
    ],
)
def test_bad_aligned_records_name_file_line_and_field(
    tmp_path: Path, line_text: str, message: str
) -> None:
    path = write_jsonl(tmp_path / "guide" / "aligned.jsonl", [aligned_row("a")])
    with path.open("a", encoding="utf-8") as f:
        f.write(line_text + "\n")
    with pytest.raises(DataError, match=message) as info:
        open_source(str(tmp_path)).records("guide")
    assert str(path) in str(info.value)


def test_completion_without_marker(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "completion" / "aligned.jsonl",
        [
            aligned_row("a", "completion"),
            aligned_row(
                "b", "completion", information="没有空缺的全文。", basic_instruction="请补全。"
            ),
        ],
    )
    with pytest.raises(
        DataError, match=r"line 2, field 'information': .*needs the \[fill in the blank\]"
    ):
        open_source(str(tmp_path)).records("completion")
    # The published data has two records whose marker is only named in the instruction:
    # they are kept (with a note their run says), as the whole benchmark must load.
    write_jsonl(
        path,
        [
            aligned_row(
                "b", "completion", information="全文。", basic_instruction=f"补全 {MARKER} 处。"
            )
        ],
    )
    [record] = open_source(str(tmp_path)).records("completion")
    assert (record.id, record.note) == (
        "b",
        f"line 1 of aligned.jsonl: its {MARKER} marker is only in the instruction, not in the text",
    )


def test_a_data_note_is_said_once_per_run_for_the_items_it_runs(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Reading the records says nothing; a run says a record's note when it writes that
    record's sample, in its first epoch only, and a run that does not use it (--limit)
    says nothing of it. The line is in the sample's transcript."""
    stored = {"generations": {"w": "丙。"}, "task": "completion", "instruction": "补全。"}
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            {**stored, "id": "a", "grounding": f"甲{MARKER}乙"},
            {**stored, "id": "b", "instruction": f"补全 {MARKER} 处。", "grounding": "甲乙"},
        ],
    )
    note = f"line 2 of mine.jsonl: its {MARKER} marker is only in the instruction, not in the text"
    caplog.set_level("WARNING")
    [first] = run_eval(
        completion(dataset=str(path), scorers="rouge_l"), tmp_path / "a", model="replay/w", limit=1
    )
    assert not [r for r in caplog.records if "marker" in r.getMessage()]
    [both] = run_eval(
        completion(dataset=str(path), scorers="rouge_l"), tmp_path / "b", model="replay/w", epochs=2
    )
    said = [r.getMessage() for r in caplog.records if "marker" in r.getMessage()]
    shown = f"sample=b epoch=1\n{note}"  # inspect's log context names the sample
    assert said == [shown]
    logged = {
        (str(sample.id), sample.epoch): [
            e.message.message
            for e in sample.events
            if isinstance(e, LoggerEvent) and "marker" in e.message.message
        ]
        for sample in both.samples or []
    }
    assert logged == {("a", 1): [], ("a", 2): [], ("b", 1): [shown], ("b", 2): []}
    assert [s.metadata.get("data_note") for s in first.samples or []] == [None]


def test_user_file_errors(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mine.jsonl", [{"instruction": "写诗", "task": "essay"}])
    with pytest.raises(DataError, match=r"mine.jsonl, line 1, field 'task': unknown task 'essay'"):
        open_source(str(path)).records("open")
    write_jsonl(path, [{"instruction": "写诗", "task": "completion", "grounding": "全文"}])
    with pytest.raises(DataError, match=r"line 1, field 'grounding': .*marker"):
        open_source(str(path)).records("completion")
    write_jsonl(path, [{"instruction": "写诗"}, {"instruction": "  "}])
    with pytest.raises(DataError, match=r"line 2, field 'instruction': is empty"):
        open_source(str(path)).records("open")
    write_jsonl(path, [{"instruction": "写诗", "generations": {"m": 5}}])
    with pytest.raises(DataError, match=r"field 'generations.m': must be a string"):
        open_source(str(path)).records("open")


def test_unknown_task_name() -> None:
    with pytest.raises(ValueError, match="unknown task 'poem'"):
        open_source("demo").records("poem")


def test_replay_errors(data_folder: Path) -> None:
    source = open_source(str(data_folder))
    records = source.records("guide")
    with pytest.raises(
        DataError,
        match=r"model-z.jsonl: no stored writings of 'model-z' \(stored: model-a, model-b\)",
    ):
        source.generations_for("guide", "model-z", records)
    with pytest.raises(
        DataError,
        match=r"model-b.jsonl, field 'infer_id': no stored writing of 'model-b' for 'infer_2'",
    ):
        source.generations_for("guide", "model-b", records)
    assert source.generations_for("guide", "model-a", records) == {
        "infer_1": "公园让城市更宜居。",
        "infer_2": "",
    }


def test_replay_errors_in_a_user_file(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            {"instruction": "写诗", "generations": {"m1": "诗"}},
            {"instruction": "写文", "generations": {"m2": "文"}},
        ],
    )
    source = open_source(str(path))
    records = source.records("open")
    with pytest.raises(DataError, match=r"no stored writings of 'm3' \(stored: m1, m2\)"):
        source.generations_for("open", "m3", records)
    with pytest.raises(
        DataError, match=r"field 'generations.m1': no stored writing of 'm1' for 'mine_2'"
    ):
        source.generations_for("open", "m1", records)


def test_genre_filter(data_folder: Path) -> None:
    records = open_source(str(data_folder)).records("guide")
    assert [r.id for r in ds.filter_genre(records, "speech")] == ["infer_2"]
    assert [r.id for r in ds.filter_genre(records, "议论文")] == ["infer_1"]
    with pytest.raises(
        ValueError, match=r"no records of genre 'poem' \(genres here: argumentative, speech\)"
    ):
        ds.filter_genre(records, "poem")


@pytest.mark.parametrize(
    ("text", "language"),
    [("请写一篇文章", "zh"), ("Write an essay about 长城", "en"), ("", "en"), ("写 a 文章", "zh")],
)
def test_detect_language(text: str, language: str) -> None:
    assert ds.detect_language(text) == language


def _raw_file(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def _line(row: dict) -> bytes:
    return json.dumps(row, ensure_ascii=False).encode("utf-8")


def test_bom_crlf_and_blank_lines_are_read(tmp_path: Path) -> None:
    first = {"id": "first", "instruction": "写一首诗。"}
    second = {"id": "second", "instruction": "Write a letter.\r\nDear Sir,"}
    data = b"\xef\xbb\xbf" + _line(first) + b"\r\n\r\n   \r\n" + _line(second) + b"\r\n\n"
    path = _raw_file(tmp_path / "mine.jsonl", data)
    assert list(ds.read_jsonl(path)) == [(1, first), (4, second)]
    records = open_source(str(path)).records("open")
    assert [(r.id, r.line, r.instruction) for r in records] == [
        ("first", 1, "写一首诗。"),
        ("second", 4, "Write a letter.\r\nDear Sir,"),
    ]
    # the published layout too: a BOM must not hide the first record's infer_id
    aligned = _raw_file(
        tmp_path / "data" / "guide" / "aligned.jsonl",
        b"\xef\xbb\xbf" + _line(aligned_row("a")) + b"\r\n" + _line(aligned_row("b")) + b"\r\n",
    )
    assert [r.id for r in open_source(str(aligned.parents[1])).records("guide")] == ["a", "b"]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            _line({"instruction": "好"}) + b'\n{"instruction": "\xff"}\n',
            r"line 2: not valid UTF-8 \(byte 0xff at byte 18 of the line\)",
        ),
        (
            '{"instruction": "中文"}\n'.encode("gbk"),
            r"line 1: not valid UTF-8 \(byte 0xd6 at byte 18",
        ),
        (
            '{"instruction": "x"}\n'.encode("utf-16"),
            r"line 1: the file is UTF-16: save it as UTF-8",
        ),
        (b"", r"mine.jsonl: the file is empty"),
        (b"\n  \r\n\n", r"mine.jsonl: the file is empty \(or only blank lines\)"),
        (b"\xef\xbb\xbf", r"mine.jsonl: the file is empty"),
    ],
)
def test_bytes_that_are_not_records_name_file_and_line(
    tmp_path: Path, data: bytes, message: str
) -> None:
    path = _raw_file(tmp_path / "mine.jsonl", data)
    with pytest.raises(DataError, match=message) as info:
        open_source(str(path)).records("open")
    assert str(info.value).startswith(str(path))


def test_empty_aligned_and_inferences_files(data_folder: Path) -> None:
    inferences = data_folder / "guide" / "inferences" / "model-b.jsonl"
    _raw_file(inferences, b"\r\n")
    records = open_source(str(data_folder)).records("guide")
    with pytest.raises(DataError, match=r"model-b.jsonl: the file is empty"):
        open_source(str(data_folder)).generations_for("guide", "model-b", records)
    _raw_file(data_folder / "guide" / "aligned.jsonl", b"")
    with pytest.raises(DataError, match=r"guide/aligned.jsonl: the file is empty"):
        open_source(str(data_folder)).records("guide")


def test_duplicates_name_both_lines(tmp_path: Path, data_folder: Path) -> None:
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [{"id": "x", "instruction": "一"}, {"instruction": "二"}, {"id": "x", "instruction": "三"}],
    )
    with pytest.raises(
        DataError, match=r"mine.jsonl, field 'id': duplicate id 'x' \(lines 1 and 3\)"
    ):
        open_source(str(path)).records("open")
    inferences = data_folder / "guide" / "inferences" / "model-a.jsonl"
    with inferences.open("a", encoding="utf-8") as f:
        f.write("\n" + json.dumps({"infer_id": "infer_1", "output": "again"}) + "\n")
    records = open_source(str(data_folder)).records("guide")
    with pytest.raises(
        DataError,
        match=r"model-a.jsonl, field 'infer_id': second generation for 'infer_1' \(lines 1 and 4\)",
    ):
        open_source(str(data_folder)).generations_for("guide", "model-a", records)


def test_a_user_file_without_records_of_the_task(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "mine.jsonl", [{"task": "guide", "instruction": "写信。"}])
    with pytest.raises(
        DataError, match=r"mine.jsonl, field 'task': no records of task 'open' \(.*: guide\)"
    ):
        open_source(str(path)).records("open")


def test_a_folder_item_keeps_the_language_it_names(tmp_path: Path) -> None:
    rows = [
        aligned_row("zh_1"),
        aligned_row("en_1", basic_instruction="Write an essay on city parks.", language="en"),
    ]
    write_jsonl(tmp_path / "data" / "guide" / "aligned.jsonl", rows)
    records = {r.id: r for r in open_source(str(tmp_path / "data")).records("guide")}
    assert records["zh_1"].language == "zh"  # the published format has no language field
    assert records["en_1"].language == "en"
