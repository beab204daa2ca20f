"""What a user sees in `inspect view`, in a real browser: the system's headless Chromium
driven by Playwright against inspect's own viewer server on 127.0.0.1, over the session's
shared logs of four stored writers (`replay/<writer>`) on the three tasks, judged by a
scripted judge (`writers_logs`; one of them cuts its writings, one writing is unscored).

Set HOWTOBENCH_SCREENSHOTS to a folder (docs/images) to keep the screenshots there
(`support.browser`).
"""

from __future__ import annotations

import math
import re
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from howtobench.tree.spec import tree_for
from support.browser import BROWSER_MARKS, launch, screenshot, sync_api
from support.logs import TASKS, replayed
from support.logs import WRITERS as NAMES

pytestmark = BROWSER_MARKS
WRITERS = tuple(replayed(*NAMES))
# a number with more than 6 decimals: float noise such as 5.410125000000001
NOISE = re.compile(r"\d\.\d{7,}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _log(logs: Path, task: str, writer: str) -> tuple[Path, EvalLog]:
    """The log of `task` written by `writer`, read whole, and its file."""
    [path] = [
        p
        for p in logs.glob(f"*_{task}_*.eval")
        if read_eval_log(str(p), header_only=True).eval.model == writer
    ]
    return path, read_eval_log(str(path))


@pytest.fixture(scope="module")
def logs(writers_logs: Path) -> Path:
    return writers_logs


@pytest.fixture(scope="module")
def viewer(logs: Path) -> Iterator[str]:
    """`inspect view` serving the folder; its address once it answers."""
    port = _free_port()
    process = subprocess.Popen(
        [
            str(Path(sys.executable).with_name("inspect")),
            "view",
            "start",
            "--log-dir",
            str(logs),
            "--port",
            str(port),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(base, timeout=5):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("inspect view did not start") from None
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


@pytest.fixture(scope="module")
def page(viewer: str) -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        browser = launch(playwright)
        opened = browser.new_page(viewport={"width": 1400, "height": 900})
        yield opened
        browser.close()


def test_the_log_list_names_each_writer_in_its_model_column(
    page: Any, viewer: str, logs: Path, tmp_path: Path
) -> None:
    page.goto(viewer)
    page.get_by_text(WRITERS[1]).first.wait_for()
    rows = [row.inner_text() for row in page.get_by_role("row").all()]
    assert "MODEL" in rows[0]
    expected = [
        (h.eval.task, h.eval.model)
        for h in (read_eval_log(str(p), header_only=True) for p in logs.glob("*.eval"))
    ]
    assert sorted(model for _, model in expected) == sorted(WRITERS * len(TASKS))
    # one row per log, naming its task and its writer
    assert len(rows) - 1 == len(expected)
    for task, model in expected:
        assert sum(task in row and model in row.split() for row in rows[1:]) == 1, (task, model)
    screenshot(page, tmp_path, "viewer-writers.png")


def test_a_samples_scores_show_no_float_noise_and_explain_the_steps(
    page: Any, viewer: str, logs: Path, tmp_path: Path
) -> None:
    path, log = _log(logs, "guide", WRITERS[1])
    sample = next(s for s in log.samples or [] if s.id == "demo_guide_2")
    values = sample.scores["tow"].value
    assert isinstance(values, dict)
    assert all(v == round(v, 6) for v in values.values())

    page.goto(f"{viewer}#/logs/{path.name}")
    page.get_by_text("demo_guide_2").first.wait_for()
    assert not NOISE.search(page.inner_text("body"))  # the sample list
    page.get_by_text("demo_guide_2").first.click()
    page.get_by_role("tab", name="Scoring").click()
    page.get_by_text("mapped 1-3 → 0, 4-7 → 5, 8-10 → 10").first.wait_for()
    shown = page.inner_text("body")
    assert not NOISE.search(shown)
    root = tree_for("guide").root_weights  # 4·content + 3·format + 1·impression in the paper
    formula = " + ".join(f"{weight}·{node}" for node, weight in root.items())
    assert f"overall {values['overall']:.2f} = ({formula}) / {sum(root.values())}" in shown
    assert "mapped 1 → 0, 2 → 5, 3 → 10" in shown  # paragraphing's steps
    screenshot(page, tmp_path, "viewer-sample-scores.png")


def test_the_sample_list_shows_each_writings_state_and_tow_worst_first(
    page: Any, viewer: str, logs: Path, tmp_path: Path
) -> None:
    """The guide log of w-d, whose writings are whole, cut, and whole but unscored (its
    judge gave no usable reply): one row each, the state and ToW's scores as the log has
    them, the lowest overall first, every state in a colour of its own; the genre is a
    filter on the sample metadata."""
    writer = WRITERS[NAMES.index("w-d")]
    path, log = _log(logs, "guide", writer)
    samples = log.samples or []
    expected = {str(s.id): (s.metadata["writing"]["state"], s.scores["tow"].value) for s in samples}
    assert {state for state, _ in expected.values()} == {"complete", "cut"}
    unscored = [i for i, (_, value) in expected.items() if not isinstance(value, dict)]
    assert len(unscored) == 1  # the writing the judge could not score

    page.goto(f"{viewer}#/logs/{path.name}")
    page.get_by_text(unscored[0]).first.wait_for()
    assert page.get_by_text(writer).first.is_visible()  # the writer: the log's model
    header = page.get_by_role("row").filter(has_text="WRITING STATE")
    headers = [h.inner_text().strip() for h in header.get_by_role("columnheader").all()]
    state_at, overall_at = headers.index("WRITING STATE"), headers.index("TOW OVERALL")
    nodes = tree_for("guide").nodes
    assert headers[overall_at + 1 : overall_at + 1 + len(nodes)] == [n.upper() for n in nodes]
    rows = page.get_by_role("row").filter(has=page.get_by_role("gridcell"))  # the samples'
    shown: dict[str, tuple[str, str]] = {}
    colours: dict[str, str] = {}
    for row in rows.all():
        cells = row.get_by_role("gridcell")
        texts = [cell.inner_text().strip() for cell in cells.all()]
        shown[texts[headers.index("ID")]] = (texts[state_at], texts[overall_at])
        colours[texts[state_at]] = cells.nth(state_at).evaluate(
            "cell => getComputedStyle(cell).backgroundColor"
        )
    assert set(shown) == set(expected)
    for sample, (state, overall) in shown.items():
        value = expected[sample][1]
        assert state == expected[sample][0], sample
        if isinstance(value, dict):
            assert math.isclose(float(overall), value["overall"], abs_tol=1e-6), sample
        else:
            assert overall == "", sample  # no score, no number
    scored = [float(overall) for _, overall in shown.values() if overall]  # as listed
    assert scored == sorted(scored)  # the worst writing first
    assert colours["complete"] != colours["cut"]
    screenshot(page, tmp_path, "viewer-sample-list.png", height=400)

    # the genre: a filter on the sample metadata (inspect 0.3.285 has no column for it)
    genre = samples[0].metadata["genre"]
    kept = sorted(str(s.id) for s in samples if s.metadata["genre"] == genre)
    assert len(kept) < len(samples)
    page.get_by_role("textbox").first.click()
    page.keyboard.type(f'metadata.genre == "{genre}"')
    sync_api.expect(rows).to_have_count(len(kept))
    assert (
        sorted(
            row.get_by_role("gridcell").nth(headers.index("ID")).inner_text() for row in rows.all()
        )
        == kept
    )
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    sync_api.expect(rows).to_have_count(len(samples))
