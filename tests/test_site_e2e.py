"""The built site in headless Chromium: snapshot first, then the live app, offline, under CSP.

Needs the compiled Pyodide wheels (skips with the reason otherwise) and Chromium.
"""

from __future__ import annotations

import json

import pytest

import build
from app.i18n import shell_text, tr
from app.sections.quiz.challenge import SOLUTION
from tests.browser import (
    STORM,
    LivePage,
    chromium_missing,
    foreign,
    open_card,
    open_page,
    serve,
    wait_for_text,
    wait_ready,
    wait_t,
)
from tests.test_sandbox_browser import QUIZ, check_code, sandbox_ready

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))


STAGES = """
  window.__stages = [];
  new MutationObserver(() => {
    const s = document.body && document.body.dataset.stage;
    if (s && window.__stages[window.__stages.length - 1] !== s) window.__stages.push(s);
  }).observe(document, {attributes: true, subtree: true, attributeFilter: ['data-stage']});
"""


CSP_SEEN = """
  window.__csp = [];
  document.addEventListener('securitypolicyviolation',
    (e) => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI + ' ' + (e.sample || '')));
"""


@pytest.fixture(scope="module")
def under_csp(browser, site):
    """The module's page: the static site served with the recommended Content-Security-Policy
    (build.CSP), its stages and any violation recorded from the start (tests/browser.py LivePage)."""
    with serve(site, csp=build.CSP) as url:
        page = LivePage(browser, url + "index.html", init=STAGES + CSP_SEEN)
        yield page
        page.close()


def test_snapshot_then_live_app_offline(under_csp):
    """The prerendered snapshot first, then the live app (the stages in their order), offline: every
    click answered to 64 and the model's own IndexError at 65, with a clean console."""
    page = under_csp.place()
    assert page.evaluate("document.getElementById('kv-snapshot')") is None  # replaced by the live doc
    assert page.evaluate("performance.getEntriesByName('kv-first-paint').length") == 1  # shown before
    stages = page.evaluate("window.__stages")
    assert stages[0] == "runtime" and stages[-2:] == ["app", "ready"], stages
    assert page.locator("#kv-loader").is_hidden()
    button = page.get_by_role("button", name="Avanzar").first
    button.evaluate(STORM, 62)  # to 64 at once (each click one step, in order: test_app_browser's first test)
    wait_t(page, 64, timeout=60000)
    button.click()  # past the 64-position window: the model's own IndexError
    wait_for_text(page, "IndexError", timeout_ms=20000)
    assert page.evaluate("document.body.dataset.pyerror") is None
    # a clean console: no warning or error along the way (the IndexError is the page's, not the console's)
    said = [m for m in page.console_messages if m.startswith(("warning", "error", "pageerror"))]
    assert said == [], said[:5]
    requests = page.requests
    assert foreign(requests) == [], foreign(requests)
    assert any("/packages/" in u and "numpy" in u for u in requests)
    # the default state is inline in the page, and so are the states one action away (Avanzar, the
    # mode switch): the preview answers a click on its first paint without a fetch
    fetched = sorted(u.rsplit("/", 1)[1] for u in requests if "/states-" in u)
    assert fetched == [], fetched


def test_page_works_under_csp(under_csp):
    """The recommended CSP (build.CSP) is enough: no violation reported from the page's start, and a
    step's round trip through the worker."""
    page = under_csp.place()
    page.get_by_role("button", name="Avanzar").first.click()
    wait_t(page, 3)
    assert page.evaluate("window.__csp") == []
    assert page.evaluate("document.body.dataset.pyerror") is None


def test_the_sandbox_keeps_its_own_policy_under_csp(under_csp):
    """Under the recommended CSP (its `worker-src blob:`) the reader's code sandbox starts as a blob:
    worker under its own policy (app/sandbox/host.js), and runs the official solution, with no
    violation reported by the page."""
    page = under_csp.place()
    open_card(page, QUIZ)
    sandbox_ready(page)
    assert page.evaluate("window.__kvSandboxHost.stats.policy") == "own"
    assert check_code(page, SOLUTION["es"])[0] == "right"
    assert page.evaluate("window.__csp") == []


