"""The phone a CPU throttle makes of this machine, by an outside yardstick.

    uv run --extra test python -m tests.device            # the index at 1x and 4x, and the rates of two phones

A throttle is relative: 4x on this machine is a different phone in a fast hour and in a slow one
(`python -m model.bench` has moved by half within a session: docs/performance.md). Chrome DevTools
calibrates its CPU throttling presets with Lighthouse's BenchmarkIndex, a second of JavaScript (half of
it building strings, which makes garbage; half copying an array) whose score Lighthouse records with
every report (`environment.benchmarkIndex`): DevTools aims its low-tier preset at 264 (a Moto G4 Power
2022) and its mid-tier one at 1000 (a Pixel 5), bisecting the throttle rate until the benchmark, run
throttled in a blank page, scores within 10 of the target (front_end/panels/mobile_throttling/
CalibrationController.ts). Here the same benchmark (`BENCHMARK_INDEX_JS`, written after Lighthouse's
core/lib/page-functions.js `computeBenchmarkIndex`) says which phone each run of the load benchmarks
was (tests.bench_load, tests.bench_click), and `calibrate` finds the rate that makes one.
"""

from __future__ import annotations

import statistics
import sys
from collections.abc import Callable

from tests.browser import chromium, chromium_missing, throttled_page

# Chrome DevTools' targets for its calibrated CPU presets (CalibrationController.ts: lowScore, midScore)
LOW_TIER = 264  # "a low-tier device (like a Moto G4 Power 2022)"
MID_TIER = 1000  # "a mid-tier device (like a Pixel 5)"
CLOSE_ENOUGH = 10  # DevTools' bisect stops within 10 points of its target

# Lighthouse's BenchmarkIndex: half of `ms` building a 10,000-character string one character at a time,
# half copying a 100,000-integer array back and forth; each "times a second, over 10", the index their mean.
BENCHMARK_INDEX_JS = """(ms) => {
  const half = ms / 2;
  function strings() {
    const start = Date.now();
    let n = 0;
    while (Date.now() - start < half) {
      let s = "";
      for (let j = 0; j < 10000; j++) s += "a";
      if (s.length === 1) throw new Error("never: keeps the loop from being optimised away");
      n++;
    }
    return Math.round(n / 10 / ((Date.now() - start) / 1000));
  }
  function copies() {
    const a = [];
    const b = [];
    for (let i = 0; i < 100000; i++) a[i] = b[i] = i;
    const start = Date.now();
    let n = 0;
    while (n % 10 !== 0 || Date.now() - start < half) {
      const [src, dst] = n % 2 === 0 ? [a, b] : [b, a];
      for (let j = 0; j < src.length; j++) dst[j] = src[j];
      n++;
    }
    return Math.round(n / 10 / ((Date.now() - start) / 1000));
  }
  return (strings() + copies()) / 2;
}"""


def benchmark_index(browser, rate: float, runs: int = 3, ms: int = 1000) -> float:
    """The median of `runs` BenchmarkIndex scores in a blank page at CPU throttle `rate`, after one run
    that warms V8 (as DevTools' calibration does)."""
    context = browser.new_context()
    try:
        page = throttled_page(context, rate)
        page.goto("about:blank")
        page.evaluate(BENCHMARK_INDEX_JS, ms // 4)
        return statistics.median(page.evaluate(BENCHMARK_INDEX_JS, ms) for _ in range(runs))
    finally:
        context.close()


def indexes(rates) -> dict[float, float]:
    """The BenchmarkIndex at each rate (1x among them), in a browser of their own."""
    with chromium() as browser:
        return {rate: benchmark_index(browser, rate) for rate in sorted({1.0, *map(float, rates)})}


def phone_words(index: float) -> str:
    """Which of DevTools' two calibrated phones a BenchmarkIndex is near, in words."""
    if index < LOW_TIER - CLOSE_ENOUGH:
        return f"slower than DevTools' low-tier phone ({LOW_TIER})"
    if index <= LOW_TIER + CLOSE_ENOUGH:
        return f"DevTools' low-tier phone ({LOW_TIER})"
    if index < MID_TIER - CLOSE_ENOUGH:
        return f"between DevTools' low-tier phone ({LOW_TIER}) and its mid-tier one ({MID_TIER})"
    if index <= MID_TIER + CLOSE_ENOUGH:
        return f"DevTools' mid-tier phone ({MID_TIER})"
    return f"faster than DevTools' mid-tier phone ({MID_TIER})"


def host_line(before: dict[float, float], after: dict[float, float]) -> str:
    """The report's words for the indexes measured before and after a run (`indexes`), at each rate."""
    parts = []
    for rate in sorted(before):
        got = [before[rate], after[rate]]
        mid = statistics.median(got)
        said = " / ".join(f"{s:.0f}" for s in got)
        parts.append(f"{rate:g}x {said}" + (f" ({phone_words(mid)})" if rate != 1 else ""))
    return "Lighthouse's BenchmarkIndex in a blank page, before / after: " + "; ".join(parts)


def calibrate(score: Callable[[float], float], target: float, lower: float, upper: float, tries: int = 8) -> float:
    """The throttle rate at which `score(rate)` comes within CLOSE_ENOUGH of `target`: DevTools' bisect
    between `lower` (scores above the target) and `upper` (below it), rates to the hundredth (what the
    throttling backend keeps), `tries` halvings at most."""
    rate = lower
    for _ in range(tries):
        rate = round((lower + upper) / 2, 2)
        got = score(rate)
        if abs(got - target) < CLOSE_ENOUGH:
            break
        if got < target:
            upper = rate
        else:
            lower = rate
    return rate


def main() -> int:
    missing = chromium_missing()
    if missing:
        print(missing, file=sys.stderr)
        return 2
    with chromium() as browser:
        at1, at4 = benchmark_index(browser, 1), benchmark_index(browser, 4)
        print(f"BenchmarkIndex at 1x: {at1:.0f}; at 4x: {at4:.0f} ({phone_words(at4)})")

        def score(rate: float) -> float:
            return benchmark_index(browser, rate)

        for name, target in (("low-tier", LOW_TIER), ("mid-tier", MID_TIER)):
            if at1 < target:
                print(f"{name} phone ({target}): this machine is slower than it unthrottled")
                continue
            rate = calibrate(score, target, 1, at1 / target * 1.5)
            print(f"{name} phone ({target}): --throttle {rate:g} (it scores {benchmark_index(browser, rate):.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
