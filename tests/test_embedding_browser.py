"""The explorable inside a course page, as docs/embedding.md tells a course author to put it: the
documented snippet (docs/embedding.md, and the same in dist/embed.html) on a host page of
another origin (localhost, the explorable on 127.0.0.1), with the documented sandbox and the
documented Content-Security-Policy (plus frame-ancestors for the host).

The frame takes its content's height in both directions (on load, on opening and closing a
section, on turning the phone); the preview honours embed=1 and shows its loading progress in
view; nothing sticks out sideways at 320, 360 and 390 px in any language.

Needs the compiled Pyodide wheels (the static site) and Chromium; skips with the reason otherwise.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app.sections import SECTIONS
from tests.browser import (
    ROOT,
    box_centre,
    chromium_missing,
    foreign,
    new_context,
    open_all_sections,
    open_page,
    overflow,
    put,
    shot,
    switch_language,
    touch_screen,
    wait_t,
)
from tests.hosting import SRC_BASE, course_page, explorable, snippet

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))

FITS_PX = 40
OVERFLOWS = (ROOT / "tests" / "js" / "overflow.js").read_text(encoding="utf-8")


def test_one_snippet_everywhere():
    """docs/embedding.md holds the snippet (the README links to it, with no copy of its own), and
    dist/embed.html (static/embed.html) shows the same, with embed=1, pointing at its own folder."""
    docs = snippet((ROOT / "docs" / "embedding.md").read_text(encoding="utf-8"))
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = snippet((ROOT / "static" / "embed.html").read_text(encoding="utf-8"))
    assert "<iframe" not in readme and "docs/embedding.md" in readme
    assert example == docs.replace(SRC_BASE, "./")
    assert "embed=1" in docs and 'sandbox="allow-scripts allow-same-origin allow-popups"' in docs


CONTENT = "Math.ceil(document.getElementById('kv-main').getBoundingClientRect().bottom)"
FRAME = "document.querySelector('iframe.kv-explorable').getBoundingClientRect().height"


def assert_fits(page, frame, when: str) -> None:
    """The frame's height is within FITS_PX of its content's (waiting for the page to post it)."""
    for _ in range(3):  # the content may still be moving: read it again
        content = frame.evaluate(CONTENT)
        try:
            page.wait_for_function(f"(h) => Math.abs({FRAME} - h) <= {FITS_PX}", arg=content, timeout=10000)
            return
        except Exception:
            continue
    raise AssertionError(f"{when}: frame {page.evaluate(FRAME)} px, content {frame.evaluate(CONTENT)} px")


# The course page's record of the progress events (docs/embedding.md), from before the frame loads
HEAR_PROGRESS = """if (window.top === window) {
  window.kvHeard = [];
  addEventListener("message", (e) => {
    if (e.data && e.data.type === "kv-explorable:progress") window.kvHeard.push(e.data);
  });
}"""
PROGRESS_FIELDS = {"type", "version", "t", "mode", "reachedEnd", "sawIndexError", "quiz", "challengePassed"}


def heard(page, js: str, timeout: int = 30000) -> dict:
    """The latest progress event `p` the course page heard, once one satisfies `js`."""
    page.wait_for_function(f"(window.kvHeard || []).some((p) => {js})", timeout=timeout)
    return page.evaluate(f"window.kvHeard.filter((p) => {js}).pop()")


def hearing_page(browser, url: str, width: int, height: int):
    context = new_context(browser, width, height)
    context.add_init_script(HEAR_PROGRESS)
    return open_page(browser, url, context=context)


def test_the_frame_takes_its_contents_height(site, browser):
    """... and posts the reader's progress to the course page, which the documented recipe keeps; with no
    LMS around, the page says nothing about one."""
    with course_page(site, "?lang=es&embed=1") as url:
        page, requests = hearing_page(browser, url, width=360, height=740)
        frame = explorable(page)
        frame.wait_for_selector("#kv-snapshot .kv-snap")
        # the preview: no title (the course has its own), the progress where the reader is looking
        assert frame.evaluate("document.body.dataset.ready") is None, "live before the preview could be seen"
        assert frame.locator("h1").first.is_hidden()
        card = frame.evaluate("document.getElementById('kv-loader').getBoundingClientRect().bottom")
        top = page.evaluate("document.querySelector('iframe.kv-explorable').getBoundingClientRect().top")
        assert top + card < 740, f"the loading progress ends at {top + card} px, below the phone's screen"
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        assert_fits(page, frame, "loaded at 360 px")
        tall = page.evaluate(FRAME)
        assert tall > 2000  # a phone: taller than the snippet's 2000 px
        first = heard(page, "p.t === 2")
        assert set(first) == PROGRESS_FIELDS and first["version"] == 1 and first["mode"] == "cache", first
        assert not first["reachedEnd"] and not first["sawIndexError"] and not first["challengePassed"], first
        frame.get_by_role("button", name="Comprueba tu intuición: cinco preguntas y un reto").click()
        frame.locator("input[type=radio]").first.wait_for()
        assert_fits(page, frame, "a section opened")
        frame.locator("input[type=radio]").first.check()  # an answer to the first question
        assert heard(page, "p.quiz.answered === 1")["quiz"]["total"] == 5
        kept = page.evaluate("JSON.parse(localStorage.getItem('kv-explorable:/course.html'))")
        assert kept["quiz"]["answered"] == 1 and page.locator("h1 .kv-done").count() == 0, kept
        assert page.evaluate(FRAME) > tall + 300
        frame.get_by_role("button", name="Comprueba tu intuición: cinco preguntas y un reto").click()
        assert_fits(page, frame, "the section closed")
        page.set_viewport_size({"width": 740, "height": 360})  # the phone turned
        assert_fits(page, frame, "turned to 740 px")
        page.set_viewport_size({"width": 1280, "height": 800})
        assert_fits(page, frame, "at 1280 px")
        assert page.evaluate(FRAME) < tall  # a wide screen: the frame shrank with its content
        # the host answered (a step of the content's height may start a new judgement: wait for the verdict)
        frame.wait_for_function("document.documentElement.dataset.frame === 'fitted'", timeout=20000)
        assert frame.locator("#kv-frame-cue").is_hidden()  # so no cue
        assert foreign(requests) == [], foreign(requests)
        assert not [m for m in page.console_messages if "kv-explorable" in m], page.console_messages


def test_nothing_sideways_in_the_frame(site, browser):
    """Every section open, at t = 64, in each language (switched live in the frame), at 320, 360 and
    390 px: nothing sticks out sideways, inside the frame or on the course page. First, the step past 64:
    the course page hears of the IndexError, and the documented recipe puts its check mark beside the
    lesson's heading."""
    with course_page(site, "?lang=es&embed=1&t=64") as url:
        page, _ = hearing_page(browser, url, width=390, height=800)
        frame = explorable(page)
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        assert heard(page, "p.t === 64")["reachedEnd"]
        frame.get_by_role("button", name="Avanzar", exact=True).first.click()
        frame.locator("[data-testid=error]").wait_for()
        assert heard(page, "p.sawIndexError")["t"] == 64
        page.locator("h1 .kv-done").wait_for()
        kept = page.evaluate("JSON.parse(localStorage.getItem('kv-explorable:/course.html'))")
        assert kept["sawIndexError"] and kept["quiz"]["total"] == 5, kept  # the live page's record, not the preview's
        assert open_all_sections(frame) == 2 + len(SECTIONS)  # the settings, the data table, every section
        frame.locator("[data-testid=ctx-tokens]").wait_for()
        for lang in ("es", "en", "pt"):
            page.set_viewport_size({"width": 390, "height": 800})
            switch_language(frame, lang)
            open_all_sections(frame)  # the settings card stays open; the rest are
            for width in (320, 360, 390):
                page.set_viewport_size({"width": width, "height": 800})
                page.wait_for_function(f"document.documentElement.clientWidth === {width}")
                try:
                    frame.wait_for_function(
                        "(() => { const r = (" + OVERFLOWS + ")(); return r.pageWidth === "
                        "r.viewport && !r.outside.length; })()",
                        timeout=10000,
                    )
                except Exception:
                    pass  # the assertions say what is wrong
                inside, outside = overflow(frame), overflow(page)
                assert inside["viewport"] == width and inside["pageWidth"] == width, (lang, width, inside)
                assert inside["outside"] == [] and inside["cut"] == [], (lang, width, inside)
                assert outside["pageWidth"] == width and outside["outside"] == [], (lang, width, outside)


