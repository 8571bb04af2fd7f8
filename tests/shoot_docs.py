"""The README's screenshots of the static site, taken in headless Chromium (not a test):

    uv run --extra test python -m tests.shoot_docs          # writes docs/*.png

- docs/embed-360.png, docs/embed-1280.png: a course page of another origin with the documented
  snippet (tests/hosting.py), at 360 and 1280 px, once the explorable is live;
- docs/phone-es.png, docs/phone-en.png, docs/phone-pt.png: the page alone at 360 px, at t = 64
  without the cache, with every section open;
- docs/screenshot.png: the page alone on a laptop (1280 x 1560: the figure, the bars, the
  readouts), at t = 64 after the switch to "Sin caché" and back, the grey ramp and the green
  strip both drawn.

PNGs are made small with pngquant where it is installed (apt-get install pngquant).
"""

from __future__ import annotations

import shutil
import subprocess
import sys

from tests.browser import ROOT, chromium, open_all_sections, open_page, serve, wait_ready, wait_t
from tests.hosting import course_page, explorable
from tests.site_fixtures import site_self_contained

DOCS = ROOT / "docs"


def small(path) -> None:
    """Quantize in place with pngquant (kept as it is where pngquant is missing)."""
    if shutil.which("pngquant"):
        subprocess.run(
            ["pngquant", "--quality=55-85", "--speed=1", "--strip", "--force", "--output", str(path), str(path)],
            check=True,
        )
    print(f"{path.relative_to(ROOT)}: {path.stat().st_size / 1024:.0f} kB", flush=True)


def shoot_course_page(browser, site, width: int, height: int) -> None:
    with course_page(site, "?lang=es&embed=1") as url:
        page, _ = open_page(browser, url, width=width, height=height)
        frame = explorable(page)
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        content = frame.evaluate("Math.ceil(document.getElementById('kv-main').getBoundingClientRect().bottom)")
        page.wait_for_function(
            "(h) => Math.abs(document.querySelector('iframe.kv-explorable').getBoundingClientRect().height - h) <= 40",
            arg=content,
        )
        out = DOCS / f"embed-{width}.png"
        # the whole course page in one viewport: a full-page screenshot leaves a cross-origin frame blank
        page.set_viewport_size({"width": width, "height": page.evaluate("document.documentElement.scrollHeight")})
        page.wait_for_function(
            "(h) => Math.abs(document.querySelector('iframe.kv-explorable').getBoundingClientRect().height - h) <= 40",
            arg=content,
        )
        frame.wait_for_function("document.fonts.status === 'loaded'")
        page.screenshot(path=str(out))
        page.context.close()
        small(out)


def shoot_language(browser, base: str, lang: str) -> None:
    page, _ = open_page(browser, f"{base}index.html?lang={lang}&t=64&mode=full", width=360, height=800)
    wait_ready(page)
    wait_t(page, 64)
    open_all_sections(page)
    page.locator("[data-testid=ctx-tokens]").wait_for()
    out = DOCS / f"phone-{lang}.png"
    page.screenshot(path=str(out), full_page=True)
    page.context.close()
    small(out)


def shoot_laptop(browser, base: str) -> None:
    page, _ = open_page(browser, f"{base}index.html?lang=es&t=64", width=1280, height=1560)
    wait_ready(page)
    wait_t(page, 64)
    page.get_by_role("button", name="Sin caché").click()
    page.locator(".kv-bars-zoom").first.wait_for()
    page.get_by_role("button", name="Con caché").click()
    page.wait_for_function("!(document.body.dataset.kvState || '').includes('mode=full')")
    page.wait_for_function("document.fonts.status === 'loaded'")
    out = DOCS / "screenshot.png"
    page.screenshot(path=str(out))
    page.context.close()
    small(out)


def main() -> int:
    site = site_self_contained()
    with chromium() as browser:
        shoot_course_page(browser, site, 360, 740)
        shoot_course_page(browser, site, 1280, 800)
        with serve(site) as base:
            shoot_laptop(browser, base)
            for lang in ("es", "en", "pt"):
                shoot_language(browser, base, lang)
    return 0


if __name__ == "__main__":
    sys.exit(main())
