"""The test tiers (tests/conftest.py): what the running test is marked, and the check the helpers
that start a browser, a build or a server make, so that a test cannot start one unmarked (and
slow the fast tier, `pytest -m "not browser and not build"`, without anyone noticing)."""

from __future__ import annotations

CURRENT: set[str] | None = None  # the markers of the test running now (None: outside a test)


def require(marker: str, what: str) -> None:
    if CURRENT is not None and marker not in CURRENT:
        raise AssertionError(
            f"this test {what} but is not marked {marker!r}: use a fixture that marks it "
            f"(tests/conftest.py BROWSER_FIXTURES, BUILD_FIXTURES)"
        )
