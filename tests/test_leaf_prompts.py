"""The leaf prompts carry the paper's criteria (section 3.2, appendices G.3 and M, and its
public evaluation prompts), in both languages, and nothing the paper puts elsewhere; no
prompt holds a quote that a judge copying it would turn into broken JSON."""

import json
import re
from pathlib import Path

import pytest

import howtobench
from howtobench.baselines.prompts import baseline_prompt
from howtobench.tree.prompts import tree_prompt

# What each leaf must ask about, as words of its Chinese and English prompt.
CRITERIA = {
    "opening_ending": (
        ["读者", "套话", "深化主题", "呼应"],
        ["readers", "stock phrases", "deepen", "echo"],
    ),
    "rhetoric": (
        ["词汇丰富", "具体生动", "机械的连接词", "中英混用"],
        ["rich, varied", "vividly", "mechanical connectors", "another language"],
    ),
    "logic": (
        ["人称", "视角", "语气", "从常识出发", "口号"],
        ["person and point of view", "tone", "common knowledge", "slogan"],
    ),
    "emotion": (["读者", "融入描写", "修辞"], ["readers", "woven into the description", "figures"]),
    "plots": (["叙事手法", "体裁", "提纲"], ["narrative technique", "genre", "outline"]),
    "paragraphing": (
        ["小标题", "某一章节比其他章节长出许多", "一句话成段"],
        ["sections with titles", "far longer than the others", "one-sentence paragraphs"],
    ),
    "impression": (
        ["流畅连贯", "滥用条目和列表"],
        ["fluently", "overusing bullet points and lists"],
    ),
}


@pytest.mark.parametrize("leaf", sorted(CRITERIA))
@pytest.mark.parametrize("language", ["zh", "en"])
def test_each_leaf_asks_what_the_paper_asks(leaf: str, language: str) -> None:
    text = tree_prompt(f"leaf_{leaf}", language)
    words = CRITERIA[leaf][0 if language == "zh" else 1]
    assert [w for w in words if w not in text] == []


@pytest.mark.parametrize("language", ["zh", "en"])
def test_following_the_request_is_judged_by_plots_and_impression_not_logic(language: str) -> None:
    request = {"zh": "写作要求", "en": "request"}[language]
    assert request not in tree_prompt("leaf_logic", language)
    assert request in tree_prompt("leaf_plots", language)
    assert request in tree_prompt("leaf_impression", language)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_no_judge_is_told_how_to_weigh_length(language: str) -> None:
    """Section 6.1 studies how scores move with length: no prompt may pre-empt it."""
    prompts = [tree_prompt("judge_system", language)] + [
        baseline_prompt(f"{kind}_system", language) for kind in ("rubric", "autoplan")
    ]
    for text in prompts:
        assert not any(word in text for word in ("篇幅", "长短", "length", "how long"))


PROMPT_FILES = sorted(Path(howtobench.__file__).parent.glob("**/prompts/*.txt"))


def json_example(line: str) -> bool:
    """A reply-format example: the line parses as one JSON object once templated, its
    `{$slots}` empty, each other `$name` a value, each bare `<placeholder>` a number and
    each `...` element dropped (`"<placeholder>"` is already a string)."""
    text = re.sub(r"\{\$\w+\}", "{}", line.strip())
    text = re.sub(r"\$\{?\w+\}?", "1", text)
    text = re.sub(r'(?<!")<[^<>"]*>(?!")', "0", text)
    text = re.sub(r",\s*\.\.\.", "", text).replace("[...]", "[]")
    try:
        return isinstance(json.loads(text), dict)
    except json.JSONDecodeError:
        return False


def test_every_prompt_file_is_seen() -> None:
    assert len(PROMPT_FILES) > 150
    assert {p.parent.parent.name for p in PROMPT_FILES} >= {"tree", "judge", "baselines"}


@pytest.mark.parametrize("path", PROMPT_FILES, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_ascii_double_quotes_only_in_json_examples(path: Path) -> None:
    """A judge that echoes a quoted word into its JSON `reason` with ASCII quotes breaks
    the JSON (issue 28): prompts quote with 「」 or “” in Chinese and “” or ‘’ in English,
    and keep `"` for the JSON examples of the reply format."""
    lines = path.read_text(encoding="utf-8").splitlines()
    quoted = [n for n, line in enumerate(lines, 1) if '"' in line and not json_example(line)]
    assert quoted == [], f"{path.name}: ASCII double quotes outside a JSON example"


def test_the_json_example_rule_tells_examples_from_quotes() -> None:
    assert json_example('{"score": <$low 到 $high 之间的整数>, "reason": "<一两句话的理由>"}')
    assert json_example('{"weights": {$shape}, "explanation": "<why>"}')
    assert json_example('{"unsafe": ["<quoted passage>", ...], "advertisement": [...]}')
    assert not json_example('依赖"首先、其次、此外、综上所述"之类机械的连接词')
    assert not json_example('{"score": 7, "reason": "用"首先"串起全文"}')
