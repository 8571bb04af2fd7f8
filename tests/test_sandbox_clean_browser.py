"""Every run of the reader's code starts in a clean interpreter (app/sandbox/host.js, static/sandbox.js),
on the static site and under `panel serve`: what a run leaves behind (the runner it replaced, a
module it patched, a timer that spins or floods, a message it forged, the memory it took) reaches
no later run. And a run asked for while another runs waits in line, visibly, then runs.
"""

from __future__ import annotations

import pytest

from app.sandbox import LIMIT_S
from app.sections.quiz.challenge import SOLUTION
from tests.bench_sandbox import renderer_rss_mb, settle
from tests.browser import chromium_missing, open_card, run_and_wait
from tests.test_sandbox_browser import MARGIN_S, PROVE, QUIZ, editor, sandbox_ready
from tests.test_sandbox_browser import check_code as check_now

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

RIGHT = SOLUTION["es"]


def check_code(page, code: str):
    """The challenge's answer to `code`, once the next interpreter is ready (it boots during the run
    before: a reader reading that answer never waits for it; a test that clicks at once would)."""
    sandbox_ready(page)
    return check_now(page, code)


WRONG = "def atencion(q, K, V):\n    return q\n"

# (what a run does to its interpreter, the state of its own answer)
LEFTOVERS = [
    # the runner's entry point replaced: every later run would "answer" at once
    (
        'import kv_sandbox_runner as r\nr.run_json.__code__ = (lambda s: \'{"status": "ok", "value": null}\').__code__\n'
        + WRONG,
        {"wrong", "problem"},
    ),
    # NumPy patched: the official solution would be judged wrong
    ("import numpy as np\nnp.exp = None\nnp.sqrt = lambda x: 1.0\n" + WRONG, {"wrong"}),
    ("import model\nmodel.MiniGPT.avanzar = lambda *a: None\n" + WRONG, {"wrong"}),
    # a timer that spins, and one that floods the page with 100 MB messages
    (
        "import js\nfrom pyodide.ffi import create_proxy\n"
        "js.setInterval(create_proxy(lambda: sum(range(10 ** 7))), 1)\n" + WRONG,
        {"wrong"},
    ),
    (
        "import js\nfrom pyodide.ffi import create_proxy\nbig = 'x' * 10 ** 8\n"
        "js.setInterval(create_proxy(lambda: js.postMessage(big)), 1)\n" + WRONG,
        {"wrong"},
    ),
    # forged answers of the host's protocol, mid-run
    (
        'import js\njs.postMessage(js.JSON.parse(\'{"type": "failed", "message": "forged"}\'))\n'
        'js.postMessage(js.JSON.parse(\'{"type": "ready"}\'))\n'
        'js.postMessage(js.JSON.parse(\'{"type": "done", "nonce": "0", "answer": "{}"}\'))\n' + WRONG,
        {"wrong"},
    ),
    # the interpreter closed by its own code: this run is stopped, the next one is not
    ("import js\njs.close()\n" + WRONG, {"stopped", "wrong"}),
]


@pytest.mark.static_only  # the browser's side of the reader's code: the same under both servers
def test_each_run_starts_clean(browser, sections_page, app_url):
    page = sections_page.place()
    open_card(page, PROVE)  # the sandbox gets the model package (import model)
    open_card(page, QUIZ)
    sandbox_ready(page)
    stats = "[window.__kvSandboxHost.stats.starts, window.__kvSandboxHost.stats.runs]"
    starts, runs = page.evaluate(stats)
    assert check_code(page, RIGHT)[0] == "right"
    settle(page)
    memory = renderer_rss_mb(browser)
    for code, states in LEFTOVERS:
        state, text = check_code(page, code)
        assert state in states, (code, state, text)
        # the next run: the official solution, right, within its limit
        assert check_code(page, RIGHT)[0] == "right", code
        if "model" in code:  # and the lesson's cell, as the lesson writes it, untouched
            page.get_by_role("button", name="Restaurar la celda").click()
            sandbox_ready(page)
            run_and_wait(page, "cell-result", "Ejecutar")
            out = page.locator("[data-testid=code-output]").inner_text()
            assert "(4, 64, 16)" in out and "16384" in out, out
    state, text = check_code(page, "while True:\n    pass\n")
    assert state == "stopped" and f"más de {LIMIT_S} s" in text
    # a run that took a gigabyte leaves nothing behind
    assert check_code(page, "import numpy as np\nx = np.ones(125_000_000)\n" + WRONG)[0] == "wrong"
    assert check_code(page, RIGHT)[0] == "right"
    settle(page)
    grown = renderer_rss_mb(browser) - memory
    assert grown < 300, f"the renderer kept {grown:.0f} MB after the runs"
    started, ran = (now - before for now, before in zip(page.evaluate(stats), (starts, runs)))
    assert started >= ran >= 2 * len(LEFTOVERS) + 4  # an interpreter per run


def test_a_run_asked_for_while_another_runs_waits_in_line(sections_page, app_url):
    page = sections_page.place()
    open_card(page, PROVE)
    open_card(page, QUIZ)
    sandbox_ready(page)
    runs = page.evaluate("window.__kvSandboxHost.stats.runs")
    editor(page, "La celda").fill("import time\ntime.sleep(600)\n")
    page.get_by_role("button", name="Ejecutar", exact=True).click()
    page.locator("[data-testid=cell-result][data-state=running]").wait_for()
    editor(page).fill(RIGHT)
    page.get_by_role("button", name="Comprobar", exact=True).click()
    queued = page.locator("[data-testid=challenge-result][data-state=queued]")
    queued.wait_for()
    assert "En cola" in queued.inner_text() and "10 s" in queued.inner_text()
    # a second click replaces the waiting request, it does not add one
    page.get_by_role("button", name="Comprobar", exact=True).click()
    page.locator("[data-testid=cell-result][data-state=timeout]").wait_for(timeout=(10 + MARGIN_S) * 1000)
    answer = page.locator("[data-testid=challenge-result][data-state=right]")
    answer.wait_for(timeout=(LIMIT_S + MARGIN_S) * 1000)
    ran = page.evaluate("window.__kvSandboxHost.stats.runs") - runs
    assert ran == 2, f"{ran} runs: the replaced request ran too"
    run_and_wait(page, "challenge-result", "Comprobar")  # and the line is empty again
