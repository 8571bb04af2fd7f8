"""Beyond the lesson in a real browser, on both servers (Panel's and the static site in Pyodide):
batching and speculative decoding, opened, stepped and measured; what the page shows checked
against the model run here; and on the static site, nothing of either loaded before its card opens.

Headless Debian Chromium driven by Playwright; screenshots go to test-output/.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from app.i18n import size
from app.sections.batch.logic import PROMPTS
from app.style import show_token
from model import cost, generate
from tests.browser import chromium_missing, errors, foreign, measure, open_card, set_seed, shot, text_of

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

LAZY = ("model.batch", "model.speculative", "app.sections.batch.logic", "app.sections.speculative.logic")


def static(app_url: str) -> bool:
    return app_url.endswith("index.html")


def page_modules(page) -> set[str]:
    """The modules the page's Python has imported from source (app/ and model/ among them)."""
    page.evaluate("window.kv.sourceModules = undefined; window.kv.worker.postMessage({type: 'modules', import: []})")
    page.wait_for_function("window.kv.sourceModules !== undefined", timeout=30000)
    return set(page.evaluate("window.kv.sourceModules"))


def draft_requests(requests) -> list[str]:
    return [u for u in requests if "ckpt-draft" in u]


def plain_text(s: str) -> str:
    return " ".join(s.split())


def click_and_wait(page, button: str, testid: str, attr: str, value) -> None:
    page.get_by_role("button", name=button, exact=True).click()
    page.locator(f"[data-testid={testid}][{attr}='{value}']").wait_for(timeout=30000)


def test_batching_in_the_browser(sections_page, app_url, gpt):
    page = sections_page.place()
    requests = page.requests
    set_seed(page, 2)  # the batch's seeds follow the page's
    try:
        batching_in_the_browser(page, app_url, requests, gpt)
    finally:
        set_seed(page, 0)


def batching_in_the_browser(page, app_url, requests, gpt):
    open_card(page, "Muchas conversaciones a la vez: el lote (batching)")
    page.locator("[data-testid=batch-state][data-steps='0'][data-b='8']").wait_for(timeout=60000)
    for i in range(1, 6):
        click_and_wait(page, "Avanzar el lote", "batch-state", "data-steps", i)
    texts = page.locator("[data-testid=batch-text]").all_inner_texts()
    vocab = gpt.tokenizer.vocab
    assert len(texts) == 8
    for b, shown in enumerate(texts):  # each its own prompt and seed, as if alone
        ids = generate(gpt, PROMPTS[b], 5, seed=2 + b, top_p=0.9)
        own = "".join(show_token(vocab[i]) for i in ids)
        assert plain_text(shown).endswith(plain_text(own)) and f"semilla {2 + b}" in shown, (b, shown, own)
    memory = page.locator("[data-testid=batch-memory]")
    tensor, row, slots = (int(memory.get_attribute(f"data-{k}")) for k in ("tensor", "row", "slots"))
    assert slots == max(len(gpt.tokenizer.encode(p)) for p in PROMPTS[:8]) + 5
    assert tensor == 8 * row == 8 * cost.cache_numbers(2, 64, slots) * 8  # B times one conversation's row
    assert float(page.locator("[data-testid=batch-proof]").get_attribute("data-diff")) < 1e-12
    page.get_by_role("button", name="Animar el lote", exact=True).click()  # it plays by itself
    expect(page.locator("[data-testid=batch-state]")).to_have_attribute(
        "data-steps", re.compile(r"^(?:[89]|[1-9]\d+)$"), timeout=30000
    )  # 8 steps or more
    page.get_by_role("button", name="Pausa", exact=True).click()
    page.get_by_role("button", name="Animar el lote", exact=True).wait_for()  # paused: no step pending
    paused = int(page.locator("[data-testid=batch-state]").get_attribute("data-steps"))
    click_and_wait(page, "Avanzar el lote", "batch-state", "data-steps", paused + 1)
    click_and_wait(page, "Reiniciar el lote", "batch-state", "data-steps", 0)
    for i in range(1, 6):
        click_and_wait(page, "Avanzar el lote", "batch-state", "data-steps", i)
    if static(app_url):
        assert {"model.batch", "app.sections.batch.logic"} <= page_modules(page)
    measure(page, "batch-status", "Medir el lote " + ("en mi navegador" if static(app_url) else "en el servidor"))
    rows = [r.split("\t") for r in page.locator("[data-testid=batch-table] tbody tr").all_inner_texts()]
    assert [(int(r[0]), int(r[1])) for r in rows] == [(t, B) for t in (8, 32, 64) for B in (1, 2, 4, 8, 16, 32)]
    for r in rows:  # the cache after the step: B times one's
        assert r[5].strip() == size(int(r[1]) * cost.cache_numbers(2, 64, int(r[0])) * 8, "es"), r
    last = rows[-1]
    explain = text_of(page, "batch-explain")
    assert f"En la posición 64, un paso de las 32 conversaciones tardó {last[2]} ms: {last[3]} ms" in explain
    shot(page, ("static-" if static(app_url) else "served-") + "beyond-batch")
    assert errors(page) == [] and foreign(requests) == []


