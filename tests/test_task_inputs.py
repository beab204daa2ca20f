"""What a task is given, said back in the user's own terms (issue 28): an anchor model
with no stored writings, and a record whose language its script does not say."""

from pathlib import Path

import pytest

from howtobench import guide, open_writing
from howtobench.dataset import open_source
from howtobench.dataset.records import DataError
from howtobench.vocabulary.errors import UserError
from howtobench.vocabulary.words import detect_language
from support.data import write_jsonl


def test_an_anchor_without_stored_writings_is_refused_in_anchors_words() -> None:
    with pytest.raises(UserError) as refused:
        guide(dataset="demo", anchor="nobody")
    assert str(refused.value) == (
        "-T anchor=nobody: the data has no stored writings of nobody; stored writers are:"
        " demo-writer-a, demo-writer-b (or give anchor=human or anchor=none)"
    )
    assert "replay" not in str(refused.value)
    # a stored writer is taken as the anchor
    assert guide(dataset="demo", anchor="demo-writer-b").metadata["anchor"] == "demo-writer-b"


@pytest.mark.parametrize(
    ("text", "language"),
    [
        ("请写一篇关于长城的文章", "zh"),
        ("写一篇关于「小林の家」餐厅的点评", "zh"),  # a lone borrowed の stays Chinese
        ("東京の天気について作文を書いてください", "ja"),
        ("カタカナで書く", "ja"),
        ("서울의 날씨에 대해 글을 쓰세요", "ko"),
        ("Write an essay about the Great Wall (长城)", "en"),
        ("Écris un essai sur l’hiver", "en"),
        ("", "en"),
        ("Напишите эссе о зиме", ""),
        ("اكتب مقالا عن الشتاء", ""),
    ],
)
def test_the_script_tells_the_language_or_says_it_cannot(text: str, language: str) -> None:
    assert detect_language(text) == language


def test_a_record_without_language_is_labelled_by_its_script_or_refused(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "mine.jsonl",
        [
            {"id": "ja", "instruction": "春の公園について随筆を書いてください。"},
            {"id": "zh", "instruction": "写一篇关于春天公园的散文。"},
            {"id": "en", "instruction": "Write an essay about a park in spring."},
            {"id": "ru", "instruction": "Напишите эссе о весеннем парке.", "language": "ru"},
        ],
    )
    records = open_source(str(path)).records("open")
    assert {r.id: r.language for r in records} == {"ja": "ja", "zh": "zh", "en": "en", "ru": "ru"}
    task = open_writing(dataset=str(path))
    assert [s.metadata["language"] for s in task.dataset] == ["ja", "zh", "en", "ru"]

    unsaid = write_jsonl(tmp_path / "unsaid.jsonl", [{"instruction": "Напишите эссе о весне."}])
    with pytest.raises(DataError) as refused:
        open_source(str(unsaid)).records("open")
    assert str(refused.value) == (
        f"{unsaid}, line 1, field 'instruction': its script does not tell the language:"
        " give the record a 'language' field (zh, en, or the language's code)"
    )
