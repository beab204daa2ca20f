"""The `formatting` leaf as the paper's public code scores it (`-T formatting=paper`).

This follows `score_formatting` in the paper repository's
`code/tow/evaluation/format_node.py` step by step, in our own code: the paper's text leaves
the leaf's criteria to Table 10, which is not in it, so the code is the only statement of
the rule there is (docs/tree-of-writing.md, "Formatting rule"). The code also notes list
lines, but the branch that would read them comes after the no-title return and can never
run, so they are not read here.
"""

from __future__ import annotations

import re

from howtobench.tree.headings import FormattingVerdict

__all__ = ["SHORT_TEXT", "paper_formatting_verdict"]

# The paper code's patterns (facts of the rule), applied to a stripped line.
_MARKDOWN_TITLE = re.compile(r"^(#{1,6})\s+.+")
_NUMBERED_TITLE = re.compile(
    r"^[一二三四五六七八九十百]+[、.．]\s*.+"
    r"|^第[一二三四五六七八九十百]+[章节部分]\s*.+"
    r"|^\d+[、.．]\s*.+"
)
# Below this many characters an untitled text is "short" and needs no title.
SHORT_TEXT = 500


def paper_formatting_verdict(text: str) -> FormattingVerdict:
    """The 0/5/10 verdict of the paper code's formatting rule, with why."""
    titles = 0
    levels: list[tuple[int, int]] = []  # (line, depth) of each markdown title
    # Lines are cut at "\n" only, as the paper code does; numbering them in the text as
    # given (not stripped) keeps the line numbers a reader sees and changes no title.
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip()
        heading = _MARKDOWN_TITLE.match(line)
        if heading:
            levels.append((number, len(heading.group(1))))
        if heading or _NUMBERED_TITLE.match(line):
            titles += 1
    if not titles:
        if len(text) < SHORT_TEXT:
            return FormattingVerdict(10, (), 0, note=f"no title, under {SHORT_TEXT} characters")
        return FormattingVerdict(
            5, (f"no title in {len(text):,} characters ({SHORT_TEXT} or more want one)",), 0
        )
    jumps = [
        f"line {line}: markdown title {depth - above} levels below the one before"
        for (_, above), (line, depth) in zip(levels, levels[1:], strict=False)
        if depth - above > 1
    ]
    if jumps:
        return FormattingVerdict(0, (jumps[0],), titles)
    counted = f"{titles} titles" if titles > 1 else "one title"
    return FormattingVerdict(
        10, (), titles, note=f"{counted}, markdown levels deepen one at a time"
    )
