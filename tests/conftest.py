"""Shared fixtures. The corpus lives outside the repo (../shared/corpus/); tests
that need it skip with the reason where it is absent. Browser tests share one Chromium per module
(`browser`), the app's two servers (`app_url`: Panel's server, then the static site) and the
static site's folder (`site`); their modules skip without Chromium."""
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


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium, one per test module (tests/browser.py); skips without it."""
    from tests.browser import chromium, chromium_missing
    if chromium_missing():
        pytest.skip(chromium_missing())
    with chromium() as b:
        yield b


@pytest.fixture(scope="module", params=["served", "static"])
def app_url(request):
    """The explorable's URL: Panel's server (`build.py dev`), or the static site (tests/servers.py)."""
    from tests.servers import app_server
    with app_server(request.param) as url:
        yield url


@pytest.fixture(autouse=True)
def served_in_order(request):
    """After every test on Panel's server: the app made no change the browser could receive out of
    order (tests/servers.py's unordered_changes)."""
    yield
    if "app_url" in request.fixturenames:
        from tests.servers import unordered_changes
        url = request.getfixturevalue("app_url")
        assert unordered_changes(url) == [], "the app changed the page outside session.dispatch"


@pytest.fixture(scope="module")
def site():
    """The self-contained static site, built once per test session (tests/site_fixtures.py)."""
    from tests.site_fixtures import site_self_contained
    return site_self_contained()
