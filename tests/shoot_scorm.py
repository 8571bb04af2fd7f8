"""docs/embedding.md's screenshots of a SCORM package completed in an LMS's player (not a test):

    uv run --extra test python -m tests.shoot_scorm [SITE]    # writes docs/scorm-completed-*.png

SITE: a built site (default: a build of its own, tests/site_fixtures.py). Its SCORM 2004 package in the
host page of tests/scorm_lms.py (scorm-again plays the LMS), once the reader has filled the window, met the
IndexError and answered the quiz (4 of 5): the LMS's record above the frame ("completada", 80 / 100,
passed, the position), the figure's error in the frame; at 1280 px, then the same page at 360 px.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from buildsupport.scorm import write_packages
from tests.browser import chromium, open_page, put
from tests.scorm_lms import answer_quiz, lms_host, player, step, wait_record
from tests.shoot_docs import DOCS, small
from tests.site_fixtures import site_self_contained


def shoot(frame, page, width: int, height: int) -> None:
    page.set_viewport_size({"width": width, "height": height})
    top = frame.locator("[data-testid=error]").evaluate("(el) => el.getBoundingClientRect().top + window.scrollY")
    frame.evaluate("(y) => window.scrollTo(0, y)", max(0, top - (300 if width > 600 else 160)))
    page.evaluate("window.scrollTo(0, 0)")  # the LMS's record in view
    out = DOCS / f"scorm-completed-{width}.png"
    page.screenshot(path=str(out))
    small(out)


def main(argv: list[str]) -> int:
    site = Path(argv[0]) if argv else site_self_contained()
    with tempfile.TemporaryDirectory(prefix="kv-scorm-shots-") as folder, chromium() as browser:
        with lms_host(write_packages(site, Path(folder), versions=("2004",))) as url:
            page, _ = open_page(browser, url, width=1280, height=1000)
            page.evaluate("launch('2004', null, '?lang=es&embed=1')")
            frame = player(page)
            frame.wait_for_selector("body[data-ready='true']", timeout=120000)
            put(frame, "es", 64, "full")
            step(frame)
            frame.locator("[data-testid=error]").wait_for()
            answer_quiz(frame, right=4)
            wait_record(page, "r.completion === 'completed' && r.success === 'passed'")
            page.wait_for_function("document.getElementById('report').textContent.includes('completada')")
            shoot(frame, page, 1280, 1000)
            shoot(frame, page, 360, 740)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
