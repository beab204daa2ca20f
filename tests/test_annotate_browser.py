"""The studio in a real browser: headless Chromium (the system's) driven by Playwright,
against uvicorn serving on 127.0.0.1.

Set HOWTOBENCH_SCREENSHOTS to a folder (docs/images) to keep the pages' screenshots
there for the README; otherwise they go to the test's temporary folder.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from annotate_support import (
    call,
    demo_logs_fixture,  # noqa: F401 (a fixture)
    new_campaign,
    rater_link,
    server_thread,
    texts,
    tokens,
)

from howtobench.annotate.export import export
from howtobench.annotate.store import Store
from support.browser import BROWSER_MARKS, launch, screenshot, sync_api

pytestmark = BROWSER_MARKS
# seed 2 gives ana a completion item first, whose blank the screenshot shows
SEED = 2
HOSTILE = '<script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2">'


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = launch(playwright)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 720}, locale="zh-CN")
    opened = context.new_page()
    problems: list[str] = []
    opened.on("pageerror", lambda error: problems.append(str(error)))
    yield opened
    context.close()
    assert not problems, problems


@pytest.fixture
def studio(demo_logs: Path, tmp_path: Path) -> Iterator[tuple[Store, str]]:
    store = new_campaign(tmp_path / "c.db", [demo_logs], seed=SEED)
    with server_thread(store) as base:
        yield store, base
    store.close()


def wait_saved(page: Any) -> None:
    sync_api.expect(page.locator("#state")).to_have_text("已全部保存")


def test_a_rater_rates_an_instruction_by_mouse_and_keyboard_across_a_reload(
    studio: tuple[Store, str], demo_logs: Path, page: Any, tmp_path: Path
) -> None:
    store, base = studio
    expect = sync_api.expect
    page.goto(rater_link(store, base, "ana"))
    cards = page.locator(".card")
    expect(cards).to_have_count(2)
    expect(page.locator("#progress")).to_have_text("第 1 题，共 7 题 · 已完成 0 题")
    expect(page.locator("#grounding mark")).to_have_text("[fill in the blank]")
    first, second = cards.nth(0), cards.nth(1)
    # writing A by mouse: a 2 needs an error type before it is saved
    first.locator('.score input[value="2"]').click()
    expect(first.locator(".saved")).to_have_text("未保存：低于 3 分须勾选问题类型")
    expect(page.locator("#state")).to_have_text("1 处未保存")
    first.locator('.errors input[value="needless_repetition"]').click()
    first.locator("textarea").click()
    page.keyboard.type("开头空泛")
    wait_saved(page)
    expect(first.locator(".saved")).to_contain_text("已保存")
    # halfway: reload, and the page comes back to this instruction with A as saved
    page.reload()
    expect(cards).to_have_count(2)
    assert page.url.endswith("#1")
    expect(first.locator('.score input[value="2"]')).to_be_checked()
    expect(first.locator('.errors input[value="needless_repetition"]')).to_be_checked()
    expect(first.locator("textarea")).to_have_value("开头空泛")
    expect(second.locator(".score input:checked")).to_have_count(0)
    # writing B by keyboard
    page.keyboard.press("j")
    expect(second).to_have_class("card active")
    page.keyboard.press("4")
    page.keyboard.press("m")
    page.keyboard.type("比参考略弱")
    page.keyboard.press("Escape")
    wait_saved(page)
    expect(page.locator("#progress")).to_have_text("第 1 题，共 7 题 · 已完成 1 题")
    expect(second.locator(".errors input").first).to_be_disabled()
    page.keyboard.press("?")
    expect(page.locator("#keys")).to_be_visible()
    page.keyboard.press("?")
    page.evaluate("window.scrollTo(0, 0)")
    screenshot(page, tmp_path, "studio_rater.png")
    shown = {
        "A": first.locator(".writing").text_content(),
        "B": second.locator(".writing").text_content(),
    }
    # the export holds exactly these two ratings, of the writings shown as A and B
    out = tmp_path / "ratings.jsonl"
    assert export(store, out) == 2
    who = texts([demo_logs])
    rows = sorted(out.read_text(encoding="utf-8").splitlines())
    expected = [
        (*who[shown["A"]], "ana", 2, ["needless_repetition"], "开头空泛"),
        (*who[shown["B"]], "ana", 4, [], "比参考略弱"),
    ]
    found = [tuple(json.loads(row).values()) for row in rows]
    assert sorted(found) == sorted(expected)
    # coming back without the address's #: the first unfinished instruction
    page.goto(rater_link(store, base, "ana"))
    expect(page.locator("#progress")).to_have_text("第 2 题，共 7 题 · 已完成 1 题")


def test_writings_with_markup_show_as_text(studio: tuple[Store, str], page: Any) -> None:
    store, base = studio
    with sqlite3.connect(store.path) as db:
        db.execute("UPDATE writings SET text = ?", (HOSTILE,))
        db.execute("UPDATE instructions SET instruction = ?, reference = ?", (HOSTILE, HOSTILE))
    page.goto(rater_link(store, base, "ana"))
    sync_api.expect(page.locator(".card")).to_have_count(2)
    assert page.locator(".card .writing").first.text_content() == HOSTILE
    assert page.locator("#instruction").text_content() == HOSTILE
    assert page.locator("#reference").text_content() == HOSTILE
    assert page.locator("main script, main img").count() == 0
    page.wait_for_timeout(200)
    assert page.evaluate("window.pwned") is None


# (rater, writer, task) -> score: ana and ben mostly a point apart, ana far harsher on
# the weaker writer's completions (re-checks); ben agrees with ana on open writings
SCORES = {("ana", "demo-writer-a"): 4, ("ana", "demo-writer-b"): 2, ("ben", "demo-writer-b"): 3}


def scripted(rater: str, writer: str, task: str) -> int:
    if rater == "ana" and writer == "demo-writer-b" and task == "completion":
        return 1
    if rater == "ben" and writer == "demo-writer-a":
        return 4 if task == "open" else 5
    return SCORES[(rater, writer)]


def test_the_admin_page_shows_progress_agreement_and_rechecks(
    studio: tuple[Store, str], demo_logs: Path, page: Any, tmp_path: Path
) -> None:
    store, base = studio
    token = tokens(store)
    who = texts([demo_logs])
    for number, name in enumerate(("ana", "ben")):
        status, answer = call(base, "GET", "/api/assignments", token[name])
        assert status == 200
        for item in answer["instructions"][: 5 + number]:
            status, content = call(base, "GET", f"/api/assignments/{item['id']}", token[name])
            for writing in content["writings"]:
                writer = who[writing["text"]][1]
                score = scripted(name, writer, item["task"])
                body = {"score": score, "errors": ["off_request"] if score < 3 else []}
                put = call(base, "PUT", f"/api/ratings/{writing['id']}", token[name], body)
                assert put[0] == 200
    page.goto(f"{base}/admin/{token['admin']}")
    expect = sync_api.expect
    expect(page.locator("#progress tbody tr")).to_have_count(2)
    # a Chinese campaign: the admin page speaks Chinese
    expect(page).to_have_title("HoWToBench 评分工作台：管理")
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    expect(page.locator("h2").first).to_have_text("进度")
    expect(page.locator("#progress th").first).to_have_text("评分人")
    expect(page.locator("#export-csv")).to_have_text("导出 CSV")
    expect(page.locator("#agreement th").nth(1)).to_have_text("Cohen's κ")
    rated = Counter((row["infer_id"], row["model"]) for row in store.ratings())
    pairs = page.locator("#agreement tbody td").first
    expect(pairs).to_have_text(str(sum(1 for n in rated.values() if n == 2)))
    expect(page.locator("#per-rater tbody tr")).to_have_count(2)
    assert page.locator("#disagreements tbody tr").count() >= 1
    screenshot(page, tmp_path, "studio_admin.png", whole=True)
    with page.expect_download() as download:
        page.locator("#export-csv").click()
    saved = tmp_path / "from-page.csv"
    download.value.save_as(str(saved))
    assert export(store, tmp_path / "ratings.csv") == len(store.ratings())
    assert saved.read_bytes() == (tmp_path / "ratings.csv").read_bytes()


# What the page itself says (not the item's texts, which are in the item's language
# whatever the page does): every visible text node outside the texts (`.text`), the
# title, and every placeholder and aria-label
CHROME = """() => {
  const said = [document.title];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const element = node.parentElement;
    if (!element.closest(".text, noscript") && element.checkVisibility()) said.push(node.data);
  }
  for (const element of document.body.querySelectorAll("[placeholder], [aria-label]")) {
    said.push(element.getAttribute("placeholder") || "", element.getAttribute("aria-label") || "");
  }
  return said.join("\\n");
}"""
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")
# the Latin words a Chinese page may show: the brand and the names of two keys
LATIN_WORD = re.compile(r"[A-Za-z]{2,}")
LATIN_ON_CHINESE = {"HoWToBench", "Tab", "Esc"}
ENGLISH_LABELS = {
    "rate": ["Writing A", "Writing B", "Score", "Error types (required below 3)", "Note"],
    "pick": ["Candidate A", "Candidate B", "The best", "Reason"],
}
CHINESE_LABELS = {
    "rate": ["作答 A", "作答 B", "分数", "问题类型（低于 3 分必选）", "备注"],
    "pick": ["候选 A", "候选 B", "选这篇", "理由"],
}


def chrome(page: Any) -> str:
    """The page's own words, with the shortcuts and the guideline open (and closed again),
    so that their words count too."""
    page.keyboard.press("?")
    page.keyboard.press("g")
    sync_api.expect(page.locator("#guide")).to_be_visible()
    said = str(page.evaluate(CHROME))
    page.keyboard.press("?")
    page.keyboard.press("g")
    return said


def positions(store: Store, base: str, rater: str) -> dict[str, int]:
    """Language -> where (from 1) the rater's first instruction in it comes."""
    status, answer = call(base, "GET", "/api/assignments", tokens(store)[rater])
    assert status == 200
    found: dict[str, int] = {}
    for number, item in enumerate(answer["instructions"], start=1):
        found.setdefault(item["language"], number)
    return found


