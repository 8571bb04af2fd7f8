"""What the reader's code sandbox costs: its start time and the memory of its second Pyodide.

    uv run --extra test python -m tests.bench_sandbox [--rounds 5]

For the static site (the sandbox boots from the runtime files the page already downloaded) and
for Panel's server (`build.py dev`: the sandbox downloads its runtime itself): the time from
opening the challenge to a ready sandbox, and the resident memory of the page's renderer process
(where both workers live) before and after, from /proc (Chromium's process list through the
DevTools protocol). Medians of `--rounds` fresh browser contexts. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import statistics
import time

from tests.browser import chromium, open_card, open_page, wait_ready, wait_t
from tests.servers import panel_dev, static_site

QUIZ = "Comprueba tu intuición: cinco preguntas y un reto"


def renderer_rss_mb(browser) -> float:
    """Resident memory of Chromium's renderer processes (one page open: its renderer), in MB."""
    cdp = browser.new_browser_cdp_session()
    try:
        info = cdp.send("SystemInfo.getProcessInfo")
    finally:
        cdp.detach()
    total = 0
    for proc in info["processInfo"]:
        if proc["type"] != "renderer":
            continue
        try:
            with open(f"/proc/{proc['id']}/status") as f:
                total += next(int(ln.split()[1]) for ln in f if ln.startswith("VmRSS:"))
        except (OSError, StopIteration):
            pass
    return total / 1024


def settle(page):
    """Collect the page's garbage and let it paint before reading the memory (the DevTools protocol
    collects the page's heap; each worker's own heap is left as it is)."""
    cdp = page.context.new_cdp_session(page)
    try:
        cdp.send("HeapProfiler.collectGarbage")
    finally:
        cdp.detach()
    page.evaluate("new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def one_round(browser, url: str) -> dict:
    page, _ = open_page(browser, url + "?lang=es")
    if url.endswith("index.html"):
        wait_ready(page)
    wait_t(page, 2)
    settle(page)
    before = renderer_rss_mb(browser)
    t0 = time.monotonic()
    open_card(page, QUIZ)
    page.wait_for_function("window.__kvSandboxHost && window.__kvSandboxHost.phase === 'ready'", timeout=120000)
    seconds = time.monotonic() - t0
    start_ms = page.evaluate("window.__kvSandboxHost.stats.lastStartMs")
    settle(page)
    after = renderer_rss_mb(browser)
    page.context.close()
    return {
        "open_to_ready_s": seconds,
        "worker_start_s": start_ms / 1000,
        "rss_before_mb": before,
        "rss_after_mb": after,
        "rss_delta_mb": after - before,
    }


def report(name: str, rounds: list[dict]) -> None:
    med = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    spread = {k: (min(r[k] for r in rounds), max(r[k] for r in rounds)) for k in rounds[0]}
    print(f"{name} (median of {len(rounds)}; min..max)")
    for k, label, unit in (
        ("open_to_ready_s", "open the challenge -> sandbox ready", "s"),
        ("worker_start_s", "sandbox worker start (host's own clock)", "s"),
        ("rss_before_mb", "renderer memory before", "MB"),
        ("rss_after_mb", "renderer memory with the sandbox", "MB"),
        ("rss_delta_mb", "memory of the sandbox", "MB"),
    ):
        lo, hi = spread[k]
        print(f"  {label:<42} {med[k]:8.2f} {unit}   ({lo:.2f}..{hi:.2f})")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args(argv)
    with chromium() as browser:
        for name, server in (("static site", static_site), ("panel serve (build.py dev)", panel_dev)):
            with server() as url:
                report(name, [one_round(browser, url) for _ in range(args.rounds)])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
