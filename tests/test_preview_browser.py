"""The preview answers the lesson's controls before Python runs, and the live page continues where the
reader is (issue 21): static site in headless Chromium, the app archive held back until the test lets
it go, so every click here lands on the preview.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from app.i18n import tr
from tests.browser import (
    DEEP_JS,
    STORM,
    box_centre,
    chromium_missing,
    open_page,
    record_console,
    serve,
    throttled_page,
    wait_for_text,
    wait_ready,
    wait_t,
)

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))

# The worker never hears where the reader is until the page is ready to show the live page: it builds it
# at the URL's state and moves it to the reader's place then (the path of the clicks made while the app
# is being built).
NO_POSITIONS = """
  const post = Worker.prototype.postMessage;
  Worker.prototype.postMessage = function (msg, ...rest) {
    if (msg && msg.type === "position") return;
    return post.call(this, msg, ...rest);
  };
"""


# The position the reader sees, looked at in every frame from the document's start: the preview's while it is
# there, else the live page's (its text's "t = N / 64"); each change, [t, "preview" or "live"].
SHOWN_T = (
    """
  window.__shown = [];
"""
    + DEEP_JS
    + """
  const look = () => {
    const snap = document.getElementById("kv-snapshot");
    const where = snap ? "preview" : "live";
    const el = snap ? snap.querySelector(".tpos") : deep(document, (e) => e.classList.contains("tpos"));
    const m = el && /t = (\\d+)/.exec(el.textContent);
    const last = window.__shown[window.__shown.length - 1];
    if (m && (!last || last[0] !== +m[1] || last[1] !== where)) window.__shown.push([+m[1], where]);
    requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
"""
)


# Every write of <html lang> from the document's start, [its value before, after] (the parser's own is
# no write).
LANG_WRITES = """
  window.__langWrites = [];
  new MutationObserver((records) => {
    for (const r of records) {
      if (r.target === document.documentElement) window.__langWrites.push([r.oldValue, r.target.getAttribute("lang")]);
    }
  }).observe(document, { attributes: true, attributeFilter: ["lang"], attributeOldValue: true, subtree: true });
"""


# What a test holds back: the app archive (Pyodide boots, the app cannot start until release()), or the
# runtime itself (nothing boots: what only the preview does, with the machine's cores to itself).
APP, RUNTIME = "**/assets/app.*.zip", "**/pyodide.asm.*"


class HeldApp:
    """The requests of `pattern` (the app archive by default) held until release(): Python cannot be
    ready before."""

    def __init__(self, context, pattern: str = APP):
        self.held, self.released = [], False
        context.route(pattern, self.handle)

    def handle(self, route):
        if self.released:
            route.continue_()
        else:
            self.held.append(route)

    def release(self):
        self.released = True
        for route in self.held:
            route.continue_()


def open_held(
    browser,
    url: str,
    init: str | None = None,
    width: int = 1280,
    height: int = 800,
    throttle: float = 1,
    hold: str = APP,
):
    context = browser.new_context(viewport={"width": width, "height": height})
    if init:
        context.add_init_script(init)
    app = HeldApp(context, hold)
    page = record_console(throttled_page(context, throttle))
    page.goto(url)
    page.wait_for_function("performance.getEntriesByName('kv-first-paint').length > 0", timeout=30000)
    return page, app


def preview_at(page, name: str):
    page.wait_for_function("(name) => document.getElementById('kv-snapshot').dataset.state === name", arg=name)


def said(page) -> str:
    return page.locator("#kv-say").inner_text()


def step_words(lang: str, t: int) -> str:
    """How the live region's words for a step to position t begin (the token, mode and count vary)."""
    return tr(lang, "live_step", t=t, n=64, tok="@", mode="@", c="@").split("@")[0]


def open_parse_held(browser, url: str, width: int, height: int, hold: str = APP):
    """A page of url loading with `hold` (HeldApp) and the document's parse held (HeldParse): its preview
    painted, its controls not started. (context, page, app, parse)."""
    context = browser.new_context(viewport={"width": width, "height": height})
    app = HeldApp(context, hold)
    parse = HeldParse(context)
    page = record_console(context.new_page())
    page.goto(url, wait_until="commit")
    return context, page, app, parse


@pytest.mark.parametrize("lang, told", [("es", True), ("en", False)])
def test_clicks_before_python_are_answered_and_kept(site, browser, lang, told):
    """Avanzar twice and Sin caché on the preview: answered at once, with the live page's words; the live
    page then shows t = 4 without the cache, the actions neither lost nor made twice, and the position the
    reader sees, looked at in every frame, never goes back nor anywhere else (issue 49). `told`: the worker
    builds the app there (position messages); else it is built at the URL's state and moved there when the
    page is ready to show it: nothing is replayed in front of the reader. And <html lang> is
    written once where the URL's language is not index.html's, never again: the preview, its controls,
    the hand-over and a step of the live page (written with its own value, it lays the page out again)."""
    t = lambda key, **kw: tr(lang, key, **kw)
    with serve(site) as url:
        page, app = open_held(
            browser, url + f"index.html?lang={lang}", LANG_WRITES + SHOWN_T + ("" if told else NO_POSITIONS)
        )
        snap = page.locator("#kv-snapshot")
        step = snap.get_by_role("button", name=t("step"))
        step.click()
        preview_at(page, f"{lang}-cache-3")
        assert said(page).startswith(step_words(lang, 3))
        step.click()
        snap.get_by_role("button", name=t("mode_full")).click()
        preview_at(page, f"{lang}-full-4")
        assert said(page) == t("live_mode", mode=t("mode_full"))
        assert page.evaluate("document.body.dataset.ready") is None  # all of it before Python was ready
        assert "t = 4 / 64" in snap.locator(".topbar").inner_text()
        app.release()
        wait_ready(page)
        assert page.evaluate("window.kv.replayed") == []
        page.wait_for_function("/mode=full&t=4&/.test(document.body.dataset.kvState || '')", timeout=20000)
        wait_t(page, 4)
        page.wait_for_function("window.__shown[window.__shown.length - 1][1] === 'live'")
        assert page.evaluate("window.__shown") == [[2, "preview"], [3, "preview"], [4, "preview"], [4, "live"]]
        # the reader's focus (on the preview's Sin caché) goes on from the live page's own
        focused = """() => { let el = document.activeElement;
                             while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
                             return el ? el.textContent.trim() : null; }"""
        assert page.evaluate(focused) == t("mode_full")
        page.get_by_role("button", name=t("step")).first.click()  # the live page goes on from there
        wait_t(page, 5)
        page.wait_for_function("/mode=full&t=5&/.test(document.body.dataset.kvState)", timeout=20000)
        assert page.evaluate("document.documentElement.lang") == lang
        assert page.evaluate("window.__langWrites") == ([] if lang == "es" else [["es", "en"]])
        assert not [m for m in page.console_messages if m.startswith(("error", "pageerror"))]


class HeldParse:
    """index.html as served, with a script the parser waits for right after the preview (held until
    release()): the preview is painted, the document not parsed to its end, the controls not started
    (they start with the document), as on a phone between the first paint and DOMContentLoaded."""

    HOLD = "/hold-the-parse.js"

    def __init__(self, context):
        self.held, self.released = [], False
        context.route("**/index.html*", self.page)
        context.route("**" + self.HOLD, self.script)

    def page(self, route):
        response = route.fetch()
        html = response.text()
        after = '<div id="kv-live">'  # the preview and its loading card are above it, the states ahead below
        assert html.count(after) == 1
        held = html.replace(after, f'<script src="{self.HOLD}"></script>' + after)
        route.fulfill(status=200, body=held, headers={"Content-Type": "text/html; charset=utf-8"})

    def script(self, route):
        if self.released:
            self.empty(route)
        else:
            self.held.append(route)

    def release(self):
        self.released = True
        for route in self.held:
            self.empty(route)

    @staticmethod
    def empty(route):
        route.fulfill(status=200, body="", headers={"Content-Type": "text/javascript"})


@pytest.mark.parametrize("width, height, key", [(360, 740, False), (1280, 800, True)])
def test_a_click_and_a_key_before_the_controls_start_are_answered_when_they_do(site, browser, width, height, key):
    """Avanzar clicked (and, on the laptop, → pressed) on the painted preview before its controls start (the
    document still being parsed): the click's step drawn at once in the preview's first part (the title,
    the controls and the text), from the first part index.html carries right after the preview's; not
    lost; answered, in order, when the controls start (the figures, the words), and the page says the
    last step's words, every part of it the state's own file node for node. The click's state is the one
    index.html carries parsed, drawn as it is (parsed again, 80 ms of that click at 4x in a trace); the
    next states' requests and the font samples wait for the frame that draws the answer. The wait is
    counted from the click. (The default language's page: index.html's own preview paints before the
    document is parsed; another language's waits for its state, swapped in as the controls start.)"""
    lang = "es"
    t = 4 if key else 3
    with serve(site) as url:  # on the phone the live page goes on from there; the laptop's ends on the preview
        context, page, app, parse = open_parse_held(browser, url + "index.html", width, height, RUNTIME if key else APP)
        page.evaluate(
            "addEventListener('click', (e) => { window.clickAt = e.timeStamp; }, { capture: true, once: true });"
            # when each frame starts to be drawn, and when the font samples come into the page
            "window.frameTimes = []; (function frame() { frameTimes.push(performance.now());"
            " requestAnimationFrame(frame); })();"
            "new MutationObserver((_, seen) => { if (document.querySelector('.kv-fonts')) {"
            " window.fontsAt = performance.now(); seen.disconnect(); } })"
            ".observe(document, { childList: true, subtree: true });"
            # what the live region is given to say, each time
            "window.sayings = []; new MutationObserver((records) => { const say = document.getElementById('kv-say');"
            " if (records.some((r) => say && say.contains(r.target))) sayings.push(say.textContent); })"
            ".observe(document, { childList: true, characterData: true, subtree: true })"
        )
        snap = page.locator("#kv-snapshot")
        snap.get_by_role("button", name=tr(lang, "step"), exact=True).click()
        if key:
            page.keyboard.press("ArrowRight")
        assert page.evaluate("document.readyState") == "loading" and parse.held  # the parse still held
        assert page.evaluate("performance.getEntriesByName('kv-controls').length") == 0
        # the click's step in the first part, at once (a key after it waits for the controls)
        assert "t = 3 / 64" in snap.locator(".topbar").inner_text()
        assert page.evaluate("[kv.preview.drawnEarly, kv.preview.log.length, kv.answers]") == [
            f"{lang}-cache-3",
            0,
            None,
        ]
        step = step_words(lang, 3)
        assert said(page).startswith(step)  # and its words, at once
        parse.release()
        preview_at(page, f"{lang}-cache-{t}")
        assert page.evaluate(SAME_AS_ITS_FILE, f"{lang}-cache-{t}") == [True, True]
        assert page.evaluate("window.kv.preview.log.map((e) => e.cmd)") == ["step"] * (t - 2)
        assert f"{lang}-cache-3" not in page.evaluate("window.kv.preview.parsedInSwap")
        # the reader's wait is counted from the click, not from the controls' start
        page.wait_for_function("performance.getEntriesByName('kv-first-answer').length > 0")
        waited, drawn, clicked, controls = page.evaluate(
            "[kv.answers[0], performance.getEntriesByName('kv-first-answer')[0].startTime, clickAt,"
            " performance.getEntriesByName('kv-controls')[0].startTime]"
        )
        assert clicked < controls and waited == pytest.approx(drawn - clicked, abs=0.01)
        # the next states' requests and the font samples wait for the kept click's frame (in its task they
        # were 39 and 29 ms of its wait at 4x)
        page.wait_for_function(
            "window.fontsAt !== undefined && performance.getEntriesByType('resource').some((e) => e.name.includes('/states-'))"
        )
        requested, fonts, frames = page.evaluate(
            "[performance.getEntriesByType('resource').filter((e) => e.name.includes('/states-')).map((e) => e.startTime),"
            " fontsAt, frameTimes]"
        )
        frame = min(f for f in frames if f > drawn)  # the frame that draws the answer
        assert min(requested) > drawn and fonts > frame, (drawn, frame, requested, fonts)
        assert f"t = {t} / 64" in snap.locator(".topbar").inner_text()
        assert said(page).startswith(step_words(lang, t))
        # each step's words said once: the click's when its first part was drawn, not again with the rest
        sayings = page.evaluate("sayings")
        assert len(sayings) == t - 2 and all(
            w.startswith(f"{step.split()[0]} {k}") for k, w in enumerate(sayings, 3)
        ), sayings
        if not key:
            app.release()
            wait_ready(page)
            wait_t(page, t)
        assert not [m for m in page.console_messages if m.startswith(("error", "pageerror"))]
        context.close()


def test_the_mode_switch_before_the_controls_start_is_drawn_at_once_and_answered_when_they_do(site, browser):
    """Sin caché clicked on the painted preview before its controls start: the first part (the switch, the
    bar, the text) shows the mode at once, from the first part index.html carries; when the controls start,
    the figures follow and the page says the mode's words, the whole state its own file node for node. A
    click on the mode already shown changes nothing; a click after the one drawn waits for the controls."""
    with serve(site) as url:
        context, page, app, parse = open_parse_held(browser, url + "index.html", 360, 740, RUNTIME)
        snap = page.locator("#kv-snapshot")
        bar = snap.locator(".topbar")
        bar.locator("[data-mode=cache]").click()  # the mode shown: nothing to do
        assert page.evaluate("kv.preview.drawnEarly") is None
        pressed = "[data-mode={}][aria-pressed=true]"
        assert bar.locator(pressed.format("cache")).count() == 1
        snap.get_by_role("button", name=tr("es", "mode_full"), exact=True).click()
        assert page.evaluate("document.readyState") == "loading" and parse.held
        assert page.evaluate("[kv.preview.drawnEarly, document.getElementById('kv-snapshot').dataset.state]") == [
            "es-full-2",
            "es-cache-2",
        ]
        assert bar.locator(pressed.format("full")).count() == 1 and said(page) == tr(
            "es", "live_mode", mode=tr("es", "mode_full")
        )
        snap.get_by_role("button", name=tr("es", "step"), exact=True).click()  # kept, drawn when they start
        assert "t = 2 / 64" in bar.inner_text()
        parse.release()
        preview_at(page, "es-full-3")
        assert page.evaluate(SAME_AS_ITS_FILE, "es-full-3") == [True, True]
        assert page.evaluate("window.kv.preview.log.map((e) => e.cmd)") == ["toggle", "step"]
        assert said(page).startswith(step_words("es", 3))
        assert not [m for m in page.console_messages if m.startswith(("error", "pageerror"))]
        context.close()


# The preview's speed slider: its thumb (the track's ::after) and its filled track (::before), and its width.
SLIDER = """() => {
  const i = document.querySelector('#kv-snapshot .speed i');
  const thumb = getComputedStyle(i, '::after'), track = getComputedStyle(i, '::before');
  const filled = /^linear-gradient\\(to right, (rgb\\([^)]*\\))/.exec(track.backgroundImage);
  return [{left: parseFloat(thumb.left), width: parseFloat(thumb.width), radius: thumb.borderRadius,
           colour: thumb.backgroundColor}, {colour: filled && filled[1]}, i.getBoundingClientRect().width];
}"""
ACCENT = """(() => { const el = document.createElement('span'); el.style.color = 'var(--kv-target)';
  document.body.appendChild(el); const c = getComputedStyle(el).color; el.remove(); return c; })()"""


def test_keys_and_animation_on_the_preview(site, browser):
    """The keyboard's shortcuts and Animar at the page's speed move the preview; Reiniciar goes back to the
    prompt, the step back one position. The speed's slider is drawn as the live one (issue 49): a thumb at
    the URL's speed (20 of 1 to 20: the track's end), the track filled up to it in the sliders' accent."""
    with serve(site) as url:
        page, _ = open_held(browser, url + "index.html?lang=pt&speed=20", hold=RUNTIME)
        thumb, track, width = page.evaluate(SLIDER)
        assert abs(thumb["left"] - (width - 16)) < 1 and thumb["width"] == 16 and thumb["radius"] == "50%"
        assert thumb["colour"] == track["colour"] == page.evaluate(ACCENT)
        page.locator("body").click(position={"x": 5, "y": 5})
        page.keyboard.press("n")
        preview_at(page, "pt-cache-3")
        page.keyboard.press("c")
        preview_at(page, "pt-full-3")
        page.keyboard.press("p")  # Animar: step after step, to the window's end
        page.wait_for_function("document.getElementById('kv-snapshot').dataset.state === 'pt-full-64'", timeout=30000)
        assert said(page).startswith(step_words("pt", 64))
        assert said(page).endswith(tr("pt", "window_full", n=64, next=65))  # stopped there, as the live page does
        assert page.evaluate("window.kv.preview.playing") is False
        page.keyboard.press("r")
        preview_at(page, "pt-full-2")
        assert said(page) == tr("pt", "live_reset", t=2, n=64)
        page.keyboard.press("b")  # the step back: nothing to undo at the prompt, as the live page says
        page.wait_for_function(
            "(s) => document.getElementById('kv-say').textContent === s", arg=tr("pt", "live_back_none")
        )
        page.keyboard.press("n")
        preview_at(page, "pt-full-3")
        page.locator("#kv-snapshot").get_by_role("button", name=tr("pt", "back")).click()
        preview_at(page, "pt-full-2")
        assert said(page) == tr("pt", "live_back", t=2)
        page.context.close()


# Whether the preview's title, text and figures, as the loader moved them node by node (static/diff.js
# diff), are the state's own file, node for node.
SAME_AS_ITS_FILE = """async (name) => {
  const cfg = JSON.parse(document.getElementById('kv-config').textContent);
  const html = await (await fetch(cfg.states + name + '.html')).text();
  const [top, bottom] = html.split(cfg.progressMarker);
  const tpl = document.createElement('template');
  tpl.innerHTML = top + bottom;
  const [fresh, figures] = tpl.content.children;
  const parts = document.querySelectorAll('#kv-snapshot > .kv-snap');
  const pictures = (part) => Array.from(part.querySelectorAll('.kv-picture'));
  const fresher = pictures(fresh);
  return [pictures(parts[0]).length === 2 && pictures(parts[0]).every((p, i) => p.isEqualNode(fresher[i])),
          parts[1].isEqualNode(figures)];
}"""


def test_each_state_drawn_is_its_file_node_for_node(site, browser):
    """The preview moves from state to state by changing only what differs: after every kind of move
    (the first step, where the clock's plot comes; steps; the mode both ways; the step back; Reiniciar)
    what the page shows is the state's own file. A step waits here until its changes were found ahead
    (in idle time, static/loader/preview.js findAhead), so the changes found ahead are the ones checked.
    Steps asked for faster than the preview draws: the latest drawn, the ones between passed over."""
    with serve(site) as url:
        page, _ = open_held(browser, url + "index.html?lang=en", hold=RUNTIME)
        snap = page.locator("#kv-snapshot")
        moves = [
            ("step", "cache-3"),
            ("step", "cache-4"),
            ("step", "cache-5"),
            ("mode_full", "full-5"),
            ("back", "full-4"),
            ("reset", "full-2"),
            ("step", "full-3"),
            ("step", "full-4"),
            ("mode_cache", "cache-4"),
        ]
        used = 0
        for key, state in moves:
            if key == "step":
                page.wait_for_function("(name) => window.kv.preview.foundAhead === name", arg=f"en-{state}")
                used += 1
            snap.get_by_role("button", name=tr("en", key), exact=True).click()
            preview_at(page, f"en-{state}")
            assert page.evaluate(SAME_AS_ITS_FILE, f"en-{state}") == [True, True], state
        assert page.evaluate("window.kv.preview.usedAhead") == used
        # ten steps asked for in one task, faster than any drawing: the tenth is drawn (from the fourth, node
        # for node), the nine between passed over, and every click answered by that drawing
        answers = page.evaluate("window.kv.answers.length")
        snap.get_by_role("button", name=tr("en", "step"), exact=True).evaluate(
            "(b) => { for (let i = 0; i < 10; i++) b.click(); }"
        )
        preview_at(page, "en-cache-14")
        assert page.evaluate("[window.kv.preview.passedOver, window.kv.answers.length]") == [9, answers + 10]
        assert page.evaluate(SAME_AS_ITS_FILE, "en-cache-14") == [True, True]
        assert said(page).startswith(step_words("en", 14))
        assert page.evaluate("document.body.dataset.ready") is None  # all of it on the preview
        page.context.close()


NEVER_IDLE = "window.requestIdleCallback = () => 0;"  # a page that is never idle (a phone, the worker booting)


def test_the_first_step_is_found_ahead_without_waiting_for_idle_time(site, browser):
    """The reader's most likely first click, Avanzar, has its changes found right after the first paint
    (static/loader/preview.js fetchAhead(true)), not in idle time, which comes late on a busy phone: on a page that
    is never idle they are found, and the click applies them; the next step's, left to idle time, are
    not."""
    with serve(site) as url:
        page, _ = open_held(browser, url + "index.html?lang=pt", NEVER_IDLE, hold=RUNTIME)
        page.wait_for_function("window.kv.preview.foundAhead === 'pt-cache-3'")
        page.locator("#kv-snapshot").get_by_role("button", name=tr("pt", "step"), exact=True).click()
        preview_at(page, "pt-cache-3")
        assert page.evaluate(SAME_AS_ITS_FILE, "pt-cache-3") == [True, True]
        assert page.evaluate("[window.kv.preview.usedAhead, window.kv.preview.foundAhead]") == [1, "pt-cache-3"]
        page.context.close()


BOKEH_METHODS_JS = """() => {
  const owner = (p, name) => { while (p && !Object.prototype.hasOwnProperty.call(p, name)) p = Object.getPrototypeOf(p); return p; };
  const view = Bokeh.Models.get('panel.models.layout.Column').prototype.default_view.prototype;
  const plot = Bokeh.Models.get('Plot').prototype.default_view.prototype;
  let base = view;
  while (Object.getPrototypeOf(base) && 'lazy_initialize' in Object.getPrototypeOf(base)) base = Object.getPrototypeOf(base);
  const found = [[base, 'lazy_initialize'], [view, 'build'], [view, 'render_to'], [view, 'after_resize'],
                 [view, 'invalidate_layout'], [plot, 'paint']];
  return found.map(([p, name]) => String(owner(p, name)[name])); }"""


def test_the_live_render_gives_the_page_back_while_it_builds(site, browser):
    """BokehJS builds and draws the live page in slices (static/loader/slices.js sliceRender): with a phone's CPU
    (4x) the views are built, the DOM made, the styles and the layout set and the plots painted in many
    tasks, not in one; meanwhile the live page takes no height (a course page's frame is not resized
    twice); afterwards the live page is whole and BokehJS's own methods are back."""
    with serve(site) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        page = record_console(throttled_page(context, 4))
        page.add_init_script(
            """addEventListener('DOMContentLoaded', () => {
                 const main = document.getElementById('kv-main'); window.heights = [];
                 new ResizeObserver(() => window.heights.push(main.getBoundingClientRect().height)).observe(main); });"""
        )
        page.goto(url + "index.html?lang=es")
        wait_ready(page)
        phases = page.evaluate("window.kv.renderSlices")
        # every phase gives the page back, the DOM more than once; each plot is painted in a task of its own
        assert set(phases) == {"views", "dom", "after_render", "layout", "paint"}, phases
        assert phases.count("dom") >= 2 and phases.count("paint") >= 2, phases
        methods = page.evaluate(BOKEH_METHODS_JS)
        assert len(methods) == 6
        assert not [
            m
            for m in methods
            if any(w in m for w in ("renderSlices", "unpainted.add", "resized.add", "toLayOut", "making"))
        ]
        # the preview's height, then the live page's (the same figure): never the two at once
        heights = page.evaluate("window.heights")
        assert max(heights) < 1.5 * heights[-1], heights
        assert page.evaluate("document.getElementById('kv-live').className") == ""
        wait_t(page, 2)  # the live page's own position
        errors = [m for m in page.console_messages if m.startswith(("error", "pageerror", "warning"))]
        assert not errors, errors
        context.close()


def test_the_live_page_waits_for_the_reader_to_pause(site, browser):
    """The live page's first render ends in one long draw (static/loader/controls.js readerPaused): while
    the reader is at work on the preview it waits, and begins QUIET_MS after their last key, where they
    are; BokehJS, staged, ran meanwhile."""
    quiet = int(
        re.search(r"const QUIET_MS = (\d+);", (ROOT / "static" / "loader" / "controls.js").read_text()).group(1)
    )
    with serve(site) as url:
        page, app = open_held(browser, url + "index.html?lang=es")
        page.locator("body").click(position={"x": 5, "y": 5})
        app.release()
        here = "['kv-bokeh-ready', 'kv-render-start'].every((m) => performance.getEntriesByName(m).length)"
        keys = 0
        answered = "window.kv.preview.done || window.kv.preview.shown === window.kv.preview.seq"
        while not page.evaluate(here):  # the reader steps on and back while the page loads, each key after
            page.keyboard.press("n" if keys % 2 == 0 else "b")  # the preview drew the one before (pressed
            keys += 1  # at once, a loaded machine made hundreds, and the live page replayed a third of them)
            page.wait_for_function(answered)
        page.keyboard.press("n")  # and once more with the live document waiting
        wait_ready(page)
        go, last, start = page.evaluate(
            "[performance.getEntriesByName('kv-render-go')[0].startTime, window.kv.lastInput,"
            " performance.getEntriesByName('kv-render-start')[0].startTime]"
        )
        assert keys > 0 and last > start  # the document was here before the last key
        assert go >= last + quiet - 1
        wait_t(page, 2 + keys % 2 + 1, timeout=60000)  # after the replay of the keys the app was not built with
        assert not [m for m in page.console_messages if m.startswith(("error", "pageerror"))]


@pytest.mark.parametrize("lang", ["pt"])
def test_the_step_past_the_window_waits_for_the_model(site, browser, lang):
    """At t = 64 a click on Avanzar before Python is ready is kept, the page says it waits for the model,
    and the live model answers it: the IndexError at 65."""
    with serve(site) as url:
        page, app = open_held(browser, url + f"index.html?lang={lang}&t=64")
        preview_at(page, f"{lang}-cache-64")
        page.locator("#kv-snapshot").get_by_role("button", name=tr(lang, "step")).click()
        page.wait_for_function("document.body.dataset.kept === '1'")
        assert said(page) == tr(lang, "shell_kept")
        assert tr(lang, "shell_kept") in page.locator("#kv-snapshot .topbar").inner_text()
        app.release()
        wait_ready(page)
        assert page.evaluate("window.kv.replayed") == ["step"]
        wait_for_text(page, "IndexError", timeout_ms=30000)
        assert re.search(r"t=64&", page.evaluate("document.body.dataset.kvState"))


# Where the figure's parts are (px from the document's top): the preview's headings, its sections' titles
# and Avanzar, then the same texts in the live page (in Bokeh's shadow roots), and the document's height.
PREVIEW_MARKS = """() => {
  const els = document.querySelectorAll('#kv-snapshot .kv-snap h2, #kv-snapshot .kv-snap h3, ' +
                                        '#kv-snapshot .cardhead > span:last-child, #kv-snapshot [data-kv=step]');
  return [...els].map((el) => [el.textContent.trim(), Math.round(el.getBoundingClientRect().top + scrollY)]);
}"""
LIVE_MARKS = """(texts) => {
  const found = {};
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.shadowRoot) walk(el.shadowRoot);
      const own = [...el.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent).join('').trim();
      if (own && texts.includes(own) && !(own in found) && !el.closest('.kv-strip')) {  // not the bar's strip
        const r = el.getBoundingClientRect();
        if (r.height > 0) found[own] = Math.round(r.top + scrollY);
      }
    }
  };
  walk(document.getElementById('kv-live'));
  return found;
}"""
SAME_PLACES = f"""([marks, height]) => {{
  if (document.body.dataset.ready !== 'true') return false;
  const found = ({LIVE_MARKS})(marks.map((m) => m[0]));
  window.__moved = marks.filter(([text, top]) => !(text in found) || Math.abs(found[text] - top) > 1)
                        .map(([text, top]) => [text, top, found[text]]);
  window.__height = document.documentElement.scrollHeight;
  return window.__moved.length === 0 && Math.abs(window.__height - height) <= 1;
}}"""


def preview_marks(page) -> tuple[list, int]:
    marks = page.evaluate(PREVIEW_MARKS)
    assert len(marks) > 15, marks  # the headings, the readouts' cards, the sections, Avanzar
    return marks, page.evaluate("document.documentElement.scrollHeight")


def live_in_place(page, marks, height) -> None:
    """Wait until the live page has every preview's mark where the preview had it (1 px for rounding) and
    the document the preview's height; else fail naming what moved."""
    try:
        page.wait_for_function(SAME_PLACES, arg=[marks, height], timeout=60000, polling=200)
    except Exception:
        moved, now = page.evaluate("[window.__moved, window.__height]")
        raise AssertionError(f"the hand-over moved (text, preview, live): {moved}; height {height} -> {now}") from None


@pytest.mark.parametrize(
    "lang, width, height, query",
    [
        ("es", 360, 740, ""),
        ("pt", 1280, 800, ""),
        ("es", 1280, 800, "&embed=1"),
        ("pt", 360, 740, "&theme=dark&t=22"),  # the grid zoomed (t past 16)
        ("en", 768, 1024, "&t=10&mode=full"),
    ],
)
def test_the_hand_over_moves_nothing(site, browser, lang, width, height, query):
    """The preview is laid out as the live page will be (app/figure/snapshot.py): when the live page takes
    its place, every heading, every section's title and Avanzar stay where they were, to the pixel, and
    the page keeps its height, so the course text below a frame does not move either."""
    with serve(site) as url:
        page, _ = open_page(browser, url + f"index.html?lang={lang}{query}", width=width, height=height)
        page.wait_for_function("performance.getEntriesByName('kv-first-paint').length > 0", timeout=30000)
        marks, total = preview_marks(page)
        live_in_place(page, marks, total)
        assert page.evaluate("document.querySelectorAll('#kv-snapshot, .kv-fonts').length") == 0  # the preview's, gone
        page.context.close()


def test_the_hand_over_moves_nothing_where_the_reader_went(site, browser):
    """Steps and Sin caché on the preview (the grey ramp and its strip drawn): the live page built there
    has everything where the preview had it."""
    with serve(site) as url:
        page, app = open_held(browser, url + "index.html?lang=es", width=360, height=740)
        snap = page.locator("#kv-snapshot")
        snap.get_by_role("button", name=tr("es", "step")).click()
        snap.get_by_role("button", name=tr("es", "mode_full")).click()
        preview_at(page, "es-full-3")
        marks, total = preview_marks(page)
        app.release()
        live_in_place(page, marks, total)
        page.context.close()


# the longest and a short label on a phone, and a laptop (English's buttons at another width: the hand-over's)
@pytest.mark.parametrize("lang, width, height", [("es", 360, 740), ("pt", 360, 740), ("es", 1280, 800)])
def test_avanzar_stays_under_the_reader_s_finger(site, browser, lang, width, height):
    """The text takes a line more every few steps, under the buttons (app/page.py): Avanzar is where it
    was at the prompt and at the window's end, in the preview and in the live page; a reader who taps the
    same spot again and again steps every time, on the preview and then on the live page."""
    step = tr(lang, "step")
    spot = lambda page, where: box_centre(where.get_by_role("button", name=step, exact=True).first.bounding_box())
    with serve(site) as url:
        spots = {}
        page, _ = open_held(browser, url + f"index.html?lang={lang}&t=64", width=width, height=height, hold=RUNTIME)
        preview_at(page, f"{lang}-cache-64")
        spots["preview t=64"] = spot(page, page.locator("#kv-snapshot"))
        page.context.close()
        page, app = open_held(browser, url + f"index.html?lang={lang}", width=width, height=height)
        spots["preview t=2"] = spot(page, page.locator("#kv-snapshot"))
        for t in range(3, 21):  # the same spot, tapped again and again
            page.mouse.click(*spots["preview t=2"])
            preview_at(page, f"{lang}-cache-{t}")
        app.release()
        wait_ready(page)
        wait_t(page, 20)
        spots["live t=20"] = spot(page, page)
        page.mouse.click(*spots["preview t=2"])  # the live page's Avanzar, where the preview's was
        wait_t(page, 21)
        page.keyboard.press("r")
        wait_t(page, 2)
        spots["live t=2"] = spot(page, page)
        page.get_by_role("button", name=step, exact=True).first.evaluate(STORM, 62)
        wait_t(page, 64)
        spots["live t=64"] = spot(page, page)
        xs, ys = zip(*spots.values())
        assert max(xs) - min(xs) <= 1 and max(ys) - min(ys) <= 1, spots  # 1 px for rounding, as the hand-over's
        page.context.close()


ZOOMED = """() => {
  const plot = document.querySelector('#kv-snapshot .zoomable');
  const ticks = [...plot.querySelectorAll('.xt')].filter((el) => getComputedStyle(el).display !== 'none');
  const inside = (el) => { const a = el.getBoundingClientRect(), b = plot.getBoundingClientRect();
                           return a.left + a.width / 2 >= b.left && a.left + a.width / 2 <= b.right; };
  return {ticks: ticks.filter(inside).map((el) => el.textContent), outside: ticks.filter((el) => !inside(el)).length,
          track: plot.querySelector('.track').getBoundingClientRect().width / plot.clientWidth};
}"""


@pytest.mark.parametrize("width", [360, 1280])
def test_the_preview_zooms_the_grid_as_the_live_page_does(site, browser, width):
    """On a phone the preview's grid shows the newest 16 positions with their ticks, as the live grid
    will (app/figure/grid.py ZOOM_JS); a step moves both; on a laptop all 64."""
    with serve(site) as url:
        page, _ = open_held(browser, url + "index.html?lang=es&t=20", width=width, height=740, hold=RUNTIME)
        preview_at(page, "es-cache-20")
        zoomed = width < 520
        seen = page.evaluate(ZOOMED)
        want = ["8", "12", "16", "20"] if zoomed else ["1", "8", "16", "24", "32", "40", "48", "56", "64"]
        assert seen == {"ticks": want, "outside": 0, "track": pytest.approx(4 if zoomed else 1, abs=0.01)}, seen
        page.locator("#kv-snapshot").get_by_role("button", name=tr("es", "step")).click()
        preview_at(page, "es-cache-21")
        if zoomed:
            assert page.evaluate(ZOOMED)["ticks"] == ["8", "12", "16", "20"]  # 6..21
            assert (
                page.locator("#kv-snapshot [data-testid=grid-zoom]")
                .inner_text()
                .startswith(tr("es", "grid_zoom", a=6, b=21, n=64)[:40])
            )
        page.context.close()


FIRST_FRAME = """async () => {
  const snap = document.getElementById('kv-snapshot');
  const proof = () => snap.querySelector('[data-testid=reads-proof]').textContent;
  const before = proof();
  snap.querySelector('[data-kv=step]').click();
  await new Promise((r) => requestAnimationFrame(r));  // the answer's frame, before its paint
  return {t: snap.querySelector('.bar-t').textContent.trim(), state: snap.dataset.state,
          proofChanged: proof() !== before, later: kv.preview.drawnLater};
}"""


def test_a_click_draws_what_the_reader_sees_in_its_own_frame(site, browser):
    """On a phone most of the figure is below the screen: a click's frame draws the changes in sight (t,
    the text), and the next frame the rest (here the attention map's proof, far below); then the page
    is the state's file (test_each_state_drawn_is_its_file_node_for_node checks it node for node). The
    control bar is always drawn at once: the live region reads its words, wherever the reader is."""
    with serve(site) as url:
        page, _ = open_held(browser, url + "index.html?lang=es", width=360, height=740, hold=RUNTIME)
        preview_at(page, "es-cache-2")
        first = page.evaluate(FIRST_FRAME)
        assert first["t"] == "t = 3 / 64" and first["state"] == "es-cache-2", first
        assert not first["proofChanged"] and first["later"] > 0, first
        preview_at(page, "es-cache-3")
        proof = page.locator("#kv-snapshot [data-testid=reads-proof]").inner_text()
        assert proof.startswith(tr("es", "reads_cached", t=3, n=2, diff="@").split("@")[0]), proof
        # far below the figure, the control bar out of sight: a key's step is still announced in its words
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.keyboard.press("ArrowRight")
        preview_at(page, "es-cache-4")
        assert said(page).startswith(step_words("es", 4))
        page.context.close()


FIRST_FRAME_BELOW = """async () => {
  const snap = document.getElementById('kv-snapshot');
  window.__heads = 0;  // cards' heads added to the preview
  const count = (records) => { for (const r of records) for (const n of r.addedNodes)
    if (n.classList && n.classList.contains('cardhead')) window.__heads += 1; };
  const seen = new MutationObserver(count);
  seen.observe(snap, {childList: true, subtree: true});
  const label = snap.querySelector('[data-kv=play]').firstChild;
  snap.querySelector('[data-kv=step]').click();
  await new Promise((r) => requestAnimationFrame(r));  // the answer's frame, before its paint
  count(seen.takeRecords());
  return {t: snap.querySelector('.bar-t').textContent.trim(), heads: window.__heads,
          label: snap.querySelector('[data-kv=play]').firstChild === label};
}"""


def test_a_step_s_cards_far_below_wait_for_the_frame_after_the_answer(site, browser):
    """The first step adds heads of the sections' cards at the end of the figures: on a laptop's screen
    far below it, so the click's frame lays out what the reader sees without them (an appended node is
    drawn where the parent's last child is); the play button's words, the same, are left as they are.
    The next frame draws the rest: the page is the state's file."""
    with serve(site) as url:
        page, _ = open_held(browser, url + "index.html?lang=es", hold=RUNTIME)
        page.wait_for_function("window.kv.preview.foundAhead === 'es-cache-3'")
        first = page.evaluate(FIRST_FRAME_BELOW)
        assert first == {"t": "t = 3 / 64", "heads": 0, "label": True}, first
        preview_at(page, "es-cache-3")
        page.wait_for_function("window.__heads > 0")  # then, in the frame after
        assert page.evaluate(SAME_AS_ITS_FILE, "es-cache-3") == [True, True]
        page.context.close()


TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"


def test_a_click_reads_no_layout_when_the_view_is_the_one_found_ahead(site, browser):
    """Which of a step's changes are in the reader's sight is found with the changes, ahead (static/loader/preview.js
    splitOps): the first click applies both, reading no layout. After a scroll the view is another: the
    click finds them again. Either way the state drawn is its file, node for node."""
    with serve(site) as url:
        page, _ = open_held(browser, url + "index.html?lang=en", hold=RUNTIME)
        page.wait_for_function("window.kv.preview.foundAhead === 'en-cache-3'")
        page.locator("#kv-snapshot").get_by_role("button", name=tr("en", "step"), exact=True).click()
        preview_at(page, "en-cache-3")
        assert page.evaluate(SAME_AS_ITS_FILE, "en-cache-3") == [True, True]
        assert page.evaluate("[window.kv.preview.usedAhead, window.kv.preview.splitAhead]") == [1, 1]
        page.wait_for_function("window.kv.preview.foundAhead === 'en-cache-4'")
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        page.evaluate(TWO_FRAMES)  # the scroll's event is in
        page.keyboard.press("ArrowRight")
        preview_at(page, "en-cache-4")
        assert page.evaluate(SAME_AS_ITS_FILE, "en-cache-4") == [True, True]
        assert page.evaluate("[window.kv.preview.usedAhead, window.kv.preview.splitAhead]") == [2, 1]
        page.context.close()


SAMPLES_LAID_OUT = "document.querySelectorAll('.kv-fonts *').length"


def test_a_press_holds_the_font_samples_until_its_click_is_answered(site, browser):
    """A reader's click comes at the release of a press: while the button is down no text of the font
    samples is laid out (askForFonts waits, so the release finds the main thread free of them), and once
    the click is answered they go on to the end. At 4x, as on a phone: the samples take seconds."""
    with serve(site) as url:
        page = pressed_while_samples_are_laid_out(browser, url + "index.html?lang=pt")
        # two frames with the button down (in one call: the press counts as released after RELEASE_WAIT_MS)
        held, after, asked = page.evaluate(f"""async () => {{ const held = {SAMPLES_LAID_OUT};
            await ({TWO_FRAMES})(); return [held, {SAMPLES_LAID_OUT}, window.kv.preview.fontsAsked]; }}""")
        assert [after, asked] == [held, False]
        page.mouse.up()
        preview_at(page, "pt-cache-3")
        page.wait_for_function("window.kv.preview.fontsAsked", timeout=30000)
        assert page.evaluate(SAMPLES_LAID_OUT) > held
        page.context.close()


def pressed_while_samples_are_laid_out(browser, url: str, tries: int = 3):
    """A page of url at 4x, its Avanzar pressed (not released) while the font samples are being laid out,
    one a task, and a text of them found the press and waits. On a loaded machine the press may reach the
    page after the last sample: then a new page, `tries` at most. A press the page hears of before its
    start-up tasks are done may outlast RELEASE_WAIT_MS there, and then counts as released: hence not earlier."""
    for _ in range(tries):
        page, _ = open_held(browser, url, width=360, height=740, throttle=4)
        box = page.locator("#kv-snapshot").get_by_role("button", name=tr("pt", "step"), exact=True).bounding_box()
        page.mouse.move(*box_centre(box))
        page.wait_for_function(f"{SAMPLES_LAID_OUT} > 0", timeout=30000)
        page.mouse.down()
        page.wait_for_function("window.kv.preview.fontsWaited > 0 || window.kv.preview.fontsAsked")
        if page.evaluate("window.kv.preview.fontsWaited") > 0:
            return page
        page.context.close()  # every sample was laid out before the press came
    raise AssertionError(f"in {tries} pages no text of the font samples waited for a press")


def fonts_laid_out(page) -> set[tuple]:
    """Every font the preview's texts, its live region's and the font samples' are laid out in, as
    Chromium fetched it for them: (family, size, weight, style), the hidden and the unseen included
    (their layout needs the font all the same). The loading card's words are the shell's, not the
    states': left out."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    found, todo = set(), [(cdp.send("DOM.getDocument", {"depth": -1})["root"], False)]
    while todo:
        node, inside = todo.pop()
        attrs = dict(zip(node.get("attributes", [])[::2], node.get("attributes", [])[1::2]))
        classes = attrs.get("class", "").split()
        inside = inside or "kv-snap" in classes or "kv-fonts" in classes or attrs.get("id") == "kv-say"
        children = node.get("children", [])
        todo += [(c, inside) for c in children]
        if not inside or not any(c["nodeType"] == 3 and c["nodeValue"].strip() for c in children):
            continue
        style = {
            p["name"]: p["value"]
            for p in cdp.send("CSS.getComputedStyleForNode", {"nodeId": node["nodeId"]})["computedStyle"]
        }
        for font in cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node["nodeId"]})["fonts"]:
            found.add((font["familyName"], style["font-size"], style["font-weight"], style["font-style"]))
    cdp.detach()
    return found


@pytest.mark.parametrize(
    "lang, query, width, actions, shown",
    [
        ("es", "", 1280, ["step", "step", "mode_full", "step", "reset"], "es-full-2"),
        ("en", "&t=62", 1280, ["step", "step", "mode_full", "back"], "en-full-63"),
        ("pt", "", 360, ["step", "mode_full", "step", "back"], "pt-full-3"),
    ],
)
def test_the_preview_asks_for_no_font_it_did_not_ask_for_after_its_first_paint(
    site, browser, lang, query, width, actions, shown
):
    """Chromium fetches a font, at each size and weight, the first time a text needs it, from its browser
    process and on the page's main thread: the first step waited for the fonts of the first sampled
    token, the ▶ and ▲ and the live region's words. After the first paint the loader lays out a sample
    of every kind of text of every state, a text a task (app/figure/font_samples.py, askForFonts):
    then the steps, the switch, the last position and the words said ask for no other font."""
    with serve(site) as url:
        page, _ = open_held(browser, url + f"index.html?lang={lang}{query}", width=width, height=800, hold=RUNTIME)
        preview_at(page, f"{lang}-cache-{62 if query else 2}")
        page.wait_for_function("window.kv.preview.fontsAsked && !document.getElementById('kv-fonts')")
        first = fonts_laid_out(page)
        snap = page.locator("#kv-snapshot")
        for action in actions:
            before = page.evaluate("document.getElementById('kv-snapshot').dataset.state")
            snap.get_by_role("button", name=tr(lang, action), exact=True).click()
            page.wait_for_function(
                "(before) => document.getElementById('kv-snapshot').dataset.state !== before", arg=before
            )
            assert page.locator("#kv-say").inner_text().strip()  # the live region said it
            new = fonts_laid_out(page) - first
            assert not new, (action, new)
        preview_at(page, shown)
        # the samples are not the reader's: out of sight, out of the accessibility tree, taking no room
        box = page.evaluate(
            "(() => { const f = document.querySelector('.kv-fonts'); const r = f.getBoundingClientRect();"
            " return [r.width, r.height, getComputedStyle(f).visibility, f.inert]; })()"
        )
        assert box == [0, 0, "hidden", True], box
        page.context.close()


BAR_JS = (
    "[document.getElementById('kv-bar').style.transform,"
    " document.getElementById('kv-meter').getAttribute('aria-valuenow')]"
)


def test_the_loading_bar_moves_in_steps_the_compositor_need_not_animate(site, browser):
    """While Pyodide boots (seconds at 4x) the loading bar moves, and its value is said to assistive
    technology, in steps: no animation runs on the page, so the compositor draws a frame when the bar
    moves, not at every vsync beside the boot and the reader's clicks (a 0.12 s transition after each
    step did that: docs/performance.md, twelfth session)."""
    with serve(site) as url:
        page, app = open_held(browser, url + "index.html", throttle=4)
        first, _ = page.evaluate(BAR_JS)
        page.wait_for_function(f"{BAR_JS}[0] !== {first!r}")  # it moves
        for _ in range(3):
            transform, said = page.evaluate(BAR_JS)
            scale = float(re.fullmatch(r"scaleX\(([0-9.]+)\)", transform).group(1))
            assert 0 < scale <= 1 and said == str(math.floor(scale * 100 + 0.5))  # JavaScript's Math.round: 12.5 -> 13
            running = "document.getAnimations().map((a) => a.effect.target.id || a.effect.target.className)"
            assert page.evaluate(running) == []
            page.evaluate(TWO_FRAMES)
        assert page.evaluate("document.body.dataset.ready") is None  # all of it while booting
        app.release()
        page.context.close()
