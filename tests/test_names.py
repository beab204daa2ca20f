"""Writer names on the report page and in the terminal tables (issue 28): hidden and
direction-changing characters shown, long names cut with the whole on hover, so that
no two writers can look alike."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pandas as pd
import pytest

from howtobench.cli import main
from howtobench.studies.tables import render
from howtobench.vocabulary.names import NAME_LIMIT, html_name, shown_name, width
from support.logs import copied_as

ZERO_WIDTH = "w-a\u200b"  # looks like w-a
OVERRIDE = "w-\u202ex-ecalper"  # a right-to-left override: shows as w-replace-x
LONG = "w-" + "长" * 2998  # 3,000 characters


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("gpt-4o", "gpt-4o"),
        ("通义千问 Qwen", "通义千问 Qwen"),
        (ZERO_WIDTH, "w-a\\u200b"),
        (OVERRIDE, "w-\\u202ex-ecalper"),
        ("a\u2066b\u2069\ufeff", "a\\u2066b\\u2069\\ufeff"),
        ("a\u00a0b\tc\nd", "a\\u00a0b\\u0009c\\u000ad"),  # a no-break space is no space
        ("tag\U000e0041", "tag\\U000e0041"),
        ("\u3164", "\\u3164"),  # the Hangul filler draws nothing
        ("a\\u200b", "a\\\\u200b"),  # typed as text, it still differs from the character
    ],
)
def test_hidden_characters_are_shown_escaped(name: str, shown: str) -> None:
    assert shown_name(name) == shown


def test_a_long_name_is_cut_with_an_ellipsis_and_its_digest() -> None:
    cut = shown_name(LONG)
    assert width(cut) == NAME_LIMIT and cut.startswith("w-长长") and "…#" in cut
    assert len(shown_name("w-" + "x" * 2998)) == NAME_LIMIT  # one column a letter
    assert shown_name(LONG + "x") != cut  # names alike up to the cut still differ
    assert shown_name(LONG, None) == LONG
    html = html_name(LONG)
    assert html.startswith(f'<span class=name title="{LONG}">') and cut in html
    assert html_name("w-<b>") == "w-&lt;b&gt;"  # a plain name: escaped, no span


def test_the_terminal_tables_show_names_as_names() -> None:
    board = pd.DataFrame(
        {"w-a": [7.0], ZERO_WIDTH: [6.0], LONG: [5.0]}, index=pd.Index(["all"], name="row")
    )
    ranking = pd.DataFrame({"writer": ["w-a", ZERO_WIDTH, OVERRIDE, LONG], "mean": [1.0] * 4})
    for table in (board, ranking):
        text = render(table, "simple")
        assert "\u200b" not in text and "\u202e" not in text and "w-a\\u200b" in text
        assert max(len(line) for line in text.splitlines()) < 120, text
    assert "w-\\u202ex-ecalper" in render(ranking, "simple")


@pytest.mark.slow
def test_the_report_page_and_board_tell_every_writer_apart(
    writers_logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Copies of w-a's logs under three names: one w-a with a zero-width space, one with
    a direction override, one of 3,000 characters."""
    for k, name in enumerate((ZERO_WIDTH, OVERRIDE, LONG)):
        copied_as(writers_logs, "w-a", name, tmp_path / "logs", f"copy{k}")
    out = tmp_path / "out"
    args = ["report", str(writers_logs), str(tmp_path / "logs"), "--bootstrap", "50"]
    assert main([*args, "--out", str(out)]) == 0
    terminal = capsys.readouterr().out
    html = (out / "report.html").read_text(encoding="utf-8")

    board = html.split('<h2 id="board">')[1].split("</table>")[0]
    cells = [unescape(re.sub(r"<[^>]+>", "", c)) for c in re.findall(r"<td>(.*?)</td>", board)]
    writers = [c for c in cells if c.startswith("w-")]
    assert len(writers) == len(set(writers)) == 7  # w-a and its copy differ
    assert "w-a" in writers and "w-a\\u200b" in writers and "w-\\u202ex-ecalper" in writers
    assert max(width(c) for c in cells) <= NAME_LIMIT  # the page is no wider for LONG
    assert f'title="{LONG}"' in board  # the whole name on hover
    assert f"{ZERO_WIDTH}<" not in html and f"{OVERRIDE}<" not in html  # never raw in a cell

    ranking = terminal.split("report: ranking\n\n")[1].split("\n\n")[0]
    assert "\u200b" not in ranking and "\u202e" not in ranking
    assert "w-a\\u200b" in ranking and shown_name(LONG) in ranking
    assert max(len(line) for line in ranking.splitlines()) <= 100
