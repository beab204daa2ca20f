"""The simulator's replies: valid ones chosen from what the question asks, and the faults.

Valid replies are deterministic functions of the question: weights vary with the
instruction (not with the writing), scores grow with the writing's length and vary with
its text, and the build's steps get plausible answers drawn from the text. The reply
faults' unusable replies are here too (`malformed`, `out_of_range`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import Any

from howtobench.baselines.overlap import tokenize
from howtobench.construct.backconstruct import CHARACTERS, THEME_WORDS, theme_words
from howtobench.construct.completion import paragraphs
from howtobench.simulator.protocol import (
    FOREIGN_JUDGE,
    Asked,
    asked_dimensions,
    asked_genre,
    asked_ids,
    asked_length,
)
from howtobench.tree.spec import LEAVES, NEGOTIATED_NODES
from howtobench.vocabulary.words import detect_language

__all__ = [
    "MALFORMED_REPLY",
    "WRITER_REPLY",
    "out_of_range_reply",
    "reply_text",
    "valid_construction",
    "valid_reply",
    "valid_weights",
]

_LEAVES = {leaf.id: leaf for leaf in LEAVES}
_PLAN_NAMES = ("content", "structure", "language", "creativity", "task_fit", "feeling")
WRITER_REPLY = "模拟的作品正文。\n\n第二段：这是一段用于测试的文字。"
MALFORMED_REPLY = "I would rather not answer in JSON."


def _unit(*parts: str) -> float:
    """A stable pseudo-random number in [0, 1) from text."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def valid_weights(question: Asked) -> dict[str, Any]:
    """Weights that vary with the instruction but not with the writing, summing to 1 per node."""
    ids = asked_ids(question)
    weights: dict[str, float] = {}
    for node in NEGOTIATED_NODES:
        group = [i for i in ids if _LEAVES[i].node == node]
        raw = [0.5 + _unit(question.text, i) for i in group]
        weights.update({i: round(r / sum(raw), 6) for i, r in zip(group, raw, strict=True)})
        if group:  # make the rounded group sum exactly 1
            weights[group[-1]] = round(1 - sum(weights[i] for i in group[:-1]), 6)
    return {"weights": weights, "explanation": "simulated weights"}


def simulated_score(writing: str, key: str, low: int = 1, high: int = 10) -> int:
    """A score that grows with the writing's length and varies with its text (lowest if empty)."""
    if not writing.strip():
        return low
    share = min(len(writing) / 1500, 1.0) * 0.6 + _unit(writing, key) * 0.4
    return low + round(share * (high - low))


def valid_rubric(question: Asked) -> dict[str, Any]:
    writing = question.writing or ""
    scores = {i: simulated_score(writing, i) for i in asked_dimensions(question)}
    return {"scores": scores, "overall": simulated_score(writing, "overall"), "reason": "simulated"}


def valid_plan(question: Asked) -> dict[str, Any]:
    """3-6 dimensions, their weights and scores from the writing; overall their weighted mean."""
    writing = question.writing or ""
    names = _PLAN_NAMES[: 3 + int(_unit(writing, "count") * 4)]
    dimensions: list[dict[str, Any]] = [
        {
            "name": name,
            "weight": round(0.5 + _unit(writing, "weight", name), 2),
            "score": simulated_score(writing, name),
        }
        for name in names
    ]
    total = sum(d["weight"] for d in dimensions)
    overall = round(sum(d["weight"] * d["score"] for d in dimensions) / total, 1)
    return {"dimensions": dimensions, "overall": overall, "reason": "simulated"}


