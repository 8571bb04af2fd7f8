"""Continuous batching in a real browser, on both servers (Panel's and the static site in Pyodide): the
section opened (and on the static site, model.scheduler imported only then), its two pictures of the
slots drawn, every text checked against decoding it alone, the chapter's natural reading over seeds before
its tuned pair, both policies served and the steps timed on the reader's clock, the tables and the sentences
from the same numbers (the measured ratio's words from its spread, the model of cost called one), in Spanish
and then in English; it fits a 320 px screen and axe-core finds nothing serious in it.

Headless Debian Chromium driven by Playwright; screenshots go to test-output/.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app.i18n import tr
from app.sections.continuous.logic import chapter_rows
from app.state import clock
from tests.axe import violations
from tests.browser import (
    chromium_missing,
    errors,
    foreign,
    measure,
    open_card,
    shot,
    switch_language,
    text_of,
    touch_screen,
)
from tests.test_a11y_browser import assert_fits
from tests.test_beyond_browser import page_modules, static

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

LAZY = {"model.scheduler", "app.sections.continuous.logic"}
TITLE = {
    "es": "Lugares que se liberan: el lote continuo (continuous batching)",
    "en": "Slots that free up: continuous batching",
}

# canvases anywhere in the page, shadow roots included, drawn at a size (Bokeh's plots)
CANVASES = """() => {
  let n = 0;
  const walk = (root) => {
    for (const el of root.querySelectorAll('*')) {
      if (el.tagName === 'CANVAS' && el.getBoundingClientRect().width > 100) n += 1;
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return n;
}"""


def table_rows(page, testid: str) -> list[list[str]]:
    return [
        [c.strip() for c in r.split("\t")] for r in page.locator(f"[data-testid={testid}] tbody tr").all_inner_texts()
    ]


def test_continuous_batching_in_the_browser(sections_page, app_url):
    page = sections_page.place()
    requests = page.requests
    canvases = page.evaluate(CANVASES)
    page.get_by_role("button", name=TITLE["es"], exact=True).click()  # built on opening: it serves 16 requests
    same = page.locator("[data-testid=continuous-same]")
    same.wait_for(timeout=120000)
    open_card(page, TITLE["es"])  # and says it is open
    assert same.get_attribute("data-same") == "True"  # computed in the page: every text as alone
    assert (same.get_attribute("data-static"), same.get_attribute("data-continuous")) == ("16", "16")
    assert "Todos los textos, iguales a los de decodificar cada petición sola con su semilla: sí" in same.inner_text()
    assert page.locator("[data-testid=continuous-counts-static]").get_attribute("data-steps") == "71"
    assert page.locator("[data-testid=continuous-counts-continuous]").get_attribute("data-steps") == "46"
    assert page.locator("[data-testid=continuous-counts-static]").get_attribute("data-held") != "0"  # padding drawn
    page.wait_for_function(f"({CANVASES})() >= {canvases + 2}", timeout=30000)  # the two pictures
    if static(app_url):
        assert LAZY <= page_modules(page)

    natural = text_of(page, "continuous-chapter-natural")  # no clock needed: shown before any measurement
    assert "una mediana de 2.3 veces más tokens por segundo (del percentil 10 al 90: de 1.8 a 2.7)" in natural
    assert table_rows(page, "continuous-seeds") == [
        ["todas en la cola desde el primer paso", "2.3 (1.8–2.7)", "3.6 (3–4.1)"],
        ["una cada 6 pasos", "1.7 (1.4–1.9)", "8.8 (6.3–11)"],
    ]
    tuned = text_of(page, "continuous-chapter-tuned")
    assert "la semilla 59, la primera de las 4 semillas, entre 200" in tuned and "Es un ajuste" in tuned

    measure(page, "continuous-status", "Servir y medir " + ("en mi navegador" if static(app_url) else "en el servidor"))
    costs = table_rows(page, "continuous-costs")
    assert [r[0] for r in costs] == ["1", "2", "3", "4", "8"]
    window, chapter = table_rows(page, "continuous-window-table"), table_rows(page, "continuous-chapter-table")
    assert [r[:2] for r in window] == [["Lote estático", "71"], ["Lote continuo", "46"]]
    assert [r[:2] for r in chapter] == [["Lote estático", "738"], ["Lote continuo", "454"]]
    explain = page.locator("[data-testid=continuous-window-explain]")  # the sentences say what the tables show
    said = explain.inner_text()
    ratio = {k: float(explain.get_attribute(f"data-{k}")) for k in ("throughput", "throughput-low", "throughput-high")}
    assert ratio["throughput-low"] <= ratio["throughput"] <= ratio["throughput-high"]
    low, high = (round(ratio[k], 1) for k in ("throughput-low", "throughput-high"))
    if low > 1:  # faster only when even the slowest round says so
        assert f"sirvió {clock.ratio_text(ratio['throughput'], 'es')} veces más tokens por segundo" in said
    elif high >= 1:
        assert "un intervalo que incluye el 1" in said and "veces más tokens" not in said
    assert window[1][2] in said and window[0][2] in said  # the measured tokens per second, as the table shows them
    assert f"{window[1][3]} ms frente a {window[0][3]} ms" in said  # the mean latency, whichever words its spread gets
    if "Y las respuestas llegaron antes" in said:
        assert f"p90 {window[1][5]} frente a {window[0][5]} ms" in said
    model = text_of(page, "continuous-window-model")
    assert "Un modelo de coste, no una medida" in model
    assert f"({costs[0][1]} ms con una conversación, {costs[3][1]} ms con cuatro)" in model
    c8 = float(costs[4][1].replace("\u202f", ""))
    expected = chapter_rows(c8 * 1e-3)  # the chapter's ratios: the same at any cost
    read = page.locator("[data-testid=continuous-chapter-explain]")
    assert abs(float(read.get_attribute("data-throughput")) - expected["ratios"]["throughput"]) < 1e-9
    assert float(read.get_attribute("data-latency")) > 10
    assert f"{chapter[1][2]} tokens por segundo frente a {chapter[0][2]}" in read.inner_text()
    assert "Son segundos simulados" in read.inner_text()
    note = text_of(page, "continuous-window-note")  # the gains in steps, here and in the chapter (no clock)
    assert "de 63 tokens, no de 231" in note and "da aquí 1.5 veces más tokens por paso" in note
    assert "latencia media 1.9 veces menor" in note and "las medianas de las semillas son de 2.3 y 3.6 veces" in note
    shot(page, ("static-" if static(app_url) else "served-") + "continuous-es")
    print("costs (B, ms, range):", costs, "\nmini-GPT:", window, "\nchapter:", chapter)  # shown with -s
    print("measured throughput ratio (median, lowest, highest round):", ratio, "\n", said, "\n", model)

    open_card(page, "Ajustes avanzados")
    page.get_by_role("button", name="English").click()  # the language switch: every text again
    page.get_by_role("button", name=TITLE["en"], exact=True).wait_for(timeout=30000)
    page.get_by_text("Every text equal to decoding that request alone with its seed: yes").wait_for()
    table = page.locator("[data-testid=continuous-window-table]")
    table.get_by_text("Continuous batching", exact=True).wait_for()  # relabelled: it may come after the title
    assert [r[0] for r in table_rows(page, "continuous-window-table")] == ["Static batching", "Continuous batching"]
    assert "Measured here:" in text_of(page, "continuous-window-explain")
    assert "A model of cost, not a measurement" in text_of(page, "continuous-window-model")
    assert "seed 59" in text_of(page, "continuous-chapter-tuned")
    assert "all queued from the first step" in text_of(page, "continuous-seeds")

    found = violations(page)
    assert found == [], found
    assert_fits(page, f"continuous {'static' if static(app_url) else 'served'}")
    assert errors(page) == [] and foreign(requests) == []


# where a touch's click lands, for a mouse to go to the same point
TAPPED_AT = """() => document.addEventListener('click', (e) => {
  if (e.pointerType === 'touch') window.kvTappedAt = [e.clientX, e.clientY];
}, true)"""
CELL = re.compile(r"^(paso|step|passo) \d+, (lugar|slot) \d+: ")
TAP = {
    "es": "Toca una casilla para ver qué hace.",
    "en": "Tap a cell to see what it does.",
    "pt": "Toque numa célula para ver o que faz.",
}


@pytest.mark.static_only
def test_a_tap_shows_what_a_hover_shows(sections_page, app_url):
    """On a touch screen the slots' picture says to tap a cell (es, en, pt) and a tap on one shows the words
    a mouse's hover shows there ("paso 11, lugar 1: petición 1, decodifica")."""
    page = sections_page.place(width=360, height=740)
    page.get_by_role("button", name=TITLE["es"], exact=True).click()
    head = page.locator("[data-testid=continuous-counts-static]")
    head.wait_for(timeout=120000)
    with touch_screen(page) as tap:
        for lang in ("es", "en", "pt"):
            switch_language(page, lang)
            expect(page.locator("[data-testid=continuous-tap]")).to_have_text(TAP[lang])
            expect(page.locator(".on-mouse", has_text=tr(lang, "cb_gantt_hover"))).to_be_hidden()
        switch_language(page, "es")
        figure = page.locator(".bk-events").filter(visible=True)
        head.scroll_into_view_if_needed()
        below = head.bounding_box()["y"]
        picture = next(f for f in figure.all() if (f.bounding_box() or {"y": below})["y"] > below)
        box = picture.bounding_box()
        tip = page.get_by_text(CELL).filter(visible=True)
        page.evaluate(TAPPED_AT)
        x = box["x"] + box["width"] / 2
        for share in (0.3, 0.4, 0.5, 0.6):  # a point on a cell, not between two rows of them
            y = box["y"] + box["height"] * share
            tap(x, y)
            try:
                expect(tip).to_have_count(1, timeout=2000)
                break
            except AssertionError:
                continue
        expect(tip).to_have_count(1)
        tapped = tip.inner_text()
        shot(page, "continuous-tap-360", full_page=False)
    expect(page.locator(".on-mouse", has_text=tr("es", "cb_gantt_hover"))).to_be_visible()
    x, y = page.evaluate("window.kvTappedAt")  # where the finger's click landed (the browser may adjust it)
    now = picture.bounding_box()  # the words for a mouse differ from a finger's: what is below them moved
    x, y = x - box["x"] + now["x"], y - box["y"] + now["y"]
    page.mouse.move(x, y + 3)
    page.mouse.move(x, y)  # a mouse at the same point: the same words
    expect(page.get_by_text(CELL).filter(visible=True)).to_have_text(tapped)
    assert errors(page) == []
