"""The README's screenshots of the static site, taken in headless Chromium (not a test):

    uv run --extra test python -m tests.shoot_docs          # writes docs/*.png

- docs/embed-360.png, docs/embed-1280.png: a course page of another origin with the documented
  snippet (tests/hosting.py), at 360 and 1280 px, once the explorable is live;
- docs/embed-mkdocs-360.png: a site of MkDocs Material's default theme with the snippet alone, on a
  phone, scrolled to the bars (the control bar under the site's header); docs/embed-noscript-360.png:
  the snippet without its script on a phone, the course page's first screen;
- docs/phone-es.png, docs/phone-en.png, docs/phone-pt.png: the page alone at 360 px, at t = 64
  without the cache, with every section open;
- docs/dark-laptop.png, docs/dark-phone.png: the same on a dark system (1280 x 1560; 360 x 2400, the
  figure and its readouts); docs/embed-dark-1280.png: a dark course page that tells the frame its
  palette (docs/embedding.md, "Light and dark");
- docs/phone-first-{es,en,pt}.png, docs/phone-first-dark-{es,en,pt}.png: the lesson's first experiment on a
  phone, 360 x 740 (touch), light and dark: at t = 2, ten taps on Avanzar, then scrolled to the figure's
  bars, the control bar stuck at the top with its strip of the cost bars (`--only phone-first`: these alone);
- docs/screenshot.png: the page alone on a laptop (1280 x 1560: the figure, the bars, the
  readouts), at t = 64 after the switch to "Sin caché" and back, the grey ramp and the green
  strip both drawn.

PNGs are made small with pngquant where it is installed (apt-get install pngquant).
"""

from __future__ import annotations

import shutil
import subprocess
import sys

from app.i18n import tr
from tests.browser import ROOT, STORM, chromium, new_context, open_all_sections, open_page, serve, wait_ready, wait_t
from tests.hosting import course_page, explorable, tell_theme
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


DARK_HOST = "body { background: #1e2129; color: #e2e4e9; }"  # a dark course page (MkDocs Material's slate)


def shoot_course_page(browser, site, width: int, height: int, dark: bool = False) -> None:
    with course_page(site, "?lang=es&embed=1") as url:
        page, _ = open_page(browser, url, width=width, height=height)
        frame = explorable(page)
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        if dark:
            page.add_style_tag(content=DARK_HOST)
            tell_theme(page, "dark")
            frame.wait_for_function("document.documentElement.dataset.kvTheme === 'dark'")
        content = frame.evaluate("Math.ceil(document.getElementById('kv-main').getBoundingClientRect().bottom)")
        page.wait_for_function(
            "(h) => Math.abs(document.querySelector('iframe.kv-explorable').getBoundingClientRect().height - h) <= 40",
            arg=content,
        )
        out = DOCS / f"embed-{'dark-' if dark else ''}{width}.png"
        # the whole course page in one viewport: a full-page screenshot leaves a cross-origin frame blank
        page.set_viewport_size({"width": width, "height": page.evaluate("document.documentElement.scrollHeight")})
        page.wait_for_function(
            "(h) => Math.abs(document.querySelector('iframe.kv-explorable').getBoundingClientRect().height - h) <= 40",
            arg=content,
        )
        frame.wait_for_function("document.fonts.status === 'loaded'")
        for _ in range(3):  # the frame's compositor paints what the taller viewport shows: a few frames
            frame.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        page.screenshot(path=str(out))
        page.context.close()
        small(out)


def shoot_mkdocs_phone(browser, site) -> None:
    """docs/embed-mkdocs-360.png: MkDocs Material's default theme with the snippet alone, on a phone,
    scrolled until the cost bars end at the screen's bottom: the control bar right under the header."""
    with course_page(site, "?lang=es&embed=1&t=20", mkdocs=True) as url:
        page, _ = open_page(browser, url, width=360, height=740)
        frame = explorable(page)
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        frame.wait_for_function("document.documentElement.dataset.frame === 'fitted'", timeout=30000)
        bars = frame.locator(".kv-bars").first.bounding_box()
        page.evaluate("(dy) => window.scrollBy(0, dy)", bars["y"] + bars["height"] - 740 + 4)
        frame.wait_for_function("parseInt(document.documentElement.style.getPropertyValue('--kv-host-top')) > 0")
        frame.wait_for_function("document.fonts.status === 'loaded'")
        frame.evaluate("new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))")
        # the header's title turns to the page's as it scrolls away: once that transition has ended
        page.wait_for_function("document.getAnimations().every((a) => a.playState !== 'running')")
        out = DOCS / "embed-mkdocs-360.png"
        page.screenshot(path=str(out))
        page.context.close()
        small(out)


