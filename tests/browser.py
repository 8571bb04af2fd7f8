"""Helpers for end-to-end tests of the static site in headless Chromium.

    from tests.browser import chromium, serve, open_page, wait_ready

    with serve(dist) as url, chromium() as browser:
        page, requests = open_page(browser, url + "index.html?lang=es")
        wait_ready(page)                       # body[data-ready], or fails with the page's error
        page.get_by_role("button", name="Avanzar").click()
        assert all(is_local(r) for r in requests)

Chromium is Debian's (/usr/bin/chromium, or $CHROMIUM); Python Playwright drives it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-default-apps",
    "--disable-extensions",
]
READY_TIMEOUT_MS = int(os.environ.get("KV_READY_TIMEOUT_MS", "90000"))


def chromium_missing() -> str | None:
    """Reason to skip browser tests, or None."""
    try:
        import playwright  # noqa: F401
    except ImportError:
        return "Python Playwright is not installed (uv sync --extra test)"
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return f"Chromium not found at {CHROMIUM} (apt-get install chromium, or set CHROMIUM=path)"
    return None


@contextlib.contextmanager
def serve(dist: Path, csp: str | None = None):
    """Serve dist/ on 127.0.0.1 on a free port with build.py's server; yields the base URL."""
    import build

    server = build.serve_in_thread(Path(dist), 0, csp)
    try:
        yield server.url
    finally:
        server.shutdown()
        server.server_close()


@contextlib.contextmanager
def chromium(headless: bool = True):
    """Launch Debian's Chromium with a fresh profile; yields a Playwright Browser."""
    # Playwright gives every launch a fresh temporary profile (user-data-dir).
    from playwright.sync_api import sync_playwright

    from tests.tiers import require

    require("browser", "starts a browser")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=headless, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def new_context(browser, width: int = 1280, height: int = 800, **kw):
    return browser.new_context(viewport={"width": width, "height": height}, **kw)


def collect_requests(page_or_context) -> list[str]:
    """Record the URL of every request the page (and its workers) makes."""
    urls: list[str] = []
    page_or_context.on("request", lambda r: urls.append(r.url))
    return urls


def open_page(browser, url: str, width: int = 1280, height: int = 800, context=None):
    """New context + page at url; returns (page, requests) with requests recorded from the start."""
    context = context or new_context(browser, width, height)
    requests = collect_requests(context)
    page = record_console(context.new_page())
    page.goto(url)
    return page, requests


def record_console(page):
    """page, its console messages and uncaught errors kept in page.console_messages ("type: text")."""
    page.console_messages = []
    page.on("console", lambda m: page.console_messages.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: page.console_messages.append(f"pageerror: {e}"))
    return page


class PageFailed(AssertionError):
    pass


def wait_ready(page, timeout_ms: int = READY_TIMEOUT_MS) -> None:
    """Wait until body[data-ready] (interactive); raise with the page's own error text if it shows one."""
    try:
        page.wait_for_function(
            "document.body && (document.body.dataset.ready === 'true' || document.body.dataset.error !== undefined)",
            timeout=timeout_ms,
        )
    except Exception as e:
        raise PageFailed(
            f"page not ready after {timeout_ms} ms; stage="
            f"{page.evaluate('document.body && document.body.dataset.stage')}; console:\n"
            + "\n".join(getattr(page, "console_messages", [])[-30:])
        ) from e
    error = page.evaluate("document.body.dataset.error")
    if error is not None:
        raise PageFailed(
            f"page shows an error: {error}\nconsole:\n" + "\n".join(getattr(page, "console_messages", [])[-30:])
        )


def throttled_page(context, throttle: float):
    """A new page whose main thread runs `throttle` times slower (DevTools protocol): a phone at 4."""
    page = context.new_page()
    if throttle != 1:
        context.new_cdp_session(page).send("Emulation.setCPUThrottlingRate", {"rate": throttle})
    return page


