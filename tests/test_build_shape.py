"""The shape of back-constructed items: the request the model writes (its length rule,
and no copying), and the guide grounding in the published sections or key points. The
rules are checked against the published data (recounted here with its own regexes) and
through a build against the judge simulator."""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from build_support import Recorder, read_rows, run_build, write_rows

from howtobench.construct.corpus import CorpusText
from howtobench.construct.options import BuildOptions
from howtobench.construct.prompts import genre_sections
from howtobench.construct.shape import (
    SHAPES,
    copied_sentence,
    item_shape,
    stated_lengths,
    target_length,
)
from howtobench.simulator import Asked, JudgeSimulator
from howtobench.simulator.replies import valid_construction
from howtobench.vocabulary.genres import canonical_genre

FICTION_TITLES = ["人物塑造", "主题与思想", "语言与文笔", "情感共鸣", "创新与独特性"]
LIGHTHOUSE = """灯塔看守人

老许在岬角的灯塔上守了三十一年。每天傍晚，他沿着一百二十级铁梯爬上塔顶，擦亮镜片，点起那盏会转动的灯。

镇上的年轻人大多去了城里，渔船也一年比一年少。有人劝他："现在船上都有卫星导航了，谁还看灯塔？"老许只是笑笑，照旧爬他的铁梯。

那年冬天起了大雾，一艘回港的小渔船失去了信号。船上的阿海后来说，他在雾里转了两个钟头，四下白茫茫一片，什么都看不见，直到远处亮起一点一点旋转的光。

渔船靠岸的时候，老许正坐在塔下的石阶上喝热茶。阿海跑过来，浑身湿透，一句话也说不出，只是紧紧攥着老人的手。那天晚上，镇上好几户人家给灯塔送来了饺子。

第二年春天，灯塔改成了自动控制，老许搬回了镇上，住进女儿家朝海的小屋。他把那块擦了三十一年镜片的旧绒布洗干净，叠好，放在窗台上。

可每到傍晚，他还是会沿着海堤慢慢走到岬角下面，看那盏灯按时亮起来，再慢慢走回去。女儿说他闲不住，他也不辩解。

有一回，一个放学的孩子跟着他走了一路，终于忍不住问："爷爷，灯塔自己会亮，您为什么还天天来看？"

老许想了想，指着海上说："灯是自己会亮，可总得有个人看着它亮。看见了，我心里才踏实。"

孩子似懂非懂地点点头。后来，海堤上看灯的人，从一个变成了两个。"""
READING = """慢下来，读一本书

如今获取信息从未如此容易，刷几分钟手机，天下大事便尽收眼底。然而信息多了，真正读完一本书的人却少了。

碎片化的阅读给人一种什么都知道的错觉。我们记住的是标题和结论，却很少追问论证的过程，久而久之，思考也变得零碎。

读完一本书，需要几天甚至几周的专注。正是这种专注，让人学会跟随作者的思路，把零散的知识连成体系。

因此，不妨每天留出半小时，放下手机，读几页纸上的书。慢下来，才能走得更远。"""


def _text(text_id: str, genre: str, text: str = "x" * 600) -> CorpusText:
    return CorpusText(text_id, text, genre, "zh")


def test_the_stated_length_is_the_reference_rounded_up_to_500_characters() -> None:
    assert target_length("字" * 1181, "zh") == 1500
    assert target_length("字" * 1500, "zh") == 1500
    assert target_length("字" * 1501, "zh") == 2000
    assert target_length("字" * 511, "zh") == 1000
    assert target_length("字" * 499, "zh") is None  # shorter than one step: no length
    assert target_length(" ".join(["word"] * 144), "en") == 200  # words, in steps of 100
    assert target_length(" ".join(["word"] * 99), "en") is None


