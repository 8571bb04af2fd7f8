"""Continuous batching in a real browser, on both servers (Panel's and the static site in Pyodide): the
section opened (and on the static site, model.scheduler imported only then), its two pictures of the
slots drawn, every text checked against decoding it alone, the steps measured on the reader's clock, the
tables and the sentences from the same numbers, in Spanish and then in English; it fits a 320 px screen
and axe-core finds nothing serious in it.

Headless Debian Chromium driven by Playwright; screenshots go to test-output/.
"""

from __future__ import annotations

import pytest

from app.sections.continuous.logic import chapter_rows
from app.state import clock
from tests.axe import violations
from tests.browser import chromium_missing, errors, foreign, measure, open_card, shot, text_of
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
    assert "Cada texto, igual que al decodificar esa petición sola con su semilla: sí" in same.inner_text()
    assert page.locator("[data-testid=continuous-counts-static]").get_attribute("data-steps") == "71"
    assert page.locator("[data-testid=continuous-counts-continuous]").get_attribute("data-steps") == "46"
    assert page.locator("[data-testid=continuous-counts-static]").get_attribute("data-held") != "0"  # padding drawn
    page.wait_for_function(f"({CANVASES})() >= {canvases + 2}", timeout=30000)  # the two pictures
    if static(app_url):
        assert LAZY <= page_modules(page)

    measure(page, "continuous-status", "Medir los pasos en mi navegador")
    costs = table_rows(page, "continuous-costs")
    assert [r[0] for r in costs] == ["1", "2", "3", "4", "8"]
    window, chapter = table_rows(page, "continuous-window-table"), table_rows(page, "continuous-chapter-table")
    assert [r[:2] for r in window] == [["Lote estático", "71"], ["Lote continuo", "46"]]
    assert [r[:2] for r in chapter] == [["Lote estático", "738"], ["Lote continuo", "454"]]
    explain = text_of(page, "continuous-window-explain")  # the sentences say what the tables show
    assert f"latencia media {window[1][3]} ms frente a {window[0][3]} ms" in explain
    assert f"p90 {window[1][5]} frente a {window[0][5]} ms" in explain
    assert f"Tu paso costó {costs[0][1]} ms con una conversación y {costs[3][1]} ms con cuatro" in explain
    c8 = float(costs[4][1].replace("\u202f", ""))
    expected = chapter_rows(c8 * 1e-3)  # the chapter's ratios: the same at any cost
    read = page.locator("[data-testid=continuous-chapter-explain]")
    assert abs(float(read.get_attribute("data-throughput")) - expected["ratios"]["throughput"]) < 1e-9
    assert float(read.get_attribute("data-latency")) > 10
    assert (
        f"el lote continuo da {clock.ratio_text(expected['ratios']['throughput'], 'es')} veces más tokens "
        f"por segundo ({chapter[1][2]} frente a {chapter[0][2]})"
    ) in read.inner_text()
    assert "semilla 59" in read.inner_text() and "de 63 tokens, no de 231" in text_of(page, "continuous-window-note")
    shot(page, ("static-" if static(app_url) else "served-") + "continuous-es")
    print("costs (B, ms, range):", costs, "\nmini-GPT:", window, "\nchapter:", chapter)  # shown with -s

    open_card(page, "Ajustes avanzados")
    page.get_by_role("button", name="English").click()  # the language switch: every text again
    page.get_by_role("button", name=TITLE["en"], exact=True).wait_for(timeout=30000)
    page.get_by_text("Every text equal to decoding that request alone with its seed: yes").wait_for()
    assert [r[0] for r in table_rows(page, "continuous-window-table")] == ["Static batching", "Continuous batching"]
    assert "times more tokens per second" in text_of(page, "continuous-window-explain")
    assert "seed 59" in text_of(page, "continuous-chapter-explain")

    found = violations(page)
    assert found == [], found
    assert_fits(page, f"continuous {'static' if static(app_url) else 'served'}")
    assert errors(page) == [] and foreign(requests) == []
