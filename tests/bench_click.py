"""Benchmark: the preview's own answer to a click, without the load around it.

    python build.py && uv run --extra test python -m tests.bench_click [--site dist] [--compare DIR] [--phone] [--press MS]

`tests.bench_load` times the first click while Pyodide boots on the other core, and on a 2-core
machine that contention spreads its rounds over 100 ms and more. Here the live page is held back (the
app's archive never arrives), so what is timed is the preview's own work: the static site is opened
with the main thread throttled (4x by default, a phone), and Avanzar is clicked with real input at
once when it is painted and answers ("at once": in the look that finds the controls answering, the
button's place found in it, as tests.bench_load clicks: a round trip between would make the click later
and easier), then, `--clicks` times,
Reiniciar and, once the loader has found the next step's changes ahead (in idle time: a reader's
pause), Avanzar again. Each click is timed by the browser's own Event Timing (the measure behind INP): from the input
to the handlers' end ("handled") and to the next paint after them ("painted"; the answer is drawn in
the click's own task, so that paint shows it), to 8 ms; a click it does not report (under 16 ms) counts
as 16. The bench waits through `evaluate` only (`tests.browser.wait_as_reader`): Playwright's own waits
leave listeners on the page that every input would run, and a reader's page has none. Prints medians
over `--rounds` fresh pages per site, the sites alternating, and the phone the throttle made of the machine
before and after (Lighthouse's BenchmarkIndex: tests/device.py).

`--booting` lets the app's archive through: Pyodide boots and Python builds the app while the first click
is answered, as in a reader's page and in tests.bench_load (which times that click by Event Timing too,
with its probe on the page), and only that click is timed (the live page may take over after it).

`--press MS` holds each click's button down MS ms, as a reader does: the click's time is then from the
release (with none, Playwright sends the pointer's move, press and release at once, and the click's time
counts the move's and the press's handling too).

`--floor` times a third page in the same rounds: the site's Pyodide and NumPy booting in a worker (the
bare yardstick of tests.bench_load) and an Avanzar that changes one text (tests/bench/floor.html): what
a click costs on this machine, at this throttle, when the page does next to nothing with it.

`--main-alone` puts each page's main thread on a core of its own and the browser's other threads on the
others (`tests.browser.main_thread_alone`): the throttle makes the main thread spin, idle or not, and on
2 cores that spin takes the compositor's, the raster's and the worker's core (docs/performance.md).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.bench_sites import FILES, bare_config, make_bare  # noqa: E402
from tests.browser import (  # noqa: E402
    LAPTOP,
    PHONE,
    add_site_arguments,
    alternating_rounds,
    centre_js,
    centre_of,
    main_thread_alone,
    throttled_page,
    wait_as_reader,
)
from tests.device import host_line, indexes  # noqa: E402

# run in every page before its own scripts (an init script: no round trip between the controls and the click)
OBSERVE_JS = """window.__clicks = [];
  new PerformanceObserver((list) => { for (const e of list.getEntries()) if (e.name === 'click')
    window.__clicks.push([e.processingEnd - e.startTime, e.duration]); })
  .observe({type: 'event', durationThreshold: 16, buffered: true});"""
CONTROLS_JS = "['kv-controls', 'kv-first-paint'].every((m) => performance.getEntriesByName(m).length > 0)"
ANSWERS_JS = "(window.kv.answers || []).length"
UNDER = 16.0  # ms: the browser's least duration threshold for Event Timing


def click(page, selector: str, press: float = 0, at: tuple | None = None) -> list[float]:
    """A real click on the preview's button, its answer drawn, and its Event Timing: [handled, painted] in ms.
    The button is held down `press` ms (the workload: a reader's press) before it is released; with none,
    the pointer's move, press and release reach the page at one instant, and the click's time counts the
    move's and the press's handling too. The browser reports no click under 16 ms (the least threshold it
    takes); one not reported within a second of its answer counts as 16, an upper bound. `at`: where the
    button is, found in the look that found the controls answering (the page's first click: nothing
    answered or reported yet), so that no round trip comes between."""
    if at is None:
        at = centre_of(page, "#kv-snapshot " + selector)
        answered, reported = page.evaluate(f"[{ANSWERS_JS}, window.__clicks.length]")
    else:
        answered, reported = 0, 0
    page.mouse.click(*at, delay=press)
    wait_as_reader(page, f"{ANSWERS_JS} > {answered}")
    try:
        wait_as_reader(page, f"window.__clicks.length > {reported}", 1000)
    except TimeoutError:
        return [UNDER, UNDER]
    return page.evaluate(f"window.__clicks[{reported}]")


def one_page(
    browser, url: str, throttle: float, clicks: int, size: tuple, booting: bool, press: float = 0
) -> dict[str, list]:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    if not booting:
        context.route("**/app.*.zip*", lambda route: None)  # held: the preview stays the page
    context.add_init_script(script=OBSERVE_JS)
    page = throttled_page(context, throttle)
    page.goto(url + "index.html", wait_until="commit")  # the reader does not wait for the load event
    # not wait_for_function: its listeners would be timed with the clicks
    at = wait_as_reader(page, CONTROLS_JS, result=centre_js("#kv-snapshot [data-kv=step]"))
    times = [click(page, "[data-kv=step]", press, at)]  # at once, as tests.bench_load's first click
    for _ in range(clicks):
        times.append(click(page, "[data-kv=reset]", press))
        wait_as_reader(page, "window.kv.preview.aheadHolds")  # a reader's pause: the loader found the step ahead
        times.append(click(page, "[data-kv=step]", press))
    context.close()
    steps = [times[0]] + times[2::2]
    return {"first": steps[0], "later": steps[1:], "resets": times[1::2]}


def link_or_copy(src: str, dst: str) -> None:
    try:
        os.link(src, dst)
    except OSError:  # another file system
        shutil.copy2(src, dst)


def make_floor(site: Path, folder: Path) -> Path:
    """The site's files linked into `folder` (copied where they cannot be; the site untouched), its
    index.html the floor page (tests/bench/floor.html) on the site's Pyodide and lock file."""
    shutil.copytree(site, folder, copy_function=link_or_copy, dirs_exist_ok=True)
    make_bare(folder)  # its scripts (bare.js, bare-worker.js), beside the site's
    page = (FILES / "floor.html").read_text(encoding="utf-8").replace("{{CONFIG}}", bare_config(site))
    for linked in ("index.html", "index.html.gz", "index.html.zst"):  # the site's (the server prefers those compressed)
        (folder / linked).unlink(missing_ok=True)  # unlinked, never written through
    (folder / "index.html").write_text(page, encoding="utf-8")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_site_arguments(parser)
    parser.add_argument("--clicks", type=int, default=3, help="steps after a pause, per page")
    parser.add_argument("--phone", action="store_true", help="a phone's screen, 360 x 740 (else 1280 x 800)")
    parser.add_argument("--booting", action="store_true", help="Pyodide boots meanwhile; the first click only")
    parser.add_argument(
        "--press", type=float, default=0, help="ms each click holds the button down (0: press and release at once)"
    )
    parser.add_argument(
        "--floor", action="store_true", help="also a page whose button changes one text, Pyodide booting"
    )
    parser.add_argument(
        "--main-alone",
        action="store_true",
        help="each page's main thread on a core of its own, the browser's other threads on the others (Linux)",
    )
    args = parser.parse_args()
    if args.booting:
        args.clicks = 0
    size = PHONE if args.phone else LAPTOP
    before = indexes([args.throttle])
    with tempfile.TemporaryDirectory() as tmp, main_thread_alone() if args.main_alone else contextlib.nullcontext():
        more = {"floor": make_floor(args.site, Path(tmp) / "floor")} if args.floor else None
        pages = alternating_rounds(
            args,
            lambda browser, url: one_page(browser, url, args.throttle, args.clicks, size, args.booting, args.press),
            more,
        )
    after = indexes([args.throttle])
    results = {
        name: {
            "first": [got["first"] for got in got_all],
            "later": [t for got in got_all for t in got["later"]],
            "resets": [t for got in got_all for t in got["resets"]],
        }
        for name, got_all in pages.items()
    }
    print(
        f"{args.throttle:g}x CPU, {size[0]} x {size[1]} px, {args.rounds} pages per site, Event Timing (ms, to 8 ms), "
        f"{'Pyodide booting' if args.booting else 'the live page held back'}, "
        f"{f'each click held {args.press:g} ms' if args.press else 'press and release at once'}"
        f"{', main thread on a core of its own' if args.main_alone else ''}, medians:"
    )

    def median(values, i):
        return f"{statistics.median(v[i] for v in values):.0f}" if values else "—"

    for name, r in results.items():
        print(
            f"{name:7} Avanzar at once: handled {median(r['first'], 0)}, painted {median(r['first'], 1)} "
            f"(all: {', '.join(f'{v[1]:.0f}' for v in r['first'])}) | after a pause: "
            f"handled {median(r['later'], 0)}, painted {median(r['later'], 1)} | Reiniciar: "
            f"painted {median(r['resets'], 1)}"
        )
    print(host_line(before, after) + " (tests/device.py)")


if __name__ == "__main__":
    main()
