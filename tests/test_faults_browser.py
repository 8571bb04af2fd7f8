"""When the page's own machinery fails, the reader is told in plain words, where they are looking,
and can retry (before the page is live) or reload and keep their place (after).

Static site in headless Chromium: each file the start-up needs, aborted or answered 404; then a
worker that dies after the page is live, and a Python error in a callback.
"""

from __future__ import annotations

import re

import pytest

from tests.browser import (
    LivePage,
    PageFailed,
    chromium_missing,
    current_t,
    open_page,
    serve,
    set_seed,
    wait_ready,
    wait_t,
)
from tests.site_fixtures import site_self_contained

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")


@pytest.fixture(scope="module")
def site_url():
    with serve(site_self_contained()) as base:
        yield base + "index.html"


@pytest.mark.parametrize(
    "pattern, name",
    [
        ("**/pyodide.asm.wasm", "pyodide.asm.wasm"),
        ("**/packages/**/param-*.whl", "param-"),
        ("**/assets/app.*.zip", "app."),
    ],
)
@pytest.mark.parametrize("how", ["abort", "404"])
def test_a_missing_file_is_named_and_retry_works(browser, site_url, pattern, name, how):
    """Aborted or answered 404, a file the start needs is named where the reader looks; after an abort,
    Reintentar (the same start again, whatever failed) brings the page up."""
    context = browser.new_context()
    broken = {"on": True}

    def handler(route):
        if not broken["on"]:
            route.continue_()
        elif how == "abort":
            route.abort()
        else:
            route.fulfill(status=404, body="gone")

    context.route(pattern, handler)
    page, _ = open_page(browser, site_url + "?lang=es", context=context)
    with pytest.raises(PageFailed):
        wait_ready(page, timeout_ms=60000)  # fails as soon as the page shows its error
    box = page.locator("#kv-error")
    assert box.is_visible() and page.locator("#kv-loader").is_visible()
    assert name in page.locator("#kv-error-files").inner_text()
    assert "No se ha podido cargar" in box.inner_text()
    if how == "404":
        return
    broken["on"] = False
    page.get_by_role("button", name="Reintentar").click()
    page.wait_for_function("document.body.dataset.ready === 'true'", timeout=90000)
    assert page.locator("#kv-error").is_hidden()
    context.close()


@pytest.fixture(scope="module")
def booted(browser, site_url):
    """One booted page for the faults that come after the start (tests/browser.py LivePage)."""
    page = LivePage(browser, site_url)
    yield page
    page.close()


def test_a_failed_callback_is_shown_and_the_page_goes_on(booted):
    page = booted.place()
    # a forged change is refused without a word (app/intake.py); a message that is no patch at all is
    # the page's own bug, and shown as one
    page.evaluate(
        "window.kv.worker.postMessage({type: 'patch', patch: {events: [{kind: 'ModelChanged', "
        "model: {id: 'no-such-model'}, attr: 'x', new: 1}]}})"
    )
    page.evaluate("window.kv.worker.postMessage({type: 'patch', patch: 42})")
    box = page.locator("#kv-error")
    box.wait_for()
    assert "Algo ha fallado" in box.inner_text()
    page.get_by_role("button", name="Seguir sin recargar").click()
    box.wait_for(state="hidden")
    page.get_by_role("button", name="Avanzar").click()
    wait_t(page, 3)


def test_a_worker_that_dies_after_start_is_reported_and_reload_keeps_the_place(booted):
    """After the page is live: the worker's own error is said, and Recargar brings the reader back where
    they were (the position, and the seed they typed)."""
    page = booted.place()
    set_seed(page, 5)
    step = page.get_by_role("button", name="Avanzar")
    for t in (3, 4, 5):
        step.click()
        wait_t(page, t)
    # the worker reports an error of its own (what an out-of-memory or a crash in it looks like to the page)
    page.evaluate("window.kv.worker.dispatchEvent(new ErrorEvent('error', {message: 'out of memory'}))")
    box = page.locator("#kv-error")
    box.wait_for()
    assert "La página interactiva se ha detenido" in box.inner_text() and "out of memory" in box.inner_text()
    page.get_by_role("button", name="Recargar").click()
    page.wait_for_url(re.compile(r"t=5"))
    wait_ready(page)
    wait_t(page, 5)
    assert "seed=5" in page.url and current_t(page) == 5