def test_the_sandbox_starts_under_a_policy_without_blob_workers(browser, site):
    """A host that sends the policy without `worker-src blob:` (the one recommended before it): the
    sandbox starts from its file, under the host's policy. A page of its own: a policy is the
    document's, from its first response."""
    with serve(site, csp=build.CSP.replace("worker-src 'self' blob:", "worker-src 'self'")) as url:
        page = LivePage(browser, url + "index.html")
        try:
            open_card(page.place(), QUIZ)
            sandbox_ready(page.page)
            assert page.page.evaluate("window.__kvSandboxHost.stats.policy") == "host"
            assert check_code(page.page, SOLUTION["es"])[0] == "right"
        finally:
            page.close()


def test_lazy_modules_load_on_first_import(site, under_csp):
    """Modules left out of the wheels/stdlib (not imported at start-up) arrive on first import."""
    lazy = json.loads(next((site / "assets").glob("lazy-modules.*.json")).read_text())
    archives = [a["url"] for a in lazy["archives"]]
    pick = {}
    for name, (n, _rel, is_pkg) in lazy["modules"].items():
        if name.count(".") == 1 and is_pkg:
            pick.setdefault(archives[n].rsplit("/", 1)[-1], name)
    wanted = [pick[k] for k in sorted(pick) if k.startswith(("numpy-", "python_stdlib-"))]
    assert wanted, pick
    page = under_csp.place()
    # start-up needs no lazy archive: the build traced the app's imports (its nh3 among them: checked first)
    assert page.evaluate("window.kv.lazy") is None, page.evaluate("window.kv.lazy")
    page.evaluate("window.kv.sourceModules = undefined")
    page.evaluate("(names) => window.kv.worker.postMessage({type: 'modules', import: names})", wanted)
    page.wait_for_function("window.kv.sourceModules !== undefined", timeout=30000)
    loaded = page.evaluate("window.kv.sourceModules")
    for name in wanted:
        assert name in loaded, (name, loaded)
    assert len(page.evaluate("window.kv.lazy")) == len(wanted)
    assert foreign(page.requests) == []


def test_page_runs_the_real_nh3(under_csp):
    """Panel sanitizes with nh3.clean: the page installs Pyodide's compiled nh3 and its Rust
    extension imports (a pure-Python stand-in has no nh3.nh3); nothing of it is loaded from source,
    and it came with start-up, not on first import."""
    page = under_csp.place()
    assert [u for u in page.requests if "/packages/" in u and "/nh3-0.2.21-cp38-abi3-pyodide" in u]
    page.evaluate("window.kv.sourceModules = undefined")
    page.evaluate("window.kv.worker.postMessage({type: 'modules', import: ['nh3.nh3']})")
    page.wait_for_function("window.kv.sourceModules !== undefined", timeout=30000)
    source = page.evaluate("window.kv.sourceModules")
    assert "nh3" not in source and "nh3.nh3" not in source, source
    assert not any("nh3" in str(lazy) for lazy in page.evaluate("window.kv.lazy || []"))
    assert page.evaluate("document.body.dataset.pyerror") is None


# What only a section needs of the model and the app, by its key: imported when it first opens.
LAZY = {
    "batch": {"model.batch", "app.sections.batch.logic"},
    "continuous": {"model.scheduler", "app.sections.continuous.logic"},
    "speculative": {"model.speculative", "app.sections.speculative.logic"},
    "paged": {"model.paged", "app.sections.paged.logic"},
    "quantized": {"model.wquant", "app.sections.quantized.logic"},
}


def test_a_section_s_code_and_checkpoints_arrive_when_it_opens(under_csp):
    """A page that has opened no section has none of the chapter's code nor any other checkpoint; each
    section, opened in the page's order, brings its own modules and no other's (and the speculative one
    its draft); the smaller cache fetches a model's weights only once the reader picks it
    (tests/test_smaller_browser.py)."""
    from app.sections import SECTIONS
    from tests.test_beyond_browser import page_modules

    page = under_csp.place()
    every = set().union(*LAZY.values())
    assert page_modules(page).isdisjoint(every)
    assert not [u for u in page.requests if "ckpt-" in u]
    opened = set()
    for section in SECTIONS:
        if section.key not in LAZY and section.key != "smaller":
            continue
        open_card(page, tr("es", section.title_key))
        opened |= LAZY.get(section.key, set())
        loaded = page_modules(page)
        assert opened <= loaded and loaded.isdisjoint(every - opened), (section.key, loaded & every)
        drafts = [u for u in page.requests if "ckpt-draft" in u]
        assert bool(drafts) == ("model.speculative" in opened), (section.key, drafts)
        assert not [u for u in page.requests if "ckpt-kv" in u and u.endswith(".npz")]


