"""The `formatting` leaf: a rule on the writing's headings and lists, no LLM.

Lines are read as headings in the spirit of the paper's appendix M.8 parser (markdown
`#`, Chinese section numbers `一、`, sub-sections `（一）`, ordered `1.` / `（1）`
items and unordered `-` bullets), then the structure is checked:

- 0: the hierarchy is broken: a markdown level jump (`###` right under `#`) or a
  numbering break (`一、` then `三、`, `1.` then `3.`, a repeated number);
- 5: the structure is inconsistent: sub-section numbers `（一）` used before any section
  `一、`, two heading systems for sections (markdown headings beside `一、` headings), or a
  text that is mostly bullets (at least 4 bullet lines and at least half of all lines);
- 10: a consistent hierarchy, or plain prose that needs none.

Whether a genre wants headings at all is left to the LLM leaves (`plots`,
`paragraphing`) and to the negotiated weight of this leaf.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_CN = "零〇一二两三四五六七八九十"

_MARKDOWN = re.compile(r"^(#{1,6})\s*(.*)$")
_NUMBERED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("cn_section", re.compile(rf"^([{_CN}]{{1,3}})\s*[、.．]\s*(.*)$")),
    ("cn_subsection", re.compile(rf"^[（(]([{_CN}]{{1,3}})[）)]\s*(.*)$")),
    ("ordered", re.compile(r"^(\d{1,2})\s*[.．、](?!\d)\s*(.*)$")),
    ("ordered_paren", re.compile(r"^[（(](\d{1,2})[）)]\s*(.*)$")),
)
_BULLET = re.compile(r"^[-*•·]\s+(.*)$")

# Section systems and their depth; ordered items are lists, not sections.
_SECTION_DEPTH = {"cn_section": 1, "cn_subsection": 2}


def chinese_number(text: str) -> int | None:
    """Value of a Chinese numeral up to 99 (一, 十, 十二, 二十, 二十三); None if malformed."""
    if "十" not in text:
        return _CN_DIGITS.get(text) if len(text) == 1 else None
    tens, _, units = text.partition("十")
    if len(tens) > 1 or len(units) > 1 or "十" in units:
        return None
    high = _CN_DIGITS.get(tens, None) if tens else 1
    low = _CN_DIGITS.get(units, None) if units else 0
    if high is None or low is None:
        return None
    return high * 10 + low


@dataclass(frozen=True)
class Marker:
    """A structural line: its style, number (if numbered), markdown depth and title."""

    line: int
    style: str
    number: int | None
    hashes: int
    title: str


def _numbered(text: str) -> tuple[str, int | None, str] | None:
    for style, pattern in _NUMBERED:
        match = pattern.match(text)
        if match:
            raw, title = match.groups()
            number = int(raw) if raw.isdigit() else chinese_number(raw)
            if number is not None:
                return style, number, title
    return None


def parse_markers(text: str) -> list[Marker]:
    """Every heading and list line, in order. Bold wrappers (`**一、概况**`) are seen through."""
    markers = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("**"):
            line = line.strip("*").strip()
        if not line:
            continue
        hashes = 0
        heading = _MARKDOWN.match(line)
        if heading:
            hashes, line = len(heading.group(1)), heading.group(2).strip().strip("*").strip()
        found = _numbered(line)
        if found:
            style, value, title = found
            markers.append(Marker(number, style, value, hashes, title))
        elif hashes:
            markers.append(Marker(number, "markdown", None, hashes, line))
        else:
            bullet = _BULLET.match(line)
            if bullet:
                markers.append(Marker(number, "bullet", None, 0, bullet.group(1)))
    return markers


@dataclass(frozen=True)
class FormattingVerdict:
    score: int
    problems: tuple[str, ...]
    markers: int

    @property
    def reason(self) -> str:
        if self.problems:
            return "; ".join(self.problems)
        if self.markers:
            return f"{self.markers} heading/list lines in a consistent hierarchy"
        return "plain prose without headings or lists"


def _level_jumps(markers: list[Marker]) -> list[str]:
    problems = []
    headings = [m for m in markers if m.hashes]
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


def _numbering_breaks(markers: list[Marker]) -> list[str]:
    """Each number must be 1 (a restart) or the previous number of its style plus one."""
    problems = []
    last: dict[str, int] = {}
    for m in markers:
        if m.number is None:
            continue
        expected = last.get(m.style, 0) + 1
        if m.number not in (1, expected):
            problems.append(f"line {m.line}: {m.style} number {m.number} after {expected - 1}")
        last[m.style] = m.number
        if m.style in _SECTION_DEPTH:  # a new section restarts the numbering below it
            for style in list(last):
                if _SECTION_DEPTH.get(style, 9) > _SECTION_DEPTH[m.style]:
                    del last[style]
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
    lines = sum(1 for line in text.splitlines() if line.strip())
    broken = _level_jumps(markers) + _numbering_breaks(markers)
    if broken:
        return FormattingVerdict(0, tuple(broken), len(markers))
    inconsistent = _inconsistencies(markers, lines)
    if inconsistent:
        return FormattingVerdict(5, tuple(inconsistent), len(markers))
    return FormattingVerdict(10, (), len(markers))
