"""axe-core, the accessibility checker, run in the page under test (tests/test_a11y_browser.py).

Its npm package is fetched once into the build's download cache (tests/npm_pins.py), checked against
the sha256 recorded here, and its axe.min.js injected into the page.

    violations(page)   -> every violation, of any impact, each as "rule: impact: help (n) targets"
"""

from __future__ import annotations

from tests.npm_pins import npm_file

AXE_VERSION = "4.14.1"
AXE_SHA256 = "e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745"  # axe-core-4.14.1.tgz


def axe_source() -> str:
    """axe.min.js of the pinned axe-core (tests/npm_pins.py); skips without npm."""
    return npm_file("axe-core", AXE_VERSION, AXE_SHA256, "package/axe.min.js").decode("utf-8")


def violations(page) -> list[str]:
    """Run axe-core on the whole page (open shadow roots included; WCAG A and AA rules and axe's
    best practices) and list every violation, whatever its impact (minor included)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    found = page.evaluate(
        """async () => {
      const result = await axe.run(document, {resultTypes: ['violations']});
      return result.violations.map((v) =>
        `${v.id}: ${v.impact}: ${v.help} (${v.nodes.length}) ` + v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join(' '));
    }"""
    )
    return found