def test_a_host_without_script_gets_a_visible_scroll_and_a_link(site, browser):
    """An LMS that strips <script> keeps the frame at its 2000 px: the page finds that no host fitted
    it, says so on the frame's first screen with a link to the full page, shows that it scrolls (the line
    at its bottom, until the reader is there); the bar still sticks inside the frame. On a phone (where a
    swipe past the frame's end scrolls the course page), then on a laptop."""
    with course_page(site, "?lang=es&embed=1", script=False) as url:
        page, _ = open_page(browser, url, width=360, height=740)
        frame = explorable(page)
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        for width in (360, 1280):
            height = 740 if width < 1000 else 800
            page.set_viewport_size({"width": width, "height": height})
            put(frame)
            page.evaluate("window.scrollTo(0, 0)")  # the first screen: the course page's, the frame's
            frame.evaluate("window.scrollTo(0, 0)")
            first_screen_says_so(page, frame, height)
            without_script(page, frame, width)
            if width == 360:
                a_swipe_past_the_end_scrolls_the_course_page(page, frame)


def first_screen_says_so(page, frame, height: int) -> None:
    """The note at the frame's top: on the course page's first screen, with the link to the page alone."""
    frame.wait_for_function("document.documentElement.dataset.frame === 'fixed'", timeout=20000)
    note = frame.locator("#kv-frame-note")
    expect(note).to_contain_text("Esta figura se desplaza dentro de su recuadro")
    box = note.bounding_box()  # in the course page's viewport
    assert box["y"] >= 0 and box["y"] + box["height"] <= height / 2, box
    link = note.get_by_role("link", name="Abrir la página completa ↗")
    href = link.get_attribute("href")
    assert link.get_attribute("target") == "_blank" and "embed" not in href and "lang=es" in href
    shot(page, f"embed-noscript-first-{page.viewport_size['width']}", full_page=False)


