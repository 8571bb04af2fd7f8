"""Accessibility and phone layout in a real browser, on Panel's server and on the static site
(Pyodide): axe-core finds no violation with every section open, in every language, at a phone's
width and a laptop's, light and dark; nothing sticks out sideways at 320, 360 and 390 px; the keyboard alone
reaches and works every control, with its focus always visible; the URL is read once, one way.

Headless Debian Chromium driven by Playwright; axe-core from its npm package (tests/axe.py).
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app.i18n import tr
from app.sections import SECTIONS
from tests.axe import violations
from tests.browser import (
    ROOT,
    chromium_missing,
    current_t,
    errors,
    foreign,
    open_all_sections,
    open_app,
    open_card,
    overflow,
    run_and_wait,
    shot,
    text_of,
    wait_t,
)

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

WIDTHS = (320, 360, 390)
FOCUSED = (ROOT / "tests" / "js" / "focused.js").read_text(encoding="utf-8")
OVERFLOWS = (ROOT / "tests" / "js" / "overflow.js").read_text(encoding="utf-8")
LABELLED = (ROOT / "tests" / "js" / "labelled.js").read_text(encoding="utf-8")
TOKENS = (ROOT / "tests" / "js" / "tokens.js").read_text(encoding="utf-8")


def where(app_url: str) -> str:
    return "static" if app_url.endswith("index.html") else "served"


def assert_fits(page, label: str) -> None:
    """At each phone width: the page is as wide as the viewport, and no element's visible part ends
    beyond it (Bokeh lays out again after a resize: wait for that, then read)."""
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        try:
            page.wait_for_function(
                f"(() => {{ const r = ({OVERFLOWS})(); return r.viewport === {width} && "
                "r.pageWidth === r.viewport && !r.outside.length && !r.cut.length; })()",
                timeout=10000,
            )
        except Exception:
            pass  # the assertion below says what is wrong
        found = overflow(page)
        assert found["viewport"] == width and found["pageWidth"] == width, (label, width, found)
        assert found["outside"] == [] and found["cut"] == [], (label, width, found)


def opened_on_a_phone(live, title: str, lang: str = "en"):
    """A booted page (a LivePage) placed on a phone's screen in `lang` with the section `title` open:
    (page, the requests it makes from now on)."""
    page = live.place(lang=lang, width=360, height=800)
    requests = page.requests
    open_card(page, title)
    return page, requests


def whole_on_a_phone(page, label: str, requests: list[str]) -> None:
    """A section open on a phone: axe-core clean, nothing sideways at the phone widths, back at 360 px
    (its screenshot `label`), no console error, no request off this machine."""
    found = violations(page)
    assert found == [], found
    assert_fits(page, label)
    page.set_viewport_size({"width": 360, "height": 800})
    shot(page, label.replace(" ", "-") + "-360")
    assert errors(page) == [] and foreign(requests) == []


def open_every_list(page) -> int:
    """Open every disclosure inside the sections (a `<details>`: continuous batching's texts); how many."""
    closed = page.locator("details:not([open]) > summary")
    opened = 0
    while closed.count():
        closed.first.click()
        opened += 1
    return opened


def use_every_section(page, lang: str) -> None:
    """Open every section and every list inside, and leave each showing what it shows after use: the
    lab's table (Spanish only: it takes seconds), a challenge error, a quiz answer."""
    opened = open_all_sections(page)
    assert lang != "es" or opened == 2 + len(SECTIONS)  # from a placed page: settings, data table, every section
    assert page.locator("button[aria-expanded=false]").count() == 0
    opened = open_every_list(page)
    assert lang != "es" or opened >= 1  # continuous batching's texts, at least
    assert page.locator("details:not([open])").count() == 0
    for testid in ("share", "ctx-tokens"):  # the first and the last section, built
        page.locator(f"[data-testid={testid}]").first.wait_for()
    try:
        page.wait_for_function(f"({LABELLED})()", timeout=15000)
    except Exception:
        pass  # axe-core names what has no label
    page.get_by_role("radio").first.check()
    if lang == "es":
        if not page.locator("[data-testid=timing-rows]").count():  # measured once a page: its table stays
            page.get_by_role("button", name=re.compile("^Medir en (mi navegador|el servidor)$")).click()
        page.locator("[data-testid=timing-rows]").wait_for(timeout=120000)
        page.get_by_role("textbox", name="Tu código").fill("def atencion(q, K, V):\n    return q @ K\n")
        assert "ValueError" in run_and_wait(page, "challenge-result", "Comprobar", timeout_ms=120000).inner_text()


def test_every_section_open_passes_axe_and_fits_a_phone(live, app_url):
    """Every section open and used, then each language switched live with everything still open: axe-core,
    the page's language and landmarks, nothing sideways at the phone widths, whole token boxes; then the
    system turned dark, the page open (a_dark_system_gets_the_dark_page). Under
    Panel's server the server's own page, in Spanish (the sections' markup is the same code: the static
    site's run checks it in every language)."""
    from tests.browser import switch_language

    static = where(app_url) == "static"
    page = live.place(lang="es", t=64, mode="full", width=360, height=800)
    for lang in ("es", "en", "pt") if static else ("es",):
        page.set_viewport_size({"width": 360, "height": 800})
        switch_language(page, lang)
        # the top-p slider's value as the language writes a decimal (app/i18n number_style), drawn in the browser
        top_p = page.locator(".kv-range", has_text=tr(lang, "top_p")).locator("output")
        expect(top_p).to_have_text({"es": "0.9", "en": "0.90", "pt": "0,90"}[lang])
        if static:
            use_every_section(page, lang)  # what a switch closed, opened again; a quiz answer in each
        axe_clean(page, lang)
        assert page.evaluate("document.documentElement.lang") == lang
        assert page.get_by_role("main").count() == 1
        assert_fits(page, f"{where(app_url)} {lang}")
        page.set_viewport_size({"width": 360, "height": 800})
        boxes = page.evaluate(TOKENS)  # at 360 px: whole boxes, none cut at the edge
        assert boxes["count"] >= 64 and boxes["split"] == [] and boxes["beyond"] == [], (
            lang,
            boxes,
        )  # 64: the figure's
        shot(page, f"{where(app_url)}-a11y-{lang}-360")
    if static:  # the palette is app/style's under both servers; the server's dark look: test_theme_browser
        a_dark_system_gets_the_dark_page(page)
    assert errors(page) == []
    # nor a warning: no figure leaves BokehJS a range to compute over no data (-inf, refused, said in a line)
    warnings = [m for m in page.console_messages if m.startswith("warning")]
    assert warnings == [], warnings[:5]


AXE_WIDTHS = (360, 1280)  # a phone's screen, a laptop's: the layouts differ (the bar, the grid's zoom, the tables)


def axe_clean(page, label: str) -> None:
    """axe-core finds no violation, of any impact, at a phone's width and a laptop's; back at 360 px."""
    for width in AXE_WIDTHS:
        page.set_viewport_size({"width": width, "height": 800})
        page.wait_for_function(f"document.documentElement.clientWidth === {width}")
        found = violations(page)
        assert found == [], (label, width, found)
    page.set_viewport_size({"width": 360, "height": 800})


def a_dark_system_gets_the_dark_page(page) -> None:
    """The system's preference, changed on a page already open with every section open and used: the page
    and every figure follow it, the sections' too; axe-core clean (contrast included) at 360 and 1280 px."""
    from tests.test_theme_browser import assert_look

    page.emulate_media(color_scheme="dark")
    try:
        assert_look(page, dark=True)
        axe_clean(page, "dark")
        shot(page, "static-dark-360")
    finally:
        page.emulate_media(color_scheme="light")


def focused(page) -> dict:
    info = page.evaluate(FOCUSED)
    assert info is not None, "focus left the page's controls"
    assert info["ring"], f"the focus does not show on {info}"
    return info


def tab_to(page, matches, limit: int = 250) -> dict:
    """Press Tab until the focused control matches; every control on the way shows its focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        info = page.evaluate(FOCUSED)
        if info is None:
            continue  # the page's body, between the frame's edges
        assert info["ring"], f"the focus does not show on {info}"
        if matches(info):
            return info
    raise AssertionError("not reachable with Tab")


def named(text: str):
    return lambda info: info["name"] == text


def active_row(page) -> str:
    """Which way the numbers' cards outline as the current mode."""
    cached = page.locator("[data-testid=token-cached]").locator("xpath=..")
    return "cache" if "active" in (cached.get_attribute("class") or "") else "full"


def test_the_keyboard_alone(live, app_url):
    page = live.place(width=1280, height=900)
    tab_to(page, named("Avanzar"))
    page.keyboard.press("Enter")
    wait_t(page, 3)
    page.keyboard.press(" ")  # Space on a button: the button's own
    wait_t(page, 4)
    for key, t in (("n", 5), ("ArrowRight", 6)):  # the page's keys, from anywhere
        page.keyboard.press(key)
        wait_t(page, t)
    page.keyboard.press("c")
    expect(page.locator("[data-testid=token-full]").locator("xpath=..")).to_have_class(re.compile("active"))
    page.keyboard.press("c")
    expect(page.locator("[data-testid=token-cached]").locator("xpath=..")).to_have_class(re.compile("active"))
    tab_to(page, named("Animar"))
    page.keyboard.press("Enter")  # plays, then pauses
    expect(page.get_by_role("button", name="Pausa")).to_have_count(1)
    expect(page.locator(".tpos").first).not_to_have_text("t = 6 / 64", timeout=20000)
    assert focused(page)["name"] == "Pausa"
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name="Animar")).to_have_count(1)
    page.keyboard.press("r")
    wait_t(page, 2)
    tab_to(page, named("Sin caché"))
    page.keyboard.press("Enter")
    expect(page.locator("[data-testid=token-full]").locator("xpath=..")).to_have_class(re.compile("active"))
    speed = tab_to(page, lambda i: i["type"] == "range")
    assert speed["name"].startswith("Velocidad")
    page.keyboard.press("ArrowRight")  # the slider's own arrow: not a step
    expect(page.locator(".kv-range output").first).to_have_text("5")
    assert current_t(page) == 2
    use_sections_with_the_keyboard(page)
    assert errors(page) == []