def parent_of(pid: int) -> int:
    """The parent of process `pid` (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def chromium_threads(ours: dict[int, bool] | None = None) -> list[tuple[int, int, str]]:
    """(process, thread, name) of every thread of the Chromium processes this process started (Linux's
    /proc: Playwright's driver, its browser and the browser's children are our descendants). `ours`
    keeps what was found of each process while it lives (one look at its ancestry), for a caller that
    asks often."""
    ours = {} if ours is None else ours
    me = os.getpid()
    found = []
    present = list(map(int, filter(str.isdigit, os.listdir("/proc"))))
    for gone in set(ours).difference(present):  # its number may be another process's later
        del ours[gone]
    for pid in present:
        if pid not in ours:
            try:
                chromium = os.path.basename(os.readlink(f"/proc/{pid}/exe")) == "chromium"
            except OSError:  # gone meanwhile, or not ours to read
                continue
            up = pid
            while chromium and up > 1 and up != me:
                up = parent_of(up)
            ours[pid] = chromium and up == me
        if not ours[pid]:
            continue
        try:
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8") as f:
                    found.append((pid, int(tid), f.read().strip()))
        except OSError:  # gone meanwhile
            continue
    return found


def read_cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@contextlib.contextmanager
def main_thread_alone(every_s: float = 0.02):
    """While open, each page's main thread of the Chromium this process started (and the DevTools
    throttler's thread) runs on a core of its own, every other thread of that Chromium on the other cores
    (Linux; at least 2 cores).

    DevTools' CPU throttle slows a main thread by a signal every 200 us whose handler spins for (rate - 1)
    times the time since the last one, whether the thread had work or not (Blink's ThreadCPUThrottler):
    at 4x a page's main thread holds a core most of the time even when idle (a blank page: 0.55 of a core,
    the throttler's thread 0.10 more, measured on this machine, docs/performance.md). A phone's main thread
    is slow but does not take the compositor's, raster's and worker's cores; on 2 cores the spin does.
    Here it spins on its own core, and what a benchmark times is the page's work, slowed, with the
    machine's other cores for the rest. A thread new since the last look (every `every_s`) is moved then;
    the Event yielded is set at the end of each look (a caller may clear it and wait for the next)."""
    cores = sorted(os.sched_getaffinity(0))
    if len(cores) < 2:
        raise RuntimeError("main_thread_alone needs 2 cores or more")
    alone, others = {cores[0]}, set(cores[1:])
    stop = threading.Event()
    looked = threading.Event()
    ours: dict[int, bool] = {}

    def keep() -> None:
        os.sched_setaffinity(0, others)  # this thread (Linux: 0 is the calling thread)
        placed: set[tuple[int, int]] = set()
        while not stop.is_set():
            for pid, tid, name in chromium_threads(ours):
                if (pid, tid) in placed:
                    continue
                kind = read_cmdline(pid) if tid == pid else ""  # a process's main thread: which process
                renderer_main = "--type=renderer" in kind
                try:
                    os.sched_setaffinity(tid, alone if renderer_main or name == "CPUThrottlingTh" else others)
                except OSError:  # gone meanwhile
                    continue
                if "--type=zygote" not in kind:  # a zygote's child says it is a renderer a moment after its birth
                    placed.add((pid, tid))
            looked.set()
            stop.wait(every_s)

    keeper = threading.Thread(target=keep, daemon=True)
    keeper.start()
    try:
        yield looked
    finally:
        stop.set()
        keeper.join()
        for _, tid, _ in chromium_threads(ours):  # the browser as it was: every core
            with contextlib.suppress(OSError):
                os.sched_setaffinity(tid, cores)


def add_site_arguments(parser, rounds: int = 5, throttle: float = 4) -> None:
    """The benchmarks' --site, --compare (an earlier build, measured in the same run), --rounds, --throttle."""
    parser.add_argument("--site", type=Path, default=ROOT / "dist")
    parser.add_argument("--compare", type=Path, help="another build's dist/, measured in the same run")
    parser.add_argument("--rounds", type=int, default=rounds)
    parser.add_argument("--throttle", type=float, default=throttle)


def alternating_rounds(args, visit, more: dict[str, Path] | None = None) -> dict[str, list]:
    """--rounds rounds of `visit(browser, url)` on --site and --compare's build (and `more` sites), the
    sites alternating round by round (so the machine's mood is shared): {"site": [...], "before": [...]},
    one result a round."""
    sites = {"site": args.site} | ({"before": args.compare} if args.compare else {}) | (more or {})
    for name, site in sites.items():
        if not (Path(site) / "index.html").is_file():
            raise SystemExit(f"{site}: no built site (index.html) for {name!r}; build one: uv run build.py")
    results: dict[str, list] = {name: [] for name in sites}
    with contextlib.ExitStack() as stack:
        urls = {name: stack.enter_context(serve(site)) for name, site in sites.items()}
        browser = stack.enter_context(chromium())
        for _ in range(args.rounds):
            for name, url in urls.items():
                results[name].append(visit(browser, url))
    return results


def wait_as_reader(page, condition: str, timeout_ms: int = 60000, every_ms: int | None = None, result: str = "true"):
    """Wait until the JavaScript expression `condition` holds, polled by the page once a frame (or every
    `every_ms`); the value of the expression `result` in the look that found it holding.

    For benchmarks that time a reader's input. Playwright's `wait_for_function` (and its locators) leave
    its hit-target listeners on the page's window, capture and not passive, for every mouse, pointer and
    touch event; with the CPU throttled 4x they add milliseconds to each input before the page's own
    handlers run, which a reader's browser does not have. This wait goes through `evaluate` only."""
    again = f"setTimeout(poll, {every_ms})" if every_ms else "requestAnimationFrame(poll)"
    met, value = page.evaluate(
        "(ms) => new Promise((resolve) => { const end = performance.now() + ms; const poll = () => {"
        f" if ({condition}) resolve([true, {result}]); else if (performance.now() > end) resolve([false, null]);"
        f" else {again}; }}; poll(); }})",
        timeout_ms,
    )
    if not met:
        raise TimeoutError(f"not met within {timeout_ms} ms: {condition}")
    return value


# the benchmarks' screens: a laptop's, and the house's phone reader's (360 px wide)
LAPTOP, PHONE = (1280, 800), (360, 740)


# For page scripts (put it before the code that calls it): `deep(root, pred)`, the first element under
# `root`, in the shadow roots too (Bokeh's views keep theirs there), for which `pred(el)` is true; or null.
DEEP_JS = """
  const deep = (root, pred) => {
    for (const el of root.querySelectorAll('*')) {
      if (pred(el)) return el;
      if (el.shadowRoot) { const hit = deep(el.shadowRoot, pred); if (hit) return hit; }
    }
    return null;
  };
"""


def centre_js(selector: str) -> str:
    """A JavaScript expression: the centre [x, y] of the first element that matches `selector`, in page
    pixels (null if none), for `evaluate` or `wait_as_reader(result=...)`."""
    return (
        f"(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;"
        " const r = e.getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()"
    )


def centre_of(page, selector: str) -> tuple[float, float]:
    """The centre of the first element that matches `selector`, in page pixels (through `evaluate`, so
    that no Playwright listener is left on the page: see `wait_as_reader`)."""
    return tuple(page.evaluate(centre_js(selector)))


def box_centre(box: dict) -> tuple[float, float]:
    """The centre of a Playwright bounding box (`locator.bounding_box()`: it reaches into shadow roots,
    where `centre_of`'s selector does not), in page pixels."""
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def is_local(url: str) -> bool:
    parts = urlsplit(url)
    return parts.scheme in ("data", "blob", "about") or parts.hostname in ("127.0.0.1", "localhost")


def foreign(requests: list[str]) -> list[str]:
    return sorted({u for u in requests if not is_local(u)})


def wait_for_text(page, text: str, timeout_ms: int = 30000) -> None:
    """Wait until text appears anywhere in the page, including Bokeh's shadow DOM."""
    page.wait_for_function(
        """(text) => {
          const seen = new Set();
          const walk = (node) => {
            if (!node || seen.has(node)) return false;
            seen.add(node);
            if (node.nodeType === 3) return node.textContent.includes(text);
            if (node.shadowRoot && walk(node.shadowRoot)) return true;
            for (const c of node.childNodes) if (walk(c)) return true;
            return false;
          };
          return walk(document.body);
        }""",
        arg=text,
        timeout=timeout_ms,
    )


# -- reading and driving the explorable (shared by the panel-serve and static-site tests) -----------

OUT = ROOT / "test-output"
# Screenshots for a person to look at, taken when KV_EXPLORABLE_SHOTS=1 (a full page of every section
# open is a PNG of megabytes: seconds each, and nothing a test asserts).
SHOTS = os.environ.get("KV_EXPLORABLE_SHOTS") == "1"


def open_app(browser, app: str, query: str = "", **kw):
    """Open the explorable (panel serve's URL, or a static site's index.html) and wait until it is
    interactive: the static page first shows a snapshot that does not answer clicks."""
    page, requests = open_page(browser, app + query, **kw)
    if app.endswith("index.html"):
        wait_ready(page)
    return page, requests


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def panel_serve(timeout_s: float = 60):
    """`panel serve app/explorable.py` on a free port; yields the app's URL once the server says it
    runs (its log line), and stops it afterwards. Its log is drained so the server never blocks."""
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "panel",
            "serve",
            "app/explorable.py",
            "--port",
            str(port),
            "--address",
            "127.0.0.1",
            f"--allow-websocket-origin=127.0.0.1:{port}",
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}/explorable"
    deadline = threading.Timer(timeout_s, proc.kill)  # a server that never says it runs is stopped
    deadline.start()
    said = []
    for line in proc.stdout:  # ends when the process does
        said.append(line)
        if f"Bokeh app running at: {url}" in line:
            break
    deadline.cancel()
    if proc.poll() is not None:
        raise RuntimeError("panel serve did not start:\n" + "".join(said))
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    try:
        yield url
    finally:
        proc.terminate()
        proc.wait(10)