def a_swipe_past_the_end_scrolls_the_course_page(page, frame) -> None:
    """Nothing contains the frame's scroll: at its end, a swipe on it scrolls the course page on."""
    assert frame.evaluate("getComputedStyle(document.documentElement).overscrollBehaviorY") == "auto"
    page.evaluate("window.scrollTo(0, 0)")
    frame.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    box = page.locator("iframe.kv-explorable").bounding_box()
    with touch_screen(page) as finger:
        finger.swipe_up(box["x"] + box["width"] / 2, 500, 300)
    page.wait_for_function("window.scrollY > 100", timeout=5000)


AT_THE_END_THE_CUE_HIDES = """() => {
  window.scrollTo(0, document.documentElement.scrollHeight);
  const cue = document.getElementById('kv-frame-cue');
  return cue.classList.contains('kv-at-end') && getComputedStyle(cue.querySelector('.kv-frame-more')).visibility === 'hidden';
}"""


def without_script(page, frame, width: int) -> None:
    frame.wait_for_function("document.documentElement.dataset.frame === 'fixed'", timeout=20000)
    assert page.evaluate(FRAME) == 2000 and frame.evaluate(CONTENT) > 2000
    cue = frame.locator("#kv-frame-cue")
    more = cue.locator(".kv-frame-more")
    frame.wait_for_function("!document.getElementById('kv-frame-cue').classList.contains('kv-at-end')")
    assert cue.is_visible() and more.is_visible() and "Hay más abajo" in more.inner_text()
    box = frame.evaluate("document.getElementById('kv-frame-cue').getBoundingClientRect().bottom")
    assert abs(box - 2000) <= 1  # at the frame's bottom edge
    link = cue.get_by_role("link", name="Abrir la página completa ↗")
    href = link.get_attribute("href")
    assert link.get_attribute("target") == "_blank" and "embed" not in href and "lang=es" in href
    assert frame.evaluate("getComputedStyle(document.documentElement).overflowY") == "scroll"
    frame.get_by_role("button", name="Avanzar", exact=True).click()  # the link follows the reader
    frame.wait_for_function("(document.body.dataset.kvState || '').includes('t=3')")
    link.hover()
    assert "t=3" in link.get_attribute("href") and "embed" not in link.get_attribute("href")
    page.evaluate("window.scrollTo(0, 1400)")
    shot(page, f"embed-noscript-{width}")
    # at the end (kept there: the step's clock may still make the page grow), the line's words hide
    frame.wait_for_function(AT_THE_END_THE_CUE_HIDES)
    # the last thing on the page is above the cue, not under it
    last = frame.evaluate(
        "(() => { const m = document.getElementById('kv-main'); const r = m.getBoundingClientRect();"
        " return r.bottom - parseFloat(getComputedStyle(m).paddingBottom); })()"
    )
    top = frame.evaluate("document.getElementById('kv-frame-cue').getBoundingClientRect().top")
    assert last <= top + 1, (last, top)


