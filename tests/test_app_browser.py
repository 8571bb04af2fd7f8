"""The explorable in a real browser: served by `panel serve` (development) and, where the
compiled Pyodide packages are available, as the static site running in Pyodide.

Headless Debian Chromium driven by Playwright; screenshots go to test-output/.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app.i18n import tr
from app.sections import SECTIONS
from tests.browser import (
    DEEP_JS,
    STORM,
    chromium_missing,
    current_t,
    errors,
    foreign,
    measure,
    open_all_sections,
    open_app,
    open_card,
    plain,
    run_and_wait,
    shot,
    text_of,
    wait_plain,
    wait_t,
)


def where(app_url: str) -> str:
    return "static-" if app_url.endswith("index.html") else "served-"


pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")


def t_at_least(n: int) -> re.Pattern:
    """The position readout at n or later."""
    return re.compile(rf"^t = ({'|'.join(str(t) for t in range(n, 65))}) / 64$")


def test_step_to_64_totals_then_index_error_then_reset(live, app_url):
    page = live.place()
    step = page.get_by_role("button", name="Avanzar")
    for t in range(3, 13):  # ten steps with the button
        step.click()
        wait_t(page, t)
    page.locator("body").click(position={"x": 5, "y": 5})  # focus the page, not the button
    for t in range(13, 65):  # the rest with the keyboard
        page.keyboard.press("ArrowRight" if t % 2 else "n")
        wait_t(page, t)
    wait_plain(page, "total-cached", "8921088")  # the lesson's totals, read off the page
    wait_plain(page, "total-full", "295526400")
    assert text_of(page, "total-ratio").strip() == "33.1×"
    assert plain(text_of(page, "token-ratio")) == "64×"
    assert "16 384" in text_of(page, "memory-numbers").replace("\u202f", " ")
    assert "128 KiB" in text_of(page, "memory-numbers").replace("\u202f", " ")
    # the clock, measured here, beside the count; its explanation appears at 64
    expect(page.locator("[data-testid=clock-ratio]")).to_have_text(re.compile(r"El reloj: [\d.]+× · la cuenta: 64×"))
    expect(page.locator("[data-testid=clock-explain]")).to_have_count(1)
    expect(page.locator("[data-testid=proof]")).to_have_text(re.compile(r"\d(\.\d)?e-1[3-6]"))
    shot(page, where(app_url) + "app-es-t64")

    page.keyboard.press("n")  # position 65
    err = page.locator("[data-testid=error]")
    err.wait_for()
    assert "IndexError: index 64 is out of bounds for axis 0 with size 64" in err.inner_text()
    assert "64 filas" in err.inner_text()
    assert current_t(page) == 64
    live = page.locator("[data-testid=live]").first
    assert "IndexError" in live.inner_text()
    shot(page, where(app_url) + "app-es-index-error")

    step.click()  # again: still the error, nothing breaks
    assert err.is_visible() and current_t(page) == 64
    page.get_by_role("button", name="Reiniciar").click()
    wait_t(page, 2)
    err.wait_for(state="hidden")
    assert errors(page) == []
    assert foreign(page.requests) == [], foreign(page.requests)  # nothing left 127.0.0.1


def test_toggle_mode_at_any_t(live, app_url):
    page = live.place(t=20)
    cached_row = page.locator("[data-testid=token-cached]").locator("xpath=..")
    full_row = page.locator("[data-testid=token-full]").locator("xpath=..")
    assert "active" in cached_row.get_attribute("class")
    page.get_by_role("button", name="Sin caché").click()
    full_row = page.locator("[data-testid=token-full]").locator("xpath=..")
    full_row.and_(page.locator(".active")).wait_for()
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("n")
    wait_t(page, 21)
    wait_plain(page, "token-full", str(21 * (131072 + 256 * 21)))
    page.keyboard.press("c")  # back to the cache with the keyboard
    page.locator("[data-testid=token-cached]").locator("xpath=..").and_(page.locator(".active")).wait_for()
    shot(page, where(app_url) + "app-es-toggle")
    assert errors(page) == []


def test_url_state_in_english(browser, app_url):
    page, _ = open_app(browser, app_url, "?lang=en&mode=full&t=40&seed=3&embed=1", width=1000)
    wait_t(page, 40)
    assert page.get_by_role("button", name="Step").count() == 1
    assert page.locator("h1").count() == 0  # embed: no page chrome
    assert "active" in page.locator("[data-testid=token-full]").locator("xpath=..").get_attribute("class")
    wait_plain(page, "total-full", str(sum(t * (131072 + 256 * t) for t in range(1, 41))))
    shot(page, where(app_url) + "app-en-url-state")


# Each frame the reader sees: the position the figure shows (its control bar's "t = N / 64", in Bokeh's
# shadow roots) and the place a reload and the share link keep (<body data-kv-state>), in the first frame
# that shows each new position. (The place may go ahead of the figure: it is what the reader asked for.)
FIRST_FRAMES = (
    """() => {"""
    + DEEP_JS
    + """
  window.kvFirstFrames = [];
  let last = null;
  const frame = () => {
    const shown = deep(document, (el) => el.classList.contains('tpos')), kept = /[?&]t=(\\d+)/.exec(document.body.dataset.kvState || '');
    const t = shown && /t\\s=\\s(\\d+)/.exec(shown.textContent);
    if (t && t[1] !== last) kvFirstFrames.push([+t[1], kept && +kept[1]]);
    if (t) last = t[1];
    requestAnimationFrame(frame);
  };
  frame();
}"""
)


def test_the_place_a_reload_keeps_is_the_one_shown_at_every_frame(live, app_url):
    """Python sends the page's state with the figure's changes, so that the place a reload, a share link
    or a page stopped in between keeps is never a step behind the position shown."""
    page = live.place()
    page.evaluate(FIRST_FRAMES)
    step = page.get_by_role("button", name="Avanzar")
    for t in (3, 4, 5):
        step.click()
        wait_t(page, t)
    page.get_by_role("button", name="Reiniciar").click()
    wait_t(page, 2)
    assert page.evaluate("kvFirstFrames") == [[2, 2], [3, 3], [4, 4], [5, 5], [2, 2]]


def test_bad_url_values_show_notices_and_work(browser, app_url):
    page, _ = open_app(browser, app_url, "?t=999&lang=xx&seed=abc&mode=turbo")
    wait_t(page, 2)
    notes = page.locator("[role=note]")
    assert notes.count() == 4
    assert "t=999" in notes.all_inner_texts()[0] or any("t=999" in n for n in notes.all_inner_texts())
    page.get_by_role("button", name="Avanzar").click()
    wait_t(page, 3)
    assert errors(page) == []


def test_animation_and_click_storm(live, app_url):
    page = live.place()
    page.get_by_role("button", name="Animar").click()
    expect(page.locator(".tpos").first).to_have_text(t_at_least(6), timeout=15000)  # it plays by itself
    before = current_t(page)
    step = page.get_by_role("button", name="Avanzar")
    step.evaluate(STORM, 10)  # ten clicks at once while it plays
    page.get_by_role("button", name="Pausa").click()
    # Events reach Python in order, and its changes reach the page in order: once the button says
    # Animar again, every storm click has landed and no animation step is pending.
    page.get_by_role("button", name="Animar").wait_for()
    paused = current_t(page)
    assert paused >= before + 10, (before, paused)  # ten storm clicks on top of the animation
    step.click()  # one step more is exactly one: nothing else moves
    wait_t(page, paused + 1)
    assert current_t(page) == paused + 1, "still stepping after Pausa"
    assert errors(page) == []
    # storm through 64: the error appears, the page survives, Reset works
    step.evaluate(STORM, 70)
    page.locator("[data-testid=error]").wait_for(timeout=30000)
    page.get_by_role("button", name="Reiniciar").click()
    wait_t(page, 2)
    assert errors(page) == []


def test_phone_width_and_language_switch(live, app_url):
    page = live.place(width=360, height=740)
    shot(page, where(app_url) + "app-es-phone")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360 + 1, f"horizontal scroll at 360 px: {width}"
    assert open_all_sections(page) == 2 + len(SECTIONS)  # the settings, the data table and every section, built
    page.get_by_role("button", name="English").click()
    page.get_by_role("button", name="Step", exact=True).wait_for()  # not "Step the batch" of an open section
    measure = "Measure in my browser" if app_url.endswith("index.html") else "Measure on the server"
    for name in (measure, "Step the batch", "Next phase"):  # the sections relabelled too, saying where they run
        page.get_by_role("button", name=name, exact=True).wait_for()
    shot(page, where(app_url) + "app-en-phone")
    assert errors(page) == []
    if app_url.endswith("index.html"):  # every model of every section known without bokeh-tables (on demand)
        assert not [r for r in page.requests if "bokeh-tables" in r]
        assert page.evaluate("window.kv.onDemandFor === undefined")


def test_sections_below_the_figure(live, app_url):
    page = live.place(t=64, width=1100)
    # 1. your milliseconds
    # where the page measures, said as it is: the reader's browser, or the server under Panel's
    here, mine = (
        ("en tu navegador", "en mi navegador")
        if app_url.endswith("index.html")
        else (
            "en el servidor de esta página",
            "en el servidor",
        )
    )
    open_card(page, f"Tus milisegundos: la tabla de la lección, medida {here}")
    measure(page, "timing-status", f"Medir {mine}")
    table = page.locator("[data-testid=timing-table]").inner_text()
    for t in ("8", "16", "32", "48", "64"):
        assert re.search(rf"(^|\n){t}\t", table), table
    assert "9\u202f437\u202f184" in table or "9 437 184" in table
    assert "Hecho: 5 posiciones" in text_of(page, "timing-status")
    explain = text_of(page, "timing-explain")  # written from the table's own numbers
    ratio = re.search(r"(\S+)×", table.splitlines()[-1].split("\t")[5]).group(1)
    busy = "algo más ocupaba tu máquina" in explain  # the clock's ratio upside down: said so, and measure again
    assert "la cuenta dice 64 veces" in explain and (f"el reloj, {ratio}" in explain or "no vio" in explain or busy)
    # 2. the lesson's cell, in the code sandbox: tests/test_sandbox_browser.py, under both servers
    # 3. quiz and challenge
    open_card(page, "Comprueba tu intuición: cinco preguntas y un reto")
    page.get_by_role("radio", name="Porque la máscara hace que la fila i sólo dependa de los tokens 1 a i").check()
    page.locator("[data-testid=quiz-fixed]").wait_for()
    assert "Correcto" in text_of(page, "quiz-fixed")
    page.get_by_role("radio", name="64 veces, lo mismo que cuesta de más el último token de la ventana").check()
    page.locator("[data-testid=quiz-total]").wait_for()
    total = text_of(page, "quiz-total")
    assert "No exactamente" in total and "33.1×" in total and "(T+1)/2 = 32.5" in total and "t = 512" in total
    editor = page.get_by_role("textbox", name="Tu código")
    if where(app_url) == "static-":  # the reader's code runs in the browser's sandbox under both servers
        assert "no da lo mismo que el modelo" in run_and_wait(page, "challenge-result", "Comprobar").inner_text()
        editor.fill("def atencion(q, K, V):\n    return q @ K\n")
        assert "ValueError" in run_and_wait(page, "challenge-result", "Comprobar").inner_text()
    page.get_by_role("button", name="Ver una solución").click()
    expect(editor).to_have_value(re.compile(r"w = w / w.sum\(\)"))
    assert "Igual que el modelo" in run_and_wait(page, "challenge-result", "Comprobar").inner_text()
    # 4. how much context fits
    open_card(page, "¿Cuánto contexto cabe? La memoria de la caché en modelos reales")
    page.get_by_role("combobox", name="Modelo de partida").select_option(index=0)  # the lesson's 7B first
    page.locator("[data-testid=ctx-tokens]", has_text="19\u202f377").wait_for()
    page.get_by_role("combobox", name="Modelo de partida").select_option(
        label="El mini-GPT de la lección (L 2, d 64, float64)"
    )
    page.locator("[data-testid=ctx-tokens]", has_text="64 tokens").wait_for()
    assert "ventana de contexto del modelo, 64 tokens" in text_of(page, "ctx-cap")
    shot(page, where(app_url) + "app-es-sections")
    assert errors(page) == []


# The calculator's labels, inputs and selects (through every shadow root below the elements marked
# ctx-fields): their boxes on the page.
CTX_BOXES = """() => {
  const hosts = [], out = [];
  const find = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.classList.contains('ctx-fields')) hosts.push(el);
      if (el.shadowRoot) find(el.shadowRoot);
    }
  };
  const collect = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.matches('label, input, select')) {
        const r = el.getBoundingClientRect();
        if (r.width > 0 && r.height > 0)
          out.push({what: el.tagName + ' ' + (el.innerText || el.value || '').slice(0, 30),
                    x: r.x, y: r.y, w: r.width, h: r.height});
      }
      if (el.shadowRoot) collect(el.shadowRoot);
    }
  };
  find(document);
  for (const h of hosts) { collect(h.shadowRoot || h); }
  const seen = new Set();
  return out.filter(b => { const k = [b.what, b.x, b.y].join(); if (seen.has(k)) return false; seen.add(k); return true; });
}"""


def overlaps(boxes, tolerance=0.5):
    """Pairs of boxes that share more than a sliver."""
    found = []
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            dx = min(a["x"] + a["w"], b["x"] + b["w"]) - max(a["x"], b["x"])
            dy = min(a["y"] + a["h"], b["y"] + b["h"]) - max(a["y"], b["y"])
            if dx > tolerance and dy > tolerance:
                found.append((a["what"], b["what"]))
    return found


@pytest.mark.static_only
def test_sections_calculator_layout_and_typed_numbers(live):
    """At 360 and 1280 px no label or input of the calculator overlaps another (labels wrap); in
    Portuguese the page says Avançar, the preset's 19.377 tokens, and a decimal comma typed in a field is
    read as one."""
    from app.i18n import num
    from app.sections.context.logic import PRESETS

    for lang, width in (("es", 360), ("es", 1280), ("pt", 1280)):
        page = live.place(lang=lang, width=width, height=900)
        open_card(page, tr(lang, "ctx_title"))
        page.get_by_role("combobox", name=tr(lang, "ctx_preset")).select_option(index=0)  # the lesson's 7B
        page.locator("[data-testid=ctx-tokens]").wait_for()
        boxes = page.evaluate(CTX_BOXES)
        labels = [b for b in boxes if b["what"].startswith("LABEL")]
        assert len(labels) == 11 and len(boxes) == 22, boxes  # the preset and ten values
        assert overlaps(boxes) == [], (width, overlaps(boxes))
        assert page.evaluate("document.documentElement.scrollWidth") <= width + 1
        shot(page, f"static-ctx-{lang}-{width}")
    assert page.get_by_role("button", name="Avançar").count() == 1
    page.locator("[data-testid=ctx-tokens]", has_text="19.377 tokens").wait_for()
    field = page.get_by_role("textbox", name="Reservado para o sistema (GiB)")
    expect(field).to_have_value("1,5")
    field.fill("2,5")
    field.press("Enter")
    tokens = num(PRESETS["7b-mha"].with_(overhead_gib=2.5).tokens_per_user(), "pt")
    page.locator("[data-testid=ctx-tokens]", has_text=f"{tokens} tokens").wait_for()
    assert errors(page) == []