def plain(s: str) -> str:
    """Page text with its thousands separators and spaces removed."""
    return re.sub(r"[\s\u202f,]", "", s)


def text_of(page, testid: str) -> str:
    return page.locator(f"[data-testid={testid}]").first.inner_text()


def wait_plain(page, testid: str, expected: str, timeout=20000):
    """Wait until the element's text is `expected` (digits), whatever the thousands separators."""
    from playwright.sync_api import expect

    pattern = re.compile(r"^\s*" + r"[\s\u202f,.]?".join(map(re.escape, expected)) + r"\s*$")
    expect(page.locator(f"[data-testid={testid}]").first).to_have_text(pattern, timeout=timeout)


def wait_t(page, t: int, timeout=20000):
    page.locator(".tpos").filter(has_text=re.compile(rf"^t = {t} / 64$")).first.wait_for(timeout=timeout)


def current_t(page) -> int:
    return int(re.search(r"t = (\d+)", page.locator(".tpos").first.inner_text()).group(1))


# the live cache grid's position range and frame width: the plot with the image of the cache's numbers
GRID_RANGE = """() => {
  for (const doc of Bokeh.documents)
    for (const m of doc.all_models)
      if (m.x_range && m.renderers && m.renderers.some((r) => r.glyph && 'dw' in r.glyph && 'image' in r.glyph))
        return [m.x_range.start, m.x_range.end, m.inner_width];
  return null;
}"""


