"""De-identification: the personal details the screen step finds are replaced by their
kind's placeholder, the form the published data masks that kind with, in instruction,
grounding and reference alike, the item is kept, the report counts the replacements by
kind, and no output file holds a detail; only unsafe content and advertising reject an
item."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from build_support import Recorder, read_rows, restored, run_build, write_rows

from howtobench.construct.corpus import CorpusText
from howtobench.construct.deidentify import deidentified, masked
from howtobench.construct.items import Item
from howtobench.construct.options import BuildOptions
from howtobench.construct.prompts import placeholders
from howtobench.construct.screen import screen_sample
from howtobench.dataset.records import WritingRecord
from howtobench.simulator import Asked, JudgeSimulator
from howtobench.simulator.replies import valid_construction
from howtobench.vocabulary.words import TASKS

NAME, PHONE, EMAIL = "陈晓华", "13912345678", "chenxh@example.com"
AD_PHONE = "13712345678"
EN_NAME, EN_PHONE, EN_EMAIL = "Tom Baker", "555-301-4455", "tom.baker@example.com"
DETAILS = (NAME, PHONE, EMAIL, AD_PHONE, EN_NAME, EN_PHONE, EN_EMAIL, "chenxh", "tom.baker")
PLANTED = {
    "club": {"name": NAME, "phone": PHONE, "email": EMAIL},
    "garden": {"name": EN_NAME, "phone": EN_PHONE, "email": EN_EMAIL},
}


def _club(text_id: str, place: str) -> dict[str, str]:
    """A notice that names its organiser in every paragraph, and gives her contacts."""
    text = "\n\n".join(
        [
            f"社区读书会招募启事（{place}）",
            f"{NAME}是社区读书会的发起人，她每周六下午在{place}带大家读一本书，已经坚持了三年。",
            f"读书会欢迎所有居民参加，不收任何费用。{NAME}说，读书最好的方式是和别人一起读。",
            f"报名请找联系人{NAME}，电话{PHONE}，邮箱 {EMAIL}，她会把书单发给你。",
            f"每次活动结束后，{NAME}都会请大家写几句读后感，贴在{place}的墙上。",
        ]
    )
    return {"id": text_id, "text": text, "genre": "others"}


def _item(instruction: str, grounding: str, reference: str) -> Item:
    return Item(
        "guide", CorpusText("t", reference, "others", "zh"), instruction, grounding, reference
    )


def test_each_detail_becomes_its_placeholder_in_every_field() -> None:
    item = _item(
        f"请写一篇启事，注明联系人{NAME}。",
        f"- 联系人：{NAME}\n- 电话：{PHONE}",
        f"请与{NAME}联系，电话 139 1234 5678，或写信到{EMAIL}。{NAME}。",
    )
    details = [
        {"text": NAME, "kind": "name"},
        {"text": PHONE, "kind": "phone"},
        {"text": EMAIL, "kind": "email"},
        {"text": NAME, "kind": "name"},  # quoted twice: replaced once, recorded once
    ]
    kept, replaced = deidentified(item, details)
    assert kept.instruction == "请写一篇启事，注明联系人[具体姓名]。"
    assert kept.grounding == "- 联系人：[具体姓名]\n- 电话：xxxxxxxxxxx"
    assert (
        kept.reference == "请与[具体姓名]联系，电话 xxxxxxxxxxx，或写信到[具体邮箱]。[具体姓名]。"
    )
    counts = {r.kind: r.record() for r in replaced}
    assert counts["name"] == {
        "kind": "name",
        "placeholder": "[具体姓名]",
        "instruction": 1,
        "grounding": 1,
        "reference": 2,
    }
    assert (counts["phone"]["grounding"], counts["phone"]["reference"]) == (1, 1)  # spaced too
    assert list(counts) == ["email", "phone", "name"]  # longest first
    assert not any(detail in json.dumps(counts, ensure_ascii=False) for detail in DETAILS)


def test_latin_details_are_whole_words_and_the_longer_one_goes_first() -> None:
    text = "Ask Kent Smith of Kentish Town, or kent.smith@example.com, or Kent."
    item = CorpusText("t", text, "others", "en")
    details = [
        {"text": "Kent", "kind": "name"},
        {"text": "kent.smith@example.com", "kind": "email"},
    ]
    kept, replaced = deidentified(Item("open", item, "Write a notice.", "", text), details)
    assert kept.reference == "Ask [name] Smith of Kentish Town, or [e-mail address], or [name]."
    assert [(r.kind, r.counts["reference"]) for r in replaced] == [("email", 1), ("name", 2)]
    assert masked("call Kent on", details, "en") == "call [name] on"


@pytest.mark.slow
def test_a_planted_name_phone_and_email_are_in_no_output_file(
    serve: Callable[..., JudgeSimulator], tmp_path: Path
) -> None:
    """Three notices (one per task) and an English letter name a private person with
    their phone and e-mail; the back-constructor repeats them in the request and the key
    points; an advertisement gives a phone. Every item but the advertisement is kept,
    de-identified; no output file holds a detail (the logs and work/ hold the corpus as
    given); the manifest's counts are the details' occurrences."""

    def answer(question: Asked) -> dict[str, Any] | None:
        if question.kind != "backconstruct" or NAME not in (question.writing or ""):
            return None
        reply = valid_construction(question)
        reply["instruction"] = f"请撰写一篇读书会招募启事，写明发起人{NAME}和她的电话{PHONE}。"
        reply["outline"] = [
            f"发起人：{NAME}",
            f"报名：电话{PHONE}，邮箱{EMAIL}",
            "活动：每周六读一本书",
        ]
        return reply

    letter = (
        "Dear neighbours,\n\nThe garden on Mill Lane needs hands this spring. We meet on "
        "Saturday mornings to dig, plant and talk.\n\nIf you would like to join, please call "
        f"{EN_NAME} on {EN_PHONE} or write to {EN_EMAIL}. No experience is needed.\n\n"
        f"Yours,\n{EN_NAME}"
    )
    advert = (
        "新店开业\n\n街角新开了一家杂货小店，卖些针线、电池、文具和家常点心，老板是一对从外地回来的年轻夫妻。"
        f"\n\n开业限时优惠，扫码下单享八折，订购热线{AD_PHONE}。\n\n店里还留着一张长椅，走累了的街坊可以进来歇歇脚。"
    )
    rows = [
        _club("club-east", "东区图书角"),
        _club("club-west", "西区活动室"),
        _club("club-north", "北区文化站"),
        {"id": "garden", "text": letter, "genre": "letters"},
        {"id": "advert", "text": advert, "genre": "comment"},  # another genre: the notices
        # go to one task each
    ]
    corpus = write_rows(tmp_path / "corpus.jsonl", rows)
    out = tmp_path / "out"
    simulator = serve(script=Recorder(answer))
    result = run_build(corpus, out, simulator, BuildOptions(threshold=3))
    assert result.rejected == 1

    files = [
        p for p in out.rglob("*") if p.is_file() and p.parts[len(out.parts)] not in ("logs", "work")
    ]
    assert {p.relative_to(out).as_posix() for p in files} >= {
        "items.jsonl",
        "rejected.jsonl",
        "manifest.json",
        "summary.md",
    }
    for path in files:
        written = path.read_text("utf-8")
        assert not [d for d in DETAILS if d in written], path

    [rejected] = read_rows(out / "rejected.jsonl")
    assert (rejected["id"], rejected["code"]) == ("advert", "flagged")
    assert "xxxxxxxxxxx" in rejected["reason"] and rejected["personal_info"] == {"phone": 1}

    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    items = {
        row["infer_id"]: row for task in TASKS for row in read_rows(out / task / "aligned.jsonl")
    }
    assert sorted(manifest["deidentified"]["items"]) == sorted(items)
    assert manifest["counts"]["deidentified"] == 4
    texts = {row["id"]: row["text"] for row in rows}
    for infer_id, replaced in manifest["deidentified"]["items"].items():
        row = items[infer_id]
        text, completion = texts[row["bench_id"]], row["task_type"] == "completion"
        planted = PLANTED["garden" if row["bench_id"] == "garden" else "club"]
        assert {r["kind"] for r in replaced} == set(planted)
        expected = text
        for r in replaced:
            expected = expected.replace(planted[r["kind"]], r["placeholder"])
        if completion:  # the context and the gap fit together again
            assert restored(row["information"], row["reference"]) == expected
        else:
            assert row["reference"] == expected
        for r in replaced:  # the counts are the detail's occurrences
            in_text = r["reference"] + (r["grounding"] if completion else 0)
            assert in_text == text.count(planted[r["kind"]]), (infer_id, r["kind"])
            assert row["basic_instruction"].count(r["placeholder"]) == r["instruction"]
            if not completion:
                assert row["information"].count(r["placeholder"]) == r["grounding"]
    [club_guide] = [
        r for r in items.values() if r["task_type"] == "guide" and "club" in r["bench_id"]
    ]
    assert "[具体姓名]" in club_guide["basic_instruction"]  # what the back-constructor repeated
    assert "xxxxxxxxxxx" in club_guide["information"] and "[具体邮箱]" in club_guide["information"]
    summary = (out / "summary.md").read_text("utf-8")
    assert "## De-identified" in summary and "(4 de-identified)" in summary


# The form the published data masks each kind with (docs/construction.md,
# "De-identification in the published forms", has the survey): its most used bracket
# for the kind, its bare mask where it has only that or narrow brackets, a bracket of its
# style where it masks nothing of the kind.
PUBLISHED = {
    "name": "[具体姓名]",  # 1,080 of its 1,491 bracketed person masks
    "phone": "xxxxxxxxxxx",  # its only phone masks: runs of 9 to 12 x
    "email": "[具体邮箱]",  # not in the data
    "id_number": "[具体证件号]",  # not in the data
    "address": "xx",  # 单位地址为xx
    "account": "[具体账号]",  # not in the data
    "place": "[具体地名]",  # 99 of 235
    "ethnicity": "[具体民族]",  # 49 of 58
    "year": "[具体年份]",  # 28 of the 53 year or date masks
    "date": "[具体日期]",  # 10
    "position": "XX",  # 担任XX
    "organisation": "XX",  # XX监狱, XX局
    "title": "[具体文章名]",  # 44 of 61
    "other": "[具体信息]",  # not in the data
}
ENGLISH = {
    "name": "[name]",
    "phone": "[phone number]",
    "email": "[e-mail address]",
    "id_number": "[ID number]",
    "address": "[address]",
    "account": "[account number]",
    "place": "[place]",
    "ethnicity": "[ethnic group]",
    "year": "[year]",
    "date": "[date]",
    "position": "[position]",
    "organisation": "[organisation]",
    "title": "[title]",
    "other": "[personal detail]",
}
# One private person's details of every kind, and a memoir that gives them all.
LIFE = {
    "zh": {
        "name": "罗建平",
        "phone": "13987654321",
        "email": "luojp@example.com",
        "id_number": "530102197001011234",
        "address": "金马路12号",
        "account": "6222021234567890123",
        "place": "麻栗寨",
        "ethnicity": "彝",
        "year": "1966",
        "date": "3月7日",
        "position": "教导主任",
        "organisation": "红星中学",
        "title": "山里的灯",
        "other": "云A12345",
    },
    "en": {
        "name": "Owen Pryce",
        "phone": "555-301-8899",
        "email": "owen.pryce@example.com",
        "id_number": "QX482913",
        "address": "14 Mill Lane",
        "account": "40-22-17 31926819",
        "place": "Llanfair",
        "ethnicity": "Welsh",
        "year": "1966",
        "date": "7 March",
        "position": "deputy head",
        "organisation": "Greenfield School",
        "title": "The Lamp in the Hills",
        "other": "WX66 ABC",
    },
}
MEMOIR = {
    "zh": (
        "父亲{name}是{ethnicity}族人，{year}年生在{place}，{date}是他的生日。\n\n"
        "他在{organisation}当了二十年{position}，写过一本小书《{title}》，{place}的孩子都读过。\n\n"
        "想给{name}写信的，电话{phone}，邮箱{email}，住{address}；他的身份证号{id_number}、"
        "银行卡号{account}和车牌{other}，我们都替他记着。"
    ),
    "en": (
        "My father {name} was {ethnicity}, born in {place} in {year}; {date} was his "
        "birthday.\n\nHe was {position} at {organisation} for twenty years and wrote a "
        "little book, {title}, that every child in {place} has read.\n\nTo write to {name}: "
        "phone {phone}, e-mail {email}, or {address}; his passport {id_number}, bank account "
        "{account} and number plate {other} we keep for him."
    ),
}
FORMS = {"zh": PUBLISHED, "en": ENGLISH}


def test_the_placeholder_files_give_each_kind_its_published_form() -> None:
    """The two files list the same kinds in the same order (the report orders kinds by
    it), and each kind has the published data's form (an English one in English)."""
    for language, forms in FORMS.items():
        marks = placeholders(language)
        assert {kind: p.text for kind, p in marks.items()} == forms, language
        assert list(marks) == list(PUBLISHED)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_every_kind_is_replaced_by_its_published_form(language: str) -> None:
    life, forms = LIFE[language], FORMS[language]
    text = MEMOIR[language].format(**life)
    item = Item("open", CorpusText("t", text, "others", language), "写", "", text)
    details = [{"text": detail, "kind": kind} for kind, detail in life.items()]
    kept, replaced = deidentified(item, details)
    assert kept.reference == MEMOIR[language].format(**forms)
    assert {r.kind: r.placeholder for r in replaced} == forms
    assert {r.kind: r.counts["reference"] for r in replaced} == {
        kind: text.count(detail) for kind, detail in life.items()
    }


