"""The quantized weights' section in a real browser, on both servers (Panel's and the static site in
Pyodide): opened (on the static site, model.wquant loaded only then), another scheme chosen (the
matrices' errors, the table's chosen row and the two models' texts follow it, checked against the
same computation here), another prompt, and the chosen scheme's agreement and acceptance measured in
the page equal to the committed table's. On a phone in English: nothing sticks out sideways, and
axe-core finds no serious violation.

Headless Debian Chromium driven by Playwright; screenshots go to test-output/.
"""

from __future__ import annotations

import pytest

from app.sections.quantized.logic import committed_rows, compare
from model.wquant import matrix_errors
from tests.browser import chromium_missing, errors, foreign, measure, open_card, shot
from tests.test_a11y_browser import opened_on_a_phone, whole_on_a_phone
from tests.test_beyond_browser import page_modules, static

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

TITLE = {
    "es": "Pesos en 8 y 4 bits: la cuantización de los pesos",
    "en": "Weights in 8 and 4 bits: weight quantization",
}
SCHEME = {"es": "Esquema", "en": "Scheme"}
RUN = {"es": "Medir la concordancia aquí", "en": "Measure the agreement here"}
LAZY = {"model.wquant", "app.sections.quantized.logic"}


def where(app_url: str) -> str:
    return "static" if static(app_url) else "served"


def shown(page, testid: str, **attrs):
    """The element once it says what `attrs` say."""
    sel = "".join(f"[data-{k}='{v}']" for k, v in attrs.items())
    loc = page.locator(f"[data-testid={testid}]{sel}")
    loc.wait_for(timeout=60000)
    return loc


def choose(page, lang: str, scheme: str, gpt) -> None:
    """Pick a scheme; the matrices, the table's chosen row and the texts follow (drawn in that order)."""
    page.get_by_role("combobox", name=SCHEME[lang]).select_option(scheme)
    matrices = shown(page, "quantized-matrices", scheme=scheme)
    assert float(matrices.get_attribute("data-worst")) == pytest.approx(
        max(matrix_errors(gpt, scheme).values()), rel=1e-9
    )
    assert matrices.locator("tbody tr").count() == 12
    schemes = shown(page, "quantized-schemes", chosen=scheme)
    assert schemes.locator("tbody tr").count() == 8 and scheme in schemes.locator("tr.current").inner_text()
    shown(page, "quantized-texts", scheme=scheme)


def texts_are(page, gpt, scheme: str, prompt: int) -> None:
    c = compare(gpt, scheme, prompt - 1)
    first = "" if c["first"] is None else str(c["first"] + 1)
    texts = shown(page, "quantized-texts", scheme=scheme, prompt=prompt)
    assert texts.get_attribute("data-first") == first
    assert int(texts.get_attribute("data-misses")) == c["agree"].count(False)
    assert texts.locator(".g.first").count() == (0 if c["first"] is None else 2)  # in both texts


def test_quantized_weights_in_the_browser(sections_page, app_url, gpt):
    page = sections_page.place()
    requests = page.requests
    open_card(page, TITLE["es"])
    shown(page, "quantized-matrices", scheme="int4-row")
    outliers = shown(page, "quantized-outliers", weights=0, acts=0)
    assert "Sin pesos atípicos" in outliers.inner_text()
    texts_are(page, gpt, "int4-row", 1)
    if static(app_url):
        assert LAZY <= page_modules(page)
    choose(page, "es", "nf4", gpt)
    texts_are(page, gpt, "nf4", 1)
    page.get_by_role("button", name="3", exact=True).click()  # another prompt
    texts_are(page, gpt, "nf4", 3)
    measure(page, "quantized-status", RUN["es"])
    measured = shown(page, "quantized-measured", scheme="nf4")
    row = committed_rows()["nf4"]
    got = {k: int(measured.get_attribute(f"data-{k}")) for k in ("agree", "total", "accepted", "tested")}
    print(f"\n{where(app_url)}: nf4 measured in the page {got}; committed", {k: row[k] for k in got})
    assert got == {k: row[k] for k in got} and measured.get_attribute("data-same") == "True"
    shot(page, f"{where(app_url)}-quantized-es")
    choose(page, "es", "int8-tensor", gpt)  # another scheme: the measurement for nf4 is gone
    assert page.locator("[data-testid=quantized-measured]").count() == 0
    assert errors(page) == [] and foreign(requests) == []


@pytest.mark.static_only
def test_quantized_weights_on_a_phone_in_english(sections_page, app_url, gpt):
    page, requests = opened_on_a_phone(sections_page, TITLE["en"])
    page.get_by_role("button", name="1", exact=True).click()  # the first prompt
    choose(page, "en", "int4-tensor", gpt)
    texts_are(page, gpt, "int4-tensor", 1)
    assert "No outlier weights" in page.locator("[data-testid=quantized-outliers]").inner_text()
    whole_on_a_phone(page, f"{where(app_url)} quantized en", requests)