# Words that mark a genre, Chinese and English; a text goes to the genre with most hits.
_GENRE_CUES: dict[str, tuple[str, ...]] = {
    "letters": ("尊敬的", "此致", "敬礼", "敬上", "Dear ", "Sincerely", "Yours truly"),
    "speech": ("同志们", "大家好", "各位", "谢谢大家", "Ladies and gentlemen", "Thank you all"),
    "contract": ("甲方", "乙方", "合同", "Party A", "Party B", "hereby agree"),
    "regulation": ("第一条", "第二条", "本制度", "本办法", "Article 1", "Article 2"),
    "plan": ("方案", "实施步骤", "工作目标", "进度安排", "Objectives", "Timeline", "Phase 1"),
    "report": ("报告", "完成情况", "本年度", "工作总结", "This report", "Findings"),
    "others": ("通知", "特此", "启事", "Notice", "announce", "Please call", "Lost "),
    "comment": ("网友", "现象", "热议", "Commentators", "the trend"),
    "argumentative": ("我认为", "因此", "总之", "由此可见", "we must", "Therefore", "I argue"),
    "fiction": ("他说", "她说", "问道", " said", " asked"),
}
_SENTENCE = re.compile(r"[^。！？!?\n]+[。！？!?]?|[^\n]+")
_INNER_END = re.compile(r"[。！？!?]|\.(?=\s)")
_RUN = re.compile(r"(.)\1{3,}")  # a character four times over: 好好好好, !!!!
# Personal details by kind; the detail is each pattern's first group.
_PERSONAL: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("phone", re.compile(r"(?<!\d)((?:\+?86[- ]?)?1[3-9]\d[- ]?\d{4}[- ]?\d{4})(?!\d)")),
    ("phone", re.compile(r"(\(?\b\d{3}\)?[- .]\d{3}[- .]\d{4})\b")),  # North American
    ("email", re.compile(r"([A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)")),
    ("id_number", re.compile(r"(?<!\d)(\d{17}[\dXx])(?!\d)")),  # a Chinese ID number
    # a name right after a contact cue: 联系人：王芳, 请与失主王建国联系, call Mary Kent
    (
        "name",
        re.compile(
            r"(?:失主|联系人[:：]?\s*|收件人[:：]?\s*)([\u4e00-\u9fff]{2,3}?)"
            r"(?=联系|先生|女士|[，,。；;:：\s(（]|电话)"
        ),
    ),
    (
        "name",
        re.compile(
            r"\b(?:call|contact|write to|ask for)\s+"
            r"((?:(?:Mr|Mrs|Ms|Dr)\.?\s+)?[A-Z][a-z]+(?:\s+[A-Z][a-z]+)+)"
        ),
    ),
)
_ADVERT = re.compile(
    r"[^。！？!?\n]*(?:扫码|加微信|优惠|限时|折扣|包邮|下单|promo code|buy now|free shipping|"
    r"order now|% off)[^。！？!?\n]*",
    re.IGNORECASE,
)
_UNSAFE = re.compile(r"制造炸弹|自杀的方法|how to make a bomb|ways to kill yourself", re.IGNORECASE)


def _clip(text: str, limit: int) -> str:
    """`text` on one line, cut to about `limit` characters (at a space for words), its
    inner sentence ends made commas, so that it stays one sentence."""
    line = " ".join(text.split()).rstrip("。！？!?.")
    if len(line) > limit:
        cut = line[:limit]
        line = cut.rsplit(" ", 1)[0] if " " in cut else cut
    comma = "，" if detect_language(line) == "zh" else ","
    return _INNER_END.sub(comma, line).strip("，, ")


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.findall(text) if s.strip()]


def _simulated_genre(text: str) -> str:
    """Verse (five lines or more, nearly all short and without an end mark) is a poem;
    otherwise the genre with the most cue words, prose when none is found."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    limit = 16 if detect_language(text) == "zh" else 48
    short = [line for line in lines[1:] if len(line) <= limit and not line.endswith(("。", "."))]
    if len(lines) >= 5 and len(short) * 4 >= len(lines) * 3:
        return "poem"
    hits = {genre: sum(text.count(cue) for cue in cues) for genre, cues in _GENRE_CUES.items()}
    best = max(hits, key=lambda genre: hits[genre])
    return best if hits[best] else "prose"


def _simulated_quality(text: str) -> int:
    """2 for a very short or spammy text (a run of one character); else 3, 4 or 5 with
    chances 15/40/45 % from the text, which gives Table 13's shape: most texts 3-5."""
    if len("".join(text.split())) < 80 or _RUN.search(text):
        return 2
    share = _unit(text, "quality")
    return 3 if share < 0.15 else 4 if share < 0.55 else 5


def _theme(text: str, language: str) -> str:
    """The text's first line (its title) when it is five words at most, else as many of
    its first three words as fit."""
    first = text.strip().splitlines()[0].strip() if text.strip() else ""
    if first and theme_words(first, language) <= THEME_WORDS:
        return _clip(first, 40)
    if language == "zh":
        words = [w for w in tokenize(first, "zh") if len(w) > 1 and w.isalnum()]
        joiner = ""
    else:
        words = [w.strip(".,;:!?\"'") for w in first.split()]
        joiner = " "
    for count in (3, 2, 1):
        theme = joiner.join(words[:count])
        if theme and theme_words(theme, language) <= THEME_WORDS:
            return theme
    return "主题" if language == "zh" else "the theme"


def valid_construction(question: Asked) -> dict[str, Any]:
    """Summary, theme, a request in the asked shape (chatty with sections, businesslike
    with an outline, stating the asked length), and the grounding: one text per asked
    section (the characters a list), else an outline of the paragraphs' first sentences."""
    text = question.writing or ""
    language = detect_language(text)
    blocks = [text[start:end] for start, end in paragraphs(text)]
    units = blocks if len(blocks) >= 2 else _sentences(text)
    units = units if len(units) >= 2 else [text.strip() or "…", "…"]
    sentences = _sentences(text) or ["…"]
    lead = max(sentences[:3], key=len)
    theme = _theme(text, language)
    sections = asked_dimensions(question)
    if language == "zh":
        summary = f"写{_clip(lead, 60)}。"
        requirement = "像原文那样围绕「{}」来写"
    else:
        summary = f"write about {_clip(lead, 120)}."
        requirement = 'Build on "{}" as the original does'
    construction: dict[str, Any] = {
        "summary": summary,
        "theme": theme,
        "instruction": _request(question, theme, language, chatty=bool(sections)),
    }
    if sections:
        parts = [requirement.format(_clip(units[i % len(units)], 16) or "…") for i in range(5)]
        construction["sections"] = {
            section: parts[:2] if section == CHARACTERS else parts[i % len(parts)]
            for i, section in enumerate(sections)
        }
    else:
        construction["outline"] = [
            _clip(_sentences(unit)[0] if _sentences(unit) else unit, 30) or "…"
            for unit in units[:12]
        ]
    return construction


