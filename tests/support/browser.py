"""What the browser tests share: the system's Chromium driven by Playwright for Python.

Playwright's own browser download is not used (no network): every test launches Debian's
`/usr/bin/chromium`. A test module sets `pytestmark = BROWSER_MARKS` and is skipped, with
the reason, where Playwright or Chromium is missing. Set HOWTOBENCH_SCREENSHOTS to a
folder (docs/images) to keep the screenshots there; otherwise they go to the test's
temporary folder.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright for Python is not installed (pip install playwright)"
)
BROWSER_MARKS = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not CHROMIUM.is_file(),
        reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install chromium fonts-noto-cjk)",
    ),
]


def launch(playwright: Any) -> Any:
    """Headless Chromium, the system's."""
    return playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)


def screenshot(
    page: Any, tmp_path: Path, name: str, whole: bool = False, height: int | None = None
) -> None:
    """The page (`whole`: all of it, else the viewport; `height`: its top pixels only)."""
    folder = Path(os.environ.get("HOWTOBENCH_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    clip = None if height is None else {"x": 0, "y": 0, **page.viewport_size, "height": height}
    page.screenshot(path=str(folder / name), full_page=whole, clip=clip)
