"""What a user sees in `inspect view`, in a real browser: the system's headless Chromium
driven by Playwright against inspect's own viewer server on 127.0.0.1, over logs of an
eval set of two stored writers (`replay/<writer>`) judged by the simulator.

Set HOWTOBENCH_SCREENSHOTS to a folder (docs/images) to keep the screenshots there
(`support.browser`).
"""

from __future__ import annotations

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
from inspect_ai.log import read_eval_log

from howtobench import guide, open_writing
from howtobench.tree.spec import tree_for
from support.browser import BROWSER_MARKS, launch, screenshot, sync_api
from support.evals import run_eval

pytestmark = BROWSER_MARKS
WRITERS = ("replay/demo-writer-a", "replay/demo-writer-b")
# a number with more than 6 decimals: float noise such as 5.410125000000001
NOISE = re.compile(r"\d\.\d{7,}")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Guide and open for two stored writers, ToW by the simulator, in one folder."""
    from howtobench.simulator import JudgeSimulator

    folder = tmp_path_factory.mktemp("viewer") / "logs"
    simulator = JudgeSimulator().start()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("SIM_BASE_URL", simulator.base_url)
            patch.setenv("SIM_API_KEY", "none")
            run_eval(
                [guide(dataset="demo"), open_writing(dataset="demo")],
                folder,
                "openai-api/sim/judge",
                model=list(WRITERS),
                cache_dir=folder.parent / "cache",
            )
    finally:
        simulator.stop()
    yield folder


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
    assert sorted(model for _, model in expected) == sorted(WRITERS * 2)
    # one row per log, naming its task and its writer
    assert len(rows) - 1 == len(expected)
    for task, model in expected:
        assert sum(task in row and model in row.split() for row in rows[1:]) == 1, (task, model)
    screenshot(page, tmp_path, "viewer-writers.png")


def test_a_samples_scores_show_no_float_noise_and_explain_the_steps(
    page: Any, viewer: str, logs: Path, tmp_path: Path
) -> None:
    [path] = [
        p
        for p in logs.glob("*guide*.eval")
        if read_eval_log(str(p), header_only=True).eval.model == WRITERS[1]
    ]
    log = read_eval_log(str(path))
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
