"""Benchmark: batching and speculative decoding as the page measures them in the browser (Pyodide).

    python -m tests.bench_beyond                  # needs dist/ (python build.py)
    python -m tests.bench_beyond --dist DIR

Serves the static site, opens the page in headless Chromium, opens the two sections below the
figure, runs each one's measurement and prints its table as the reader sees it (and its sentences).
The same in CPython: `python -m model.bench_extras`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SECTIONS = (  # card title, run button, status, table, the sentences under it
    (
        "Many conversations at once: batching",
        "Measure the batch in my browser",
        "batch-status",
        "batch-table",
        "batch-explain",
    ),
    (
        "The draft and the check: speculative decoding",
        "Measure speculation in my browser",
        "speculative-status",
        "speculative-table",
        "speculative-explain",
    ),
)


def print_table(page, testid: str) -> None:
    for row in page.locator(f"[data-testid={testid}] tr").all_inner_texts():
        print("| " + " | ".join(c.strip() for c in row.split("\t")) + " |")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dist", type=Path, default=ROOT / "dist")
    args = ap.parse_args(argv)
    from tests.browser import chromium, open_card, open_page, serve, wait_ready

    if not (args.dist / "index.html").is_file():
        print(f"{args.dist} is not built: run `python build.py` first", file=sys.stderr)
        return 2
    with serve(args.dist) as url, chromium() as browser:
        page, _ = open_page(browser, url + "index.html?lang=en", width=1200)
        wait_ready(page)
        agent = page.evaluate("navigator.userAgent")
        print(
            f"Pyodide in headless Chromium ({agent.split(')')[0].split('(')[-1]}; "
            f"{page.evaluate('navigator.hardwareConcurrency')} cores)"
        )
        for title, button, status, table, explain in SECTIONS:
            open_card(page, title)
            page.get_by_role("button", name=button, exact=True).click()
            page.locator(f"[data-testid={status}][data-run='1'][data-state=done]").wait_for(timeout=600_000)
            print(f"\n{title}")
            print_table(page, table)
            extra = page.locator("[data-testid=speculative-c]")
            if status == "speculative-status" and extra.count():
                print(extra.inner_text())
            print(page.locator(f"[data-testid={explain}]").inner_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
