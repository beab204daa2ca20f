"""The studio's words: every language has all of them, and the pages ask for none that
is missing (a missing one would show as "undefined" in the page)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from howtobench.annotate import wording
from howtobench.annotate.app import PAGES, STATIC

PLACEHOLDER = re.compile(r"\{(\w+)\}")


def shape(value: Any) -> Any:
    """A table with each sentence replaced by the names it fills in: two languages alike
    in shape have the same keys, lists of one length, and fill in the same things."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(item) for item in value]
    assert isinstance(value, str) and value.strip(), value
    return sorted(PLACEHOLDER.findall(value))


def test_chinese_and_english_say_the_same_things() -> None:
    assert shape(wording.ZH) == shape(wording.EN)
    assert set(wording.TABLES) == {"zh", "en"}


def test_another_language_is_spoken_to_in_english() -> None:
    assert wording.page_language("zh") == "zh"
    assert wording.page_language("fr") == "en"
    assert wording.words("rater", "fr") == wording.words("rater", "en")
    assert wording.words("rater", "en")["error_types"][0]["label"] == (
        "Form out of step with context or genre"
    )


def test_the_data_block_holds_each_page_language_once_and_cannot_be_closed() -> None:
    text = wording.page_text("rater", ["zh", "fr", "en"])
    assert "<" not in text
    payload = json.loads(text)
    assert payload["fallback"] == "en" and sorted(payload["text"]) == ["en", "zh"]
    assert sorted(json.loads(wording.page_text("admin", ["fr"]))["text"]) == ["en"]


def keys_used(page: str) -> set[str]:
    """The keys of the table that a page's HTML and script name."""
    html = (PAGES / f"{page}.html").read_text(encoding="utf-8")
    script = (STATIC / f"{page}.js").read_text(encoding="utf-8")
    found = set(re.findall(r'data-(?:text|placeholder|label)="(\w+)"', html))
    found |= set(re.findall(r"\bT\.(\w+)", script))
    # the problems a save can have, returned by name and looked up in the table
    found |= set(re.findall(r'return "(\w+)";', script))
    return found


def test_every_word_a_page_names_is_in_its_table() -> None:
    script = (STATIC / "admin.js").read_text(encoding="utf-8")
    columns = {"candidates"}  # the pick campaigns' heading of the writings column
    for listed in re.findall(r"\[([^\]]*)\]", script):
        columns |= set(re.findall(r'"(\w+)"', listed))
    for language in wording.TABLES:
        for page in ("rater", "admin"):
            used = keys_used(page)
            assert len(used) > 10
            assert used <= set(wording.words(page, language)), (page, language)
        assert "last_save" in columns
        assert columns <= set(wording.words("admin", language)["columns"]), language


def test_the_pages_hold_no_words_of_their_own() -> None:
    """Nothing of either page is written in its HTML, so nothing escapes the tables:
    the pages' elements are empty but for the brand and the key caps."""
    for page in ("rater", "admin"):
        body = (PAGES / f"{page}.html").read_text(encoding="utf-8")
        body = re.sub(r"<[^>]+>|\$\w+", " ", body)
        assert set(body.split()) <= {"HoWToBench", "P", "N", "G", "?"}, (page, set(body.split()))


def test_the_guidelines_exist_for_every_page_language() -> None:
    folder = Path(wording.__file__).parent / "guidelines"
    for language in wording.TABLES:
        assert len(list(folder.glob(f"*.{language}.html"))) == 3