def _request(question: Asked, theme: str, language: str, *, chatty: bool) -> str:
    """The user's request: the genre the question names, the theme, the asked length."""
    genre = asked_genre(question) or ("文章" if language == "zh" else "text")
    length = asked_length(question)
    if language == "zh":
        if not chatty:
            return f"请撰写一篇以「{theme}」为主题的{genre}。"
        sized = f"{length}字左右的" if length else ""
        return f"我想写一篇{sized}{genre}，主题是「{theme}」，能帮我写一下吗？"
    article = "an" if genre[:1].lower() in "aeiou" else "a"
    if not chatty:
        return f'Please write {article} {genre} on "{theme}".'
    sized = f" of about {length} words" if length else ""
    return f'I\'d like {article} {genre}{sized} on "{theme}". Could you write it for me?'


def _valid_flags(question: Asked) -> dict[str, Any]:
    """Every phone number, e-mail address, ID number and name after a contact cue, with
    its kind, every sentence with an advertising word, every unsafe phrase: quoted from
    the item as it stands."""
    text = question.writing or ""
    personal = {m.group(1): kind for kind, pattern in _PERSONAL for m in pattern.finditer(text)}
    return {
        "personal_info": [{"text": detail, "kind": kind} for detail, kind in personal.items()],
        "unsafe": list(dict.fromkeys(m.group(0) for m in _UNSAFE.finditer(text))),
        "advertisement": list(dict.fromkeys(m.group(0).strip() for m in _ADVERT.finditer(text))),
        "reason": "simulated",
    }


# The JSON reply to each kind of question but the writer's and a leaf expert's
_VALID: dict[str, Callable[[Asked], dict[str, Any]]] = {
    "negotiator": valid_weights,
    "rubric": valid_rubric,
    "autoplan": valid_plan,
    "classify": lambda q: {"genre": _simulated_genre(q.writing or ""), "reason": "simulated"},
    "quality": lambda q: {"score": _simulated_quality(q.writing or ""), "reason": "simulated"},
    "backconstruct": valid_construction,
    "screen": _valid_flags,
    # a whole number from 1 to 10, stable per question
    FOREIGN_JUDGE: lambda q: {"score": 1 + int(_unit(q.text) * 10), "reason": "simulated"},
}


def valid_reply(question: Asked) -> str:
    if question.kind == "writer":
        return WRITER_REPLY
    if question.kind in _VALID:
        return json.dumps(_VALID[question.kind](question), ensure_ascii=False)
    leaf, writing = _LEAVES[question.kind], question.writing or ""  # a leaf expert's question
    score = simulated_score(writing, leaf.id, leaf.low, leaf.high)
    return json.dumps({"score": score, "reason": "simulated" if writing.strip() else "empty"})


# Build-step replies that break their form: an unknown genre, a score off the 1-5
# scale, a theme of too many words, a quote that is not in the item.
_BUILD_OUT_OF_RANGE: dict[str, dict[str, Any]] = {
    "classify": {"genre": "novella", "reason": "out of range"},
    "quality": {"score": 9, "reason": "out of range"},
    "screen": {
        "personal_info": [],
        "unsafe": ["a passage that is not in the item"],
        "advertisement": [],
    },
}


def out_of_range_reply(question: Asked) -> str:
    if question.kind == "backconstruct":
        theme = "a theme of far more than five words in all"
        return json.dumps({**valid_construction(question), "theme": theme})
    if question.kind in _BUILD_OUT_OF_RANGE:
        return json.dumps(_BUILD_OUT_OF_RANGE[question.kind])
    if question.kind == "negotiator":
        return json.dumps({"weights": dict.fromkeys(asked_ids(question), 0.9)})
    if question.kind == "rubric":
        scores = dict.fromkeys(asked_dimensions(question), 42)
        return json.dumps({"scores": scores, "overall": 42, "reason": "out of range"})
    if question.kind == "autoplan":
        return json.dumps({**valid_plan(question), "overall": 0, "reason": "out of range"})
    return json.dumps({"score": 42, "reason": "out of range"})


def reply_text(question: Asked, fault: str | None) -> str:
    """The text of a 200 answer: unusable for the reply faults (`malformed`,
    `out_of_range`), else the valid reply."""
    if fault == "malformed":
        return MALFORMED_REPLY
    if fault == "out_of_range":
        return out_of_range_reply(question)
    return valid_reply(question)
