"""The `formatting` leaf: a rule on the writing's headings and lists, no LLM.

Lines are read as headings in the spirit of the paper's appendix M.8 parser, then the
structure is scored 0 (a broken hierarchy), 5 (an inconsistent one) or 10. The rule, why
numbering is checked per list as a reader sees it, and its figures on the published
generations are in docs/tree-of-writing.md ("Formatting rule").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["FormattingVerdict", "Marker", "chinese_number", "formatting_verdict", "parse_markers"]

_CN_DIGITS = {digit: value for value, digit in enumerate("零一二三四五六七八九")}
_CN_DIGITS.update({"〇": 0, "两": 2})  # the other ways to write 0 and 2
_CN = "零〇一二两三四五六七八九十"

_MARKDOWN = re.compile(r"^(#{1,6})\s*(.*)$")
_NUMBERED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cn_section", re.compile(rf"^([{_CN}]{{1,3}})\s*[、.．]\s*(.*)$")),
    ("cn_subsection", re.compile(rf"^[（(]([{_CN}]{{1,3}})[）)]\s*(.*)$")),
    ("ordered", re.compile(r"^(\d{1,2})\s*[.．、](?!\d)\s*(.*)$")),
    ("ordered_paren", re.compile(r"^[（(](\d{1,2})[）)]\s*(.*)$")),
)
_BULLET = re.compile(r"^[-*•·]\s+(.*)$")
# A label line carrying the first item of its list: `附件：1. 报名表`, `须提交：（1）申请书`.
_LABELLED = re.compile(r"^[^：:。！？；]{1,20}[：:]\s*([（(]?\d.*)$")
_LIST_STYLES = ("ordered", "ordered_paren")

# Section systems and their depth; ordered items are lists, not sections.
_SECTION_DEPTH = {"cn_section": 1, "cn_subsection": 2}


def chinese_number(text: str) -> int | None:
    """Value of a Chinese numeral up to 99 (一, 十, 十二, 二十, 二十三); None if malformed."""
    if "十" not in text:
        return _CN_DIGITS.get(text) if len(text) == 1 else None
    tens, _, units = text.partition("十")
    if len(tens) > 1 or len(units) > 1 or "十" in units:
        return None
    high = _CN_DIGITS.get(tens) if tens else 1
    low = _CN_DIGITS.get(units) if units else 0
    if high is None or low is None:
        return None
    return high * 10 + low


@dataclass(frozen=True)
class Marker:
    """A structural line: its style, number (if numbered), markdown depth and title.

    `indent` (leading columns) tells a nested list from its parent; `bold` marks a line
    set wholly in bold (`**1. 服务介绍**`), which is a heading rather than a list item.
    """

    line: int
    style: str
    number: int | None
    hashes: int
    title: str
    indent: int = 0
    bold: bool = False


def _numbered(text: str) -> tuple[str, int | None, str] | None:
    for style, pattern in _NUMBERED:
        match = pattern.match(text)
        if match:
            raw, title = match.groups()
            number = int(raw) if raw.isdigit() else chinese_number(raw)
            if number is not None:
                return style, number, title
    return None


def _indent(raw: str) -> int:
    """Columns of leading whitespace (a tab counts 4, an ideographic space 2)."""
    prefix = raw[: len(raw) - len(raw.lstrip())]
    return len(prefix.expandtabs(4)) + prefix.count("\u3000")


def _labelled_item(line: str) -> tuple[str, int | None, str] | None:
    """The list item written on a label's line (`附件：1. 报名表`): it starts a list."""
    match = _LABELLED.match(line)
    found = _numbered(match.group(1)) if match else None
    return found if found and found[0] in _LIST_STYLES else None


def parse_markers(text: str) -> list[Marker]:
    """Every heading and list line, in order. Bold wrappers (`**一、概况**`) are seen through.

    Lines keep their indentation, so that a sub-list (`   1.` under `2.`) is told from
    its parent list.
    """
    markers = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        bold = len(line) > 4 and line.startswith("**") and line.endswith("**")
        if line.startswith("**"):
            line = line.strip("*").strip()
        if not line:
            continue
        indent = _indent(raw)
        hashes = 0
        heading = _MARKDOWN.match(line)
        if heading:
            hashes, line = len(heading.group(1)), heading.group(2).strip().strip("*").strip()
        found = _numbered(line) or (None if hashes else _labelled_item(line))
        if found:
            style, value, title = found
            markers.append(Marker(number, style, value, hashes, title, indent, bold))
        elif hashes:
            markers.append(Marker(number, "markdown", None, hashes, line, indent, bold))
        else:
            bullet = _BULLET.match(line)
            if bullet:
                markers.append(Marker(number, "bullet", None, 0, bullet.group(1), indent))
    return markers


@dataclass(frozen=True)
class FormattingVerdict:
    """A formatting rule's score, the problems that lowered it, and how many heading or
    list lines it read; `note` says why a clean text scored as it did, when the rule has
    more than one reason for that (`tree/formatting_paper.py`)."""

    score: int
    problems: tuple[str, ...]
    markers: int
    note: str = ""

    @property
    def reason(self) -> str:
        if self.problems:
            return "; ".join(self.problems)
        if self.note:
            return self.note
        if self.markers:
            return f"{self.markers} heading/list lines in a consistent hierarchy"
        return "plain prose without headings or lists"


