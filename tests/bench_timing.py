"""Benchmark: the lesson's timing table as the page measures it in the browser (Pyodide).

    python -m tests.bench_timing          # needs dist/ (python build.py)

Serves dist/, opens the page in headless Chromium, runs "Tus milisegundos"
(the timing lab) and prints its table as the reader sees it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> int:
    from tests.browser import chromium, open_page, serve, wait_ready

    dist = ROOT / "dist"
    if not (dist / "index.html").is_file():
        print("dist/ is not built: run `python build.py` first", file=sys.stderr)
        return 2
    with serve(dist) as url, chromium() as browser:
        page, _ = open_page(browser, url + "index.html?lang=en&t=64", width=1200)
        wait_ready(page)
        page.get_by_text("Your milliseconds: the lesson's table, measured in your browser", exact=True).first.click()
        page.get_by_role("button", name="Measure in my browser", exact=True).click()
        page.locator("[data-testid=timing-rows]").wait_for(timeout=120_000)
        agent = page.evaluate("navigator.userAgent")
        table = page.locator("[data-testid=timing-table] table, [data-testid=timing-table]").first
        rows = table.locator("tr").all_inner_texts()
        print(
            f"Pyodide in headless Chromium ({agent.split(')')[0].split('(')[-1]}; "
            f"{page.evaluate('navigator.hardwareConcurrency')} cores)"
        )
        for r in rows:
            print("| " + " | ".join(c.strip() for c in r.split("\t")) + " |")
        print(page.locator("[data-testid=timing-rows]").inner_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
