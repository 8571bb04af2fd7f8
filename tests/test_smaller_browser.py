"""A smaller cache in the browser (issue 13), under `panel serve` and on the static site: switch the model
and the cache's format at t = 40, read the memory, step on to the lesson's IndexError at 65; the
other checkpoints are fetched only once picked."""

from __future__ import annotations

import re

import pytest

from tests.browser import STORM, chromium_missing, errors, open_card, plain, text_of, wait_t

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

SECTION = "Más allá de la lección: una caché más pequeña"


def test_switch_at_40_then_on_to_65(sections_page, app_url):
    page = sections_page.place(t=40)
    try:
        switch_at_40_then_on_to_65(page, app_url, page.requests)
    finally:  # the page's model as the module's next test expects it: the lesson's
        open_card(page, SECTION)
        page.get_by_role("button", name="4 (la lección)", exact=True).click()
        page.get_by_role("button", name="float64", exact=True).click()
        page.locator("[data-testid=small-status]", has_text="4 cabezas K/V, números en float64").wait_for(timeout=60000)


def switch_at_40_then_on_to_65(page, app_url, requests):
    assert not [u for u in requests if "ckpt-kv" in u]  # no other model fetched before the reader asks
    open_card(page, SECTION)
    page.get_by_role("button", name="2", exact=True).click()
    page.get_by_role("button", name="int8", exact=True).click()
    page.locator("[data-testid=small-status]", has_text="2 cabezas K/V, números en int8").wait_for(timeout=60000)
    memory = plain(text_of(page, "memory-numbers"))
    assert memory.startswith("5120números") and "6.25KiBenint8" in memory, memory
    if app_url.endswith("index.html"):
        weights = [u for u in requests if "ckpt-kv" in u and u.endswith(".npz")]
        assert len(weights) == 1 and "ckpt-kv2-minigpt" in weights[0]  # the one picked, only
    step = page.get_by_role("button", name="Avanzar")
    step.evaluate(STORM, 24)  # each click one step, in order: test_app_browser's first test
    wait_t(page, 64, timeout=60000)
    page.locator("[data-testid=small-status]", has_text="como mucho").wait_for()
    assert re.search(r"Diferencia entre estos logits .*: \S+ en este token", text_of(page, "small-status"))
    step.click()
    err = page.locator("[data-testid=error]")
    err.wait_for()
    assert "IndexError: index 64 is out of bounds for axis 0 with size 64" in err.inner_text()
    assert err.get_attribute("data-lesson") == "true"
    # the quiz stays on the lesson's model and float64 cache (issue 19), and says so
    open_card(page, "Comprueba tu intuición: cinco preguntas y un reto")
    page.locator("[data-testid=quiz-intro]", has_text="sus 4 cabezas K/V y su caché en float64").wait_for()
    page.get_by_role("radio", name="2·L·t·d números: crece con cada token que se añade al texto").check()
    page.locator("[data-testid=quiz-memory]").wait_for()
    memory = text_of(page, "quiz-memory").replace("\u202f", " ").replace("\u00a0", " ")
    assert "(L = 2, d = 64)" in memory and "16 384, 128 KiB a 8 bytes por número" in memory, memory
    assert errors(page) == []