@pytest.mark.parametrize("language", ["zh", "en"])
def test_the_screen_prompt_names_every_kind_and_what_it_covers(language: str) -> None:
    record = WritingRecord("t", "open", "others", "写", "", "范文", language)
    prompt = screen_sample(record).input[-1].text  # type: ignore[union-attr]
    listed = dict(re.findall(r"^- ([a-z_]+): (.+)$", prompt, re.M))
    assert listed == {kind: p.what for kind, p in placeholders(language).items()}
    assert "XX" in prompt  # a placeholder already there is not a detail


def _screened_by_the_prompt(
    details: list[tuple[str, str]],
) -> Callable[[Asked], dict[str, Any] | None]:
    """A detector that quotes each planted `(kind, detail)` of a kind the screen prompt
    lists (by its `- kind: what` lines) and that the item it was given holds."""

    def answer(question: Asked) -> dict[str, Any] | None:
        if question.kind != "screen":
            return None
        listed = re.findall(r"^- ([a-z_]+): ", question.text, re.M)
        item = question.writing or ""
        found = {detail: kind for kind, detail in details if kind in listed and detail in item}
        return {
            "personal_info": [{"text": detail, "kind": kind} for detail, kind in found.items()],
            "unsafe": [],
            "advertisement": [],
            "reason": "scripted",
        }

    return answer