def shoot_noscript_phone(browser, site) -> None:
    """docs/embed-noscript-360.png: the snippet without its script (an LMS that strips scripts) on a
    phone, the course page's first screen: the frame's note and its link to the full page."""
    with course_page(site, "?lang=es&embed=1", script=False) as url:
        page, _ = open_page(browser, url, width=360, height=740)
        frame = explorable(page)
        frame.wait_for_selector("body[data-ready='true']", timeout=120000)
        frame.wait_for_function("document.documentElement.dataset.frame === 'fixed'", timeout=30000)
        frame.wait_for_function("document.fonts.status === 'loaded'")
        out = DOCS / "embed-noscript-360.png"
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


def shoot_laptop(browser, base: str, dark: bool = False) -> None:
    context = new_context(browser, 1280, 1560, color_scheme="dark" if dark else "light")
    page, _ = open_page(browser, f"{base}index.html?lang=es&t=64", context=context)
    wait_ready(page)
    wait_t(page, 64)
    page.get_by_role("button", name="Sin caché").click()
    page.locator(".kv-bars-zoom").first.wait_for()
    page.get_by_role("button", name="Con caché").click()
    page.wait_for_function("!(document.body.dataset.kvState || '').includes('mode=full')")
    page.wait_for_function("document.fonts.status === 'loaded'")
    out = DOCS / ("dark-laptop.png" if dark else "screenshot.png")
    page.screenshot(path=str(out))
    page.context.close()
    small(out)


def shoot_dark_phone(browser, base: str) -> None:
    context = new_context(browser, 360, 2400, color_scheme="dark")
    page, _ = open_page(browser, f"{base}index.html?lang=es&t=40", context=context)
    wait_ready(page)
    wait_t(page, 40)
    page.wait_for_function("document.fonts.status === 'loaded'")
    out = DOCS / "dark-phone.png"
    page.screenshot(path=str(out))
    page.context.close()
    small(out)


def shoot_first_experiment(browser, base: str, lang: str, dark: bool) -> None:
    context = new_context(browser, 360, 740, color_scheme="dark" if dark else "light", has_touch=True, is_mobile=True)
    page, _ = open_page(browser, f"{base}index.html?lang={lang}", context=context)
    wait_ready(page)
    page.get_by_role("button", name=tr(lang, "step"), exact=True).evaluate(STORM, 10)  # ten taps
    wait_t(page, 12)
    page.locator(".kv-bars").first.scroll_into_view_if_needed()
    page.wait_for_function("document.fonts.status === 'loaded'")
    out = DOCS / f"phone-first-{'dark-' if dark else ''}{lang}.png"
    page.screenshot(path=str(out))
    page.context.close()
    small(out)


def shoot_first_experiments(browser, base: str) -> None:
    for dark in (False, True):
        for lang in ("es", "en", "pt"):
            shoot_first_experiment(browser, base, lang, dark)


def main(argv=None) -> int:
    only = (argv if argv is not None else sys.argv[1:])[-1:] == ["phone-first"]  # --only phone-first
    site = site_self_contained()
    with chromium() as browser:
        if only:
            with serve(site) as base:
                shoot_first_experiments(browser, base)
            return 0
        shoot_course_page(browser, site, 360, 740)
        shoot_course_page(browser, site, 1280, 800)
        shoot_course_page(browser, site, 1280, 800, dark=True)
        shoot_mkdocs_phone(browser, site)
        shoot_noscript_phone(browser, site)
        with serve(site) as base:
            shoot_laptop(browser, base)
            shoot_laptop(browser, base, dark=True)
            shoot_dark_phone(browser, base)
            for lang in ("es", "en", "pt"):
                shoot_language(browser, base, lang)
            shoot_first_experiments(browser, base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
