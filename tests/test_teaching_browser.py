"""The page teaches what the lesson says, as a reader sees it (issue 10), under `panel serve` and on the
static site: the green bars are there to see in both modes, the grey ramp waits for the reader's
first switch, Spanish says "capa" and English code speaks English."""

from __future__ import annotations

import io

import pytest

from tests.browser import chromium_missing, open_card

# The page's words and pixels are the same code under both servers: the static site's page only.
pytestmark = [
    pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or ""),
    pytest.mark.static_only,
]


def pixels(locator):
    from PIL import Image

    return Image.open(io.BytesIO(locator.screenshot())).convert("RGB")


def is_green(rgb) -> bool:
    """The cached bars' green (0, 158, 115), solid or faded over white."""
    r, g, b = rgb
    return g > r + 40 and g > b + 15


def is_grey(rgb) -> bool:
    """The uncached bars' fill: grey (111, 111, 111) at alpha 0.95 over white is (118, 118, 118);
    text and tick marks, antialiased, pass through that value in a pixel or two at most."""
    r, g, b = rgb
    return max(r, g, b) - min(r, g, b) < 4 and 114 <= r <= 122


def extent(px, x, h, test) -> int:
    """How many pixels of column x have the bar's colour (a hatched bar: its fill, between the hatch's
    white lines, so a little less than the bar's height)."""
    return sum(test(px[x, y]) for y in range(h))


def heights_at(img, test, positions, n: int = 64) -> list[int]:
    """Height in pixels of the bars at these positions: the frame starts FRAME_LEFT px in (every
    figure's, app/style) and ends 12 px before the right edge; position p is at (p - 0.5) / n of it
    (the tallest run within 2 px of there, in case the frame is a pixel off)."""
    from app.style import FRAME_LEFT

    w, h = img.size
    px = img.load()
    left, width = FRAME_LEFT, w - 12 - FRAME_LEFT
    centre = lambda p: int(left + (p - 0.5) / n * width)
    return [max(extent(px, x, h, test) for x in range(centre(p) - 2, centre(p) + 3)) for p in positions]


def test_the_bars_show_each_experiment(live, app_url):
    """First on its page: the grey ramp waits for the reader's first switch to no cache."""
    page = live.place(t=64, width=360, height=780)
    bars = page.locator(".kv-bars").first
    bars.scroll_into_view_if_needed()
    img = pixels(bars)
    assert min(heights_at(img, is_green, [1, 62])) >= 8  # t = 1 and t = 64 (62: clear of
    assert max(heights_at(img, is_grey, range(6, 62))) < 8  # the dashed line); no grey yet
    page.get_by_role("button", name="Sin caché").click()
    strip = page.locator(".kv-bars-zoom").first
    strip.wait_for()
    page.wait_for_function("document.body.dataset.kvState.includes('mode=full')")
    ramp = heights_at(pixels(page.locator(".kv-bars").first), is_grey, [8, 32, 62])
    assert ramp[2] > 2 * ramp[1] > 4 * ramp[0] > 0, ramp  # the grey ramp
    assert min(heights_at(pixels(strip), is_green, [1, 62])) >= 8  # the green bars, still readable


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


SECTIONS = {
    "es": ["Tus milisegundos", "Pruébalo", "Comprueba tu intuición", "¿Cuánto contexto cabe?"],
    "en": ["Your milliseconds", "Try it", "Check your intuition", "How much context fits?"],
}


def open_everything(page, lang):
    for title in SECTIONS[lang]:
        open_card(page, page.get_by_text(title).first.inner_text())
    page.get_by_role("textbox").last.wait_for()
    # each card builds its section when it opens, one after the other: the challenge's code too
    page.wait_for_function(
        """() => {
      const walk = (root) => [...root.querySelectorAll('*')].some((el) =>
        (el.tagName === 'TEXTAREA' && el.value.includes('def ')) || (el.shadowRoot && walk(el.shadowRoot)));
      return walk(document);
    }""",
        timeout=30000,
    )


def test_the_words_are_the_lessons(live, app_url):
    page = live.place(t=10, width=1100)
    open_everything(page, "es")
    text = page_text(page).lower().replace("la caché en bloques", "")  # the paged cache's blocks: the chapter's
    assert "bloque" not in text and "capa 1" in text  # a layer is a capa, as in the lesson
    page = live.place(lang="en", t=10, width=1100)
    open_everything(page, "en")
    code = " ".join(box.input_value() for box in page.get_by_role("textbox").all()).lower()
    assert "def attention" in code and "prefill(ids)" in code
    spanish = [
        "llenar",
        "avanzar",
        "adelante",
        "atencion",
        "guardados",
        "completa",
        "sortea",
        "caché",
        "capa",
        "tu código",
        "consulta",
        "cabeza",
    ]
    assert [w for w in spanish if w in code] == []