def grid_range(page) -> tuple[float, float, int] | None:
    """(first, last) position the live cache grid shows, with the half cell either side, and its
    frame's width in px."""
    found = page.evaluate(GRID_RANGE)
    return tuple(found) if found else None


def wait_grid_end(page, end: float) -> None:
    """Wait until the live cache grid's range ends at `end` (its last position shown, plus half a cell)."""
    page.wait_for_function(f"(end) => ({GRID_RANGE})()?.[1] === end", arg=end)


def shot(page, name: str, full_page: bool = True):
    """The page as the reader sees it, in test-output/NAME.png, when screenshots are asked for (SHOTS)."""
    if SHOTS:
        OUT.mkdir(exist_ok=True)
        page.screenshot(path=str(OUT / f"{name}.png"), full_page=full_page)


def errors(page):
    return [m for m in page.console_messages if m.startswith(("error", "pageerror"))]


# A section is built when first opened: seconds in Pyodide for the measured ones (continuous
# batching serves its requests both ways), more on a loaded 2-core machine.
OPEN_TIMEOUT_MS = 60_000


def open_card(page, title: str):
    """Open a section by its title: its disclosure button (app/components/widgets.py), if it is closed."""
    from playwright.sync_api import expect

    button = page.get_by_role("button", name=title, exact=True).first
    if button.get_attribute("aria-expanded") == "false":
        button.click()
    expect(button).to_have_attribute("aria-expanded", "true", timeout=OPEN_TIMEOUT_MS)


def open_all_sections(page) -> int:
    """Open every closed section of the page (or frame), one after the other; how many were opened."""
    from playwright.sync_api import expect

    closed = page.locator("button[aria-expanded=false]")
    opened = 0
    while closed.count():
        button = closed.first
        name = button.inner_text()
        button.click()
        expect(page.get_by_role("button", name=name, exact=True).first).to_have_attribute(
            "aria-expanded", "true", timeout=OPEN_TIMEOUT_MS
        )
        opened += 1
    return opened


