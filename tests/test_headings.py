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


# Valid layouts that must not be read as a broken hierarchy, by class.
NESTED_LISTS = {
    "numbered sub-items under numbered items": (
        "1. 前期筹备\n   1. 确定场地\n   2. 邀请嘉宾\n"
        "2. 现场组织\n   1. 签到引导\n   2. 会场服务\n3. 会后宣传"
    ),
    "four-space sub-items under bold items": (
        "第五条 借阅规则\n\n1.  **借阅期限：**\n    1.  普通图书30天\n    2.  期刊7天\n"
        "    3.  工具书仅限馆内阅览\n\n2.  **续借：**\n    可续借一次。\n\n3.  **逾期：**\n    暂停借阅权限。"
    ),
    "numbered sub-items under bullets": (
        "1. **支出**\n   - **日常开支**：\n     1. 伙食\n     2. 交通\n"
        "   - **学习开支**：\n     1. 教材\n     2. 网课\n     3. 文具\n"
        "2. **收入**\n   - 奖学金\n   - 兼职收入"
    ),
    "sub-items under numbered small headings": (
        "### 课堂流程\n#### 1. 情境导入\n- 内容：出示一幅秋景图。\n- 提问：\n  1. 你看到了什么？\n"
        "  2. 你想到了什么？\n  3. 你想说些什么？\n#### 2. 合作探究\n- 内容：分组朗读课文。\n"
        "#### 3. 拓展练习\n- 内容：仿写一段话。"
    ),
    "numbered bold headings beside numbered lists": (
        "**1. 社团简介**\n\n本社团开展以下活动：\n\n1. 观鸟\n2. 植物识别\n3. 自然笔记\n\n"
        "**2. 年度安排**\n\n1. 春季踏青\n2. 夏令营\n3. 秋季讲座\n4. 冬季展览\n\n"
        "**3. 加入方式**\n\n填写报名表即可。"
    ),
    "numbered markdown headings beside numbered lists": (
        "## 1. 现状\n1. 场地不足\n2. 器材老旧\n3. 教练短缺\n## 2. 目标\n正文\n## 3. 办法\n1. 扩建\n2. 招聘"
    ),
    "a stressed item in a list": "1. 关好门窗\n2. 拔掉插头\n**3. 关闭燃气阀门**\n4. 带好钥匙",
    "continuous item numbers across sections": (
        "一、卫生管理\n1. 每日清扫走廊。\n2. 每周消毒一次。\n二、安全管理\n3. 禁用大功率电器。\n"
        "4. 晚归须登记。\n三、其他\n5. 爱护公物。"
    ),
}
ATTACHMENTS = {
    "attachments inline with aligned items": (
        "一、比赛时间\n1. 初赛：5月10日\n2. 决赛：5月20日\n二、其他事项\n请按时报名。\n\n"
        "附件：1. 比赛规则\n      2. 报名回执\n\n校团委\n2024年4月1日"
    ),
    "attachments inline, items not indented": (
        "一、征集对象\n全市中小学生。\n二、征集要求\n1. 主题鲜明\n2. 原创作品\n3. 字数不限\n4. 注明学校\n\n"
        "附件：1. 作品登记表\n2. 原创承诺书\n3. 评分细则\n\n市教育局\n2024年6月1日"
    ),
    "attachments on their own line": (
        "一、开放时间\n1. 周二至周五\n2. 周六上午\n3. 法定节假日另行通知\n二、联系方式\n电话：123456\n\n"
        "附件：\n1. 预约登记表\n2. 参观须知\n\n博物馆"
    ),
    "a label line with its first item inline": (
        "办理时请携带：1. 户口簿\n2. 近期照片两张\n3. 原证件\n材料齐全当场受理。"
    ),
    "a new list after prose": (
        "出发前请做到：\n1. 检查车辆\n2. 带好雨具\n3. 结伴同行\n"
        "回来以后，还有两件事。\n1. 上交日志\n2. 清点物品"
    ),
}
SMALL_TITLES = {
    "notice title in a small heading": (
        "### 关于调整食堂开放时间的通知\n\n各位师生：\n\n## 一、调整时间\n自下周一起。\n"
        "## 二、开放时段\n早六点至晚七点。\n## 三、注意事项\n错峰就餐。"
    ),
    "story title in the smallest heading": (
        "#### 渡口\n\n河边住着一位老船夫。\n\n### 雨夜\n正文。\n\n### 新桥\n正文。"
    ),
    "lesson plan title above deeper sections": (
        "### 《秋天》教学设计\n#### 一、教学目标\n正文\n#### 二、教学过程\n##### 1. 导入\n正文\n"
        "##### 2. 朗读\n正文\n#### 三、板书设计\n正文"
    ),
}
BROKEN = {
    "nested list gap": "1. 准备阶段\n   1. 成立小组\n   3. 制定方案\n2. 实施阶段",
    "nested list that skips its first item": (
        "1. 准备阶段\n   1. 成立小组\n   2. 制定方案\n2. 实施阶段\n   2. 组织培训"
    ),
    "top-level gap around a nested list": "1. 甲\n2. 乙\n   1. 乙一\n   2. 乙二\n4. 丁",
    "top-level item continuing a nested list": "1. 甲\n   1. 甲一\n   2. 甲二\n   3. 甲三\n4. 乙",
    "nested list continued under a new list": (
        "1. 甲\n   1. 甲一\n   2. 甲二\n\n另有一事。\n\n1. 乙\n   3. 乙三"
    ),
    "repeated item after a nested list": "1. 甲\n   1. 甲一\n   2. 甲二\n2. 乙\n2. 丙",
    "attachment list gap": "正文。\n\n附件：1. 报名表\n      3. 日程安排",
    "attachment list continuing a wrong number": (
        "1. 甲\n2. 乙\n3. 丙\n4. 丁\n\n附件：\n2. 报名表\n3. 日程安排"
    ),
    "numbered heading gap beside a list": "## 1. 背景\n1. 甲\n2. 乙\n## 3. 目标\n正文",
    "section gap after continuous items": "一、甲\n1. 子一\n二、乙\n2. 子二\n四、丁\n3. 子三",
    "small title, then a jump between sections": (
        "### 关于开展检查的通知\n## 一、范围\n正文\n#### （一）细节\n正文"
    ),
    "large title, then a jump to sections": "# 通知\n\n### 一、范围\n正文\n### 二、时间\n正文",
    "heading jump in the middle": "## 一、背景\n正文\n#### 细节\n正文",
}


