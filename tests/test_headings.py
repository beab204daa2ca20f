"""The formatting rule (0/5/10) on headings and lists of many styles."""

import pytest

from howtobench.tree.headings import chinese_number, formatting_verdict, parse_markers


@pytest.mark.parametrize(
    ("numeral", "value"),
    [
        ("一", 1),
        ("十", 10),
        ("十二", 12),
        ("二十", 20),
        ("二十三", 23),
        ("两", 2),
        ("十十", None),
        ("一二", None),
    ],
)
def test_chinese_numbers(numeral: str, value: int | None) -> None:
    assert chinese_number(numeral) == value


CASES = {
    "plain prose": ("春天来了。\n\n花开了，草绿了。\n\n我们去郊游。", 10),
    "markdown hierarchy": ("# 标题\n\n## 第一部分\n正文\n### 细节\n正文\n## 第二部分\n正文", 10),
    "markdown level jump": ("# 标题\n\n### 第一部分\n正文", 0),
    "chinese numbering": (
        "一、总体要求\n正文\n（一）目标\n正文\n（二）原则\n正文\n二、主要任务\n（一）任务\n正文",
        10,
    ),
    "chinese numbering gap": ("一、总体要求\n正文\n三、主要任务\n正文", 0),
    "repeated section number": ("一、背景\n正文\n二、做法\n正文\n二、成效\n正文", 0),
    "sub-section before section": ("（一）目标\n正文\n（二）原则\n正文", 5),
    "ordered list": ("要点如下：\n1. 第一点\n2. 第二点\n3. 第三点\n总之如此。", 10),
    "ordered list gap": ("要点如下：\n1. 第一点\n2. 第二点\n4. 第四点", 0),
    "restarted ordered list": ("一、甲\n1. 甲一\n2. 甲二\n二、乙\n1. 乙一\n2. 乙二", 10),
    "mostly bullets": ("计划\n- 买菜\n- 做饭\n- 洗碗\n- 散步", 5),
    "a few bullets in prose": (
        "我们要做三件事。\n- 读书\n- 运动\n后来我们都做到了。这很好。\n第二段正文。\n第三段正文。\n第四段正文。",
        10,
    ),
    "mixed heading systems": ("# 方案\n## 背景\n正文\n一、目标\n正文\n二、步骤\n正文", 5),
    "markdown-decorated chinese headings": (
        "# 方案\n## 一、背景\n正文\n## 二、目标\n正文\n### （一）近期\n正文",
        10,
    ),
    "bold chinese headings": ("**一、背景**\n正文\n**二、目标**\n正文", 10),
    "decimal is not a list item": ("1.5亿人口\n2.5倍增长", 10),
}


@pytest.mark.parametrize("case", CASES)
def test_formatting_rule(case: str) -> None:
    text, expected = CASES[case]
    verdict = formatting_verdict(text)
    assert verdict.score == expected, verdict.reason
    assert verdict.reason


def test_problems_name_the_line() -> None:
    verdict = formatting_verdict("一、总体要求\n正文\n三、主要任务")
    assert verdict.problems == ("line 3: cn_section number 3 after 1",)
    assert formatting_verdict("# 标题\n### 小节").problems == (
        "line 2: markdown heading jumps from level 1 to 3",
    )


def test_parse_markers_styles() -> None:
    text = "## 一、背景\n（二）目标\n3. 步骤\n(4) 细项\n- 要点\n### 结语"
    assert [(m.style, m.number, m.hashes) for m in parse_markers(text)] == [
        ("cn_section", 1, 2),
        ("cn_subsection", 2, 0),
        ("ordered", 3, 0),
        ("ordered_paren", 4, 0),
        ("bullet", None, 0),
        ("markdown", None, 3),
    ]
