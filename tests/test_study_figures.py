"""The study figures stay readable on small data (the README's demo: 10 items, a genre
with one instruction): few values are drawn as points, never as degenerate boxes, and
every figure names the score it shows and its n. Built from small frames, offline, on
the Agg canvas (no inspect run)."""

import warnings
from pathlib import Path

import matplotlib
import numpy as np
import pandas as pd
import pytest
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from howtobench.studies import judges, lengths, report
from howtobench.studies.logs import Samples
from howtobench.studies.plots import FEW, JITTER, cjk_fallback, heatmap, strips

matplotlib.use("Agg")

CONTENT = {"opening_ending": 0.25, "rhetoric": 0.25, "logic": 0.3, "emotion": 0.2}
FORMAT = {"plots": 0.4, "paragraphing": 0.3, "formatting": 0.3}


def samples(genres: dict[str, int], writers: tuple[str, ...] = ("w-a", "w-b")) -> Samples:
    """Guide samples as `load_samples` gives them: per genre that many instructions, each
    written by every writer and judged once with its own negotiated weights."""
    rows = []
    for genre, instructions in genres.items():
        for k in range(instructions):
            shift = 0.01 * k
            weights = {**CONTENT, "logic": 0.3 + shift, "emotion": 0.2 - shift, **FORMAT}
            for w, writer in enumerate(writers):
                rows.append(
                    {
                        "log": f"{writer}.eval",
                        "run": f"{writer}.eval",
                        "task": "guide",
                        "model": writer,
                        "grader": "mockllm/judge",
                        "id": f"{genre}-{k}",
                        "epoch": 1,
                        "genre": genre,
                        "input_length": 100 + 10 * k,
                        "output_length": 200 + 30 * k + 7 * w,
                        "writing": f"{genre}-{k}-{writer}",
                        "tow.overall": 4 + 0.3 * k + w,
                        "tow.content": 3 + 0.2 * k + w,
                        "weights": weights,
                        "by_judge": None,
                        "clipped": None,
                        "weights_fingerprint": None,
                        "unscored": [],
                    }
                )
    return Samples(pd.DataFrame(rows), ("tow.overall", "tow.content"))


def boxes(axes: Axes) -> int:
    """Box plots drawn on the axes: a box without fliers is 6 lines (2 whiskers, 2 caps,
    the box, the median)."""
    assert len(axes.lines) % 6 == 0
    return len(axes.lines) // 6


def row_points(axes: Axes, row: int) -> list[float]:
    """The x of the points drawn in a row (y within the jitter of it), sorted."""
    offsets = np.concatenate([np.ma.getdata(c.get_offsets()) for c in axes.collections])
    return sorted(offsets[np.abs(offsets[:, 1] - row) <= JITTER][:, 0])


def texts(figure: Figure) -> str:
    """Every text of the figure (titles, labels, tick labels, legends, annotations)."""
    return "\n".join(t.get_text() for t in figure.findobj(matplotlib.text.Text))


def test_one_instruction_per_genre_is_drawn_as_points() -> None:
    figures = report(samples({"poem": 1, "prose": 1})).figures
    assert set(figures) == {"weights_poem", "weights_prose"}
    axes = figures["weights_poem"].axes[0]
    assert boxes(axes) == 0
    leaves = [t.get_text() for t in axes.get_yticklabels()]
    assert leaves == [*CONTENT, *FORMAT]
    for row, leaf in enumerate(leaves, start=1):
        assert row_points(axes, row) == pytest.approx([{**CONTENT, **FORMAT}[leaf]])
    assert [t.get_text() for t in axes.texts] == ["n=1"] * len(leaves)
    assert axes.get_ylim()[0] > axes.get_ylim()[1]  # the first leaf on top


def test_enough_instructions_get_a_box_behind_their_points() -> None:
    figures = report(samples({"poem": 2, "report": FEW})).figures
    few, many = figures["weights_poem"].axes[0], figures["weights_report"].axes[0]
    assert boxes(few) == 0 and boxes(many) == len(CONTENT) + len(FORMAT)
    logic = [t.get_text() for t in many.get_yticklabels()].index("logic") + 1
    assert row_points(many, logic) == pytest.approx([0.3 + 0.01 * k for k in range(FEW)])
    assert {t.get_text() for t in many.texts} == {f"n={FEW}"}
    assert f"box: quartiles, whiskers to 1.5 IQR, where n ≥ {FEW}" in many.get_xlabel()
    assert "box" not in few.get_xlabel()