def open_with_keyboard(page, title: str) -> None:
    info = tab_to(page, named(title))
    assert info["expanded"] == "false"
    page.keyboard.press("Enter")
    expect(page.get_by_role("button", name=title, exact=True)).to_have_attribute("aria-expanded", "true")


def use_sections_with_the_keyboard(page) -> None:
    """Open the quiz with the keyboard, answer with it (arrows move the answer, never the model),
    ask for the solution and check it; open the calculator and change its model."""
    open_with_keyboard(page, "Comprueba tu intuición: cinco preguntas y un reto")
    radio = tab_to(page, lambda i: i["type"] == "radio")
    page.keyboard.press("Space")
    page.locator("[data-testid=quiz-fixed]").wait_for()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowRight")
    assert page.evaluate(FOCUSED)["name"] != radio["name"] and current_t(page) == 2
    tab_to(page, named("Ver una solución"))
    page.keyboard.press("Enter")
    expect(page.get_by_role("textbox", name="Tu código")).to_have_value(re.compile(r"w = w / w.sum\(\)"))
    tab_to(page, named("Comprobar"))
    page.keyboard.press("Enter")
    page.locator("[data-testid=challenge-result][data-state=right]").wait_for(timeout=120000)
    open_with_keyboard(page, "¿Cuánto contexto cabe? La memoria de la caché en modelos reales")
    before = text_of(page, "ctx-tokens")
    tab_to(page, lambda i: i["tag"] == "select")
    page.keyboard.press("ArrowDown")
    expect(page.locator("[data-testid=ctx-tokens]")).not_to_have_text(before)


