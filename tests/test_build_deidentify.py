"""De-identification: the personal details the screen step finds are replaced by their
kind's placeholder in instruction, grounding and reference alike, the item is kept, and
no output file holds a detail; only unsafe content and advertising reject an item."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from build_support import Recorder, read_rows, run_build, write_rows

from howtobench.construct.completion import restored
from howtobench.construct.corpus import CorpusText
from howtobench.construct.deidentify import deidentified, masked
from howtobench.construct.items import Item
from howtobench.construct.options import BuildOptions
from howtobench.simulator import Asked, JudgeSimulator
from howtobench.simulator.replies import valid_construction
from howtobench.vocabulary import TASKS

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
    assert kept.grounding == "- 联系人：[具体姓名]\n- 电话：[具体电话]"
    assert kept.reference == "请与[具体姓名]联系，电话 [具体电话]，或写信到[具体邮箱]。[具体姓名]。"
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
    assert "[具体电话]" in rejected["reason"] and rejected["personal_info"] == {"phone": 1}

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
    assert "[具体电话]" in club_guide["information"] and "[具体邮箱]" in club_guide["information"]
    summary = (out / "summary.md").read_text("utf-8")
    assert "## De-identified" in summary and "(4 de-identified)" in summary
