"""Step and watch (issue 20) in a real browser, on Panel's server and on the static site: the control
bar stays on screen beside the bars at 360 and 1280 px and its step works there; Animar stops at 64
and says so, the step to 65 is the reader's click, and its error box moves neither the bars nor the
grid. Headless Debian Chromium driven by Playwright; screenshots go to test-output/."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app.i18n import num, tr
from tests.browser import chromium_missing, current_t, errors, grid_range, open_card, shot, wait_grid_end, wait_t

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

STEP = {"es": "Avanzar", "en": "Step", "pt": "Avançar"}
PLAY = {"es": "Animar", "en": "Animate", "pt": "Animar"}
FULL = {
    "es": "Ventana llena: t = 64. El paso a 65 es tuyo: pulsa Avanzar.",
    "en": "Window full: t = 64. The step to 65 is yours: press Step.",
    "pt": "Janela cheia: t = 64. O passo para 65 é seu: carregue em Avançar.",
}

# an element's box in the page (not the viewport): what moves when something above it grows
PAGE_BOX = "(el) => { const r = el.getBoundingClientRect(); return {y: r.y + window.scrollY, h: r.height}; }"


def where(app_url: str) -> str:
    return "static" if app_url.endswith("index.html") else "served"


def bars_at_the_bottom(page, height: int) -> dict:
    """Scroll until the cost bars end at the screen's bottom edge (what a reader watching them sees);
    their box in the viewport."""
    bars = page.locator(".kv-bars").first
    bars.scroll_into_view_if_needed()
    box = bars.bounding_box()
    page.evaluate("(dy) => window.scrollBy(0, dy)", box["y"] + box["height"] - height + 4)
    page.wait_for_function("(h) => { const b = document.scrollingElement; return b.scrollTop > 0; }", arg=height)
    return bars.bounding_box()


def in_view(box: dict, height: int) -> bool:
    return box is not None and box["y"] >= 0 and box["y"] + box["height"] <= height


@pytest.mark.static_only
@pytest.mark.parametrize("width,height,lang", [(360, 740, "es"), (1280, 800, "en")])
def test_the_step_is_at_hand_beside_the_bars(live, app_url, width, height, lang):
    page = live.place(lang=lang, t=20, width=width, height=height)
    bars = bars_at_the_bottom(page, height)
    step = page.get_by_role("button", name=STEP[lang], exact=True)
    box = step.bounding_box()
    assert in_view(box, height), (box, bars)  # the thumb's button, on screen
    bar = page.locator(".kv-bar").first.bounding_box()
    assert bar["y"] + bar["height"] <= bars["y"] + 1, (bar, bars)  # and it hides none of the bars
    assert bars["y"] + bars["height"] <= height + 1
    step.click()
    wait_t(page, 21)
    expect(page.locator("[data-testid=bar-t]")).to_have_text("t = 21 / 64")  # the bar's t, in view
    assert in_view(page.locator("[data-testid=bar-t]").bounding_box(), height)
    expect(page.locator("[data-testid=said]")).to_have_text(re.compile(r"21"))
    hint = page.locator("[data-testid=keys-hint]")
    if width >= 900:  # the keys, beside the bar
        expect(hint).to_be_visible()
    else:  # on a phone: once a keyboard is there
        expect(hint).to_be_hidden()  # a thumb's click: the line, not the keys
        expect(page.locator("[data-testid=said]")).to_be_visible()
        step.focus()
        page.keyboard.press("Tab")  # a keyboard reader in the bar
        expect(hint).to_be_visible()
    page.keyboard.press("n")  # the keys still work from the bar
    wait_t(page, 22)
    shot(page, f"{where(app_url)}-watch-{lang}-{width}")
    assert errors(page) == []


STRIP = "[data-testid=cost-strip]"
# Until the bar's position shows t (30 s at most): the strip's top on the screen at every frame, and the figure's
# cost bars' top as painted, each time the page's layout changes (a ResizeObserver of the page's body, made
# after the page's own, which puts the bars back in the same frame: app/components/a11y.js keep_bars; a
# frame's callback would read the layout before that), with the body's height then -> {strip, bars, heights}.
TOPS_UNTIL = """(t) => new Promise((done) => {
  const find = (root, sel) => { for (const el of root.querySelectorAll('*')) { if (el.matches(sel)) return el;
    if (el.shadowRoot) { const hit = find(el.shadowRoot, sel); if (hit) return hit; } } return null; };
  const host = (sel) => find(document, sel).getRootNode().host; // a pane redrawn keeps its host
  const strip = host('[data-testid=cost-strip]'), bars = find(document, '.kv-bars'), pos = host('[data-testid=bar-t]');
  const tops = {strip: [], bars: [], heights: []};
  const painted = () => {
    tops.bars.push(bars.getBoundingClientRect().top);
    tops.heights.push(document.body.getBoundingClientRect().height);
  };
  const watch = new ResizeObserver(painted);
  watch.observe(document.body);
  const look = () => {
    tops.strip.push(strip.getBoundingClientRect().top);
    const now = pos.shadowRoot.querySelector('[data-testid=bar-t]');
    if ((now && now.textContent.includes(`t = ${t} /`)) || performance.now() > until) {
      watch.disconnect();
      return done(tops);
    }
    requestAnimationFrame(look);
  };
  const until = performance.now() + 30000;
  look();
})"""


def cost(t: int) -> int:
    """The multiplications of the token at position t with the cache (the lesson's c(t))."""
    return 131_072 + 256 * t


@pytest.mark.static_only
@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_the_phone_s_first_experiment_is_at_hand(live, app_url, lang):
    """Issue 49, on a phone at t = 2: the cost bars in miniature are in the control bar, on screen; a tap on
    Avanzar grows one there, with its multiplications; scrolled down to the figure's bars, the bar holds
    Avanzar, Paso atrás and Reiniciar, each in view and working there; while Animar runs, watched every
    frame, neither the strip nor the figure's bars move on the screen (the text above them grows);
    Sin caché brings the grey
    ramp into the strip. On a laptop's screen the strip is not shown (the figure's bars are at hand)."""
    page = live.place(lang=lang, t=2, width=360, height=740)
    strip = page.locator(STRIP).first
    assert in_view(strip.bounding_box(), 740)
    expect(strip.locator("i.sc")).to_have_count(2)
    expect(strip.locator(".strip-cost")).to_contain_text(num(cost(2), lang))
    assert strip.locator(".strip-title").inner_text() == tr(lang, "bars_title")
    page.get_by_role("button", name=STEP[lang], exact=True).click()
    expect(strip.locator("i.sc")).to_have_count(3)
    expect(strip.locator(".strip-cost")).to_contain_text(num(cost(3), lang))
    bars_at_the_bottom(page, 740)  # far below, where the bar sticks
    for name in (STEP[lang], tr(lang, "back"), tr(lang, "reset")):
        assert in_view(page.get_by_role("button", name=name, exact=True).bounding_box(), 740), name
    assert in_view(strip.bounding_box(), 740)
    page.get_by_role("button", name=tr(lang, "back"), exact=True).click()
    wait_t(page, 2)
    expect(strip.locator("i.sc")).to_have_count(2)
    page.get_by_role("button", name=STEP[lang], exact=True).evaluate("(b) => { b.click(); b.click(); }")
    wait_t(page, 4)
    page.get_by_role("button", name=tr(lang, "reset"), exact=True).click()
    wait_t(page, 2)
    page.get_by_role("button", name=PLAY[lang], exact=True).click()
    tops = page.evaluate(TOPS_UNTIL, 14)  # twelve steps of Animar, the text above a line longer
    page.get_by_role("button", name=tr(lang, "pause"), exact=True).click()
    strip_tops, bars_tops = {round(a) for a in tops["strip"]}, {round(a) for a in tops["bars"]}
    assert len(tops["strip"]) > 7 and max(strip_tops) - min(strip_tops) <= 1, strip_tops
    assert len(set(tops["heights"])) > 1, tops  # the page's layout changed while the bars were watched
    assert max(bars_tops) - min(bars_tops) <= 1, bars_tops  # and the figure's bars stayed
    page.get_by_role("button", name=tr(lang, "mode_full"), exact=True).click()
    t = int(re.search(r"t = (\d+)", page.locator("[data-testid=bar-t]").inner_text()).group(1))
    expect(strip.locator("i.sf")).to_have_count(t)  # the ramp t·c(t), this mode's
    expect(strip.locator(".strip-cost")).to_contain_text(num(t * cost(t), lang))
    shot(page, f"{where(app_url)}-phone-strip-{lang}", full_page=False)
    assert errors(page) == []
    if lang == "es":
        page = live.place(lang=lang, t=2, width=1280, height=800)
        expect(page.locator(STRIP).first).to_be_hidden()


@pytest.mark.served_with(lang="es")
@pytest.mark.parametrize("width,height,lang", [(360, 740, "es"), (1280, 800, "pt")])
def test_animar_stops_at_64_and_the_error_moves_nothing(live, app_url, width, height, lang):
    page = live.place(lang=lang, t=52, width=width, height=height)
    bars_at_the_bottom(page, height)
    page.get_by_role("button", name=PLAY[lang], exact=True).click()
    wait_t(page, 64, timeout=30000)
    live = page.locator("[data-testid=live]").first
    expect(live).to_contain_text(FULL[lang], timeout=10000)  # said for screen readers
    expect(page.get_by_role("button", name=PLAY[lang], exact=True)).to_have_count(1)  # stopped by itself
    expect(page.locator("[data-testid=said]")).to_contain_text(FULL[lang])  # and in view
    error = page.locator("[data-testid=error]")
    assert error.count() == 0 and "IndexError" not in live.inner_text()
    page.get_by_role("button", name=PLAY[lang], exact=True).click()  # Animar again: nothing to animate
    expect(live).to_have_text(FULL[lang])
    assert error.count() == 0
    bars, grid = page.locator(".kv-bars").first, page.locator(".kv-reads").first
    before = [bars.evaluate(PAGE_BOX), grid.evaluate(PAGE_BOX)]
    page.get_by_role("button", name=STEP[lang], exact=True).click()  # the reader's own step to 65
    error.wait_for()
    expect(live).to_contain_text("IndexError")
    expect(page.locator("[data-testid=said]")).to_contain_text("IndexError")
    after = [bars.evaluate(PAGE_BOX), grid.evaluate(PAGE_BOX)]
    for b, a in zip(before, after):
        assert abs(a["y"] - b["y"]) <= 2, (before, after)  # the error box moves nothing above it
    assert in_view(page.get_by_role("button", name=STEP[lang], exact=True).bounding_box(), height)
    shot(page, f"{where(app_url)}-watch-error-{lang}-{width}")
    assert errors(page) == []


def test_a_step_back_and_the_same_token_again(live, app_url):
    """Paso atrás (and ←) slices the cache; Avanzar then samples the same tokens again, as the
    candidates' ▶ says."""
    page = live.place(t=10, width=390, height=800)
    words = page.locator(".text .tok").all_inner_texts()
    drawn = page.locator("[data-testid=candidate-drawn] .tok").inner_text()
    assert drawn.replace("·", " ") == words[-1]  # a space drawn as a dot in the table
    page.get_by_role("button", name="Paso atrás", exact=True).click()
    wait_t(page, 9)
    expect(page.locator("[data-testid=said]")).to_have_text(re.compile(r"t = 9\. .*truncate"))
    page.keyboard.press("ArrowLeft")
    wait_t(page, 8)
    assert page.locator(".text .tok").all_inner_texts() == words[:8]
    page.keyboard.press("ArrowRight")
    wait_t(page, 9)
    page.keyboard.press("n")
    wait_t(page, 10)
    assert page.locator(".text .tok").all_inner_texts() == words
    expect(page.locator("[data-testid=candidate-drawn] .tok")).to_have_text(drawn)
    assert errors(page) == []


SIDEWAYS = """() => {
  // every box that scrolls sideways (its content wider than itself), across shadow roots: what it is,
  // whether a keyboard reaches it, and whether it shows the scroll cue (app/style/style.css)
  const found = [];
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      const s = getComputedStyle(el);
      if (['auto', 'scroll'].includes(s.overflowX) && el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0) {
        found.push({tag: el.tagName.toLowerCase(), cls: String(el.className), focusable: el.tabIndex >= 0,
                    cue: s.backgroundImage.includes('radial-gradient')});
      }
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return found;
}"""


@pytest.mark.static_only
def test_a_phone_reader_sees_what_scrolls_and_can_hit_every_answer(live, app_url):
    """At 320 px: what is wider than the screen scrolls in a box that shows it (and the keyboard
    reaches), code keeps its lines, every answer's target is at least 24 px high."""
    page = live.place(t=12, width=320, height=740)
    for title in (
        "Los datos en una tabla",
        "Pruébalo: la primera celda de la lección",
        "Comprueba tu intuición: cinco preguntas y un reto",
    ):
        open_card(page, title)
    page.locator("[data-testid=reads-table]").first.wait_for()
    boxes = page.evaluate(SIDEWAYS)
    assert any("table-scroll" in b["cls"] for b in boxes), boxes  # the reads' table, at 320 px
    for b in boxes:
        assert b["tag"] == "textarea" or (b["focusable"] and b["cue"]), b
    assert page.locator("textarea").first.evaluate("(el) => getComputedStyle(el).whiteSpace") == "pre"
    radios = page.get_by_role("radio")
    assert radios.count() >= 15
    for i in range(radios.count()):
        box = radios.nth(i).evaluate("(el) => el.closest('label').getBoundingClientRect().toJSON()")
        assert box["height"] >= 24, (i, box)
    restore = page.get_by_role("button", name="Restaurar la celda")
    assert restore.evaluate("(el) => getComputedStyle(el).borderTopColor") != "rgba(0, 0, 0, 0)"
    assert errors(page) == []


HEIGHTS = """() => { window.__heights = []; const main = document.getElementById('kv-main') || document.body;
  new ResizeObserver(() => window.__heights.push(main.getBoundingClientRect().height)).observe(main); }"""


@pytest.mark.static_only
@pytest.mark.parametrize("width", [360, 1280])
def test_a_step_does_not_make_the_page_bounce(live, app_url, width):
    """Every height the page takes during six steps (each with its clock measured afterwards): it
    grows with the text and never shrinks to grow back (within 2 px), so a course page's frame and
    the text below it stand still."""
    page = live.place(t=10, width=width, height=740)
    page.evaluate(HEIGHTS)
    step = page.get_by_role("button", name="Avanzar", exact=True)
    for t in range(11, 17):
        step.click()
        wait_t(page, t)
        expect(page.locator("[data-testid=clock-cached]")).not_to_have_text(re.compile("…"))  # measured
    heights = page.evaluate("window.__heights")
    drops = [(a, b) for a, b in zip(heights, heights[1:]) if b < a - 2]
    assert drops == [], heights


def places(page) -> list[float]:
    """Where the prefill's note ends (the grid begins) and the attention map's heading begins, from the
    grid's heading (the page may scroll to a clicked button)."""
    grid = page.get_by_role("heading", name="Claves y valores guardados", exact=False).bounding_box()
    note = page.locator("[data-testid=prefill]").bounding_box()
    reads = page.get_by_role("heading", name="Lo que lee la consulta", exact=False).bounding_box()
    return [round(note["y"] + note["height"] - grid["y"], 1), round(reads["y"] - grid["y"], 1)]


@pytest.mark.static_only
@pytest.mark.parametrize("width", [360, 1280])
def test_the_first_step_moves_neither_the_grid_nor_the_attention_map(live, app_url, width):
    """The lesson's first click: the prefill's note stays at every position (its words by mode), so the
    grid under it and the attention map under that stay where the reader is looking."""
    page = live.place(width=width, height=740)
    before = places(page)
    page.get_by_role("button", name="Avanzar", exact=True).click()
    wait_t(page, 3)
    expect(page.locator("[data-testid=prefill]")).to_contain_text("prefill (llenar)")
    assert places(page) == before
    page.get_by_role("button", name="Sin caché").click()
    expect(page.locator("[data-testid=prefill]")).to_contain_text("Sin caché, cada paso")
    assert errors(page) == []


@pytest.mark.static_only
@pytest.mark.parametrize("width,lang", [(360, "es"), (1280, "en")])
def test_a_phone_sees_the_newest_positions_of_the_cache_zoomed(live, app_url, width, lang):
    """64 positions in a phone's grid are 3 px each: there the grid shows the newest 16 (at least 12 px
    each), a step moves the window with t, and a strip under it shows the whole window with the part
    shown; a laptop's grid shows all 64 and no strip."""
    page = live.place(lang=lang, t=20, width=width, height=740)
    strip = page.locator("[data-testid=grid-zoom]")
    if width < 520:
        wait_grid_end(page, 20.5)
        first, last, frame = grid_range(page)
        assert (first, last) == (4.5, 20.5) and frame / 16 >= 12, (first, last, frame)
        expect(strip).to_be_visible()
        expect(strip).to_contain_text("5 a 20 de 64")
        page.get_by_role("button", name=STEP[lang], exact=True).click()
        wait_t(page, 21)
        wait_grid_end(page, 21.5)
        expect(strip).to_contain_text("6 a 21 de 64")
        assert grid_range(page)[0] == 5.5
    else:
        first, last, frame = grid_range(page)
        assert (first, last) == (0.5, 64.5) and frame / 64 >= 12, (first, last, frame)
        expect(strip).to_be_hidden()
    assert errors(page) == []


CUT = "(el) => el.scrollHeight > el.clientHeight + 1"  # the line holds less than its text
# the line whole, on top of what it covers, while it has the focus
WHOLE = """(el) => {
  const r = el.getBoundingClientRect();
  const top = el.getRootNode().elementFromPoint(r.left + r.width / 2, r.bottom - 4);
  return el.getRootNode().activeElement === el && el.scrollHeight <= el.clientHeight + 1 && top === el;
}"""


@pytest.mark.static_only
def test_a_line_cut_short_is_whole_at_a_tap(live, app_url):
    """After Paso atrás the bar's line says more than its two lines hold (the key sentence last): on a phone's
    touch screen a tap on it shows it whole, over the figure, the bar keeping its height; a tap elsewhere
    cuts it again. In Spanish, English and Portuguese."""
    from tests.browser import box_centre, touch_screen

    for lang in ("es", "en", "pt"):
        page = live.place(lang=lang, t=10, width=360, height=740)
        page.get_by_role("button", name=tr(lang, "back"), exact=True).click()
        wait_t(page, 9)
        said = page.locator("[data-testid=said]")
        expect(said).to_have_text(tr(lang, "live_back", t=9))
        line = said.element_handle()
        assert line.evaluate(CUT), lang
        bar = page.locator(".kv-bar").first.bounding_box()
        with touch_screen(page) as tap:
            tap(*box_centre(said.bounding_box()))
            page.wait_for_function(WHOLE, arg=line, timeout=5000)
            assert page.locator(".kv-bar").first.bounding_box() == bar  # nothing below it moved
            shot(page, f"said-whole-{lang}-360", full_page=False)
            tap(*box_centre(page.locator("[data-testid=bar-t]").bounding_box()))  # a tap on no control
            page.wait_for_function(f"(el) => el.getRootNode().activeElement !== el && ({CUT})(el)", arg=line)
        assert current_t(page) == 9
    assert errors(page) == []
