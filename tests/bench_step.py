"""Benchmark: from a click on Avanzar to the redrawn figure, at t near 64.

    python -m tests.bench_step            # panel serve (development) and the static site
    python -m tests.bench_step --server   # only panel serve
    python -m tests.bench_step --static   # only dist/ (build it first: python build.py)

In headless Chromium, the page is opened at t = 54 and stepped to 64, ten
times per mode. For each click the time runs from the click to the last change
of the Bokeh document that the step's redraw makes (its first burst of changes);
the page measures the step's clock only once that is on the page (app/figure/parts.py
defer), and its changes come later, timed apart ("with the clock after it"). The
Python side of the same step (state + views) is timed in-process too, without and
then with the clock. Prints medians and maxima; the goal is under 50 ms at t = 64.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import DEEP_JS  # noqa: E402

MEASURE_JS = (
    """
async (label) => {"""
    + DEEP_JS
    + """
  const button = deep(document, (el) => el.tagName === 'BUTTON' && el.textContent.trim() === label);
  const docs = window.Bokeh.documents;
  const doc = docs[docs.length - 1];
  const times = [];
  let armed = false;                 // the click's own change to the button (synchronous) is not the step's
  const listener = () => { if (armed) times.push(performance.now()); };
  doc.on_change(listener);
  const t0 = performance.now();
  button.click();
  armed = true;
  // wait until the step's changes stop arriving (nothing new for 250 ms)
  await new Promise((resolve) => {
    const check = () => {
      const now = performance.now();
      if (times.length && now - times[times.length - 1] > 250) resolve(); else setTimeout(check, 20);
    };
    setTimeout(check, 20);
  });
  doc.remove_on_change(listener);
  // the step's redraw: the first burst of changes (none more than GAP ms after the one before);
  // the clock, measured after the step is on the page, comes in a later burst
  const GAP = 15;
  let step = times[0];
  for (const t of times) { if (t - step > GAP) break; step = t; }
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {changes_ms: step - t0, all_ms: times[times.length - 1] - t0};
}
"""
)


PAINTED_JS = "new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))"  # laid out and painted


def python_side(n: int = 20) -> dict:
    """The step's Python work alone (Explorer.step + every view update), at t = 63 -> 64, and apart
    the clock's measurement, which the page runs once the step is on the page (app/figure/parts.py defer)."""
    from app.figure import controls as parts
    from app.main import create_view

    out = {}
    for mode in ("cache", "full"):
        steps, clocks = [], []
        for _ in range(n):
            view = create_view(f"?mode={mode}&t=63")
            deferred, defer = [], parts.defer
            parts.defer = deferred.append  # held back, to time the step alone
            try:
                t0 = time.perf_counter()
                view.controls.do("step")
                t1 = time.perf_counter()
            finally:
                parts.defer = defer
            for fn in deferred:
                fn()
            steps.append((t1 - t0) * 1e3)
            clocks.append((time.perf_counter() - t1) * 1e3)
        out[mode] = (statistics.median(steps), max(steps), statistics.median(clocks))
    return out


def browser_side(url: str, label: str = "Avanzar", repeats: int = 10, ready=None) -> dict:
    from tests.browser import chromium, open_page

    results = {}
    with chromium() as browser:
        for mode in ("cache", "full"):
            at64, near, clock = [], [], []
            for _ in range(repeats):
                page, _ = open_page(browser, f"{url}?lang=es&mode={mode}&t=54")
                if ready:
                    ready(page)
                page.locator(".tpos", has_text="t = 54 / 64").first.wait_for(timeout=120000)
                page.evaluate(PAINTED_JS)
                for t in range(55, 65):
                    got = page.evaluate(MEASURE_JS, label)
                    (at64 if t == 64 else near).append(got["changes_ms"])
                    clock.append(got["all_ms"])
                page.context.close()
            results[mode] = {
                "t64_median": statistics.median(at64),
                "t64_max": max(at64),
                "t55_63_median": statistics.median(near),
                "clock_median": statistics.median(clock),
            }
    return results


def table(rows) -> str:
    out = [
        "| where | mode | click to redrawn at t = 64, median | max | t = 55..63, median | "
        "with the clock after it, t = 55..64, median |",
        "|---|---|---|---|---|---|",
    ]
    for where, res in rows:
        for mode, r in res.items():
            out.append(
                f"| {where} | {mode} | {r['t64_median']:.1f} ms | {r['t64_max']:.1f} ms | "
                f"{r['t55_63_median']:.1f} ms | {r['clock_median']:.1f} ms |"
            )
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", action="store_true")
    ap.add_argument("--static", action="store_true")
    ap.add_argument("--repeats", type=int, default=10)
    args = ap.parse_args(argv)
    both = not (args.server or args.static)
    rows = []
    py = python_side()
    print(
        "Python side of one step at t = 63 -> 64 (CPython, in-process): "
        + "; ".join(f"{m}: median {a:.1f} ms, max {b:.1f} ms, then the clock {c:.1f} ms" for m, (a, b, c) in py.items())
    )
    if args.server or both:
        from tests.browser import panel_serve

        with panel_serve() as url:
            rows.append(("panel serve", browser_side(url, repeats=args.repeats)))
    if args.static or both:
        from tests.browser import serve, wait_ready

        dist = ROOT / "dist"
        if not (dist / "index.html").is_file():
            print("dist/ is not built: run `python build.py` first", file=sys.stderr)
            return 2
        with serve(dist) as base:
            rows.append(
                ("static site (Pyodide)", browser_side(base + "index.html", repeats=args.repeats, ready=wait_ready))
            )
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