STEP = {"es": "Avanzar", "en": "Step", "pt": "Avançar"}


def test_the_bar_stays_in_view_in_a_fitted_frame(site, browser):
    """A frame as tall as its content never scrolls: the course page does, and its script tells the
    page where the screen begins, below the page's own sticky header. On a site built with MkDocs
    Material's default theme, the snippet alone pasted in it (no CSS of the author's): with the bars at
    the bottom of the course page's screen, the control bar is right under the site's header, the step
    button is on screen above the bars and a click there (no scrolling) steps: at 320 px in Spanish, 360
    in English, 390 in Portuguese and 1280 in Spanish."""
    with course_page(site, "?lang=es&embed=1&t=20", mkdocs=True) as url:
        page, _ = open_page(browser, url, width=320, height=740)
        frame = explorable(page)
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        for width, lang in ((320, "es"), (360, "en"), (390, "pt"), (1280, "es")):
            height = 800 if width > 1000 else 740
            page.set_viewport_size({"width": width, "height": height})
            put(frame, lang, t=20)  # its clicks may scroll the course page to their buttons
            page.evaluate("window.scrollTo(0, 0)")
            bar_in_view(page, frame, width, height, lang)


def bar_in_view(page, frame, width: int, height: int, lang: str) -> None:
    frame.wait_for_function("document.documentElement.dataset.frame === 'fitted'", timeout=30000)
    frame.wait_for_function("document.documentElement.style.getPropertyValue('--kv-host-top') === '0px'")
    bars = frame.locator(".kv-bars").first.bounding_box()  # in the course page's screen
    page.evaluate("(dy) => window.scrollBy(0, dy)", bars["y"] + bars["height"] - height + 4)
    scrolled = page.evaluate("window.scrollY")
    assert scrolled > 0
    frame.wait_for_function(
        "parseInt(document.documentElement.style.getPropertyValue('--kv-host-top')) > 0", timeout=10000
    )
    bars = frame.locator(".kv-bars").first.bounding_box()
    assert bars["y"] + bars["height"] <= height + 1 and bars["y"] >= 0, bars
    step = frame.get_by_role("button", name=STEP[lang], exact=True)
    box = step.bounding_box()
    assert box["y"] >= 0 and box["y"] + box["height"] <= height, box  # the thumb's button, on screen
    bar = frame.locator(".kv-bar").first.bounding_box()
    assert bar["y"] + bar["height"] <= bars["y"] + 1, (bar, bars)  # hiding none of the bars
    header = page.locator(".md-header").bounding_box()  # the course site's, stuck at the top
    assert header["y"] == 0 and header["height"] > 40, header
    assert header["height"] - 1 <= bar["y"] <= header["height"] + 8, (bar, header)  # right under it
    page.mouse.click(*box_centre(box))
    wait_t(frame, 21)
    assert page.evaluate("window.scrollY") == scrolled  # nothing had to scroll
    shot(page, f"embedded-bar-{lang}-{width}", full_page=False)  # what the reader sees
    page.evaluate("window.scrollTo(0, 0)")  # back at the top: the bar in its own place
    frame.wait_for_function("document.documentElement.style.getPropertyValue('--kv-host-top') === '0px'")