def _table(markdown: str) -> dict[str, list[str]]:
    """A GitHub table's rows by their first cell, each row's cells stripped."""
    cells = [[c.strip() for c in line.split("|")[1:-1]] for line in markdown.splitlines()]
    return {row[0]: row for row in cells if row and not set(row[0]) <= set("-:")}


@pytest.mark.slow
def test_a_memoir_of_every_kind_is_published_in_the_published_forms(
    serve: Callable[..., JudgeSimulator], tmp_path: Path
) -> None:
    """A Chinese and an English memoir give one person's details of every kind. Each
    item holds the published forms and no detail; the manifest and the summary count the
    replacements by kind, and the counts are the items' records summed and the details'
    occurrences in the texts."""
    rows = [
        {"id": f"memoir-{lang}", "text": MEMOIR[lang].format(**LIFE[lang]), "genre": "others"}
        for lang in FORMS
    ]
    corpus = write_rows(tmp_path / "corpus.jsonl", rows)
    out = tmp_path / "out"
    planted = [(kind, detail) for life in LIFE.values() for kind, detail in life.items()]
    simulator = serve(script=Recorder(_screened_by_the_prompt(planted)))
    run_build(corpus, out, simulator, BuildOptions(threshold=1))

    built = [out / task / "aligned.jsonl" for task in TASKS]
    items = [row for path in built if path.exists() for row in read_rows(path)]
    assert sorted(row["bench_id"] for row in items) == ["memoir-en", "memoir-zh"]
    manifest = json.loads((out / "manifest.json").read_text("utf-8"))
    records = manifest["deidentified"]["items"]
    texts = {row["id"]: row["text"] for row in rows}
    for row in items:
        language = row["bench_id"].removeprefix("memoir-")
        written = row["basic_instruction"] + row["information"] + row["reference"]
        assert not [d for d in LIFE[language].values() if d in written], row["bench_id"]
        replaced = {r["kind"]: r for r in records[row["infer_id"]]}
        assert {kind: r["placeholder"] for kind, r in replaced.items()} == FORMS[language]
        text, completion = texts[row["bench_id"]], row["task_type"] == "completion"
        if completion:
            assert restored(row["information"], row["reference"]) == MEMOIR[language].format(
                **FORMS[language]
            )
        else:
            assert row["reference"] == MEMOIR[language].format(**FORMS[language])
        for kind, detail in LIFE[language].items():  # the counts are the occurrences
            r = replaced[kind]
            assert r["reference"] + (r["grounding"] if completion else 0) == text.count(detail)

    by_kind = manifest["deidentified"]["by_kind"]
    assert list(by_kind) == list(PUBLISHED)  # every kind, in the files' order
    fields = ("instruction", "grounding", "reference")
    for kind, entry in by_kind.items():
        assert sorted(entry["placeholders"]) == sorted({PUBLISHED[kind], ENGLISH[kind]})
        assert (entry["items"], entry["details"]) == (2, 2), kind
        of_kind = [r for replaced in records.values() for r in replaced if r["kind"] == kind]
        assert [entry[f] for f in fields] == [sum(r[f] for r in of_kind) for f in fields]
    summary = (out / "summary.md").read_text("utf-8")
    shown = _table(summary.split("By kind:")[1].split("By item:")[0])
    assert list(shown) == ["kind", *PUBLISHED]
    for kind, entry in by_kind.items():
        numbers = [entry["items"], entry["details"], *(entry[f] for f in fields)]
        assert shown[kind][2:] == [str(n) for n in numbers], kind
