"""The page teaches what the lesson says, as a reader sees it (issue 10), under `panel serve` and on the
static site: the green bars are there to see in both modes, the grey ramp waits for the reader's
first switch, Spanish says "capa" and English code speaks English."""
from __future__ import annotations

import io

import pytest

from tests.browser import chromium_missing, open_app, open_card, wait_t

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

GREEN, GREY = (0, 158, 115), (111, 111, 111)


def pixels(locator):
    from PIL import Image
    return Image.open(io.BytesIO(locator.screenshot())).convert("RGB")


def near(rgb, target, tol=8):
    return all(abs(a - b) <= tol for a, b in zip(rgb, target))


def longest_run(px, x, h, color) -> int:
    best = run = 0
    for y in range(h):
        run = run + 1 if near(px[x, y], color) else 0
        best = max(best, run)
    return best


def bar_heights(img, color, min_run: int = 4) -> list[int]:
    """Height in pixels of each bar of `color`, left to right: a bar is adjacent columns holding a
    vertical run of that colour at least min_run pixels long (text and its antialiasing never do)."""
    w, h = img.size
    px = img.load()
    columns = [longest_run(px, x, h, color) for x in range(w)]
    bars, current = [], []
    for run in columns + [0]:
        if run >= min_run:
            current.append(run)
        elif current:
            bars.append(max(current))
            current = []
    return bars


def test_the_bars_show_each_experiment(browser, app_url):
    page, _ = open_app(browser, app_url, "?lang=es&t=64", width=360, height=780)
    wait_t(page, 64)
    bars = page.locator(".kv-bars").first
    bars.scroll_into_view_if_needed()
    img = pixels(bars)
    green = bar_heights(img, GREEN)
    # t = 1 and t = 64, on a phone (the last bar is crossed by the dashed line of the current position)
    assert len(green) >= 32 and green[0] >= 8 and max(green[-3:]) >= 8, green
    # no grey bar before the first switch (runs shorter than 10 px: the dashed line of the current position)
    assert bar_heights(img, GREY, min_run=10) == []
    page.get_by_role("button", name="Sin caché").click()
    strip = page.locator(".kv-bars-zoom").first
    strip.wait_for()
    page.wait_for_function("document.body.dataset.kvState.includes('mode=full')")
    ramp = bar_heights(pixels(page.locator(".kv-bars").first), GREY, min_run=10)
    assert len(ramp) >= 16 and max(ramp[-3:]) > 4 * ramp[0], ramp              # the grey ramp
    zoomed = bar_heights(pixels(strip), GREEN)
    assert len(zoomed) >= 32 and min(zoomed[0], max(zoomed[-3:])) >= 8, zoomed  # the green bars, still readable


def page_text(page) -> str:
    return page.evaluate("""() => {
      const out = [];
      const walk = (n) => {
        if (n.nodeType === 3) out.push(n.textContent);
        if (n.value && typeof n.value === 'string') out.push(n.value);
        if (n.shadowRoot) walk(n.shadowRoot);
        for (const c of n.childNodes) walk(c);
      };
      walk(document.body);
      return out.join(' ');
    }""")


SECTIONS = {"es": ["Tus milisegundos", "Pruébalo", "Comprueba tu intuición", "¿Cuánto contexto cabe?"],
            "en": ["Your milliseconds", "Try it", "Check your intuition", "How much context fits?"]}


def open_everything(page, lang):
    for title in SECTIONS[lang]:
        open_card(page, page.get_by_text(title).first.inner_text())
    page.get_by_role("textbox").last.wait_for()


def test_the_words_are_the_lessons(browser, app_url):
    page, _ = open_app(browser, app_url, "?lang=es&t=10", width=1100)
    wait_t(page, 10)
    open_everything(page, "es")
    text = page_text(page).lower()
    assert "bloque" not in text and "capa 1" in text
    page, _ = open_app(browser, app_url, "?lang=en&t=10", width=1100)
    wait_t(page, 10)
    open_everything(page, "en")
    code = " ".join(box.input_value() for box in page.get_by_role("textbox").all()).lower()
    assert "def attention" in code and "prefill(ids)" in code
    spanish = ["llenar", "avanzar", "adelante", "atencion", "guardados", "completa", "sortea", "caché", "capa",
               "tu código", "consulta", "cabeza"]
    assert [w for w in spanish if w in code] == []