def test_a_box_only_for_the_leaves_with_enough_values() -> None:
    weights = pd.DataFrame({"logic": np.linspace(0.1, 0.5, 6), "plots": [0.3] + [np.nan] * 5})
    figure = strips(weights, "t", "weight", "one instruction", {"logic": "tow.content leaves"})
    axes = figure.axes[0]
    assert boxes(axes) == 1
    assert [t.get_text() for t in axes.texts] == ["n=6", "n=1"]
    assert row_points(axes, 2) == pytest.approx([0.3])
    assert len(row_points(axes, 1)) == 6
    assert [c.get_facecolor()[0][:3] for c in axes.collections][1] == pytest.approx(
        matplotlib.colors.to_rgb("gray")  # a leaf of no node named: no node's colour
    )


@pytest.mark.slow
def test_the_weight_figures_name_the_score_and_what_a_point_is() -> None:
    figure = report(samples({"argumentative": 1, "fiction": 3})).figures["weights_fiction"]
    axes = figure.axes[0]
    assert axes.get_title() == "fiction: ToW negotiated leaf weights, 3 instructions"
    assert "point: one instruction (mean over writers and epochs)" in axes.get_xlabel()
    [legend] = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "tow.content leaves",
        "tow.format leaves",
    ]
    one = report(samples({"poem": 1})).figures["weights_poem"].axes[0]
    assert one.get_title().endswith("1 instruction")


def test_lengths_panels_name_their_score_and_fit() -> None:
    result = lengths(samples({"poem": 1, "prose": 1}))
    figure = result.figures["guide"]
    panels = [a for a in figure.axes if a.get_title()]
    assert [a.get_ylabel() for a in panels][-2:] == ["tow.overall", "tow.content"]
    assert "one point per writing (4 writings)" in figure.get_suptitle()
    table = result.tables["correlations"]
    for axes, row in zip(panels, table.itertuples(), strict=True):
        assert f"n = {row.n}" in axes.get_title()
        if np.isnan(row.slope):  # the table has no fit: neither has the figure
            assert not axes.lines
        else:
            assert f"r = {row.pearson:.2f}" in axes.get_title() and len(axes.lines) == 1
    [legend] = figure.legends
    assert [t.get_text() for t in legend.get_texts()] == ["w-a (2)", "w-b (2)"]


def test_lengths_colours_a_writer_alike_in_every_panel() -> None:
    data = samples({"poem": 4})
    data.frame.loc[data.frame["model"] == "w-a", "tow.content"] = np.nan
    figure = lengths(data, scores=["tow.overall", "tow.content"]).figures["guide"]
    by_label = {a.get_ylabel(): a for a in figure.axes}
    overall = [c.get_facecolor()[0][:3] for c in by_label["tow.overall"].collections]
    content = [c.get_facecolor()[0][:3] for c in by_label["tow.content"].collections]
    assert len(overall) == 2 and content == [pytest.approx(overall[1])]  # w-b's colour


def test_heatmap_names_the_score_and_shows_n_per_cell() -> None:
    data = samples({"poem": 2, "prose": 2})
    panel = data.frame.assign(
        by_judge=[{"j-1": s, "j-2": s * s} for s in data.frame["tow.overall"]]
    )
    figure = judges(Samples(panel, data.metrics)).figures["heatmap"]
    axes = figure.axes[0]
    assert "tow.overall" in axes.get_title()
    assert {t.get_text().split("\n")[-1] for t in axes.texts} == {"n=8"}
    matrix = pd.DataFrame([[1.0, np.nan], [np.nan, 1.0]], index=["a", "b"], columns=["a", "b"])
    counts = pd.DataFrame([[5, 2], [2, 5]], index=["a", "b"], columns=["a", "b"])
    cells = [t.get_text() for t in heatmap(matrix, "t", counts).axes[0].texts]
    assert cells == ["1.00\nn=5", "n=2", "n=2", "1.00\nn=5"]  # too few to correlate: n only


def test_the_cjk_fallback_font() -> None:
    assert cjk_fallback(["DejaVu Sans", "STIXGeneral"]) == []
    assert cjk_fallback(["Noto Serif CJK SC", "Noto Sans CJK JP", "Noto Sans CJK SC"]) == [
        "Noto Sans CJK SC"
    ]


def test_cjk_genre_names_render_when_a_cjk_font_is_installed(tmp_path: Path) -> None:
    """Without a CJK font the figure still draws (as boxes, which matplotlib warns about);
    with one, as fonts-noto-cjk gives, every glyph is found."""
    figure = report(samples({"议论文": 1})).figures["weights_议论文"]
    assert "议论文" in texts(figure)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        figure.savefig(tmp_path / "weights.png")
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert (tmp_path / "weights.png").stat().st_size > 0
    if not any("CJK" in Path(path).name for path in font_manager.findSystemFonts()):
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    assert missing == []
