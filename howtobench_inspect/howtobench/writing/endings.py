"""Whether a stored writing was cut, told from its text as a reader tells it.

A stored writing has no stop reason, so its last line is read against the lines before it;
the rule and its precision and recall on 403 stored endings are in docs/data.md ("Ends
mid-sentence"). Every pattern runs in time linear in the text (bounded repeats, none nested).
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["ends_mid_sentence"]

_SENTENCE_END = re.compile(r"[。！？!?…]")
# a sentence end inside a line; "3. " numbers a list item and ends nothing
_INNER_END = re.compile(r"[。！？!?…]|(?<![0-9０-９])[a-zA-Z\u4e00-\u9fff]\.\s")
_OPENERS: Final = "“‘「『《〈（([【"  # a line ending in one stopped inside it
_CLAUSE: Final = "，、,"
# what a punctuated line ends in (a sibling's full stop, semicolon, colon, closing quote)
_PUNCTUATED: Final = "。！？!?….；;：:”’」』）)]】|\"'"
_BLANK_MARKER = re.compile(r"\[fill[ _]in[ _]the[ _]blank\]", re.IGNORECASE)
# a line of markup alone (a rule, stray emphasis) or a stray tag: not the text's last line
_MARKUP_ONLY = re.compile(r"^(?:[*\-_=~`>\\\s]+|</?[^<>]*>?)$")
_LEAD = re.compile(r"^[#>\s]*")
_ITEM = re.compile(
    r"^(?:[-*+•]\s+|\d+[.、)）]\s*|[（(][一二三四五六七八九十\d]+[)）]\s*|[一二三四五六七八九十]+、\s*)"
)
_FIRST_ITEM = re.compile(r"^(?:1[.、)）]|[（(][1一][)）]|一、)")
_MD_HEADING = re.compile(r"^#{1,6}")
_BOLD_LINE = re.compile(r"^\*\*[^*]+\*\*[:：]?$")
_NUMERAL: Final = "一二三四五六七八九十百零〇"
_NUMBERED_HEADING = re.compile(
    rf"^(?:[{_NUMERAL}]+[、.．]|[（(][{_NUMERAL}]+[)）]|第[{_NUMERAL}\d]{{1,4}}[章节篇编部卷]|\d+(?:\.\d+){{1,3}}\s)"
)
# sign-offs and the lines of a signature block
_FIELD = re.compile(r"^[^，。,\s\d*#\-][^，。,]{0,11}[：:]\s*[^，。,]{0,24}$")
_SIGNATURE_FIELD = re.compile(
    r"^[^：:]{0,8}(?:人|单位|日期|时间|地址|电话|邮箱|签名|签字|盖章|落款|机关|部门|姓名)[：:]"
)
_DATE = re.compile(
    r"[\dXx×○〇零一二三四五六七八九十_＿*]{2,8}\s*年|年\s*月\s*日$"
    r"|[\dXx×*_〇○零一二三四五六七八九十]{1,3}\s*月\s*[\dXx×*_〇○零一二三四五六七八九十]{1,3}\s*日"
    r"|\d{4}[-./]\d{1,2}"
)
_FILL_IN = re.compile(r"_{2}|＿{2}|年\s{2,}月|月\s{2,}日")
_FILL_IN_END = re.compile(r"(?:[_＿]|\s{2})[^_＿]{0,6}$")  # the blank ends the line
_CLOSING = re.compile(
    r"^(?:此致|敬礼|特此[\u4e00-\u9fff]{2}|此通知|此复|谢谢|祝好|顺颂|即颂|专此|附[:：件]|——|—"
    r"|(?i:sincerely|best regards|kind regards|regards|yours|best wishes|respectfully))"
)
_SIGNED = re.compile(
    r"(?:敬上|谨上|拜上|敬启|谨启|泣叩|叩首|敬挽|顿首|谨呈|敬呈|谨致|敬书|手书"
    r"|孩子|儿子|女儿|妈妈|爸爸|爸妈|父母|母亲|父亲|学生|朋友|家人|老师|同学)$"
)
_ISSUER = re.compile(
    r"(?:局|处|厅|部|委|会|院|校|公司|集团|政府|办公室|党委|党组|支部|中心|所|站|队|组|联|协会"
    r"|单位|街道|社区|镇|乡|县|市|省|医院|馆|社)$"
)
# an issuing body named alone under the text (青禾社区居民委员会, XX县审计局)
_BODY = re.compile(
    r"(?:(?:委员|董事|理事|学生|研究生|联合|工|商|协|学)会|妇联|团委|党委|党组|党支部|政府|办公室|办事处"
    r"|[^一二三四五六七八九十]局|公司|集团|研究所|研究院|学校|学院|大学|中学|小学"
    r"|幼儿园|医院|银行|法院|检察院|图书馆|博物馆|报社|编辑部|领导小组)$"
)
_NOTE = re.compile(r"^(?:[xX×*]{2,}|某某|\[[^\]]*\]|【[^】]*】|〔[^〕]*〕|（[^）]*）|\([^)]*\))$")
_NAME = re.compile(r"^[A-Za-z][\w.\-]{0,19}$")
_COLUMNS = re.compile(r"\s{4,}")
# a line listing short names (元阳、哈尼、...), which no sentence is
_NAME_LIST = re.compile(r"^[^，。,]{1,8}(?:[、；;][^，。,、；;]{1,8}){4,}$")
_HAN = re.compile(r"[\u4e00-\u9fff]")
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]{2,}")
_OTHER_SCRIPT = re.compile(
    r"[\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u097f\u0e00-\u0e7f\u1ea0-\u1eff\uac00-\ud7af]"
)
_NOISE_END = re.compile(r"[\w{}\[\]<>=;:$\\/\"'`~|]$")
_LETTER_END = re.compile(r"\w$")
_LONG_LINE = 40  # longer than any heading, date or signature line
_SHORT_LINE = 30
_NEARBY = 12  # the lines before the last one that are read


def ends_mid_sentence(text: str) -> bool:
    """Whether a writing stops before its end, read from its last line and those before
    (the cases are listed in docs/data.md, "Ends mid-sentence")."""
    lines = [line.strip() for line in _BLANK_MARKER.sub("", text).splitlines()]
    lines = [line for line in lines if line and not _MARKUP_ONLY.match(line)]
    if not lines:
        return False
    last, before = lines[-1], lines[:-1][-_NEARBY:]
    prev = before[-1] if before else None
    body = _ITEM.sub("", last, count=1)
    if body.startswith("**") and last.count("**") % 2:
        return True  # a bold span opened and never closed
    if last.startswith("|") and not last.endswith("|"):
        return True  # a table row cut
    if _MD_HEADING.match(last):
        return not _SENTENCE_END.search(last)  # a trailing heading: its section never comes
    if _signs_off(last, prev):
        return False
    if _BOLD_LINE.match(body) and not _SENTENCE_END.search(body):
        # a bold heading at the end; after another bold line, a poem set in bold
        return not (prev and _BOLD_LINE.match(_ITEM.sub("", prev, count=1)))
    if _noise(last, text):
        return True
    words = _words(last)
    if words[-1] in _OPENERS or words[-1] in _CLAUSE:
        return True
    if not (_LETTER_END.search(words) or words[-1] == "》") or words[-1] == "_":
        return False  # a full stop, a closing quote or bracket, markup
    if _NAME_LIST.match(words):
        return False
    if len(words) > _LONG_LINE:
        return True
    if prev is None:
        return bool(_INNER_END.search(words[:-1]))
    return _short_line_cut(last, words, before, prev)


def _short_line_cut(last: str, words: str, before: list[str], prev: str) -> bool:
    """A short unstopped last line after others: cut when it begins what never comes."""
    kind = _item_kind(last)
    if _FIRST_ITEM.match(_LEAD.sub("", last).replace("**", "")) and not _SENTENCE_END.search(words):
        return True  # a list's first item: the list only begun
    if kind:
        same = [i for i, line in enumerate(before) if _item_kind(line) == kind]
        if same and same[-1] != len(before) - 1 and not _SENTENCE_END.search(words):
            return True  # a numbered heading after the previous section's text
    if _heading(prev) and not (kind and _item_kind(prev) == kind):
        # a heading, then a line: its first words; unless the text's lines under its
        # headings go unstopped (an outline)
        under = [
            before[i + 1]
            for i in range(len(before) - 1)
            if _heading(before[i]) and not _heading(before[i + 1])
        ]
        return not any(_LETTER_END.search(_words(line)) for line in under)
    siblings = [line for line in before if _item_kind(line) == kind and not _heading(line)]
    siblings = [line for line in siblings[-4:] or [prev] if not _signs_off(line, None)]
    stopped = sum(_words(line)[-1] in _PUNCTUATED for line in siblings)
    return stopped * 2 > len(siblings)  # its siblings stop, it does not


def _words(line: str) -> str:
    """A line without its heading marks and bold markers."""
    return _LEAD.sub("", line).replace("**", "").strip() or line


def _item_kind(line: str) -> str:
    """A list item's marker with its number replaced (`N.`, `（N）`, `-`), or ''."""
    found = _ITEM.match(_LEAD.sub("", line).replace("**", ""))
    return re.sub(r"[\d一二三四五六七八九十]+", "N", found.group().strip()) if found else ""


