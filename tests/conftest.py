"""Shared fixtures, and the test tiers.

The corpus lives outside the repo (../shared/corpus/); tests that need it skip with the reason where
it is absent. Browser tests share one Chromium for the whole run (`browser`), the app's two servers
(`app_url`: Panel's server, then the static site, one of each for the run) and the static site's
folder (`site`); their modules skip without Chromium.

Tiers: a test that uses a browser is marked `browser`, one that builds the site or a wheel (or
serves the built site) `build`, from the fixtures it uses, so no test can forget its marker:
`pytest -m "not browser and not build"` is the fast tier (README). And a test that starts a
browser, a build or a server without such a fixture fails (`tiers_are_kept`).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MARIANELA", ROOT.parent / "shared" / "corpus" / "marianela.txt"))
# Every build the tests make must trace the page's imports in Pyodide (buildsupport/pyodide_node.py),
# not fall back to CPython's list with a warning nobody reads.
os.environ.setdefault("KV_EXPLORABLE_STRICT_TRACE", "1")


@pytest.fixture(scope="session")
def corpus_text() -> str:
    if not CORPUS.is_file():
        pytest.skip(f"corpus not found at {CORPUS} (set MARIANELA=path/to/marianela.txt)")
    return CORPUS.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def gpt():
    from model import MiniGPT

    return MiniGPT.load()


BROWSER_FIXTURES = {"browser", "app_url", "live", "sections_page", "served_url"}
BUILD_FIXTURES = {"site", "cdn", "site_url", "warm_cache", "wheel", "static_url"}


def pytest_configure(config):
    """Under pytest-xdist the controller names the run, so that its workers share one build of the site
    (tests/site_fixtures.py shared_folder), and starts that build at once, beside the workers' first
    modules (they have no browser and no build: pytest_collection_modifyitems), so that no worker's
    first static page waits for it; the folder goes when the run ends."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        import uuid

        if config.option.testrunuid is None:
            config.option.testrunuid = uuid.uuid4().hex
        config.kv_run = config.option.testrunuid
        if "not build" not in (config.option.markexpr or ""):
            from tests.site_fixtures import build_ahead

            config.kv_build = build_ahead(config.kv_run)


def pytest_unconfigure(config):
    if getattr(config, "kv_build", None) is not None:
        config.kv_build.terminate()
        config.kv_build.wait()
    run = getattr(config, "kv_run", None)
    if run:
        import shutil

        from tests.site_fixtures import shared_folder

        shutil.rmtree(shared_folder(run), ignore_errors=True)


def pytest_collection_modifyitems(config, items):
    kept, dropped = [], []
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & BROWSER_FIXTURES:
            item.add_marker(pytest.mark.browser)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if names & BUILD_FIXTURES or params.get("app_url") == "static":
            item.add_marker(pytest.mark.build)
        # @pytest.mark.served_with(lang="es"): under Panel's server, only the parameters that match (the
        # static site, the page readers get, takes them all; the page's markup is the same code under both);
        # @pytest.mark.static_only: the static site only (what is the same code under both servers: the
        # page's layout, its words, the browser's side of the reader's code)
        served = item.get_closest_marker("served_with")
        on_server = params.get("app_url") == "served"
        unmatched = served is not None and any(params.get(k) != v for k, v in served.kwargs.items())
        if on_server and (item.get_closest_marker("static_only") or unmatched):
            dropped.append(item)
        else:
            kept.append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    # Modules with no browser and no build first: under pytest-xdist both workers run them while the first
    # test that needs the site builds it (tests/site_fixtures.py), instead of one waiting for the other's build.
    slow = {item.module.__name__ for item in kept if {"browser", "build"} & {m.name for m in item.iter_markers()}}
    items[:] = sorted(kept, key=lambda item: item.module.__name__ in slow)  # stable: a module's order kept


@pytest.fixture(autouse=True)
def tiers_are_kept(request):
    """What the running test is marked (tests.browser, tests.site_fixtures and tests.servers check it
    before they start a browser, a build or a server)."""
    from tests import tiers

    tiers.CURRENT = {m.name for m in request.node.iter_markers()}
    yield
    tiers.CURRENT = None


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium, one for the whole run (tests/browser.py); skips without it. Every test
    opens its own context (a fresh profile's state: storage, cookies, cache)."""
    from tests.browser import chromium, chromium_missing

    if chromium_missing():
        pytest.skip(chromium_missing())
    with chromium() as b:
        yield b


@pytest.fixture(autouse=True)
def close_what_the_test_opened(request):
    """After a test with the shared browser: the contexts it opened (and their pages, workers and
    renderer processes) are closed. Left open, a full run kept some 170 renderers alive and filled
    24 GiB, and later tests timed out for memory, not for anything they tested."""
    if "browser" not in request.fixturenames:
        yield
        return
    browser = request.getfixturevalue("browser")
    before = set(browser.contexts)
    yield
    for context in browser.contexts:
        if context not in before and not getattr(context, "kept", False):  # a LivePage's stays open
            context.close()


@pytest.fixture(scope="session")
def served_url():
    """Panel's server (`build.py dev`, tests/servers.py), one for the run: the explorable's URL."""
    from tests.servers import app_server

    with app_server("served") as url:
        yield url


@pytest.fixture(scope="session")
def static_url():
    """The static site, served on 127.0.0.1 (tests/servers.py), one for the run: its index.html URL."""
    from tests.servers import app_server

    with app_server("static") as url:
        yield url


@pytest.fixture(scope="session", params=["served", "static"])
def app_url(request):
    """The explorable's URL on each server in turn: Panel's server (`build.py dev`), then the static site."""
    return request.getfixturevalue(f"{request.param}_url")


@pytest.fixture(scope="module")
def live(browser, app_url):
    """One booted page of the explorable on this server for the module's tests (tests/browser.py
    LivePage: each test starts with `live.place(...)`)."""
    from tests.browser import LivePage

    page = LivePage(browser, app_url)
    yield page
    page.close()


@pytest.fixture(scope="session")
def sections_page(browser, app_url):
    """One booted page of the explorable on this server for the whole run, shared by the tests of the
    sections below the figure (the chapter's and the reader's code): each opens its own section, which
    keeps its state, and starts with `sections_page.place(...)`. Whether a section's code arrives only
    when it opens is tested on a page of its own (tests/test_site_e2e.py)."""
    from tests.browser import LivePage

    page = LivePage(browser, app_url)
    yield page
    page.close()


@pytest.fixture(autouse=True)
def served_in_order(request):
    """After every test on Panel's server: the app made no change the browser could receive out of
    order (tests/servers.py's unordered_changes)."""
    yield
    if "app_url" in request.fixturenames:
        from tests.servers import unordered_changes

        url = request.getfixturevalue("app_url")
        assert unordered_changes(url) == [], "the app changed the page outside session.dispatch"


@pytest.fixture(scope="session")
def site():
    """The self-contained static site, built once per test session (tests/site_fixtures.py)."""
    from tests.site_fixtures import site_self_contained

    return site_self_contained()
