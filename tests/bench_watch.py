"""Benchmark: does Animar step at the speed its slider says?

    python -m tests.bench_watch            # panel serve (development)
    python -m tests.bench_watch --static   # the static site (Pyodide; builds it first, minutes)
    python -m tests.bench_watch --static --phone --throttle 4 --speeds 4   # the house's phone reader
    python -m tests.bench_watch --dist dist --phone --throttle 4            # a site already built

In headless Chromium the page is opened at each speed (1, 4, 10, 20 tokens per second), Animar is
pressed, and the page records the time of every new position t it shows; the rate is the number of
steps over the time between the first and the last one seen (a few seconds, or until t = 40), and over
the last six (the page's own note reads the steps it drew over its last 2.5 s, app/figure/parts.py
Animation.rate). Prints the setting, the measured rates and what the page says about it (the note
beside the speed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import DEEP_JS, LAPTOP, PHONE, throttled_page  # noqa: E402

SPEEDS = (1, 4, 10, 20)

# Every 5 ms: the position readout's text, and when it changed (performance.now(), ms).
RECORD_JS = (
    """
() => {"""
    + DEEP_JS
    + """
  const root = deep(document, (el) => el.shadowRoot && el.shadowRoot.querySelector('.tpos')).shadowRoot;
  window.__ticks = [];
  let last = null;
  window.__recorder = setInterval(() => {
    const el = root.querySelector('.tpos');
    const text = el ? el.textContent : null;
    if (text !== last) { last = text; window.__ticks.push([text, performance.now()]); }
  }, 5);
}
"""
)


RECENT = 6  # positions: the rate lately (the page's note reads its last DRAWN_WINDOW seconds, parts.Animation)


def steps_per_second(steps: list[tuple[int, float]]) -> float:
    (t0, a), (t1, b) = steps[0], steps[-1]
    return (t1 - t0) / ((b - a) / 1000)


def rate_at(
    browser, url: str, speed: int, seconds: float, size: tuple = LAPTOP, throttle: float = 1
) -> tuple[float, float, int, str]:
    """(tokens per second over the run, over its last RECENT positions, steps, the page's note)."""
    from tests.browser import wait_ready, wait_t

    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    page = throttled_page(context, throttle)
    page.goto(url + f"?lang=es&speed={speed}")
    if url.endswith("index.html"):
        wait_ready(page)
    wait_t(page, 2)
    page.evaluate(RECORD_JS)
    page.get_by_role("button", name="Animar").click()
    stop = min(40, 2 + int(speed * seconds) + 1)
    page.wait_for_function(
        f"window.__ticks.some(([s]) => s && parseInt(s.split('=')[1]) >= {stop})", timeout=int(seconds * 4000) + 20000
    )
    page.get_by_role("button", name="Pausa").click()
    page.get_by_role("button", name="Animar").wait_for()
    ticks = page.evaluate("window.__ticks")
    note = page.locator("[data-testid=speed-note]")
    said = note.first.inner_text() if note.count() else ""
    page.context.close()
    seen = [(int(s.split("=")[1].split("/")[0]), ms) for s, ms in ticks if s]
    steps = [(t, ms) for t, ms in seen if t >= 3]  # from the animation's first step on
    if len(steps) < RECENT:
        return float("nan"), float("nan"), len(steps), said
    return steps_per_second(steps), steps_per_second(steps[-RECENT:]), steps[-1][0] - steps[0][0], said


def measure(url: str, label: str, speeds=SPEEDS, size: tuple = LAPTOP, throttle: float = 1) -> None:
    from tests.browser import chromium

    with chromium() as browser:
        print(
            f"{label}, {size[0]} x {size[1]}, CPU {throttle:g}x: setting -> measured tokens per second over the "
            f"run (steps timed), over its last {RECENT} positions · what the page says"
        )
        for speed in speeds:
            rate, recent, n, said = rate_at(browser, url, speed, 6 if speed == 1 else 4, size, throttle)
            print(f"  {speed:>3} -> {rate:5.2f} ({n} steps), {recent:5.2f} · {said}", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--static", action="store_true", help="the static site (Pyodide) instead of panel serve")
    ap.add_argument("--phone", action="store_true", help="a phone's screen, 360 x 740 (else 1280 x 800)")
    ap.add_argument("--throttle", type=float, default=1, help="the page's CPU throttle (a phone: 4)")
    ap.add_argument("--speeds", type=int, nargs="+", default=list(SPEEDS), help="the settings to measure")
    ap.add_argument("--dist", type=Path, help="a static site already built (build.py's dist/), served as it is")
    args = ap.parse_args(argv)
    from tests.browser import serve
    from tests.servers import app_server

    size = PHONE if args.phone else LAPTOP
    if args.dist:
        with serve(args.dist) as base:
            measure(base + "index.html", f"static site ({args.dist})", args.speeds, size, args.throttle)
        return 0
    with app_server("static" if args.static else "served") as url:
        label = "static site (Pyodide)" if args.static else "panel serve"
        measure(url, label, args.speeds, size, args.throttle)
    return 0


if __name__ == "__main__":
    sys.exit(main())