def _level_jumps(markers: list[Marker], first_line: int) -> list[str]:
    """Markdown levels must go down one at a time (`#` then `##`, never `#` then `###`).

    A title on the first line set in a smaller heading than the sections below it
    (`### 关于……的通知` over `## 一、`) is a title, not a level, and is left out.
    """
    problems = []
    headings = [m for m in markers if m.hashes]
    if (
        len(headings) > 1
        and headings[0].line == first_line
        and headings[0].hashes > min(m.hashes for m in headings[1:])
    ):
        headings = headings[1:]
    base = min((m.hashes for m in headings), default=1)
    previous = 0
    for m in headings:
        level = m.hashes - base + 1
        if level > previous + 1:
            problems.append(
                f"line {m.line}: markdown heading jumps from level {previous} to {level}"
            )
        previous = level
    return problems


_Sequence = tuple[str, str, int]


def _sequence(m: Marker) -> _Sequence:
    """Which numbering a marker counts in: (style, decoration, indent).

    Sections (`一、`, `（一）`) count in one sequence per style whatever their decoration.
    A numbered heading (`## 1.` or a wholly bold `**1. …**`) counts apart from the plain
    list items under it; plain list items count per indentation, so a nested list has its
    own numbers.
    """
    if m.style in _SECTION_DEPTH:
        return (m.style, "", 0)
    if m.hashes:
        return (m.style, "#" * m.hashes, 0)
    if m.bold:
        return (m.style, "**", m.indent)
    return (m.style, "", m.indent)


def _kin(a: _Sequence, b: _Sequence) -> bool:
    """Same style and decoration; a wholly bold item may also be an emphasised list item."""
    return a[0] == b[0] and (a[1] == b[1] or {a[1], b[1]} == {"", "**"})


def _numbering_breaks(markers: list[Marker]) -> list[str]:
    """Each number must start a list (1) or follow the last number of an open list.

    A `1.` opens a list at its indentation (closing any list nested deeper). Any other
    number must be one more than the last number of an open list of its sequence at its
    own indentation or, failing that, the nearest shallower one (items aligned under a
    label: `附件：1. …` then `      2. …`); a wholly bold item may also continue a plain
    list (`**3. …**` stressed in a list). Continuing a list closes the lists nested in
    it, so a nested list under the next item starts again at 1, and a top-level item
    cannot continue a nested list (`1.`, nested `1. 2. 3.`, then `4.` is a gap).
    Numbers are not reset by headings: numbering that runs on across sections (`一、` 1. 2.
    `二、` 3. 4.) is one consistent sequence.
    """
    problems = []
    last: dict[_Sequence, int] = {}
    for m in markers:
        if m.number is None:
            continue
        key = _sequence(m)
        ranked = sorted(
            (k for k in last if _kin(k, key) and k[2] <= key[2]),
            key=lambda k: (k[1] != key[1], key[2] - k[2]),
        )
        fits = [k for k in ranked if last[k] == m.number - 1]
        if m.number == 1:
            target = key
        elif fits:
            target = fits[0]
        else:
            before = last[ranked[0]] if ranked else 0
            problems.append(f"line {m.line}: {m.style} number {m.number} after {before}")
            target = key
        for k in [k for k in last if _kin(k, key) and k[2] > target[2]]:
            del last[k]
        last[target] = m.number
    return problems


def _inconsistencies(markers: list[Marker], lines: int) -> list[str]:
    problems = []
    depth = 0
    for m in markers:
        if m.style in _SECTION_DEPTH:
            if _SECTION_DEPTH[m.style] > depth + 1:
                problems.append(
                    f"line {m.line}: a （一）-style sub-section before any 一、 section"
                )
                break
            depth = _SECTION_DEPTH[m.style]
    first_line = markers[0].line if markers else 0
    plain_markdown = [m for m in markers if m.style == "markdown" and m.line != first_line]
    sections = [m for m in markers if m.style == "cn_section" and not m.hashes]
    if plain_markdown and sections:
        problems.append("two heading systems for sections: markdown headings beside 一、 headings")
    bullets = sum(1 for m in markers if m.style == "bullet")
    if bullets >= 4 and bullets * 2 >= lines:
        problems.append(f"{bullets} of {lines} lines are bullets: notes rather than text")
    return problems


def formatting_verdict(text: str) -> FormattingVerdict:
    """The 0/5/10 verdict of the formatting rule, with the problems that decided it."""
    markers = parse_markers(text)
    content = [n for n, line in enumerate(text.splitlines(), start=1) if line.strip()]
    broken = _level_jumps(markers, content[0] if content else 0)
    broken += _numbering_breaks(markers)
    if broken:
        return FormattingVerdict(0, tuple(broken), len(markers))
    inconsistent = _inconsistencies(markers, len(content))
    if inconsistent:
        return FormattingVerdict(5, tuple(inconsistent), len(markers))
    return FormattingVerdict(10, (), len(markers))