@pytest.mark.parametrize("lang", ["pt"])  # English: the first paint's URL below
def test_snapshot_and_app_in_the_url_language(site, browser, lang):
    if not list((site / "assets").glob(f"states-*/{lang}-cache-2.html")):
        pytest.skip(f"the app declares no '{lang}' (app/i18n: no {lang}.po)")
    with serve(site) as url:
        page, requests = open_page(browser, url + f"index.html?lang={lang}")
        wait_ready(page)
        assert page.evaluate("document.documentElement.lang") == lang
        shell = shell_text()[lang]  # the shell's texts, from app/i18n/LANG.po
        assert page.title() == shell["shell_title"]
        assert page.locator("#kv-retry").text_content() == shell["shell_retry"]
        assert page.locator("#kv-hint").text_content() == shell["shell_hint"]
        # the URL's state first (its preview), then the states one action away (fetched ahead)
        snapshots = [u.rsplit("/", 1)[1] for u in requests if "/states-" in u]
        assert snapshots[0] == f"{lang}-cache-2.html", snapshots
        assert sorted(snapshots[1:]) == [f"{lang}-cache-3.html", f"{lang}-full-2.html"], snapshots
        assert foreign(requests) == []


STATE_SEEN = """
  window.__seen = [];
  new MutationObserver(() => {
    const holder = document.getElementById('kv-snapshot');
    const state = holder && !document.documentElement.classList.contains('kv-swap') ? holder.dataset.state : null;
    const pos = holder && holder.querySelector('.tpos');
    const shown = state && pos ? state + ' ' + pos.textContent : null;
    if (shown && window.__seen[window.__seen.length - 1] !== shown) window.__seen.push(shown);
  }).observe(document, {childList: true, subtree: true, attributes: true});
"""


@pytest.mark.parametrize(
    "query, state, later",
    [
        ("?t=64&mode=full&lang=en", "en-full-64 t = 64 / 64", None),
        ("?t=40&seed=3", "es-cache-2 t = 2 / 64", "t = 40"),
    ],
)
def test_the_first_paint_is_the_urls_state(site, browser, query, state, later):
    """A URL's state is its preview, from the first paint: never another state first, then a jump.
    With another seed the text is another: the preview says where the page will go."""
    with serve(site) as url:
        context = browser.new_context(viewport={"width": 360, "height": 740})
        context.add_init_script(STATE_SEEN)
        page, _ = open_page(browser, url + "index.html" + query, context=context)
        page.wait_for_function("performance.getEntriesByName('kv-first-paint').length > 0", timeout=30000)
        assert page.evaluate("window.__seen") == [state]
        note = page.locator("#kv-note").inner_text()
        assert (later in note) if later else "t =" not in note, note
        wait_ready(page)
        assert page.evaluate("window.__seen") == [state]
        context.close()


def test_embed_iframe(site, browser):
    with serve(site) as url:
        page, requests = open_page(browser, url + "embed.html")
        frame = page.frame_locator("iframe")
        frame.locator("body[data-ready='true']").wait_for(timeout=90000)
        # the frame is sized to the explorable's content (postMessage from the page), not to its
        # own 2000 px
        inner = frame.locator("#kv-main").evaluate("(el) => Math.ceil(el.getBoundingClientRect().bottom)")
        page.wait_for_function(
            "(h) => Math.abs(document.querySelector('iframe').getBoundingClientRect().height - h) < 40", arg=inner
        )
        assert abs(inner - 2000) > 40 and frame.locator("h1").first.is_hidden()  # embed=1: no title
        assert foreign(requests) == []
