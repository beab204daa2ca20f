"""What the studio's pages say, one table per language: Chinese (`ZH`) and English (`EN`).

The tables are the only place a word of the pages is written: the pages' HTML holds keys
that the scripts fill in from the table given inside the page (`page_text`). The rules'
numbers come from `protocol`, so that a change of rule changes every sentence naming it;
`{name}` marks what the page fills in as it goes.
"""

from __future__ import annotations

import json
from typing import Any

from howtobench.annotate.protocol import PASSING, REFERENCE_SCORE, error_types

__all__ = ["EN", "TABLES", "ZH", "page_language", "page_text", "words"]

FALLBACK = "en"  # what every language without a table of its own is spoken to in

ZH: dict[str, Any] = {
    "rater": {
        "title": "HoWToBench 评分工作台",
        "noscript": "本页需要启用 JavaScript。",
        "previous": "上一题",
        "next": "下一题",
        "guideline": "评分说明",
        "shortcuts": "快捷键",
        # each key in [brackets] shows as a key cap
        "keys": [
            ["[1]–[5]", "给当前作答打分（择优模式：选第 n 个候选）"],
            ["[J] / [K]", "下一篇 / 上一篇作答"],
            ["[N] / [P]", "下一题 / 上一题"],
            ["[E]", "跳到当前作答的问题类型（[Tab] 移动，[空格] 勾选）"],
            ["[M]", "写备注（择优模式：写理由）"],
            ["[Esc]", "离开输入框，回到快捷键"],
            ["[G]", "显示 / 隐藏评分说明"],
            ["[?]", "显示 / 隐藏本表"],
        ],
        "keys_note": "每次改动都会自动保存；右上角显示保存状态。下次打开链接时，从上次停下的地方继续。",
        "request": "写作要求",
        "reference": f"参考答案（按 {REFERENCE_SCORE} 分看待）",
        "writings": "作答",
        "score": "分数",
        "errors": f"问题类型（低于 {PASSING} 分必选）",
        "note": "备注",
        "note_placeholder": "可不填：写下你注意到的地方",
        "best": "选这篇",
        "reason": "理由",
        "reason_placeholder": "这一篇为什么最好？",
        "progress": "第 {index} 题，共 {count} 题 · 已完成 {done} 题",
        "all_done": "全部完成，谢谢！",
        "all_saved": "已全部保存",
        "saving": "正在保存…",
        "unsaved": "{count} 处未保存",
        "saved": "已保存 {time}",
        "need_score": "未保存：请先打分",
        "need_error": f"未保存：低于 {PASSING} 分须勾选问题类型",
        "unsafe_one": "未保存：内容不安全须记 1 分",
        "need_choice": "未保存：请先选出一篇",
        "need_reason": "未保存：请写理由",
        "failed": "未保存：{why}",
        "retrying": "无法连接服务器，稍后自动重试",
        "writing": "作答 {label}",
        "candidate": "候选 {label}",
        "empty": "（空白作答）",
        "errors_off": f"问题类型只用于低于 {PASSING} 分的作答",
        "invalid": "此链接无效。请向组织者索取你的链接。",
        "tasks": {"completion": "补写", "guide": "提纲写作", "open": "开放写作"},
        "grounding": {"completion": "原文（空缺处已标出）", "guide": "提纲"},
    },
    "admin": {
        "title": "HoWToBench 评分工作台：管理",
        "noscript": "本页需要启用 JavaScript。",
        "heading": "评分工作台：管理",
        "export_csv": "导出 CSV",
        "export_jsonl": "导出 JSONL",
        "progress": "进度",
        "agreement": "目前的一致性",
        "agreement_hint": (
            "取每篇作答的两次评分，名字排在前面的评分人算第一次。加权 κ 用二次权重；"
            "有两次评分的作答不到三篇时，κ 和 Pearson 留空。"
        ),
        "per_rater": "每位评分人与其他人相比",
        "per_rater_hint": "最一致的排在前面：可请他们复核下面的分歧。",
        "recheck": "待复核",
        "recheck_rate": "两次评分相差 2 分或以上的作答。",
        "recheck_pick": "评分人选了不同候选的题目。",
        "no_raters": "没有评分人。",
        "no_ratings": "还没有评分。",
        "no_pairs": "还没有哪篇作答有两次评分。",
        "nothing": "没有需要复核的。",
        "updated": "更新于 {time}",
        "refresh_failed": "无法刷新：{why}",
        "columns": {
            "rater": "评分人",
            "instructions": "题数",
            "finished": "已完成",
            "writings": "作答",
            "candidates": "候选",
            "rated": "已评",
            "last_save": "最近保存",
            "instructions_picked_twice": "两人都选过的题",
            "same_choice": "选择相同",
            "chosen": "所选",
            "rating_pairs": "评分对",
            "kappa": "Cohen's κ",
            "quadratic_kappa": "加权 κ",
            "pearson": "Pearson",
            "mean_abs_difference": "平均绝对差",
            "exact_agreement": "完全一致",
            "ratings": "评分数",
            "pairs": "成对数",
            "infer_id": "样本",
            "task": "任务",
            "model": "模型",
            "gap": "分差",
            "choices": "各人所选",
        },
    },
}

