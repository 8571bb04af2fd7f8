"""Benchmark: what a hostile reader costs another reader under Panel's server (app/intake.py).

    python -m tests.bench_forged [--steps 20]

Under `build.py dev`, reader B steps in headless Chromium (a click on Avanzar to the new position
on the page, timed in the page), first alone, then while a hostile session attacks (tests/
test_forged_browser.py's attack: hostile values for every attribute of every model, 1 MB strings,
events to every model), then while reader A forges the batch size to 30,000 in its own page (the
report of issue 17). Prints B's step times (median and max) in each phase and the server's memory
before and after.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
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


def line(name: str, times: list[float]) -> str:
    return f"| {name} | {len(times)} | {statistics.median(times):.0f} ms | {max(times):.0f} ms |"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20, help="B's steps alone and during the forged size")
    args = parser.parse_args(argv)
    from tests.browser import chromium, open_all_sections, open_app, wait_t
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
        grown = server_memory_mb(url) - memory
    print("Reader B's steps under `build.py dev` (click to the new position on B's page):\n")
    print("| while | steps | median | max |\n|---|---|---|---|")
    print(line("B alone", alone))
    print(line(f"a hostile session attacks ({report['pairs']:,} attributes of its models)", attacked))
    print(line("reader A forges the batch size to 30,000", forged))
    print(f"\nserver memory: {memory:.0f} MB before, {memory + grown:.0f} MB after ({grown:+.0f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
