"""Load benchmark: the static site against a bare Pyodide + NumPy page and `panel convert`, with the
page's main thread at full speed and throttled (a phone).

    python -m tests.bench_load --rounds 5                 # throttle 1x and 4x, Markdown tables
    python -m tests.bench_load --rounds 3 --throttle 4 --sites site bare --json out.json
    python -m tests.bench_load --compare /tmp/before-dist    # also an earlier build, interleaved

Not a test: it prints numbers. In one run:
  1. builds the self-contained site afresh (build.build into a temporary folder), the bare page
     beside it and the `panel convert` baseline (tests/bench_sites.py says what each is);
  2. for each round, each CPU throttle and each site: a new browser context (cold: empty cache)
     loads the page with the main thread throttled through the DevTools protocol
     (Emulation.setCPUThrottlingRate; Chromium refuses it for workers: "Operation is only supported
     for pages, not workers", so Pyodide's worker runs at full speed), waits until it is
     interactive, clicks the step button once; a second page in the same context measures the warm
     visit;
  3. prints the medians: first paint (the static site: its HTML snapshot has painted, the loader's
     kv-first-paint mark; the baseline: BokehJS has rendered its document), interactive (the live
     document linked; the bare page: NumPy imported), the first step after interactive (click to the
     position text changed), the first answered click (the static site: a real click on the preview's
     Avanzar as soon as it is painted and answers, ms from navigation to the frame that shows the step,
     and from the click to that frame: the browser's Event Timing, `clicks_answered`; and when the click
     came after the controls answered: sooner than a reader, who sees the button and then reacts), the main thread's
     long tasks until interactive (the longest, and their blocking time from the first paint as
     Lighthouse counts it, measured in the page), a reader who goes on clicking (a third, cold visit:
     Avanzar every half second, 20 times, after the first answered click: how many clicks the preview
     answered and each click's time to its frame, the event's own timestamp so a wait behind a running
     task counts), bytes the server sent by kind, the
     ratios the goals name, where the time goes (the performance marks of the page and its worker) and
     the machine's own speed (`python -m model.bench`, position 64), with the load average before and after,
     and the phone each throttle makes of it (Lighthouse's BenchmarkIndex in a blank page before and after
     the run, beside Chrome DevTools' two calibrated phones: tests/device.py).

`--phone`: every page on a phone's screen, 360 x 740 px (the house's phone reader is that screen with the
CPU throttled 4x); else a laptop's, 1280 x 800.

`--at-paint`: the first click (and the storm's) as soon as the preview's Avanzar is painted, before its
controls start if they start later (the load benchmark's default clicks when they answer); the click then
waits for them, and its time to its frame counts that wait.

`--press MS`: every click holds the button down MS ms, as a reader's tap does (tests/bench_click.py's
option): its time to its frame is then from the release (the click), and the press's own handling, done
while the button is down, is the pointerdown's. Beside it, with or without: the click as INP counts an
interaction, the slowest of its pointerdown and its click, each from its own input to the next frame
after its handlers.

`--taps N`: a fourth visit, cold, in which the reader taps the preview's Avanzar N times, one every TAP_GAP_S
seconds (a quick reader's pace), from when the worker has built the app (the taps land after it, while it
is serialized and rendered: all of them are moves the app was not built with), then waits: how much
later the live page is interactive than in the cold visit without them (issue 49: 40 taps, at most 1.3x),
and the taps' INP.

`--main-alone`: each page's main thread on a core of its own, the browser's other threads on the others
(`tests.browser.main_thread_alone`; why, in tests/bench_click.py and docs/performance.md).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import build  # noqa: E402
from buildsupport.serve import IMMUTABLE  # noqa: E402
from tests.bench_click import UNDER  # noqa: E402
from tests.bench_sites import FILES, make_bare, make_baseline  # noqa: E402
from tests.browser import (  # noqa: E402
    LAPTOP,
    PHONE,
    centre_js,
    chromium,
    main_thread_alone,
    throttled_page,
    wait_as_reader,
)
from tests.device import host_line, indexes  # noqa: E402
from tests.site_fixtures import compiled_wheels_dir  # noqa: E402

SITES = ("site", "bare", "convert")
LABELS = {"site": "static site", "bare": "bare Pyodide+NumPy", "convert": "panel convert", "before": "before"}
KINDS = ("runtime", "packages", "js/css", "app", "page")
STEP_LABEL = "Avanzar"  # the step button of the default language (es)
TIMEOUT_MS = 300_000
# Where the time goes: consecutive performance marks of the page and its worker (static/loader/,
# static/worker.js, tests/bench/bare*.js), each segment named by the mark that ends it.
SEGMENTS = (
    ("kv-worker-start", "page to worker started"),
    ("kv-pyodide-js", "pyodide.js loaded"),
    ("kv-booted", "Pyodide booted, packages installed"),
    ("kv-numpy-imported", "import numpy"),
    ("kv-app-unpacked", "app archive unpacked"),
    ("kv-panel-imported", "import panel"),
    ("kv-app-built", "app built (create_app)"),
    ("kv-document", "document serialized"),
    ("kv-render-start", "document to the page"),
    ("kv-moved", "moved to the reader's place, serialized again"),
    ("kv-ready", "rendered by BokehJS, linked"),
)
MAIN_THREAD = (
    ("kv-first-paint", "first paint"),
    ("kv-dom-ready", "page parsed, its scripts run"),
    ("kv-bokeh-ready", "BokehJS loaded and run"),
)


def kind_of(path: str) -> str:
    if path.startswith(("pyodide/", "mirror/pyodide/")):
        return "packages" if path.endswith(".whl") else "runtime"
    if path.endswith(".whl") or "/pypi/" in path:
        return "packages"
    if path.endswith((".js", ".css")) and ("/js/" in path or path.startswith(("panel/", "mirror/"))):
        return "js/css"
    if "app." in path or "/states-" in path or "grid." in path or "pyodide-lock" in path or path.endswith(".zip"):
        return "app"
    if path.endswith((".css", ".svg", ".woff", ".woff2", ".png")):
        return "js/css"
    return "page"


# ------------------------------------------------------------------ one visit

MARKS_JS = (
    "Object.fromEntries(performance.getEntriesByType('mark').filter((m) => m.name.startsWith('kv-'))"
    ".map((m) => [m.name, m.startTime]))"
)


def clicks_answered(probe: dict, from_release: bool = False) -> list[dict]:
    """Each real click on the preview's Avanzar that the preview answered (tests/bench/probe.js): when the
    frame that shows its answer was presented ("drawn", ms from navigation) and how long after the
    click's input ("latency": from its pointerdown's own timestamp, so a wait behind a running task
    counts). Timed by Event Timing (the measure behind INP) when the answer was made in the click's own
    handling: the frame it times is the one that draws it (a click it does not report took under 16 ms:
    counted as 16). Otherwise (the state was still on its way) by the probe's frames: the task the first
    frame that finds the answer made posts, which runs after that frame's style, layout and paint but
    also after the tasks queued before it (a fetch's response, a font's slice): an upper bound. A click made before
    the controls started whose step the loader drew at once in the preview's first part (the title, the
    controls and the text: t = 3 shown; static/early.js drawEarly) is answered in its own handling too,
    timed by Event Timing; "whole", from the click: for such a click, when the frame that drew the rest of
    its answer (the figures, when the controls started) was done, by the probe's frames; for any other,
    its answer's frame ("latency"). `from_release` (a click held down: `--press`): both from the click
    (the release), not the press. "inp": the interaction as INP counts it, the slowest of its click (to
    its answer's frame) and its pointerdown, each from its own input to the next frame after its handlers
    (Event Timing; one it does not report took under 16 ms)."""
    frames, events, out = probe.get("frames", []), probe.get("events", []), []
    downs = probe.get("downs", [])
    for n, c in enumerate(probe.get("clicks", [])):
        if c["answer"] > len(frames):
            continue  # the live page answered it
        after = frames[c["answer"] - 1]
        at = c.get("clickAt")
        click = at if at is not None else c["at"]  # the click's own input (its release), else the press
        if (c.get("inClick") or c.get("firstPart")) and at is not None:
            entry = next((e for e in events if abs(e[0] - at) < 0.5), None)
            drawn = at + (entry[2] if entry else UNDER)
            by = "event timing, first part" if c.get("firstPart") else "event timing"
        else:
            drawn, by = after, "probe"
        start = click if from_release else c["at"]
        down = next((d[1] for d in downs if abs(d[0] - c["at"]) < 0.5), UNDER)
        out.append(
            {
                "n": n,
                "drawn": drawn,
                "latency": drawn - start,
                "by": by,
                "task_after": after - start,
                "whole": (max(drawn, after) if c.get("firstPart") else drawn) - start,
                "inp": max(drawn - click, down),
            }
        )
    return out


# The first click: on the preview's Avanzar as soon as it is painted and its controls answer
# (static/loader/ "kv-first-paint" and "kv-controls"), real input; done when the frame that draws its
# answer has been drawn (the probe's frames) and Event Timing has reported it (or a second has passed).
CLICKED_JS = (
    "window.__probe.clicks.length > 0 && window.__probe.clicks[0].clickAt !== undefined && "
    "(window.__probe.frames.length > 0 || document.body.dataset.ready === 'true')"
)
REPORTED_JS = (
    "window.__probe.events.some((e) => Math.abs(e[0] - window.__probe.clicks[0].clickAt) < 0.5) || "
    "!window.__probe.clicks[0].inClick"
)
CONTROLS_JS = (
    "['kv-controls', 'kv-first-paint'].every((m) => performance.getEntriesByName(m).length > 0) || "
    "(window.__probe && (window.__probe.ready !== undefined || window.__probe.error))"
)
# `--at-paint`: the first click as soon as the preview's Avanzar is painted (the page's first contentful
# paint, the preview not hidden for a swap), its controls started or not (they start with the document:
# static/early.js keeps a click made before and answers it then).
PAINTED_JS = (
    "(performance.getEntriesByType('paint').some((e) => e.name === 'first-contentful-paint') && "
    "!document.documentElement.classList.contains('kv-swap') && "
    "document.querySelector('#kv-snapshot [data-kv=step]') !== null) || "
    "(window.__probe && (window.__probe.ready !== undefined || window.__probe.error))"
)
# Where the reader clicks: the centre of the preview's Avanzar as soon as its controls answer (null: no
# preview), found in the same look that finds them answering (a reader does not wait for another).
BUTTON_JS = f"(window.kv && window.kv.preview ? {centre_js('#kv-snapshot [data-kv=step]')} : null)"
SPEED_JS = "() => { const t = performance.now(); let x = 0; for (let i = 0; i < 2e7; i++) x += Math.sqrt(i); return performance.now() - t; }"


STORM_CLICKS, STORM_GAP_S = 20, 0.5
TAP_GAP_S = 0.1


@dataclass(frozen=True)
class Reader:
    """How the benchmark's reader clicks: the first click at the first paint (`at_paint`: `--at-paint`),
    else when the controls answer; each click held `press` ms (`--press`; 0: press and release at once)."""

    at_paint: bool = False
    press: float = 0


def storm(page, press: float = 0) -> None:
    """A reader who goes on clicking: Avanzar, every STORM_GAP_S seconds, STORM_CLICKS times, as real input
    (the page's probe records each click and the frame of its answer), each held `press` ms."""
    at = page.evaluate(centre_js("#kv-snapshot [data-kv=step]"))
    if at is None:  # the live page took over before the first click was answered (one made before the
        return  # controls, on a build that lost it): no preview to go on clicking
    x, y = at
    for _ in range(STORM_CLICKS):
        page.mouse.click(x, y, delay=press)
        time.sleep(STORM_GAP_S)  # the workload: a click every half second (not a wait for a condition)


BUILT_JS = "performance.getEntriesByName('kv-app-built').length > 0 || document.body.dataset.ready === 'true'"


def tap(page, taps: int) -> None:
    """A reader who taps Avanzar `taps` times from when the worker has built the app, one every TAP_GAP_S
    seconds (the live page's Avanzar is at the same spot if it takes over before the last:
    tests/test_preview_browser.py)."""
    wait_as_reader(page, PAINTED_JS, TIMEOUT_MS)
    wait_as_reader(page, BUILT_JS, TIMEOUT_MS, every_ms=50)
    x, y = page.evaluate(centre_js("#kv-snapshot [data-kv=step]"))
    for _ in range(taps):
        page.mouse.click(x, y)
        time.sleep(TAP_GAP_S)  # the workload: the reader's pace (not a wait for a condition)


def tapping(context, url: str, throttle: float, taps: int) -> dict:
    """A cold visit in which the reader taps `taps` times once the app is built (`tap`): when the live page
    was interactive, how many taps the preview answered, the slowest tap's INP."""
    page = throttled_page(context, throttle)
    page.goto(url, wait_until="commit")
    tap(page, taps)
    wait_as_reader(
        page, "window.__probe && (window.__probe.ready !== undefined || window.__probe.error)", TIMEOUT_MS, every_ms=50
    )
    out = page.evaluate("window.__probe")
    if "error" in out:
        raise RuntimeError(f"{url}: the page failed: {out['error']}")
    answered = clicks_answered(out)
    page.close()
    return {"ready": out["ready"], "answered": len(answered), "inp": max((c["inp"] for c in answered), default=None)}


def visit(context, url: str, log: list, throttle: float, step: bool, storming: bool = False, reader=Reader()) -> dict:
    """Load url in a new page of context; the times (ms from navigation start), marks and bytes. With
    `storming`, after the first answered click, the reader goes on clicking (`storm`); `reader`: when the
    first click comes and how each is made."""
    log.clear()
    page = throttled_page(context, throttle)
    external = []
    page.on(
        "request",
        lambda r: None if r.url.startswith(("http://127.0.0.1", "data:", "blob:")) else external.append(r.url),
    )
    page.goto(url, wait_until="commit" if step else "load")  # the click does not wait for the load event
    clicked = False
    if step:
        # not Playwright's waits: they add listeners to the clicks
        button = wait_as_reader(page, PAINTED_JS if reader.at_paint else CONTROLS_JS, TIMEOUT_MS, result=BUTTON_JS)
        if button:
            page.mouse.click(*button, delay=reader.press)
            wait_as_reader(page, CLICKED_JS, TIMEOUT_MS)
            with contextlib.suppress(TimeoutError):
                wait_as_reader(page, REPORTED_JS, 1000)
            clicked = True
        if storming and clicked:
            storm(page, reader.press)
    wait_as_reader(
        page, "window.__probe && (window.__probe.ready !== undefined || window.__probe.error)", TIMEOUT_MS, every_ms=50
    )
    out = {**page.evaluate("window.__probe"), "marks": page.evaluate(MARKS_JS), "external": external}
    out["first_click"] = clicked and not storming
    if "error" in out:
        raise RuntimeError(f"{url}: the page failed: {out['error']}")
    answered = clicks_answered(out, from_release=reader.press > 0)
    if storming:  # the clicks after the first
        out["storm"] = [c["latency"] for c in answered if c["n"] > 0]
        out["storm_by"] = [c["by"] for c in answered if c["n"] > 0]
    elif clicked and answered and answered[0]["n"] == 0:
        controls = out["marks"].get("kv-controls")  # when the click came (a reader's comes later: it reacts)
        out["answer"] = {
            **answered[0],
            "after_controls": None if controls is None else out["clicks"][0]["at"] - controls,
        }
    if step and not storming:
        out["step"] = page.evaluate((FILES / "first_step.js").read_text(encoding="utf-8"), STEP_LABEL)
    out["speed_ms"] = page.evaluate(SPEED_JS)  # the main thread's measured speed, throttled
    page.wait_for_load_state("networkidle")  # every response sent, so the server has logged it
    out["bytes"] = {k: 0 for k in KINDS}
    for path, _status, n in list(log):
        out["bytes"][kind_of(path)] += n
    page.close()
    return out


def probed_context(browser, size: tuple = LAPTOP):
    """A new browser context (an empty cache, a screen of `size`) whose pages run the probe first."""
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    context.add_init_script(path=str(FILES / "probe.js"))
    return context


def visit_both(
    browser, url: str, log: list, throttle: float, step: bool, size: tuple = LAPTOP, reader=Reader(), taps: int = 0
) -> tuple[dict, dict]:
    """A cold visit (empty cache, then the first step) and a warm one in the same context; where the
    preview answers clicks (`step`), a third, cold, in which the reader goes on clicking while the
    page loads (its clicks' answers: the cold visit's "storm"), and with `taps` a fourth, cold, in which
    the reader taps that many times once the app is built (the cold visit's "taps")."""
    context = probed_context(browser, size)
    try:
        cold = visit(context, url, log, throttle, step, reader=reader)
        warm = visit(context, url, log, throttle, False)
    finally:
        context.close()
    if step:
        context = probed_context(browser, size)
        try:
            stormy = visit(context, url, log, throttle, True, storming=True, reader=reader)
            cold["storm"], cold["storm_by"] = stormy.get("storm"), stormy.get("storm_by")
        finally:
            context.close()
    if step and taps:
        context = probed_context(browser, size)
        try:
            cold["taps"] = tapping(context, url, throttle, taps)
        finally:
            context.close()
    return cold, warm


# ------------------------------------------------------------------ the run


def make_sites(work: Path, cache: Path, sites, compare: Path | None) -> tuple[dict, float]:
    """Build what `sites` names; ({name: (folder, page)}, seconds the site's build took). With
    `compare` (an earlier build's dist/, copied), that site too, as "before"."""
    t = time.time()
    ours = build.build(work / "dist", cache, pyodide_wheels=[str(compiled_wheels_dir())])
    build_s = time.time() - t
    made = {"site": (ours, "index.html"), "bare": (ours, make_bare(ours))}
    if "convert" in sites:
        made["convert"] = (make_baseline(work, cache, ours), "index.html")
    chosen = {name: made[name] for name in sites}
    if compare is not None:
        chosen["before"] = (shutil.copytree(compare, work / "before"), "index.html")
    return chosen, build_s


def serve_sites(made: dict, log: list) -> dict:
    servers = {}
    for name, (folder, page) in made.items():
        immutable = ("mirror/",) if name == "convert" else IMMUTABLE
        server = build.serve_in_thread(folder, 0, on_response=lambda *a: log.append(a), immutable=immutable)
        servers[name] = (server, server.url + page)
    return servers


def one_line(name: str, throttle: float, r: int, cold: dict, warm: dict) -> str:
    step = cold.get("step", {}).get("changed")
    answer = cold.get("answer", {}).get("drawn")
    return (
        f"round {r + 1} {throttle:g}x {name:8s} cold fp {cold.get('fp') or 0:.0f} ms"
        + (f" answered {answer:.0f} ms" if answer is not None else "")
        + f" ready {cold['ready']:.0f} ms"
        + (f" step {step:.0f} ms" if step is not None else "")
        + f" {sum(cold['bytes'].values()) / 1e6:.2f} MB | warm ready {warm['ready']:.0f} ms "
        f"{sum(warm['bytes'].values()) / 1e6:.3f} MB | main thread {cold['speed_ms']:.0f} ms"
    )


def measure(
    servers: dict, log: list, rounds: int, throttles, size: tuple = LAPTOP, reader=Reader(), taps: int = 0
) -> dict:
    """Every round, throttle and site, interleaved (load on the machine spreads over all); `log`
    receives every response the servers send."""
    res = {t: {name: {"cold": [], "warm": []} for name in servers} for t in throttles}
    with chromium() as browser:
        warmup = probed_context(browser, size)  # the first page of a fresh browser is slower for anyone
        visit(warmup, servers["site"][1] if "site" in servers else next(iter(servers.values()))[1], [], 1, False)
        warmup.close()
        for r in range(rounds):
            for throttle in throttles:
                for name, (_, url) in servers.items():
                    cold, warm = visit_both(
                        browser,
                        url,
                        log,
                        throttle,
                        step=name in ("site", "before", "convert"),
                        size=size,
                        reader=reader,
                        taps=taps,
                    )
                    res[throttle][name]["cold"].append(cold)
                    res[throttle][name]["warm"].append(warm)
                    print(one_line(name, throttle, r, cold, warm), flush=True)
                    if "taps" in cold:
                        print(f"  {taps} taps: interactive {cold['taps']['ready']:.0f} ms, {cold['taps']}", flush=True)
    return res


def model_bench() -> str:
    """This machine's speed: `python -m model.bench`, its position 64 row."""
    out = subprocess.run([sys.executable, "-m", "model.bench"], cwd=ROOT, capture_output=True, text=True).stdout
    row = next((ln for ln in out.splitlines() if ln.strip().startswith("64 ")), "").split()
    return (
        f"model.bench, t = 64: with cache {row[3]} ms, without {row[5]} ms"
        if len(row) > 5
        else "model.bench did not run"
    )


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


# ------------------------------------------------------------------ the report


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def cold_median(res: dict, key) -> float | None:
    """Median over the cold visits of key(visit) (None where a visit has no such value)."""
    return med([key(v) for v in res["cold"]])


def storm_cell(res: dict, f) -> str:
    """A storm measure: f(latencies) of the round whose slowest click is the median of the rounds'."""
    storms = sorted((v["storm"] for v in res["cold"] if v.get("storm")), key=max)
    return f(storms[len(storms) // 2]) if storms else "—"


def answered_cell(res: dict) -> str:
    """In how many rounds the preview answered the first click (the rest were lost, or the live page's)."""
    clicked = [v for v in res["cold"] if v.get("first_click")]
    return f"{sum(1 for v in clicked if v.get('answer'))} of {len(clicked)}" if clicked else "—"


def longest_task(visit: dict) -> float | None:
    """The longest main-thread task (Long Tasks API: over 50 ms) before the page was interactive."""
    tasks = visit.get("long")
    return None if tasks is None else max((d for start, d in tasks if start < visit["ready"]), default=0)


def blocking_time(visit: dict) -> float | None:
    """Total blocking time as Lighthouse counts it (each long task's time over 50 ms), from the first
    paint to interactive, measured in the page (not Lighthouse's simulation)."""
    tasks, fp = visit.get("long"), visit.get("fp")
    if tasks is None or fp is None:
        return None
    return sum(d - 50 for start, d in tasks if start + d > fp and start < visit["ready"])


def fmt_s(ms) -> str:
    return "—" if ms is None else f"{ms / 1000:.2f} s"


def fmt_ms(ms) -> str:
    return "—" if ms is None else f"{ms:.0f} ms"


def times_table(res: dict, throttles, rounds: int) -> str:
    cols = [(t, name) for t in throttles for name in res[t]]
    rows = [
        f"| median of {rounds} | " + " | ".join(f"{LABELS[n]} {t:g}x" for t, n in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    measures = [
        ("cold: first paint", lambda r: fmt_s(cold_median(r, lambda v: v.get("fp")))),
        ("cold: interactive", lambda r: fmt_s(cold_median(r, lambda v: v["ready"]))),
        ("cold: first click answered by the preview", answered_cell),
        ("cold: first answered click", lambda r: fmt_s(cold_median(r, lambda v: v.get("answer", {}).get("drawn")))),
        (
            "cold: that click to its frame",
            lambda r: fmt_ms(cold_median(r, lambda v: v.get("answer", {}).get("latency"))),
        ),
        (
            "cold: that click as INP counts it (its pointerdown or click, the slower, to its next frame)",
            lambda r: fmt_ms(cold_median(r, lambda v: v.get("answer", {}).get("inp"))),
        ),
        (
            "cold: that click to the frame of its whole answer",
            lambda r: fmt_ms(cold_median(r, lambda v: v.get("answer", {}).get("whole"))),
        ),
        (
            "cold: that click, after the controls answered",
            lambda r: fmt_ms(cold_median(r, lambda v: v.get("answer", {}).get("after_controls"))),
        ),
        ("cold: longest main-thread task, to interactive", lambda r: fmt_ms(cold_median(r, longest_task))),
        ("cold: blocking time, first paint to interactive", lambda r: fmt_ms(cold_median(r, blocking_time))),
        ("storm: clicks answered by the preview", lambda r: storm_cell(r, lambda s: f"{len(s)} of {STORM_CLICKS}")),
        ("storm: median click to its frame", lambda r: storm_cell(r, lambda s: fmt_ms(statistics.median(s)))),
        ("storm: slowest click to its frame", lambda r: storm_cell(r, lambda s: fmt_ms(max(s)))),
        ("taps: interactive after them", lambda r: fmt_s(cold_median(r, lambda v: v.get("taps", {}).get("ready")))),
        (
            "taps: answered by the preview",
            lambda r: fmt_ms(cold_median(r, lambda v: v.get("taps", {}).get("answered"))).replace(" ms", ""),
        ),
        (
            "taps: the slowest as INP counts it",
            lambda r: fmt_ms(cold_median(r, lambda v: v.get("taps", {}).get("inp"))),
        ),
        ("first step after interactive", lambda r: fmt_ms(cold_median(r, lambda v: v.get("step", {}).get("changed")))),
        ("warm: first paint", lambda r: fmt_s(med([v.get("fp") for v in r["warm"]]))),
        ("warm: interactive", lambda r: fmt_s(med([v["ready"] for v in r["warm"]]))),
        *[
            (f"cold bytes: {k}", lambda r, k=k: f"{cold_median(r, lambda v: v['bytes'][k]) / 1e6:.2f} MB")
            for k in KINDS
        ],
        ("cold bytes: total", lambda r: f"{cold_median(r, lambda v: sum(v['bytes'].values())) / 1e6:.2f} MB"),
        ("warm bytes: total", lambda r: f"{med([sum(v['bytes'].values()) for v in r['warm']]) / 1e6:.3f} MB"),
        ("main thread, a fixed loop", lambda r: fmt_ms(cold_median(r, lambda v: v["speed_ms"]))),
    ]
    for label, f in measures:
        rows.append(f"| {label} | " + " | ".join(f(res[t][n]) for t, n in cols) + " |")
    return "\n".join(rows)


def breakdown(res: dict, throttles) -> str:
    """Where the time goes, from the marks: each segment's median (ms), by site and throttle."""
    cols = [(t, n) for t in throttles for n in ("site", "before", "bare") if n in res[t]]
    out = [
        "| where the time goes (cold, median ms) | " + " | ".join(f"{LABELS[n]} {t:g}x" for t, n in cols) + " |",
        "|---|" + "---:|" * len(cols),
    ]
    for end, label in SEGMENTS + MAIN_THREAD:
        cells = [segment(res[t][n], end) for t, n in cols]
        if any(c is not None for c in cells):
            kind = "at" if (end, label) in MAIN_THREAD else "+"
            out.append(
                f"| {label} ({end}) | " + " | ".join("—" if c is None else f"{kind} {c:.0f}" for c in cells) + " |"
            )
    return "\n".join(out)


def segment(res: dict, end: str) -> float | None:
    """Median time from the previous mark present (or navigation start) to `end`; a main-thread
    mark: its time from navigation start."""
    if end in dict(MAIN_THREAD):
        return cold_median(res, lambda v: v["marks"].get(end))
    order = [name for name, _ in SEGMENTS]

    def one(v):
        marks = v["marks"]
        if end not in marks:
            return None
        before = [marks[m] for m in order[: order.index(end)] if m in marks]
        return marks[end] - (before[-1] if before else 0)

    return cold_median(res, one)


def ratio(a, b) -> float | None:
    return a / b if a is not None and b else None


def goals(res: dict, throttles, name: str = "site") -> list[str]:
    """Each goal of issues 12 and 21 with the measured value for site `name`, met or missed."""

    def ready(t, n):
        return cold_median(res[t][n], lambda v: v["ready"]) if n in res[t] else None

    def line(text, value, ok):
        return f"- {text}: {value} — {'met' if ok else 'MISSED'}"

    out = []
    for t in throttles:
        site = res[t].get(name)
        if site is None:
            continue
        if t >= 4:
            fp = cold_median(site, lambda v: v.get("fp"))
            out.append(line(f"first paint at {t:g}x under 1.5 s", fmt_s(fp), fp is not None and fp < 1500))
        bare, conv = ratio(ready(t, name), ready(t, "bare")), ratio(ready(t, "convert"), ready(t, name))
        if bare is not None:
            out.append(line(f"interactive at {t:g}x at most 2x the bare Pyodide+NumPy boot", f"{bare:.2f}x", bare <= 2))
        if conv is not None:
            out.append(line(f"interactive at {t:g}x at least 3x faster than panel convert", f"{conv:.2f}x", conv >= 3))
        step, limit = cold_median(site, lambda v: v.get("step", {}).get("changed")), 100 if t == 1 else 300
        out.append(
            line(
                f"first step after interactive at {t:g}x under {limit} ms",
                fmt_ms(step),
                step is not None and step < limit,
            )
        )
        answered = cold_median(site, lambda v: v.get("answer", {}).get("drawn"))
        if t >= 4 and answered is not None:  # issue 21: the first click, made at once on the first paint
            out.append(line(f"first answered click at {t:g}x within 1.5 s", fmt_s(answered), answered <= 1500))
            inp = cold_median(site, lambda v: v.get("answer", {}).get("inp"))
            if inp is not None:
                out.append(line(f"that click as INP counts it at {t:g}x within 200 ms", fmt_ms(inp), inp <= 200))
            bare_ready = ready(t, "bare")
            if bare_ready is not None:
                paint = answered / bare_ready
                out.append(line(f"that click within 0.5x the bare boot at {t:g}x", f"{paint:.2f}x", paint <= 0.5))
        tapped = cold_median(site, lambda v: v.get("taps", {}).get("ready"))
        if tapped is not None:  # issue 49: taps before the live page cost its boot nothing measurable
            slower = tapped / ready(t, name)
            out.append(line(f"interactive after taps at {t:g}x at most 1.3x without", f"{slower:.2f}x", slower <= 1.3))
    site = next((res[t][name] for t in throttles if name in res[t]), None)
    if site is not None:
        cold = cold_median(site, lambda v: sum(v["bytes"].values()))
        warm = med([sum(v["bytes"].values()) for v in site["warm"]])
        out.append(line("cold bytes at most 10 MB compressed", f"{cold / 1e6:.2f} MB", cold <= 10e6))
        out.append(line("warm bytes 0", f"{warm / 1e6:.3f} MB", warm == 0))
    return out


def report(res: dict, args, machine: dict) -> str:
    throttles = args.throttle
    parts = [
        f"{machine['bench']}; load average before/after: {machine['load'][0]} / {machine['load'][1]} "
        f"(2 cores); build of the static site (warm cache): {machine['build_s']:.1f} s; "
        + ("a phone's screen, 360 x 740 px" if args.phone else "a laptop's screen, 1280 x 800 px")
        + ("; each page's main thread on a core of its own" if args.main_alone else "")
        + ("; the first click at the first paint (--at-paint)" if args.at_paint else "")
        + (f"; each click held {args.press:g} ms, timed from its release (--press)" if args.press else "")
        + (f"; {args.taps} taps once the app is built, one every {TAP_GAP_S:g} s (--taps)" if args.taps else ""),
        "",
        *(
            [host_line(*machine["index"]) + " (tests/device.py: the phone each throttle makes of this machine)", ""]
            if len(machine.get("index", [])) == 2
            else []
        ),
        times_table(res, throttles, args.rounds),
        "",
        breakdown(res, throttles),
        "",
    ]
    for name in ("before", "site"):
        if any(name in res[t] for t in throttles):
            parts += [f"Goals (issues 12, 21 and 49), {LABELS[name]}:", *goals(res, throttles, name), ""]
    external = sorted(
        {u for t in throttles for s in res[t].values() for v in s["cold"] + s["warm"] for u in v["external"]}
    )
    parts.append(
        "Requests to other origins: " + ", ".join(external) if external else "No request left 127.0.0.1 on any site."
    )
    return "\n".join(parts)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--throttle", type=float, nargs="+", default=[1, 4], help="CPU throttle rates (default: 1 4)")
    ap.add_argument("--sites", nargs="+", choices=SITES, default=list(SITES))
    ap.add_argument("--cache", type=Path, default=build.DEFAULT_CACHE)
    ap.add_argument("--json", type=Path, help="also write the raw results here")
    ap.add_argument("--keep", action="store_true", help="keep the built sites (path printed)")
    ap.add_argument("--compare", type=Path, help='an earlier build\'s dist/, measured as "before"')
    ap.add_argument("--phone", action="store_true", help="a phone's screen, 360 x 740 (else 1280 x 800)")
    ap.add_argument(
        "--at-paint",
        action="store_true",
        help="the first click at the first paint, before the controls start if they start later",
    )
    ap.add_argument(
        "--press", type=float, default=0, help="ms each click holds the button down (0: press and release at once)"
    )
    ap.add_argument(
        "--taps", type=int, default=0, help="a visit with this many taps once the app is built (issue 49: 40)"
    )
    ap.add_argument(
        "--main-alone",
        action="store_true",
        help="each page's main thread on a core of its own, the browser's other threads on the others (Linux)",
    )
    args = ap.parse_args(argv)
    if compiled_wheels_dir() is None:
        print("the compiled Pyodide wheels are not available (see tests/site_fixtures.py)", file=sys.stderr)
        return 2
    machine = {"bench": model_bench(), "load": [loadavg()], "index": [indexes(args.throttle)]}
    work = Path(tempfile.mkdtemp(prefix="kv-bench-"))
    try:
        made, machine["build_s"] = make_sites(work, args.cache, args.sites, args.compare)
        log: list = []
        servers = serve_sites(made, log)
        try:
            with main_thread_alone() if args.main_alone else contextlib.nullcontext():
                size = PHONE if args.phone else LAPTOP
                res = measure(
                    servers, log, args.rounds, args.throttle, size, Reader(args.at_paint, args.press), args.taps
                )
        finally:
            for server, _ in servers.values():
                server.shutdown()
                server.server_close()
    finally:
        if args.keep:
            print("sites kept in", work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    machine["load"].append(loadavg())
    machine["index"].append(indexes(args.throttle))
    print()
    print(report(res, args, machine))
    if args.json:
        args.json.write_text(json.dumps({"machine": machine, "results": {str(t): r for t, r in res.items()}}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