EN: dict[str, Any] = {
    "rater": {
        "title": "HoWToBench rating studio",
        "noscript": "This page needs JavaScript.",
        "previous": "Previous",
        "next": "Next",
        "guideline": "Guideline",
        "shortcuts": "Shortcuts",
        "keys": [
            ["[1]–[5]", "score the selected writing (pick mode: choose candidate n)"],
            ["[J] / [K]", "next / previous writing"],
            ["[N] / [P]", "next / previous instruction"],
            ["[E]", "go to the selected writing's error types ([Tab] moves, [Space] ticks)"],
            ["[M]", "write a note (pick mode: the reason)"],
            ["[Esc]", "leave a text field, back to the shortcuts"],
            ["[G]", "show / hide the guideline"],
            ["[?]", "show / hide this table"],
        ],
        "keys_note": (
            "Every change is saved as you make it; the top bar shows whether it is. "
            "Open your link again to carry on where you stopped."
        ),
        "request": "Request",
        "reference": f"Reference (counts as a {REFERENCE_SCORE})",
        "writings": "Writings",
        "score": "Score",
        "errors": f"Error types (required below {PASSING})",
        "note": "Note",
        "note_placeholder": "Optional: what you noticed",
        "best": "The best",
        "reason": "Reason",
        "reason_placeholder": "Why is this one the best?",
        "progress": "Instruction {index} of {count} · {done} finished",
        "all_done": "All finished, thank you!",
        "all_saved": "All changes saved",
        "saving": "Saving…",
        "unsaved": "{count} not saved",
        "saved": "saved {time}",
        "need_score": "not saved: give a score first",
        "need_error": f"not saved: below {PASSING}, tick at least one error type",
        "unsafe_one": "not saved: an unsafe writing scores 1",
        "need_choice": "not saved: choose a candidate first",
        "need_reason": "not saved: write a reason",
        "failed": "not saved: {why}",
        "retrying": "cannot reach the server; trying again shortly",
        "writing": "Writing {label}",
        "candidate": "Candidate {label}",
        "empty": "(empty writing)",
        "errors_off": f"error types are for scores below {PASSING}",
        "invalid": "This link is not valid. Ask the organiser for yours.",
        "tasks": {"completion": "completion", "guide": "guided writing", "open": "open writing"},
        "grounding": {"completion": "The text (the blank is marked)", "guide": "Outline"},
    },
    "admin": {
        "title": "HoWToBench rating studio: admin",
        "noscript": "This page needs JavaScript.",
        "heading": "Rating studio: admin",
        "export_csv": "Export CSV",
        "export_jsonl": "Export JSONL",
        "progress": "Progress",
        "agreement": "Agreement so far",
        "agreement_hint": (
            "Over every two ratings of one writing, the first by the rater whose name sorts "
            "first. Weighted κ uses quadratic weights; κ and Pearson are blank until three "
            "writings have two ratings."
        ),
        "per_rater": "Each rater against the others",
        "per_rater_hint": "Most agreeing first: candidates for re-checking the disagreements below.",
        "recheck": "To re-check",
        "recheck_rate": "Writings whose two ratings are 2 or more points apart.",
        "recheck_pick": "Instructions whose raters chose different candidates.",
        "no_raters": "No raters.",
        "no_ratings": "No ratings yet.",
        "no_pairs": "No writing has two ratings yet.",
        "nothing": "Nothing to re-check.",
        "updated": "updated {time}",
        "refresh_failed": "Could not refresh: {why}",
        "columns": {
            "rater": "rater",
            "instructions": "instructions",
            "finished": "finished",
            "writings": "writings",
            "candidates": "candidates",
            "rated": "rated",
            "last_save": "last save",
            "instructions_picked_twice": "instructions picked twice",
            "same_choice": "same choice",
            "chosen": "chosen",
            "rating_pairs": "rating pairs",
            "kappa": "Cohen's κ",
            "quadratic_kappa": "weighted κ",
            "pearson": "Pearson",
            "mean_abs_difference": "mean |difference|",
            "exact_agreement": "exact agreement",
            "ratings": "ratings",
            "pairs": "pairs",
            "infer_id": "sample",
            "task": "task",
            "model": "model",
            "gap": "gap",
            "choices": "choices",
        },
    },
}

TABLES: dict[str, dict[str, Any]] = {"zh": ZH, "en": EN}


def page_language(language: str) -> str:
    """The language a page speaks for data in `language`: its own if it has a table,
    English otherwise (as its guidelines are)."""
    return language if language in TABLES else FALLBACK


def words(page: str, language: str) -> dict[str, Any]:
    """One page's table in the language it speaks for `language`; the rater's holds the
    error types too, ticked in the item's language, whatever the campaign's."""
    shown = page_language(language)
    table = dict(TABLES[shown][page])
    if page == "rater":
        table["error_types"] = error_types(shown)
    return table


def page_text(page: str, languages: list[str]) -> str:
    """The tables a page needs, as JSON to put inside a `<script type="application/json">`
    (a data block: never run, so the Content-Security-Policy lets it be). `<` is escaped,
    so no string can close the block."""
    shown = sorted({page_language(language) for language in languages})
    payload = {"fallback": FALLBACK, "text": {lang: words(page, lang) for lang in shown}}
    return json.dumps(payload, ensure_ascii=False).replace("<", "\\u003c")
