"""Benchmark: from a click on Avanzar to the redrawn figure, at t near 64.

    python -m tests.bench_step            # panel serve (development) and the static site
    python -m tests.bench_step --server   # only panel serve
    python -m tests.bench_step --static   # only dist/ (build it first: python build.py)

In headless Chromium, the page is opened at t = 54 and stepped to 64, ten
times per mode. For each click the time runs from the click to the last change
of the Bokeh document that the step causes, plus the next animation frame (the
browser has painted). The Python side of the same step (state + views) is timed
in-process too. Prints medians and maxima; the goal is under 50 ms at t = 64.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MEASURE_JS = """
async (label) => {
  const deep = (root, pred) => {
    for (const el of root.querySelectorAll('*')) {
      if (pred(el)) return el;
      if (el.shadowRoot) { const hit = deep(el.shadowRoot, pred); if (hit) return hit; }
    }
    return null;
  };
  const button = deep(document, (el) => el.tagName === 'BUTTON' && el.textContent.trim() === label);
  const docs = window.Bokeh.documents;
  const doc = docs[docs.length - 1];
  let last = null;
  const listener = () => { last = performance.now(); };
  doc.on_change(listener);
  const t0 = performance.now();
  button.click();
  // wait until the step's changes stop arriving (nothing new for 250 ms)
  await new Promise((resolve) => {
    const check = () => {
      const now = performance.now();
      if (last !== null && now - last > 250) resolve(); else setTimeout(check, 20);
    };
    setTimeout(check, 20);
  });
  doc.remove_on_change(listener);
  const changed = last;
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {changes_ms: changed - t0};
}
"""


def python_side(n: int = 20) -> dict:
    """The step's Python work alone (Explorer.step + every view update), at t = 63 -> 64."""
    from app.main import create_view
    out = {}
    for mode in ("cache", "full"):
        times = []
        for _ in range(n):
            view = create_view(f"?mode={mode}&t=63")
            t0 = time.perf_counter()
            view.controls.do("step")
            times.append((time.perf_counter() - t0) * 1e3)
        out[mode] = (statistics.median(times), max(times))
    return out


def browser_side(url: str, label: str = "Avanzar", repeats: int = 10, ready=None) -> dict:
    from tests.browser import chromium, open_page
    results = {}
    with chromium() as browser:
        for mode in ("cache", "full"):
            at64, near = [], []
            for _ in range(repeats):
                page, _ = open_page(browser, f"{url}?lang=es&mode={mode}&t=54")
                if ready:
                    ready(page)
                page.locator(".tpos", has_text="t = 54 / 64").first.wait_for(timeout=120000)
                page.wait_for_timeout(500)
                for t in range(55, 65):
                    ms = page.evaluate(MEASURE_JS, label)["changes_ms"]
                    (at64 if t == 64 else near).append(ms)
                page.context.close()
            results[mode] = {"t64_median": statistics.median(at64), "t64_max": max(at64),
                             "t55_63_median": statistics.median(near)}
    return results


def table(rows) -> str:
    out = ["| where | mode | click to redrawn at t = 64, median | max | t = 55..63, median |",
           "|---|---|---|---|---|"]
    for where, res in rows:
        for mode, r in res.items():
            out.append(f"| {where} | {mode} | {r['t64_median']:.1f} ms | {r['t64_max']:.1f} ms | "
                       f"{r['t55_63_median']:.1f} ms |")
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
    print("Python side of one step at t = 63 -> 64 (CPython, in-process): "
          + "; ".join(f"{m}: median {a:.1f} ms, max {b:.1f} ms" for m, (a, b) in py.items()))
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
            rows.append(("static site (Pyodide)", browser_side(base + "index.html", repeats=args.repeats,
                                                                ready=wait_ready)))
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
