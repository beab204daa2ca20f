"""The artifacts of the paper's writer prompts in a writing: found, counted and stripped
without losing the writing.

A completion is judged on its first answer, as appendix J's raters judged it; a guide or
open writing loses its frame and generation tags only, never text. The rules, tag by tag,
are in docs/data.md ("The writing the judges read"). One scan of the tags, each match
bounded, so the work is linear in the writing's length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

__all__ = ["HEAVY_STRIP", "Stripped", "strip"]

# A writing that loses more than this share to the artifacts is named in its state
# (`heavy_strip`); why three quarters: docs/data.md ("The writing the judges read").
HEAVY_STRIP: Final = 0.75

# One tag: an explanation's start or end, a generation tag (start or end, with the
# writers' slips after it: `<补全结束谢>`, `<我的补全结束="">`), or a numbered slot
# (`<填充1>`, `</填充1>`).
_TAG = re.compile(
    r"<\s{0,3}/?\s{0,3}(?:"
    r"(?P<explain>解[释启决])(?P<explain_edge>开始|结束)\s{0,3}>"
    r"|(?:我的)?(?:生成|补全|写作)(?P<fill_edge>开始|结束)[^<>\n]{0,6}>"
    r"|填充\d{1,2}\s{0,3}>)"
)
# A tag cut by the end of the writing (`<我的写作`, `<我的补全结束`, `<我的`).
_CUT_TAG = re.compile(r"<\s{0,3}(?:我的|/?(?:生成|补全|写作|解[释启决]))[^<>\n]{0,8}\Z")
_CUT_TAIL = 16  # characters of the end searched for a cut tag

# An explanation that speaks of the text: the words a note about a passage uses.
_NOTE = re.compile(
    "这段|此段|该段|本段|这一段|这部分|此部分|这里|此处|这句|此句|这一行|这首诗|这个句子"
    "|空白处|填充|填入|填写|补充|补写|补全|生成|上文|前文|后文|下文|原文|上下文|全文|文中"
    "|文章|作者|段落|呼应|衔接|承接|铺垫|过渡|选择|设定|引用|化用|选用|说明|解释|符合|本题|诗人"
)
# Writing that leads into what follows ends in a colon, a comma or a question mark.
_LEAD_IN = frozenset("：:，,？?")
_COLONS = (":", "：")
_MARKER = re.compile(r"\[\s*fill[ _]in[ _]the[ _]blanks?(?:_\d+)?\s*\]", re.IGNORECASE)
_REPEATED = 20  # opening characters of the answer a repeating block starts with


@dataclass
class Stripped:
    """A writing with its artifacts stripped, and what was found (counts by kind)."""

    writing: str
    found: dict[str, int] = field(default_factory=dict)

    def count(self, kind: str, n: int = 1) -> None:
        self.found[kind] = self.found.get(kind, 0) + n


def continues(block: str, opening: str, last: str) -> bool:
    """Whether an explanation block continues the writing rather than explain it, given
    the answer's opening characters and its last character (docs/data.md's rule): it
    names no part of the text (`_NOTE`), or announces a list the writing leads into; a
    block that opens by repeating the answer is a second answer."""
    body = block.strip()
    if not body or (len(opening) == _REPEATED and body.startswith(opening)):
        return False
    if not _NOTE.search(body):
        return True
    first_line = body.split("\n", 1)[0].rstrip()
    return last in _LEAD_IN and first_line.endswith(_COLONS)


def strip(text: str, task: str) -> Stripped:
    """The writing without the artifacts of the paper's prompt for `task`, and what
    was found; the rules are the module's."""
    result = Stripped(text)
    body = text.rstrip()
    cut = _CUT_TAG.search(body, max(0, len(body) - _CUT_TAIL))
    if cut and (task == "completion" or "解" not in cut.group()):
        result.count("stray_tags")
        text = body[: cut.start()]
    if task == "completion":
        _Answer(result).read(text)
        if result.writing.strip() and not _MARKER.sub("", result.writing).strip():
            result.count("marker_only")
            result.writing = ""
    else:
        pieces, at = [], 0
        for tag in _TAG.finditer(text):
            if tag.group("fill_edge"):
                result.count("generation_tags")
                pieces.append(text[at : tag.start()])
                at = tag.end()
        pieces.append(text[at:])
        result.writing = "".join(pieces)
    result.writing = result.writing.strip()
    return result


class _Answer:
    """A completion's first answer, read tag by tag (the module's rules); the answer's
    opening and last character are kept as it grows, so that no step reads it whole."""

    def __init__(self, result: Stripped) -> None:
        self.result = result
        self.pieces: list[str] = []
        self.opening = ""  # the answer's first `_REPEATED` characters, blanks stripped
        self.last = ""  # its last character that is not blank
        self.block: list[str] | None = None  # the open explanation's pieces
        self.done = False  # the first answer is closed: what follows is not judged

    def add(self, piece: str) -> None:
        if not piece:
            return
        if self.block is not None:
            self.block.append(piece)
        elif not self.done:
            self.pieces.append(piece)
            if len(self.opening) < _REPEATED:
                self.opening = (self.opening + piece).lstrip()[:_REPEATED]
            if piece.strip():
                self.last = piece.rstrip()[-1]
        elif piece.strip():
            self.result.count("later_answer_chars", len(piece))

    def close_block(self) -> None:
        body = "".join(self.block or [])
        self.block = None
        if not body.strip():
            return
        if not self.done and continues(body, self.opening, self.last):
            self.result.count("explanations_kept")
            self.add(body)
        else:
            self.result.count("explanation_blocks")
            self.result.count("explanation_chars", len(body))

    def tag(self, tag: re.Match[str]) -> None:
        if tag.group("explain"):
            if tag.group("explain_edge") == "开始" and self.block is None:
                self.block = []
            elif tag.group("explain_edge") == "结束" and self.block is not None:
                self.close_block()
            else:  # a start inside a block, or an end with none open: it opens one
                self.result.count("stray_tags")
                if self.block is None:
                    self.block = []
            return
        self.result.count("generation_tags")
        edge = tag.group("fill_edge")
        if self.block is not None or not edge:
            return  # a tag inside an explanation, or a numbered slot's: the tag goes
        if self.done or self.last:
            if edge == "开始":
                self.result.count("later_answers")
            self.done = True  # an end closes the first answer; a start opens a second

    def read(self, text: str) -> None:
        at = 0
        for tag in _TAG.finditer(text):
            self.add(text[at : tag.start()])
            at = tag.end()
            self.tag(tag)
        self.add(text[at:])
        if self.block is not None:
            self.close_block()
        self.result.writing = "".join(self.pieces)