def _heading(line: str) -> bool:
    """A Markdown heading, a bold line or a short numbered one, without a sentence end."""
    if _MD_HEADING.match(line):
        return not _SENTENCE_END.search(line)
    body = _ITEM.sub("", line.strip("# "), count=1)
    if _BOLD_LINE.match(body) and not _SENTENCE_END.search(body):
        return True
    words = _words(line)
    return (
        bool(_NUMBERED_HEADING.match(words))
        and len(words) <= _SHORT_LINE
        and not _SENTENCE_END.search(words)
    )


def _signs_off(line: str, prev: str | None) -> bool:
    """A closing formula, date, signature, issuer, field, note or fill-in line."""
    words = _words(line)
    if _CLOSING.match(words) or _FILL_IN.search(words) and _FILL_IN_END.search(words):
        return True
    columns = _COLUMNS.split(words)
    if len(columns) > 1:  # a signature block in two columns
        return all(_signs_off(column, None) for column in columns)
    if len(words) > _SHORT_LINE or "，" in words or "," in words:
        return False
    if _NOTE.match(words) or _DATE.search(words) or _NAME.match(words):
        return True
    if _FIELD.match(line.replace("**", "")) and (
        not _BOLD_LINE.match(line.strip("# ")) or _SIGNATURE_FIELD.match(words)
    ):
        return True  # a field; in bold, only a signature's (a bold "x：y" is a heading)
    if len(words) <= 12 and ("你的" in words or "您的" in words or _SIGNED.search(words)):
        return True
    if len(words) <= 20 and _BODY.search(words):
        return True
    if prev is None:
        return False
    if _CLOSING.match(_words(prev)) or len(words) <= 12 and _signs_off(prev, None):
        return True  # under a closing formula or another sign-off line: a signature
    issued = len(words) >= 3 and bool(_ISSUER.search(words))  # an issuer under its text
    return issued and (_words(prev)[-1] in "！!" or _signs_off(prev, None))


def _noise(last: str, text: str) -> bool:
    """Token noise ending a Chinese writing: letters of other scripts, or Latin words
    making up much of the last line."""
    head = text.lstrip()[:300]
    if len(_HAN.findall(head)) * 10 < len(head) * 3 or not _NOISE_END.search(last):
        return False
    if _OTHER_SCRIPT.search(last):
        return True
    found = _LATIN_WORD.findall(last)
    return len(found) >= 3 and sum(map(len, found)) * 10 >= 3 * len(last.replace(" ", ""))
