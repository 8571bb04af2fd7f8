"""Benchmark: what a hostile reader costs another reader under Panel's server (app/intake.py).

    python -m tests.bench_forged [--steps 20] [--nthreads N]

Under `build.py dev`, reader B steps in headless Chromium (a click on Avanzar to the new position
on the page, timed in the page), first alone, then while a hostile session attacks (tests/
test_forged_browser.py's attack: hostile values for every attribute of every model, 1 MB strings,
events to every model), then while reader A forges the batch size to 30,000 in its own page (the
report of issue 17), then while one session sends 2,000 valid clicks in one message, again and again
(tests/forge.py's clicks), then while three sessions, every section open, flood valid values (the
language, the K/V heads, every measuring button: tests/forge.py's floods). Prints B's step times in
each phase (median, p95, max) and the ratio of each phase's p95 to B's alone just before it, in one run,
and the server's memory before and after. `--nthreads` runs the server with Panel's worker threads
(PANEL_NUM_THREADS).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.browser import DEEP_JS  # noqa: E402

STEP_JS = (
    """
async (t) => {"""
    + DEEP_JS
    + """
  const pos = () => deep(document, (el) => el.classList && el.classList.contains('tpos'));
  const button = deep(document, (el) => el.tagName === 'BUTTON' && el.textContent.trim() === 'Avanzar');
  const want = `t = ${t} / 64`;
  const t0 = performance.now();
  button.click();
  while (!(pos() && pos().textContent.trim() === want)) await new Promise((r) => requestAnimationFrame(r));
  return performance.now() - t0;
}
"""
)


def step_times(page, state: dict, n: int | None = None, while_alive=None) -> list[float]:
    """B's steps (from the current position, starting over at 64), timed in the page, in ms."""
    times = []
    while (n is None or len(times) < n) and (while_alive is None or while_alive.is_alive()):
        if state["t"] == 64:
            page.get_by_role("button", name="Reiniciar", exact=True).click()
            page.locator(".tpos").filter(has_text="t = 2 / 64").first.wait_for()
            state["t"] = 2
        state["t"] += 1
        times.append(page.evaluate(STEP_JS, state["t"]))
    return times


def settled(page, state: dict, alone: list[float], within_s: float = 120) -> float:
    """B's steps, five at a time, until five in a row are as fast as B alone (their p95 within 1.5x of
    alone's): what sessions just opened still build at the server's ticks is done. The seconds it took."""
    start = time.monotonic()
    while time.monotonic() - start < within_s and p95(step_times(page, state, 5)) > 1.5 * p95(alone):
        pass
    return time.monotonic() - start


def p95(times: list[float]) -> float:
    return sorted(times)[math.ceil(0.95 * len(times)) - 1]


def line(name: str, times: list[float], alone: list[float]) -> str:
    return (
        f"| {name} | {len(times)} | {statistics.median(times):.0f} ms | {p95(times):.0f} ms | {max(times):.0f} ms"
        f" | {p95(times) / p95(alone):.2f} |"
    )


def while_running(target, args, page, state, n: int) -> tuple[list[float], list]:
    """B's n steps while target(*args, stop) runs in a thread (each attacker one), then what each returned."""
    stop, results, threads, failed = threading.Event(), [], [], []

    def attack(a):
        try:
            results.append(target(*a, stop))
        except BaseException as e:  # said after B's steps: a phase whose attacker failed measures nothing
            failed.append(e)

    for a in args:
        t = threading.Thread(target=attack, args=(a,), daemon=True)
        t.start()
        threads.append(t)
    times = step_times(page, state, n)
    stop.set()
    for t in threads:
        t.join(900)
    if failed:
        raise RuntimeError(f"{len(failed)} of {len(args)} attackers failed") from failed[0]
    return times, results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="B's steps in each phase")
    parser.add_argument("--nthreads", type=int, default=None, help="Panel's worker threads (PANEL_NUM_THREADS)")
    args = parser.parse_args(argv)
    if args.nthreads is not None:
        os.environ["PANEL_NUM_THREADS"] = str(args.nthreads)
    from tests.browser import chromium, open_all_sections, open_app, wait_t
    from tests.forge import RawSession, clicks, floods, open_every_section
    from tests.servers import panel_dev, server_memory_mb
    from tests.test_forged_browser import attack

    with chromium() as browser, panel_dev() as url:
        a, _ = open_app(browser, url, "?lang=es")
        wait_t(a, 2)
        open_all_sections(a)
        b, _ = open_app(browser, url, "?lang=es")
        wait_t(b, 2)
        state = {"t": 2}
        step_times(b, state, 3)  # warm up
        memory = server_memory_mb(url)
        alone = step_times(b, state, args.steps)
        report = {"answers": [], "done": False}
        attacker = threading.Thread(target=attack, args=(url, report), daemon=True)
        attacker.start()
        attacked = step_times(b, state, while_alive=attacker)
        attacker.join()
        a.evaluate("""() => { for (const m of Bokeh.documents[0].all_models)
                                if (m.data && m.data.end === 32 && 'value' in m.data) m.data.value = 30000; }""")
        forged = step_times(b, state, args.steps)
        before_clicks = step_times(b, state, args.steps)
        with RawSession(url, "lang=es", timeout=600) as c:
            c.ready()
            clicked, sent = while_running(clicks, [(c,)], b, state, args.steps)
        sessions = [RawSession(url, "lang=es", timeout=600).__enter__() for _ in range(3)]
        opened = [open_every_section(s) for s in sessions]
        for s in sessions:
            s.ready()
        settling = settled(b, state, alone)
        before_floods = step_times(b, state, args.steps)  # three sessions open, idle
        flooded, rounds = while_running(floods, list(zip(sessions, opened)), b, state, args.steps)
        for s in sessions:
            s.close()
        grown = server_memory_mb(url) - memory
    print(f"Reader B's steps under `build.py dev` (click to the new position on B's page), nthreads={args.nthreads}.")
    print("Each ratio: the phase's p95 over the p95 of B alone just before it (the machine's load drifts).\n")
    print("| while | steps | median | p95 | max | p95 / B alone before |\n|---|---|---|---|---|---|")
    print(line("B alone", alone, alone))
    print(line(f"a hostile session attacks ({report['pairs']:,} attributes of its models)", attacked, alone))
    print(line("reader A forges the batch size to 30,000", forged, alone))
    print(line("B alone, before the clicks", before_clicks, before_clicks))
    print(line(f"one session sends 2,000 valid clicks a message ({sent[0]} messages)", clicked, before_clicks))
    print(line(f"B alone, three sessions open, idle (settled in {settling:.0f} s)", before_floods, before_floods))
    print(line(f"three sessions flood valid values ({sum(rounds)} rounds)", flooded, before_floods))
    print(f"\nserver memory: {memory:.0f} MB before, {memory + grown:.0f} MB after ({grown:+.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