class Finger:
    """A finger on a page's touch screen (Chromium's input over CDP), at points of the viewport."""

    def __init__(self, cdp):
        self.cdp = cdp

    def __call__(self, x: float, y: float) -> None:
        """A tap."""
        self.cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        self.cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})

    def swipe_up(self, x: float, y: float, distance: float, moves: int = 20) -> None:
        """A swipe from (x, y) `distance` px up (what scrolls a page down): the finger down, `moves` moves, up."""
        touch = self.cdp.send
        touch("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        for i in range(1, moves + 1):
            touch(
                "Input.dispatchTouchEvent",
                {"type": "touchMove", "touchPoints": [{"x": x, "y": y - distance * i / moves}]},
            )
        touch("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})


@contextlib.contextmanager
def touch_screen(page):
    """The page as on a touch screen (Chromium's touch emulation: a coarse pointer, touch events), then
    back to a mouse's pointer; yields a Finger: tap(x, y), tap.swipe_up(x, y, distance)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 5})
    try:
        yield Finger(cdp)
    finally:
        cdp.send("Emulation.setTouchEmulationEnabled", {"enabled": False})
        cdp.detach()


def overflow(page_or_frame) -> dict:
    """What sticks out sideways (tests/js/overflow.js): {pageWidth, viewport, outside, cut}."""
    return page_or_frame.evaluate((ROOT / "tests" / "js" / "overflow.js").read_text(encoding="utf-8"))


def measure(page, status: str, button: str, timeout_ms: int = 180000):
    """Press a measuring section's `button` and wait until its `status` line says its next run is done
    (a status carries data-run, the section's count of runs: a page may have measured before)."""
    old = page.locator(f"[data-testid={status}]")
    before = int(old.first.get_attribute("data-run") or 0) if old.count() else 0
    page.get_by_role("button", name=button, exact=True).click()
    done = page.locator(f"[data-testid={status}][data-run='{before + 1}'][data-state=done]")
    done.wait_for(timeout=timeout_ms)
    return done


def run_and_wait(page, testid: str, button: str, timeout_ms: int = 60000):
    """Press `button` and wait for the answer of the run it starts (results carry data-run, a number
    that grows with every run of the page's code sandbox); returns the answer's locator."""
    old = page.locator(f"[data-testid={testid}]")
    before = int(old.first.get_attribute("data-run") or 0) if old.count() else 0
    page.get_by_role("button", name=button, exact=True).click()
    page.wait_for_function(
        """([testid, before]) => {
          const find = (root) => {
            const hit = root.querySelector(`[data-testid=${testid}]`);
            if (hit) return hit;
            for (const el of root.querySelectorAll('*')) {
              if (el.shadowRoot) { const h = find(el.shadowRoot); if (h) return h; }
            }
            return null;
          };
          const el = find(document);
          return el && Number(el.dataset.run) > before && !['running', 'queued'].includes(el.dataset.state);
        }""",
        arg=[testid, before],
        timeout=timeout_ms,
    )
    return page.locator(f"[data-testid={testid}]").first


# -- one booted page, reused by a module's tests ----------------------------------------------------------
# A page load boots Pyodide (the static site) or builds a session (Panel's server): the suite's largest
# cost. A module's tests share one booted page and each puts it where it starts through the page's own
# controls (`LivePage.place`): the language switch, the viewport, every section closed, Reiniciar, the mode
# switch, clicks on Avanzar. What a reader's page keeps of its history (a section's own state, the smaller
# cache's model, the grey ramp after a first switch) is a test's to set or to leave as it found it.

STORM = "(el, n) => { for (let i = 0; i < n; i++) el.click(); }"  # n clicks at once: each a step, in order


def active_mode(page) -> str:
    """The mode the numbers' cards outline as current: "cache" or "full"."""
    cached = page.locator("[data-testid=token-cached]").locator("xpath=..")
    return "cache" if "active" in (cached.get_attribute("class") or "") else "full"


def switch_language(page, lang: str) -> None:
    """The live language switch (the advanced settings' buttons), as a reader makes it."""
    from app.i18n import language_names, tr

    now = page.evaluate("document.documentElement.lang")
    if now == lang:
        return
    open_card(page, tr(now, "advanced"))
    page.get_by_role("button", name=language_names()[lang], exact=True).click()
    page.wait_for_function("(lang) => document.documentElement.lang === lang", arg=lang, timeout=OPEN_TIMEOUT_MS)
    page.get_by_role("button", name=tr(lang, "step"), exact=True).wait_for(timeout=OPEN_TIMEOUT_MS)


def set_seed(where, seed: int) -> None:
    """The sampler's seed, typed in the advanced settings as a reader would (the page in Spanish)."""
    open_card(where, "Ajustes avanzados")
    field = where.get_by_label("Semilla", exact=True)
    field.fill(str(seed))
    field.press("Enter")
    where.wait_for_function("(s) => (document.body.dataset.kvState || '').includes(`seed=${s}&`)", arg=seed)


def close_all_sections(page) -> None:
    """Close every open disclosure (the settings, the data table, the sections), as a reader would."""
    from playwright.sync_api import expect

    opened = page.locator("button[aria-expanded=true]")
    while opened.count():
        button = opened.first
        name = button.inner_text()
        button.click()
        expect(page.get_by_role("button", name=name, exact=True).first).to_have_attribute("aria-expanded", "false")


class LivePage:
    """A booted page of the explorable at `url + query`, kept for a module's tests (the fixture `live`,
    tests/conftest.py). `place(...)` puts it where a test starts and returns the page; a page
    that cannot be put there (a test before left it broken) is booted again, once."""

    def __init__(self, browser, url: str, query: str = "?lang=es", init: str | None = None, **context):
        self.browser, self.url, self.query, self.init, self.context_kw = browser, url, query, init, context
        self.context = self.page = None
        self.boots = 0

    def boot(self):
        if self.context is not None:
            self.context.close()
        self.context = new_context(self.browser, **self.context_kw)
        self.context.kept = True  # not the test's to close (tests/conftest.py close_what_the_test_opened)
        if self.init:
            self.context.add_init_script(self.init)
        page, requests = open_app(self.browser, self.url, self.query, context=self.context)
        wait_t(page, current_t_of_query(self.query))
        page.requests = requests
        self.page, self.boots = page, self.boots + 1
        return page

    def close(self):
        if self.context is not None:
            self.context.close()
        self.context = self.page = None

    def place(self, lang: str = "es", t: int = 2, mode: str = "cache", width: int = 1280, height: int = 800):
        """The page in `lang` at position `t` in `mode`, `width` x `height`, every section closed, scrolled to
        its top, its console's record emptied; the page."""
        if self.page is None:
            self.boot()
        try:
            return self._place(lang, t, mode, width, height)
        except Exception:
            self.boot()  # a test before left it where the page's controls cannot bring it back
            return self._place(lang, t, mode, width, height)

    def _place(self, lang, t, mode, width, height):
        page = self.page
        if page.evaluate("document.body.dataset.error !== undefined"):
            raise PageFailed("the page shows an error: " + page.evaluate("document.body.dataset.error"))
        if page.viewport_size != {"width": width, "height": height}:
            page.set_viewport_size({"width": width, "height": height})
        put(page, lang, t, mode)
        page.evaluate("window.scrollTo(0, 0)")
        page.locator("body").click(position={"x": 5, "y": 5})  # the focus on the page, as after a load
        page.console_messages.clear()
        return page


def put(where, lang: str = "es", t: int = 2, mode: str = "cache") -> None:
    """The explorable in a page or a frame (`where`) in `lang`, every section closed, at position `t` in
    `mode`: through its own controls, as a reader would get there."""
    from playwright.sync_api import expect

    from app.i18n import tr

    switch_language(where, lang)
    close_all_sections(where)
    pause = where.get_by_role("button", name=tr(lang, "pause"), exact=True)
    if pause.count():
        pause.first.click()
        where.get_by_role("button", name=tr(lang, "play"), exact=True).first.wait_for()
    where.get_by_role("button", name=tr(lang, "reset"), exact=True).first.click()
    wait_t(where, 2)
    where.locator("[data-testid=error]").wait_for(state="detached")
    if active_mode(where) != mode:
        where.get_by_role("button", name=tr(lang, f"mode_{mode}"), exact=True).first.click()
        testid = "token-cached" if mode == "cache" else "token-full"
        expect(where.locator(f"[data-testid={testid}]").locator("xpath=..")).to_have_class(re.compile("active"))
    if t > 2:
        where.get_by_role("button", name=tr(lang, "step"), exact=True).first.evaluate(STORM, t - 2)
        wait_t(where, t, timeout=60000)


def current_t_of_query(query: str) -> int:
    """The position a URL's query starts the page at (its t=, else the prompt's end)."""
    found = re.search(r"[?&]t=(\d+)", query)
    return int(found.group(1)) if found else 2
