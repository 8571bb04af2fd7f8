"""The reader's code runs in a sandbox of its own, in the reader's browser, under `panel serve` and on
the static site: nothing typed can stop, corrupt or take over the page (issue 8).

Each input a curious student might type goes into the challenge; each gets an answer or a clear
stop message within the stated limit (plus a margin); then the figure still steps to 64 with the
lesson's totals and meets the IndexError at 65, and the app's model weights are unchanged.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from app.sandbox import LIMIT_S
from tests.browser import STORM, chromium_missing, errors, open_app, open_card, run_and_wait, wait_plain, wait_t
from tests.servers import unordered_changes

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=chromium_missing() or "")

QUIZ = "Comprueba tu intuición: cinco preguntas y un reto"
PROVE = "Pruébalo: la primera celda de la lección"
MARGIN_S = 3.0  # message round trips and redrawing, on a busy 2-core machine

# The sandbox is the reader's browser's, the same under Panel's server and on the static site: every
# case runs on the static site (the page readers get); under the server, the cases marked `served`, one
# of each kind of answer (the host's side of them: an error, a run stopped and its interpreter replaced,
# a long output cut, a request refused), for the others took a minute more in every run of the suite.
SERVED = True

# (what a curious student types, the answers that are acceptable[, SERVED: run under the server too])
CASES = [
    ("def f(n):\n    return f(n + 1)\nf(0)\n", {"error"}, SERVED),
    (
        "import sys\nsys.setrecursionlimit(10**6)\ndef f(n):\n    return f(n + 1)\nf(0)\n",
        {"crashed", "stopped", "error"},
    ),
    ("import json\nx = []\nfor _ in range(100000):\n    x = [x]\njson.dumps(x)\n", {"crashed", "stopped", "error"}),
    ('exec("while True: pass")\n', {"stopped"}, SERVED),
    ("import time\ntime.sleep(60)\n", {"stopped"}),
    ("for i in range(100000):\n    print(i)\ndef atencion(q, K, V):\n    return q\n", {"wrong"}, SERVED),
    (
        'import js\njs.postMessage(js.JSON.parse(\'{"type": "done", "nonce": "x", "answer": "{}"}\'))\n'
        "js.self.postMessage = None\ndef atencion(q, K, V):\n    return q\n",
        {"wrong"},
    ),
    ("import js\njs.onmessage = None\ndef atencion(q, K, V):\n    return q\n", {"wrong"}),
    ("raise KeyboardInterrupt\n", {"error"}),
    ("class Boom(BaseException):\n    pass\nraise Boom('no')\n", {"error"}),
    ("x = bytearray(2**31)\n", {"error"}),
    ("x = [0] * 10**9\n", {"error"}),
    ("x = []\nwhile True:\n    x.append(' ' * 10**6)\n", {"error", "stopped"}),
    ("import js\njs.fetch('http://127.0.0.1:9/')\n", {"problem"}, SERVED),
    # modules the static site ships apart (fetched on first import, as in the app's worker)
    (
        "import statistics, fractions, decimal\ndef atencion(q, K, V):\n    return q * statistics.mean([1, 1])\n",
        {"wrong"},
    ),
]


# Every kind of request a worker can make, to each address in `bases` (+ tag/kind), then a wait of
# `wait_ms` with the worker's thread held (as a run holds it) while what was sent goes out: in the
# worker itself, and in a worker it starts from a blob: URL and one from a data: URL.
ATTACK = r"""(bases, tag, waitMs) => {
  const kinds = (u) => ({
    fetch: () => fetch(u("fetch")),
    post: () => fetch(u("post"), { method: "POST", body: "x" }),
    xhr: () => { const x = new XMLHttpRequest(); x.open("GET", u("xhr"), false); x.send(); },
    importScripts: () => importScripts(u("importScripts")),
    import: () => eval("import(u('import'))"),
    websocket: () => new WebSocket(u("websocket").replace(/^http/, "ws")),
    eventsource: () => new EventSource(u("eventsource")),
    font: () => new FontFace("x", `url(${u("font")})`).load(),
    cache: () => caches.open("x").then((c) => c.add(u("cache"))),
    beacon: () => navigator.sendBeacon(u("beacon"), "x"),
    worker: () => new Worker(u("worker")),
  });
  const run = (u) => {
    for (const f of Object.values(kinds(u))) {
      try { const p = f(); if (p && p.catch) p.catch(() => {}); } catch (e) {}
    }
  };
  for (const base of bases) {
    run((kind) => `${base}${tag}/${kind}`);
    const inner = (who) => `const kinds = ${kinds}; (${run})((kind) => ${JSON.stringify(base + tag + "/" + who + "-")} + kind);`;
    const blob = URL.createObjectURL(new Blob([inner("blob")], { type: "text/javascript" }));
    for (const url of [blob, "data:text/javascript," + encodeURIComponent(inner("data"))]) {
      try { new Worker(url); } catch (e) {}
    }
  }
  const end = Date.now() + waitMs;
  while (Date.now() < end) {}
}"""
# What reaches a listener when that attack runs in a worker of the page with no policy of its own: the
# kinds a run's code could send before its worker is gone (the issue's own: XMLHttpRequest, fetch, a
# POST, importScripts; and import(), a WebSocket).
SENT_UNCONTAINED = {"fetch", "post", "xhr", "importScripts", "import", "websocket"}


def network_code(bases: list[str], tag: str) -> str:
    """What a reader types to reach the network: the attack through js.eval, and the issue's calls
    straight from Python."""
    return (
        "import js\n"
        f"for url in {bases!r}:\n"
        "    for call in (lambda: js.fetch(url + 'py/fetch'), lambda: js.importScripts(url + 'py/importScripts')):\n"
        "        try:\n"
        "            call()\n"
        "        except Exception:\n"
        "            pass\n"
        f"js.eval({ATTACK!r})(js.JSON.parse({json.dumps(bases)!r}), {tag!r}, 1500)\n"
        "def atencion(q, K, V):\n    return q\n"
    )


class Heard(list):
    """A listener's record of (method, path); `wait_until(test, timeout_s)` returns once test(record)
    holds, woken by each request it records (False if the time ran out first)."""

    def __init__(self):
        super().__init__()
        self.changed = threading.Condition()

    def add(self, item) -> None:
        with self.changed:
            self.append(item)
            self.changed.notify_all()

    def wait_until(self, test, timeout_s: float) -> bool:
        with self.changed:
            return self.changed.wait_for(lambda: test(self), timeout_s)


@contextlib.contextmanager
def listener():
    """An HTTP server on another port of this machine that answers everything (CORS open) and records
    (method, path) of every request it receives; yields (its base URL, the record)."""
    heard = Heard()

    class Record(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self):
            heard.add((self.command, self.path))
            self.send_response(200)
            for name, value in {"Access-Control-Allow-Origin": "*", "Content-Type": "text/javascript"}.items():
                self.send_header(name, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_PUT = do_OPTIONS = answer

    server = ThreadingHTTPServer(("127.0.0.1", 0), Record)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", heard
    finally:
        server.shutdown()
        server.server_close()


def kinds_heard(heard, tag: str) -> set[str]:
    return {path.split("/")[2] for _, path in heard if path.startswith(f"/{tag}/")}


def nothing_leaves_the_sandbox(page, served: bool):
    """The reader's code tries every kind of request to another origin of this machine (and under
    Panel's server to the app's page and websocket): none is sent. The same attack from a worker of
    the page without the sandbox's policy reaches the listener, so the listener hears what is sent."""
    with listener() as (base, heard):
        origin = page.evaluate("location.origin")
        bases = [base] + ([f"{origin}/explorable?", f"{origin}/explorable/ws?"] if served else [])
        tag = f"reader-{uuid.uuid4().hex[:8]}"
        asked: list = []  # every request the browser saw begin, the sandbox's workers' included

        def on_request(request):
            asked.append(request)

        page.context.on("request", on_request)
        sandbox_ready(page)
        state, text = check_code(page, network_code(bases, tag))
        assert state == "wrong", (state, text)
        page.evaluate(
            "([attack, base]) => { const w = new Worker(URL.createObjectURL(new Blob("
            "[`(${attack})([${JSON.stringify(base)}], 'control', 1500)`]))); window.__kvControl = w; }",
            [ATTACK, base],
        )
        heard.wait_until(lambda record: SENT_UNCONTAINED <= kinds_heard(record, "control"), 20)
        page.evaluate("window.__kvControl.terminate()")
        assert SENT_UNCONTAINED <= kinds_heard(heard, "control"), heard
        assert [h for h in heard if "/control/" not in h[1]] == []
        page.context.remove_listener("request", on_request)
        # the browser's own witness (the app's page and websocket too): each refused before it left
        left = [(r.url, r.failure) for r in asked if tag in r.url and r.failure != "csp"]
        assert left == []


