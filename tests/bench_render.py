"""Benchmark: the live page's first render, how long it takes and how long it holds the main thread.

    uv run --extra test python -m tests.bench_render --site DIST [--compare DIR] [--rounds 5] [--throttle 4]

Each round opens a fresh page of each built site (the sites alternating, so the machine's mood is shared)
with the main thread throttled (4x by default, a phone), waits for the live page (body[data-ready]) and
reads, from the page itself, the render's time (the loader's marks kv-render-go, once BokehJS is ready and
the reader has paused, to kv-ready) and the main thread's long tasks in it (Long Tasks API, over 50 ms):
the longest, and their blocking time (the sum of what each has over 50 ms, as total blocking time counts
it). Prints each round's render time and the medians. `tests.bench_load` times the whole load around it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import add_site_arguments, alternating_rounds, throttled_page, wait_as_reader  # noqa: E402

LONG_TASKS_JS = """window.__long = [];
new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__long.push([e.startTime, e.duration]); })
  .observe({type: 'longtask', buffered: true});"""
RENDER_JS = "['kv-render-go', 'kv-ready'].map((m) => performance.getEntriesByName(m)[0].startTime)"


def one_page(browser, url: str, throttle: float) -> tuple[float, float, float]:
    """(render ms, longest task in it ms, its blocking time ms) of one fresh page."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = throttled_page(context, throttle)
    page.add_init_script(LONG_TASKS_JS)
    page.goto(url + "index.html?lang=es")
    wait_as_reader(page, "document.body.dataset.ready === 'true' || document.body.dataset.error !== undefined", 120000)
    if page.evaluate("document.body.dataset.error") is not None:
        raise SystemExit(f"{url}: the page shows an error")
    go, ready = page.evaluate(RENDER_JS)
    tasks = [d for start, d in page.evaluate("window.__long") if start + d >= go and start <= ready]
    context.close()
    return ready - go, max(tasks, default=0.0), sum(d - 50 for d in tasks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_site_arguments(parser)
    args = parser.parse_args()
    results = alternating_rounds(args, lambda browser, url: one_page(browser, url, args.throttle))
    print(f"{args.throttle:g}x CPU, {args.rounds} pages per site; the live render (kv-render-go to kv-ready), ms:")
    for name, r in results.items():
        print(
            f"{name:7} render {statistics.median(v[0] for v in r):.0f} (all: {', '.join(f'{v[0]:.0f}' for v in r)}) | "
            f"longest task {statistics.median(v[1] for v in r):.0f} | blocking {statistics.median(v[2] for v in r):.0f}"
        )


if __name__ == "__main__":
    main()
