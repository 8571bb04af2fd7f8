"""The paged cache's section in a real browser, on both servers (Panel's and the static site in
Pyodide): opened, stepped, another block size, animated to the end and reset, what the page shows
checked against the same run here (the pool, the block tables, the memory three ways, the copies on
write, the logits' difference); on the static site, model.paged loaded only once the card opens. On a
phone in English: nothing sticks out sideways, and axe-core finds no serious violation.

Headless Debian Chromium driven by Playwright; screenshots go to test-output/.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from app.sections.paged.logic import PagedRun, memory_row, shared_blocks
from tests.browser import chromium_missing, errors, foreign, open_card, shot
from tests.test_a11y_browser import opened_on_a_phone, whole_on_a_phone
from tests.test_beyond_browser import page_modules

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

SECTION = {"es": "La caché en bloques: PagedAttention", "en": "The cache in blocks: PagedAttention"}
STEP = {"es": "Avanzar los bloques", "en": "Step the blocks"}
LAZY = ("model.paged", "app.sections.paged.logic")


def static(app_url: str) -> bool:
    return app_url.endswith("index.html")


def where(app_url: str) -> str:
    return "static" if static(app_url) else "served"


def state(page, **attrs):
    """The state line, once it says what `attrs` say (it is drawn last: the rest is on the page)."""
    sel = "".join(f"[data-{k}='{v}']" for k, v in attrs.items())
    loc = page.locator(f"[data-testid=paged-state]{sel}")
    loc.wait_for(timeout=60000)
    return loc


def step(page, lang: str, n: int) -> None:
    page.get_by_role("button", name=STEP[lang], exact=True).click()
    state(page, steps=n)


def shows(page, run: PagedRun) -> None:
    """The page shows the run's step: memory, block tables, pool, copies, proof."""
    m, snap = memory_row(run.snap), run.snap
    memory = page.locator("[data-testid=paged-memory]")
    for k in ("reserved", "paged", "shared", "exact", "unused", "live"):
        assert int(memory.get_attribute(f"data-{k}")) == m[k], (run.steps, k)
    rows = page.locator("[data-testid=paged-tables] tr[data-name]")
    shown = {r.get_attribute("data-name"): r.get_attribute("data-table") for r in rows.all()}
    assert shown == {n: " ".join(map(str, t)) for n, t in snap["tables"].items()}
    pool = page.locator("[data-testid=paged-pool]")
    assert int(pool.get_attribute("data-free")) == len(snap["free"])
    assert pool.get_attribute("data-shared") == " ".join(map(str, shared_blocks(snap)))
    assert pool.locator("li.blk").count() == run.n_blocks
    copies = sum(c["kind"] == "copy" for c in run.changes)
    assert int(page.locator("[data-testid=paged-events]").get_attribute("data-copies")) == copies
    proof = page.locator("[data-testid=paged-proof]")
    assert float(proof.get_attribute("data-diff")) < 1e-12 and int(proof.get_attribute("data-compared")) == run.compared


def test_the_paged_cache_in_the_browser(sections_page, app_url, gpt):
    page = sections_page.place()
    requests = page.requests
    open_card(page, SECTION["es"])
    state(page, steps=0, block=4)
    assert page.locator("[data-testid=paged-tables]").get_attribute("data-n") == "0"
    run = PagedRun(gpt, 4)
    for i in range(1, 4):
        step(page, "es", i)
        run.advance()
        shows(page, run)
        if i == 2:  # A's first write into the shared, partly filled block 5
            assert "copia en escritura al bloque libre 6" in page.locator("[data-testid=paged-events]").inner_text()
    if static(app_url):
        assert set(LAZY) <= page_modules(page)
    shot(page, f"{where(app_url)}-paged-es")
    page.get_by_role("button", name="16", exact=True).click()  # another block size: the run starts over
    state(page, steps=0, block=16)
    run = PagedRun(gpt, 16)
    for i in range(1, 3):
        step(page, "es", i)
        run.advance()
        shows(page, run)
    events = page.locator("[data-testid=paged-events]").inner_text()
    assert "A iba a escribir en su bloque lógico 1, el físico 1" in events  # copy on write, blocks of 16
    page.get_by_role("button", name="Animar los bloques", exact=True).click()  # to the end by itself
    state(page, done="True", steps=18)
    expect(page.get_by_role("button", name="Animar los bloques", exact=True)).to_be_visible()  # stopped
    assert page.locator("[data-testid=paged-memory]").get_attribute("data-live") == "0"
    page.get_by_role("button", name="Reiniciar los bloques", exact=True).click()
    state(page, steps=0, block=16)
    assert errors(page) == [] and foreign(requests) == []


@pytest.mark.static_only
def test_the_paged_cache_on_a_phone_in_english(sections_page, app_url, gpt):
    page, requests = opened_on_a_phone(sections_page, SECTION["en"])
    page.get_by_role("button", name="4", exact=True).click()  # blocks of 4, from the start
    page.get_by_role("button", name="Reset the blocks", exact=True).click()
    state(page, steps=0, block=4)
    run = PagedRun(gpt, 4)
    for i in range(1, 3):
        step(page, "en", i)
        run.advance()
    shows(page, run)
    assert "copy on write to the free block 6" in page.locator("[data-testid=paged-events]").inner_text()
    whole_on_a_phone(page, f"{where(app_url)} paged en", requests)
