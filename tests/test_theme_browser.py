"""The dark page in a real browser (app/style): theme= in the URL wins over the system both ways; the
static site's preview is dark from the first paint; a course page switches it live, without a reload
(docs/embedding.md). A reader whose system prefers dark, every section open and used, axe-core clean:
tests/test_a11y_browser.py. The palette's own contrast is checked in tests/test_theme.py."""

from __future__ import annotations

import pytest

from app.style import CANVAS_FILTER, DARK, PALETTE
from tests.browser import ROOT, chromium_missing, errors, new_context, open_page, shot, wait_ready, wait_t
from tests.hosting import course_page, explorable, tell_theme

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

CANVASES = (ROOT / "tests" / "js" / "canvases.js").read_text(encoding="utf-8")
BODY = "getComputedStyle(document.body).backgroundColor"
FILTER = "invert(1) hue-rotate(180deg)"
assert CANVAS_FILTER == FILTER


def rgb(colour: str) -> str:
    return "rgb({}, {}, {})".format(*(int(colour[i : i + 2], 16) for i in (1, 3, 5)))


def assert_look(page_or_frame, dark: bool) -> None:
    surface = rgb((DARK if dark else PALETTE)["surface"])
    page_or_frame.wait_for_function(f"{BODY} === '{surface}'", timeout=20000)
    filters = page_or_frame.evaluate(CANVASES)
    assert filters and set(filters) == {FILTER if dark else "none"}, filters


@pytest.mark.served_with(asked="dark")  # the server reads the URL's theme once: one way there
@pytest.mark.parametrize("system, asked", [("light", "dark"), ("dark", "light")])
def test_the_url_wins_over_the_system(browser, app_url, system, asked):
    context = new_context(browser, 1280, 800, color_scheme=system)
    page, _ = open_page(browser, app_url + f"?lang=en&theme={asked}", context=context)
    if app_url.endswith("index.html"):  # the preview, before Python: already in the asked look
        page.wait_for_selector("#kv-snapshot .kv-snap")
        assert page.evaluate(BODY) == rgb((DARK if asked == "dark" else PALETTE)["surface"])
        preview = page.evaluate("getComputedStyle(document.querySelector('.kv-snap .kv-canvas')).filter")
        assert preview == (FILTER if asked == "dark" else "none")
        wait_ready(page)
    wait_t(page, 2)
    assert_look(page, dark=asked == "dark")
    assert "theme=" + asked in page.evaluate("document.body.dataset.kvState")  # a reload keeps it
    assert errors(page) == []


def test_a_course_page_switches_the_frame_live(site, browser):
    """The MkDocs Material recipe's message: the frame turns dark and back without a reload (the
    reader's position stays)."""
    with course_page(site, "?lang=es&embed=1") as url:
        page, _ = open_page(browser, url, width=1280, height=800)
        frame = explorable(page)
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        frame.get_by_role("button", name="Avanzar").click()
        wait_t(frame, 3)
        assert_look(frame, dark=False)
        tell_theme(page, "dark")
        assert_look(frame, dark=True)
        shot(page, "course-dark-1280")
        tell_theme(page, "light")
        assert_look(frame, dark=False)
        wait_t(frame, 3)