def weights(page) -> str:
    page.wait_for_function("document.body.dataset.kvWeights")
    return page.evaluate("document.body.dataset.kvWeights")


def sandbox_ready(page, timeout_ms=90000):
    page.wait_for_function("window.__kvSandboxHost && window.__kvSandboxHost.phase === 'ready'", timeout=timeout_ms)


def editor(page, name="Tu código"):
    return page.get_by_role("textbox", name=name)


def check_code(page, code: str):
    """Type `code` in the challenge, press Comprobar; return (state, text) of its answer, which must
    come within the sandbox's time limit (and a margin for the messages and the redraw)."""
    editor(page).fill(code)
    answer = run_and_wait(page, "challenge-result", "Comprobar", timeout_ms=(LIMIT_S + MARGIN_S) * 1000)
    return answer.get_attribute("data-state"), answer.inner_text()


def step_to_the_end(page):
    step = page.get_by_role("button", name="Avanzar")
    start = int(re.search(r"t = (\d+)", page.locator(".tpos").first.inner_text()).group(1))
    step.evaluate(STORM, 64 - start)  # each click one step, in order: test_app_browser's first test
    wait_t(page, 64, timeout=60000)
    wait_plain(page, "total-cached", "8921088")
    wait_plain(page, "total-full", "295526400")
    step.click()
    err = page.locator("[data-testid=error]")
    err.wait_for()
    assert "IndexError: index 64 is out of bounds for axis 0 with size 64" in err.inner_text()
    assert err.get_attribute("data-lesson") == "true"