def assert_speaks_english(page: Any, kind: str) -> None:
    expect = sync_api.expect
    expect(page.locator("html")).to_have_attribute("lang", "en")
    expect(page).to_have_title("HoWToBench rating studio")
    expect(page.locator("#progress")).to_have_text(
        re.compile(r"^Instruction \d of 7 · \d finished")
    )
    expect(page.locator("#prev")).to_have_text("Previous P")
    expect(page.locator("#toggle-guide")).to_have_text("Guideline G")
    expect(page.locator("#request h2")).to_have_text("Request open writing")
    sync_api.expect(page.locator("#writings")).to_contain_text(ENGLISH_LABELS[kind][0])
    said = chrome(page)
    assert not CJK.findall(said), said
    for label in ["Next", "Shortcuts", "next / previous writing", *ENGLISH_LABELS[kind]]:
        assert label in said, (label, said)
    if kind == "rate":
        assert "Reference (counts as a 4)" in said and "Empty repetition" in said
        expect(page.locator("textarea").first).to_have_attribute(
            "placeholder", "Optional: what you noticed"
        )
    guideline = page.locator(".guideline[data-task=open]:not([hidden])")
    expect(guideline).to_have_attribute("data-language", "en")


def assert_speaks_chinese(page: Any, kind: str) -> None:
    expect = sync_api.expect
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    expect(page).to_have_title("HoWToBench 评分工作台")
    expect(page.locator("#progress")).to_have_text(re.compile(r"^第 \d 题，共 7 题 · 已完成 \d 题"))
    expect(page.locator("#prev")).to_have_text("上一题 P")
    expect(page.locator("#toggle-guide")).to_have_text("评分说明 G")
    # the writings' cards are drawn after the progress line
    expect(page.locator("#writings")).to_contain_text(CHINESE_LABELS[kind][0])
    said = chrome(page)
    for label in ["下一题", "快捷键", "写作要求", "下一篇 / 上一篇作答", *CHINESE_LABELS[kind]]:
        assert label in said, (label, said)
    # outside the guideline, which may quote English (the blank's marker)
    outside = str(page.evaluate(CHROME))
    assert set(LATIN_WORD.findall(outside)) <= LATIN_ON_CHINESE, outside
    guideline = page.locator(".guideline:not([hidden])")
    expect(guideline).to_have_attribute("data-language", "zh")