def test_every_stated_length_is_found() -> None:
    assert stated_lengths("我想写一篇2000字左右的小说。字数要求2000字左右。", "zh") == [2000, 2000]
    assert stated_lengths("写一篇大概1,500字的散文", "zh") == [1500]
    assert stated_lengths("写一篇两千字的散文", "zh") == [None]  # a length, not in digits
    assert stated_lengths("用“选、育、管、激”四字诀写一篇文章", "zh") == []
    assert stated_lengths("a story of about 1,200 words, no 900-word draft", "en") == [1200, 900]
    assert stated_lengths("a two thousand words essay", "en") == [None]
    assert stated_lengths("a story in five parts", "en") == []


def test_a_request_may_name_the_title_but_not_copy_a_sentence() -> None:
    assert copied_sentence("我想写一篇小说，题目就叫《灯塔看守人》。", LIGHTHOUSE, "zh") is None
    near = "老许在岬角的灯塔上守了三十年。"  # one character off
    assert copied_sentence(f"请写：{near}", LIGHTHOUSE, "zh") == "老许在岬角的灯塔上守了三十一年。"
    assert copied_sentence("写一个老人守灯塔、雾夜里救下渔船的故事。", LIGHTHOUSE, "zh") is None
    assert copied_sentence("请写“老许想了想”。", LIGHTHOUSE, "zh") is None  # too short to count
    lamp = "The Lamp\n\nEvery evening at six, Mrs. Okafor lit the lamp in the window of her shop."
    assert copied_sentence(
        "Write about every evening at six, when Mrs. Okafor lit the lamp in the window of her shop.",
        lamp,
        "en",
    )
    assert copied_sentence("Write about a shopkeeper's evening lamp.", lamp, "en") is None


def test_shapes_are_seeded_per_text_and_follow_the_genre_shares() -> None:
    for genre in ("fiction", "prose", "poem", "argumentative"):
        texts = [_text(f"{genre}-{i}", genre) for i in range(3000)]
        shapes = [item_shape(t, 0) for t in texts]
        shape = SHAPES.get(genre)
        with_length = sum(s.length is not None for s in shapes) / len(shapes)
        in_sections = sum(bool(s.sections) for s in shapes) / len(shapes)
        assert with_length == pytest.approx(shape.length if shape else 0, abs=0.02)
        assert in_sections == pytest.approx(shape.sections if shape else 0, abs=0.02)
        if genre == "prose":  # one draw: the literary prose items are those with a length
            assert all((s.length is None) == (not s.sections) for s in shapes)
        assert [item_shape(t, 0) for t in texts[:50]] == shapes[:50]  # the same seed
        again = [item_shape(t, 1) for t in texts]
        if shape and shape.length < 1:
            assert again != shapes  # another seed draws anew
    assert item_shape(_text("a", "fiction", "短" * 200), 0).length is None  # too short
    assert [s.title for s in item_shape(_text("t", "fiction"), 0).sections] == FICTION_TITLES
    documentary = item_shape(CorpusText("d", "x" * 600, "纪实", "zh"), 0)
    assert [s.title for s in documentary.sections] == [
        "语言与表现",
        "主要人物",
        "环境设定",
        "主题与思想",
    ]
    assert item_shape(_text("own", "haiku"), 0) == item_shape(_text("own", "report"), 0)


_LENGTH = re.compile(r"(\d{3,5})\s*字")  # the published requests write lengths in digits
_HEADING = re.compile(r"^([^\s:：]{2,12}) ?[:：]", re.M)


def _published(root: Path, task: str) -> list[dict[str, Any]]:
    path = root / task / "aligned.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()]


