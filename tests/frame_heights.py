"""The explorable's height in a course page's frame at common widths, per language (every section
closed, after the first step: from then on the clock's plot is there): the table of docs/embedding.md
for hosts whose frame keeps a fixed height.

    python build.py && uv run --extra test python -m tests.frame_heights [--site dist]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.i18n import tr
from tests.browser import chromium, open_page, wait_t
from tests.hosting import course_page, explorable

WIDTHS = (320, 360, 390, 768, 1024, 1280)
CONTENT = "Math.ceil(document.getElementById('kv-main').getBoundingClientRect().bottom + window.scrollY)"
FRAME = "Math.round(document.querySelector('iframe.kv-explorable').getBoundingClientRect().height)"


def measure(site: Path) -> dict[int, dict[str, int]]:
    out: dict[int, dict[str, int]] = {}
    with chromium() as browser:
        for lang in ("es", "en", "pt"):
            with course_page(site, f"?lang={lang}&embed=1") as url:
                page, _ = open_page(browser, url, width=WIDTHS[0], height=800)
                frame = explorable(page)
                frame.wait_for_selector("body[data-ready='true']", timeout=120000)
                frame.get_by_role("button", name=tr(lang, "step"), exact=True).click()
                wait_t(frame, 3)
                for width in WIDTHS:
                    page.set_viewport_size({"width": width, "height": 800})
                    page.wait_for_function(f"document.documentElement.clientWidth === {width}")
                    # settled: the host's script has fitted the frame to the content at this width
                    while True:
                        height = frame.evaluate(CONTENT)
                        try:
                            page.wait_for_function(f"(h) => Math.abs({FRAME} - h) <= 1", arg=height, timeout=5000)
                        except Exception:
                            continue
                        if frame.evaluate(CONTENT) == height:
                            break
                    out.setdefault(width, {})[lang] = height
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=Path("dist"))
    heights = measure(parser.parse_args().site)
    print("| course page width | " + " | ".join(f"{w} px" for w in WIDTHS) + " |")
    print("|---" * (len(WIDTHS) + 1) + "|")
    print(
        "| content height | "
        + " | ".join(" / ".join(f"{heights[w][lang]:,}" for lang in ("es", "en", "pt")) for w in WIDTHS)
        + " |"
    )


if __name__ == "__main__":
    main()