def committed(page) -> list[str]:
    """The text's tokens once a round is decided: all but the rejected and the untested drafts."""
    spans = page.locator("[data-testid=speculative-text] span")
    return [s.inner_text() for s in spans.all() if s.get_attribute("data-kind") not in ("rejected", "untested")]


def test_speculative_decoding_in_the_browser(sections_page, app_url, gpt):
    page = sections_page.place(lang="en")
    requests = page.requests
    open_card(page, "The draft and the check: speculative decoding")
    page.locator("[data-testid=speculative-phase]").wait_for(timeout=60000)
    if static(app_url):
        assert [u for u in draft_requests(requests) if "minigpt" in u]
        assert {"model.speculative", "app.sections.speculative.logic"} <= page_modules(page)
    page.get_by_role("radio", name="Greedy: always the most likely", exact=True).check()
    page.locator("[data-testid=speculative-same][data-same='True']").wait_for()
    for _ in range(3):
        for phase in ("draft", "check", "decide"):
            click_and_wait(page, "Next phase", "speculative-phase", "data-phase", phase)
        kinds = [s.get_attribute("data-kind") for s in page.locator("[data-testid=speculative-text] span").all()]
        accepted = kinds.count("accepted")
        before, after = map(int, page.locator("[data-testid=speculative-phase]").get_attribute("data-target").split())
        n = len(committed(page))
        assert after == n - 1 and before - after == 4 - accepted  # the rejected rows cut off, by slicing
    vocab = gpt.tokenizer.vocab
    own = [show_token(vocab[i]) for i in generate(gpt, "La Nela", n - 2, temperature=0)]
    assert committed(page) == own  # the mini-GPT's own greedy text
    assert page.locator("[data-testid=speculative-same]").get_attribute("data-same") == "True"
    counts = page.locator("[data-testid=speculative-counts]")
    c = {k: int(counts.get_attribute(f"data-{k}")) for k in ("rounds", "tokens", "drafted", "tested", "accepted")}
    assert c["rounds"] == 3 and c["tokens"] == n - 2 and c["accepted"] <= c["tested"] <= c["drafted"] == 12
    assert f"α = {round(100 * c['accepted'] / c['tested'])}%" in counts.inner_text()
    shot(page, ("static-" if static(app_url) else "served-") + "beyond-spec")
    # the measurement: one k measured, then cancelled
    old = page.locator("[data-testid=speculative-status]")
    before = int(old.first.get_attribute("data-run") or 0) if old.count() else 0
    mine = "in my browser" if static(app_url) else "on the server"
    page.get_by_role("button", name=f"Measure speculation {mine}", exact=True).click()
    page.locator("[data-testid=speculative-table] tbody tr").first.wait_for(timeout=120000)
    page.get_by_role("button", name="Cancel", exact=True).click()
    status = page.locator(f"[data-testid=speculative-status][data-run='{before + 1}'][data-state=done]")
    status.wait_for(timeout=120000)
    assert status.inner_text().startswith("Cancelled after")
    row = page.locator("[data-testid=speculative-table] tbody tr").first.inner_text().split("\t")
    alpha = float(row[1].rstrip("%")) / 100
    per_pass, formula = map(float, re.findall(r"[\d.]+", row[2]))
    assert row[0] == "1" and abs(formula - cost.expected_tokens_per_pass(alpha, 1)) < 0.01  # 1 + α
    assert 1 <= per_pass <= 2
    assert errors(page) == [] and foreign(requests) == []