def test_the_url_is_read_once_the_same_way(browser, app_url):
    """The shell and the app agree on the last of a repeated key; a bad value is named in a notice
    that wraps; thousands of unknown keys give a few notices; a seed of 5,000 digits and a theme that
    is not UTF-8 (Panel's server reads theme= too) raise nothing."""
    page, _ = open_app(browser, app_url, "?lang=en&lang=pt", width=360)
    expect(page.get_by_role("button", name="Avançar")).to_have_count(1)
    assert page.evaluate("document.documentElement.lang") == "pt"
    junk = "&".join(f"k{i}=v" for i in range(500))  # Panel's server refuses 1,000 (HTTP 400)
    query = f"?lang=english&seed={'7' * 5000}&v={'x' * 3000}&{junk}&theme=%C0%AF"
    page, _ = open_app(browser, app_url, query, width=360)
    wait_t(page, 2)
    assert page.evaluate("document.documentElement.lang") == "es"
    expect(page.get_by_role("button", name="Avanzar")).to_have_count(1)
    notes = page.locator("[role=note]")
    expect(notes).to_have_count(4)  # three, then "and 500 more"
    assert all(len(n) < 200 for n in notes.all_inner_texts())
    assert_fits(page, f"{where(app_url)} notices")
    page.get_by_role("button", name="Avanzar").click()
    wait_t(page, 3)
    assert errors(page) == [] and page.evaluate("document.body.dataset.pyerror") is None