VALID = {**NESTED_LISTS, **ATTACHMENTS, **SMALL_TITLES}


@pytest.mark.parametrize("case", VALID)
def test_valid_layouts_are_not_broken(case: str) -> None:
    verdict = formatting_verdict(VALID[case])
    assert verdict.score == 10, verdict.reason


@pytest.mark.parametrize("case", BROKEN)
def test_real_breaks_still_score_zero(case: str) -> None:
    verdict = formatting_verdict(BROKEN[case])
    assert verdict.score == 0, verdict.reason


def test_a_passage_starting_mid_numbering_reads_as_a_gap_when_whole() -> None:
    """The rule reads whole writings; completion passages are never scored by it."""
    verdict = formatting_verdict("三、夏日的池塘\n正文。\n\n四、秋天的稻田\n正文。")
    assert verdict.score == 0
    assert verdict.problems == ("line 1: cn_section number 3 after 0",)


def test_parse_markers_reads_indentation_and_inline_items() -> None:
    text = "1. 甲\n   1. 甲一\n\t2. 甲二\n附件：1. 报名表\n**2. 小结**"
    markers = parse_markers(text)
    assert [(m.number, m.indent) for m in markers] == [(1, 0), (1, 3), (2, 4), (1, 0), (2, 0)]
    assert [m.bold for m in markers] == [False, False, False, False, True]
    assert markers[3].title == "报名表"


@pytest.mark.parametrize("case", CASES)
def test_formatting_rule(case: str) -> None:
    text, expected = CASES[case]
    verdict = formatting_verdict(text)
    assert verdict.score == expected, verdict.reason
    # the reason explains the verdict: the problems behind a lower score, or why it is whole
    if expected < 10:
        assert verdict.problems and verdict.reason == "; ".join(verdict.problems)
    else:
        assert verdict.problems == ()
        assert verdict.reason == "plain prose without headings or lists" or (
            verdict.reason.endswith("heading/list lines in a consistent hierarchy")
        )


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
