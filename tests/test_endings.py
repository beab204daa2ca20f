"""A stored writing's cut, told from its text as a reader tells it (`writing.endings`).

Each shape a reader sees, one case each: a new paragraph's first clause after finished
prose and a heading at the end are cut; a list's last item, a long signature or date
line, verse and a sign-off are not. Then the rule against the 403 stored endings read
one by one (`fixtures/endings.jsonl`: writer, task, item, the label and why; the
published text is not copied: the fixture holds a hash of each ending, its reasons are
our words, and the test reads the benchmark where it lies): the precision and
recall docs/data.md states.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from howtobench.judge_check.quality import wilson
from howtobench.writing.endings import ends_mid_sentence
from howtobench.writing.state import examine

FIXTURE = Path(__file__).parent / "fixtures" / "endings.jsonl"
DOCS = Path(__file__).parents[1] / "docs" / "data.md"
MEASURED = re.compile(
    r"<!-- endings measured: begin -->\n(.*?)<!-- endings measured: end -->", re.S
)
PROSE = "古镇的清晨总是从石板路上的脚步声开始。老人们提着鸟笼走过桥头，茶馆的门板一块块卸下。"


def cut(*lines: str) -> bool:
    return ends_mid_sentence("\n\n".join(lines))


def test_a_short_line_after_finished_prose_is_a_cut_paragraph() -> None:
    assert cut(PROSE, "值得一提的是，新修的码头")  # a clause begun
    assert cut(PROSE, "这一过程")  # a sentence's subject alone
    assert cut(PROSE, "“我们走吧，”他说，“")  # an opening quote
    assert cut(PROSE, "同志们，让我们以这次")
    # the old reading: a short line without a sentence end is a heading or a signature
    assert cut("第一段写完了。\n第二段也写完了。\n第三段却只写到")


def test_a_heading_at_the_end_is_a_cut() -> None:
    assert cut(PROSE, "### 三、结语")
    assert cut(PROSE, "**四、下一步打算**")
    assert cut(PROSE, "**三、展望**", "随着技")  # a heading, then its first words
    assert cut("（一）加强组织领导", PROSE, "（二）完善工作机制", PROSE, "（三）加强队伍建设")
    assert cut(PROSE, "**（五）")  # a bold heading opened, never closed
    assert not cut(PROSE, "### 第十八条 本制度自发布之日起施行。")  # an article, not a heading


def test_a_lists_last_item_is_whole_unless_its_siblings_stop() -> None:
    assert not cut(PROSE, "附件：\n1. 房屋平面图\n2. 设施清单\n3. 双方身份证复印件")
    # the old reading took "40. " for a sentence end
    assert not cut("38. 队名：卡塔尔\n39. 时间：晚上十一点\n40. 地名：前门")
    assert not cut("9.2 预案演练\n每年组织一次演练\n\n9.3 实施时间\n自发布之日起实施")  # an outline
    assert cut("第十一条 董事应履行以下义务：\n1. 宣传学校，提升声誉；\n2. 募集资金，支持学校")
    assert cut(PROSE, "建议如下：", "1. 平衡商业与艺术：展览的策")  # a list only begun
    assert cut(PROSE, "- **推进")  # a bold label opened, never closed


def test_a_signature_or_date_line_is_whole_however_long() -> None:
    for line in (
        "甲方（签章）：______________    签订日期：______年______月______日",
        "合同有效期限：自______年______月______日至______年______月______日",
        "签订日期：    年    月    日          签订日期：    年    月    日",
        "甲方（盖章）：                     乙方（签字）：",
        "日期：2024年[  ]月[  ]日",
        "二〇二三年九月二十日",
    ):
        assert not cut(PROSE, line), line
    # a blank inside a clause is no signature: the clause stops at "出售给"
    assert cut(PROSE, "甲方将位于____路____号的房屋（以下简称该房屋）出售给")


def test_verse_is_whole() -> None:
    poem = "风吹过田埂\n稻子低下了头\n远处的炊烟\n是母亲的呼唤"
    assert not cut(poem)
    assert not cut("雪落在山岗\n雪落在屋顶\n\n你说它是风吧。说它是云也行")  # a refrain
    assert not cut("如同母亲的手，温柔而坚定\n在寒冷的季节里，\n我们寻找着温暖的痕迹")
    assert not cut("**我在一个又一个梦里**\n\n**学会了和解**")  # a poem set in bold
    assert cut("风吹过田埂，\n稻子低下了头，\n远处的炊烟，")  # a verse line stopping at a comma


def test_a_sign_off_is_whole() -> None:
    for ending in (
        "此致\n敬礼！\n\n申请人：张三\n2024年3月1日",
        "爱你的妈妈",
        "您的儿女敬上",
        "青禾社区居民委员会",
        "特此通知。\n\n临溪县教育局",
        "此致，",
        "此致\n\n敬礼！\n\nzhangsan",
        "**落款：某某单位**",
        "（此件主动公开）",
    ):
        assert not cut(PROSE, ending), ending
    assert not cut("I will always remember your kindness.\n\nBest regards,\nJohn Smith")
    assert cut("The river ran on past the mill.\n\nAnd then the")


def test_token_noise_at_the_end_is_a_cut() -> None:
    assert cut(PROSE + "编 sicherities revised_floor Creators raster Wikikeep")
    assert cut(PROSE, "他们在 детство 的记忆里")
    assert not cut(PROSE, "运用AI、VR、AR等技术。")  # Latin words in a stopped line
    assert not cut("The garden was quiet and the light was soft\nas the evening came")


# --- the stored endings, read one by one --------------------------------------------------


def labelled() -> list[dict[str, Any]]:
    return [json.loads(line) for line in FIXTURE.read_text("utf-8").splitlines()]


def test_the_labelled_endings_are_drawn_across_writers_tasks_and_genres() -> None:
    rows = labelled()
    keys = [(r["writer"], r["task"], r["id"]) for r in rows]
    assert len(rows) >= 320 and len(set(keys)) == len(keys)
    assert {r["label"] for r in rows} == {"cut", "whole"} and all(r["reason"] for r in rows)
    assert len({r["writer"] for r in rows}) == 10 and {r["task"] for r in rows} == {
        "completion",
        "guide",
        "open",
    }
    genres = Counter(r["genre"] for r in rows)
    assert min(genres[g] for g in ("合同类写作", "诗歌", "信件类写作", "公文", "通知")) >= 10
    held = sum(r["split"] == "held-out" for r in rows)
    assert held == len(rows) // 3


def figures(rows: list[dict[str, Any]], said_cut: dict[int, bool]) -> list[str]:
    """One table row: endings, cut, precision and recall with their 95 % Wilson intervals."""
    tp = sum(said_cut[id(r)] and r["label"] == "cut" for r in rows)
    flagged = sum(said_cut[id(r)] for r in rows)
    cuts = sum(r["label"] == "cut" for r in rows)

    def share(k: int, n: int) -> str:
        low, high = wilson(k / n, n)
        return f"{k / n:.3f} ({low:.3f}-{high:.3f})"

    return [str(len(rows)), str(cuts), share(tp, flagged), share(tp, cuts)]


def test_the_rule_reads_the_stored_endings_as_a_reader_did(shared_data: Path) -> None:
    rows = labelled()
    outputs: dict[tuple[str, str, str], str] = {}
    for writer, task in {(r["writer"], r["task"]) for r in rows}:
        path = shared_data / task / "inferences" / f"{writer}.jsonl"
        for line in path.read_text("utf-8").splitlines():
            record = json.loads(line)
            outputs[(writer, task, record["infer_id"])] = record["output"] or ""
    said_cut = {}
    for row in rows:
        output = outputs[(row["writer"], row["task"], row["id"])]
        ending = hashlib.sha256(output[-300:].encode("utf-8")).hexdigest()[:16]
        assert ending == row["ending_sha256"], f"{row}: not the ending that was read"
        said_cut[id(row)] = examine(output, "unknown", row["task"])[1].mid_sentence
    dev = [r for r in rows if r["split"] == "dev"]
    held = [r for r in rows if r["split"] == "held-out"]
    measured = {
        "all": figures(rows, said_cut),
        "dev": figures(dev, said_cut),
        "held-out": figures(held, said_cut),
    }
    precision, recall = (float(measured["all"][i].split()[0]) for i in (2, 3))
    assert precision >= 0.95 and recall >= 0.90, measured
    match = MEASURED.search(DOCS.read_text("utf-8"))
    assert match, "docs/data.md lost its measured-endings markers"
    table = [
        [cell.strip() for cell in line.strip().strip("|").split("|")]
        for line in match.group(1).strip().splitlines()[2:]
    ]
    assert {row[0]: row[1:] for row in table} == measured