def test_nothing_typed_stops_or_changes_the_page(sections_page, app_url, request):
    page = sections_page.place()
    before = weights(page)
    open_card(page, PROVE)  # the cell's sandbox gets its own copy of the model
    open_card(page, QUIZ)
    sandbox_ready(page)
    served = request.node.callspec.params["app_url"] == "served"
    cases = [case[:2] for case in CASES if not served or case[2:] == (SERVED,)]
    cases = cases + [
        (
            "import model, numpy as np\ngpt = model.MiniGPT.load()\n"
            "for a in gpt.params.values():\n    a[...] = np.nan\n",
            {"problem"},
        )
    ]
    replaced = 0
    for code, ok in cases:
        sandbox_ready(page)  # a case may have replaced the interpreter: wait for the new one
        state, text = check_code(page, code)
        assert state in ok, (code, state, text)
        if state == "stopped":
            assert f"más de {LIMIT_S} s" in text
        replaced += state in ("stopped", "crashed")
        if "print(i)" in code:
            assert re.search(r"… y [\d\u202f]+ líneas más", text), text
    assert replaced >= (1 if served else 2)
    assert page.evaluate("window.__kvSandboxHost.stats.starts") >= 1 + replaced  # stopped ones were replaced
    nothing_leaves_the_sandbox(page, served)
    step_to_the_end(page)
    assert weights(page) == before
    # the only errors in the console: Pyodide's own report of the sandbox interpreters that died
    assert [m for m in errors(page) if not re.search(r"fatal error|Maximum call stack|pyodide\.asm", m)] == []


def test_the_lessons_cell_runs_in_the_sandbox(sections_page, app_url):
    page = sections_page.place()
    open_card(page, PROVE)
    sandbox_ready(page)
    run_and_wait(page, "cell-result", "Ejecutar")
    out = page.locator("[data-testid=code-output]").inner_text()
    assert "(4, 64, 16)" in out and "16384" in out
    diffs = [float(m) for m in re.findall(r"^\d+ ([\d.e+-]+)$", out, re.M)]
    assert len(diffs) == 8 and max(diffs) < 1e-12
    run_and_wait(page, "cell-result", "Cambiar el 64 por 65 y ejecutar")
    err = page.locator("[data-testid=cell-error]")
    assert "IndexError: index 64 is out of bounds for axis 0 with size 64" in err.inner_text()
    assert "64 filas" in err.inner_text() and "Línea 8" in err.inner_text()
    assert "while len(ids) < 65:" in editor(page, "La celda").input_value()


def test_reader_code_never_runs_on_the_server(browser, served_url):
    """Under `panel serve`: a file the code writes does not appear on the server, and a session whose
    code sleeps does not slow another session's steps."""
    marker = Path("/tmp") / f"kv-sandbox-{uuid.uuid4().hex}"
    url = served_url
    page, _ = open_app(browser, url, "?lang=es")
    wait_t(page, 2)
    open_card(page, QUIZ)
    sandbox_ready(page)
    state, text = check_code(page, f"open({str(marker)!r}, 'w').write('x')\n")
    assert state == "problem" and not marker.exists()
    other, _ = open_app(browser, url, "?lang=es")
    wait_t(other, 2)
    editor(page).fill("import time\ntime.sleep(30)\n")
    page.get_by_role("button", name="Comprobar").click()
    running = page.locator("[data-testid=challenge-result][data-run='2'][data-state=running]")
    running.wait_for()
    step = other.get_by_role("button", name="Avanzar")
    answered = 0  # the other reader's steps shown while the code sleeps
    for t in range(3, 65):
        step.click()
        wait_t(other, t)
        if not running.count():
            break
        answered += 1
    assert answered >= 3, f"only {answered} steps were answered while the reader's code ran"
    page.locator("[data-testid=challenge-result][data-run='2'][data-state=stopped]").wait_for(
        timeout=(LIMIT_S + MARGIN_S) * 1000
    )
    assert unordered_changes(url) == []  # every change reached both pages in order