def test_the_rules_are_what_the_published_items_show(shared_data: Path) -> None:
    """Shares and the rounding rule recounted on the published guide and open items:
    each distinct instruction once (177 are shared by a guide and an open item)."""
    distinct: dict[tuple[str, str], dict[str, Any]] = {}
    for task in ("guide", "open"):  # 6 shared ones carry another label in open: guide's
        for r in _published(shared_data, task):
            distinct.setdefault((r["bench_id"], r["basic_instruction"]), r)
    assert len(distinct) == 746
    asked: Counter[str] = Counter()
    stated: Counter[str] = Counter()
    exact = 0
    for record in distinct.values():
        genre = canonical_genre(record["sub_task"])
        asked[genre] += 1
        found = _LENGTH.search(record["basic_instruction"])
        if found and "不少于" not in record["basic_instruction"]:
            stated[genre] += 1
            exact += target_length(record["reference"], "zh") == int(found.group(1))
    for genre, total in asked.items():
        share = SHAPES[genre].length if genre in SHAPES else 0.0
        assert stated[genre] / total == pytest.approx(share, abs=0.006), genre
    assert (sum(stated.values()), exact) == (150, 105)  # the rule gives 70% exactly

    guide = _published(shared_data, "guide")

    def sectioned(label: str, titles: list[str]) -> tuple[int, int]:
        rows = [r for r in guide if r["sub_task"] == label]
        hits = sum(set(titles) <= set(_HEADING.findall(r["information"])) for r in rows)
        return hits, len(rows)

    assert sectioned("小说", FICTION_TITLES) == (28, 29)
    assert sectioned("纪实", ["语言与表现", "主要人物", "环境设定", "主题与思想"]) == (36, 36)
    assert sectioned("诗歌", [t.title for t in genre_sections("poem", "zh")]) == (31, 32)
    prose_titles = [t.title for t in genre_sections("prose", "zh")]
    assert sectioned("散文", prose_titles) == (27, 54)
    for record in (r for r in guide if r["sub_task"] == "散文"):  # sections iff a length
        in_sections = set(prose_titles) <= set(_HEADING.findall(record["information"]))
        assert in_sections == bool(_LENGTH.search(record["basic_instruction"]))


@pytest.mark.slow
def test_a_story_gets_its_length_and_the_five_sections_and_an_essay_key_points(
    serve: Callable[..., JudgeSimulator], tmp_path: Path
) -> None:
    """Through the build: each first reply breaks a request rule (no length; a copied
    sentence), is asked again with the error, and the second reply makes the item."""
    assert random.Random("0/shape/zh-lighthouse").random() < 0.98  # drawn: a length
    expected = math.ceil(len(LIGHTHOUSE) / 500) * 500

    seen: list[Asked] = []

    def answer(question: Asked) -> dict[str, Any] | None:
        if question.kind != "backconstruct":
            return None
        seen.append(question)
        if question.attempt > 1:
            return None
        reply = valid_construction(question)
        if "灯塔" in (question.writing or ""):
            reply["instruction"] = "我想写一篇小说，讲灯塔看守人的故事，能帮我写一下吗？"
        else:
            reply["instruction"] = "请写：碎片化的阅读给人一种什么都知道的错觉。"
        return reply

    recorder = Recorder(answer)
    simulator = serve(script=recorder)
    corpus = write_rows(
        tmp_path / "corpus.jsonl",
        [
            {"id": "zh-lighthouse", "text": LIGHTHOUSE, "genre": "小说"},
            {"id": "zh-reading", "text": READING, "genre": "议论文"},
        ],
    )
    out = tmp_path / "out"
    run_build(corpus, out, simulator, BuildOptions(tasks=("guide",), threshold=3))
    items = {r["bench_id"]: r for r in read_rows(out / "guide" / "aligned.jsonl")}

    story = items["zh-lighthouse"]
    assert f"{expected}字左右" in story["basic_instruction"]
    assert _HEADING.findall(story["information"]) == FICTION_TITLES
    people = story["information"].split("人物塑造 : ", 1)[1].split("\n主题与思想 : ")[0]
    assert people.startswith("- ") and all(line.startswith("- ") for line in people.splitlines())

    essay = items["zh-reading"]
    assert not _LENGTH.search(essay["basic_instruction"])
    assert all(line.startswith("- ") for line in essay["information"].splitlines())

    reasks = {q.writing: q for q in seen if q.attempt == 2}
    assert sorted(q.attempt for q in seen) == [1, 1, 2, 2]
    assert f"约 {expected} 字" in reasks[LIGHTHOUSE].text  # the question asked for it
    assert f"must state a length of about {expected} characters" in reasks[LIGHTHOUSE].last
    assert "copies the text's sentence" in reasks[READING].last
    assert "请求里不要提字数或篇幅" in reasks[READING].text
