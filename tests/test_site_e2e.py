"""The built site in headless Chromium: snapshot first, then the live app, offline, under CSP.

Needs the compiled Pyodide wheels (skips with the reason otherwise) and Chromium.
"""
from __future__ import annotations

import json

import pytest

import build
from tests.browser import (PageFailed, chromium_missing, foreign, open_page, serve, wait_for_text,
                           wait_ready, wait_t)
from tests.site_fixtures import site_self_contained

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))


@pytest.fixture(scope="module")
def site():
    return site_self_contained()



STAGES = """
  window.__stages = [];
  new MutationObserver(() => {
    const s = document.body && document.body.dataset.stage;
    if (s && window.__stages[window.__stages.length - 1] !== s) window.__stages.push(s);
  }).observe(document, {attributes: true, subtree: true, attributeFilter: ['data-stage']});
"""


def test_snapshot_then_live_app_offline(site, browser):
    with serve(site) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script(STAGES)
        page, requests = open_page(browser, url + "index.html?lang=es", context=context)
        # the prerendered snapshot shows before Python is ready
        page.wait_for_function("performance.getEntriesByName('kv-first-paint').length > 0", timeout=30000)
        wait_ready(page)
        assert page.evaluate("document.getElementById('kv-snapshot')") is None  # replaced by the live doc
        stages = page.evaluate("window.__stages")
        assert stages[0] == "runtime" and stages[-2:] == ["app", "ready"], stages
        assert page.locator("#kv-loader").is_hidden()
        button = page.get_by_role("button", name="Avanzar").first
        for t in range(3, 65):                  # the app answers each click: t advances
            button.click()
            wait_t(page, t)
        button.click()                          # past the 64-position window: the model's own IndexError
        wait_for_text(page, "IndexError", timeout_ms=20000)
        assert page.evaluate("document.body.dataset.pyerror") is None
        assert foreign(requests) == [], foreign(requests)
        assert any("/packages/" in u and "numpy" in u for u in requests)
        assert not [u for u in requests if "/snapshot-" in u]     # Spanish, the default: inline in the page


def test_lazy_modules_load_on_first_import(site, browser):
    """Modules left out of the wheels/stdlib (not imported at start-up) arrive on first import."""
    lazy = json.loads(next((site / "assets").glob("lazy-modules.*.json")).read_text())
    archives = [a["url"] for a in lazy["archives"]]
    pick = {}
    for name, (n, rel, is_pkg) in lazy["modules"].items():
        if name.count(".") == 1 and is_pkg:
            pick.setdefault(archives[n].rsplit("/", 1)[-1], name)
    wanted = [pick[k] for k in sorted(pick) if k.startswith(("numpy-", "python_stdlib-"))]
    assert wanted, pick
    with serve(site) as url:
        page, requests = open_page(browser, url + "index.html")
        wait_ready(page)
        # start-up needs no lazy archive: the build traced the app's imports
        assert page.evaluate("window.kv.lazy") is None, page.evaluate("window.kv.lazy")
        page.evaluate("(names) => window.kv.worker.postMessage({type: 'modules', import: names})", wanted)
        page.wait_for_function("window.kv.sourceModules !== undefined", timeout=30000)
        loaded = page.evaluate("window.kv.sourceModules")
        for name in wanted:
            assert name in loaded, (name, loaded)
        assert len(page.evaluate("window.kv.lazy")) == len(wanted)
        assert foreign(requests) == []


def test_page_runs_the_real_nh3(site, browser):
    """Panel sanitizes with nh3.clean: the page installs Pyodide's compiled nh3 and its Rust
    extension imports (a pure-Python stand-in has no nh3.nh3); nothing of it is loaded from source."""
    with serve(site) as url:
        page, requests = open_page(browser, url + "index.html")
        wait_ready(page)
        assert [u for u in requests if "/packages/" in u and "/nh3-0.2.21-cp38-abi3-pyodide" in u]
        page.evaluate("window.kv.worker.postMessage({type: 'modules', import: ['nh3.nh3']})")
        page.wait_for_function("window.kv.sourceModules !== undefined", timeout=30000)
        source = page.evaluate("window.kv.sourceModules")
        assert "nh3" not in source and "nh3.nh3" not in source, source
        assert page.evaluate("window.kv.lazy") is None                 # it came with start-up
        assert page.evaluate("document.body.dataset.pyerror") is None


@pytest.mark.parametrize("lang", ["en", "pt"])
def test_snapshot_and_app_in_the_url_language(site, browser, lang):
    if not list((site / "assets").glob(f"snapshot-{lang}.*.html")):
        pytest.skip(f"the app declares no '{lang}' (app/i18n.py LANGS)")
    with serve(site) as url:
        page, requests = open_page(browser, url + f"index.html?lang={lang}")
        wait_ready(page)
        assert page.evaluate("document.documentElement.lang") == lang
        snapshots = [u for u in requests if "/snapshot-" in u]
        assert len(snapshots) == 1 and f"snapshot-{lang}." in snapshots[0]
        assert foreign(requests) == []


def test_page_works_under_csp(site, browser):
    """The recommended CSP (build.CSP) is enough: no violation reported, the app runs."""
    with serve(site, csp=build.CSP) as url:
        context = browser.new_context(viewport={"width": 1280, "height": 800})
        context.add_init_script("""
          window.__csp = [];
          document.addEventListener('securitypolicyviolation',
            (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));
        """)
        page, requests = open_page(browser, url + "index.html", context=context)
        wait_ready(page)
        page.get_by_role("button", name="Avanzar").first.click()
        wait_t(page, 3)                         # a full round trip through the worker, under the CSP
        assert page.evaluate("window.__csp") == []
        assert page.evaluate("document.body.dataset.pyerror") is None
        context.close()


def test_failed_download_shows_error_and_retry(site, browser):
    """A wheel that fails to download: the page names it and offers a retry that works."""
    with serve(site) as url:
        context = browser.new_context()
        state = {"fail": True}

        def handler(route):
            if state["fail"]:
                route.fulfill(status=404, body="gone")
            else:
                route.continue_()

        context.route("**/packages/**/param-*.whl", handler)
        page, _ = open_page(browser, url + "index.html", context=context)
        with pytest.raises(PageFailed):
            wait_ready(page)
        error = page.evaluate("document.body.dataset.error")
        assert error is not None
        assert page.locator("#kv-error").is_visible()
        assert "param-" in page.locator("#kv-error-files").inner_text()
        state["fail"] = False
        page.get_by_role("button", name="Reintentar").click()
        page.wait_for_function("document.body.dataset.ready === 'true'", timeout=90000)
        context.close()


def test_embed_iframe(site, browser):
    with serve(site) as url:
        page, requests = open_page(browser, url + "embed.html")
        frame = page.frame_locator("iframe")
        frame.locator("body[data-ready='true']").wait_for(timeout=90000)
        # the frame is sized to the explorable's height (postMessage from the page)
        page.wait_for_function("document.querySelector('iframe').getBoundingClientRect().height > 900")
        inner = frame.locator("html").evaluate("(el) => el.scrollHeight")
        outer = page.evaluate("document.querySelector('iframe').getBoundingClientRect().height")
        assert abs(inner - outer) < 40, (inner, outer)
        assert foreign(requests) == []