def go(page: Any, steps: int) -> None:
    """Move that many instructions on (or back) with the keys N and P."""
    for _ in range(abs(steps)):
        page.keyboard.press("n" if steps > 0 else "p")


@pytest.mark.parametrize("kind", ["rate", "pick"])
def test_the_rater_page_speaks_the_language_of_the_instruction_shown(
    kind: str, demo_logs: Path, page: Any, tmp_path: Path
) -> None:
    # the demo campaign is Chinese but for one English open writing
    store = new_campaign(tmp_path / "c.db", [demo_logs], seed=SEED, kind=kind)
    expect = sync_api.expect
    with server_thread(store) as base:
        where = positions(store, base, "ana")
        assert store.settings().language == "zh" and set(where) == {"zh", "en"}
        link = rater_link(store, base, "ana")
        # a Chinese instruction, opened afresh
        page.goto(f"{link}#{where['zh']}")
        expect(page.locator("#writings .card").first).to_be_visible()
        assert_speaks_chinese(page, kind)
        # on to the English one, in the page: its words follow
        go(page, where["en"] - where["zh"])
        expect(page.locator("#progress")).to_contain_text(f"Instruction {where['en']} of 7")
        assert_speaks_english(page, kind)
        first = page.locator("#writings .card").first
        # what the page says as it saves is English too
        if kind == "rate":
            first.locator('.score input[value="2"]').click()
            expect(first.locator(".saved")).to_have_text(
                "not saved: below 3, tick at least one error type"
            )
            expect(page.locator("#state")).to_have_text("1 not saved")
            first.get_by_label("Empty repetition").check()
            page.locator("#writings .card").nth(1).locator('.score input[value="4"]').click()
        else:
            first.locator("input[type=radio]").check()
            expect(page.locator(".reason .saved")).to_have_text("not saved: write a reason")
            page.locator(".reason textarea").fill("The opening makes its case at once.")
        expect(page.locator("#state")).to_have_text("All changes saved")
        expect(page.locator("#writings .saved").first).to_have_text(re.compile(r"^saved \d"))
        if kind == "rate":
            page.evaluate("window.scrollTo(0, 0)")
            screenshot(page, tmp_path, "studio_rater_en.png")
        # opened afresh on the English one, and back to a Chinese one in the page
        page.reload()
        expect(page.locator("#writings .saved").first).to_have_text(re.compile(r"^saved \d"))
        assert_speaks_english(page, kind)
        go(page, where["zh"] - where["en"])
        expect(page.locator("#progress")).to_contain_text(f"第 {where['zh']} 题")
        assert_speaks_chinese(page, kind)
        expect(page.locator("#state")).to_have_text("已全部保存")
    store.close()


def test_a_language_without_words_of_its_own_is_spoken_to_in_english(
    demo_logs: Path, page: Any, tmp_path: Path
) -> None:
    store = new_campaign(tmp_path / "c.db", [demo_logs], seed=SEED)
    # one Chinese open writing said to be French, beside the English one; before the
    # server starts, which reads the languages once
    with sqlite3.connect(store.path) as db:
        db.execute(
            "UPDATE instructions SET language = 'fr' WHERE id = (SELECT MIN(id) "
            "FROM instructions WHERE task = 'open' AND language = 'zh')"
        )
    with server_thread(store) as base:
        where = positions(store, base, "ana")
        assert set(where) == {"zh", "en", "fr"}
        page.goto(f"{rater_link(store, base, 'ana')}#{where['fr']}")
        expect = sync_api.expect
        expect(page.locator("#writings .card")).to_have_count(2)
        assert_speaks_english(page, "rate")  # its texts are Chinese: they do not count
        # the English and the French writings share one guideline, the English one
        expect(page.locator(".guideline[data-task=open]")).to_have_count(2)
    store.close()
