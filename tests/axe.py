"""axe-core, the accessibility checker, run in the page under test (tests/test_a11y_browser.py).

Its npm package is fetched once with `npm pack` into the build's download cache (never into the
repository), checked against the sha256 recorded here, and its axe.min.js injected into the page.

    violations(page)   -> the serious and critical violations, each as "rule: help (n) targets"
"""

from __future__ import annotations

import functools
import hashlib
import shutil
import subprocess
import tarfile

import pytest

AXE_VERSION = "4.14.1"
AXE_SHA256 = "e6b0ce02b84d892e2e33e403485e7f3d6c29e2be6df65daf44d89ba564139745"  # axe-core-4.14.1.tgz
IMPACTS = ("serious", "critical")


@functools.cache
def axe_source() -> str:
    """axe.min.js of the pinned axe-core, from the cache (npm pack on the first run); skips without npm."""
    import build

    folder = build.DEFAULT_CACHE / "npm"
    tarball = folder / f"axe-core-{AXE_VERSION}.tgz"
    if not tarball.is_file():
        if shutil.which("npm") is None:
            pytest.skip("npm not found: it fetches axe-core (apt-get install npm)")
        folder.mkdir(parents=True, exist_ok=True)
        done = subprocess.run(
            ["npm", "pack", f"axe-core@{AXE_VERSION}", "--silent"], cwd=folder, capture_output=True, text=True
        )
        if done.returncode != 0 or not tarball.is_file():
            pytest.skip(f"npm pack axe-core@{AXE_VERSION} failed: {done.stderr.strip()[-300:]}")
    digest = hashlib.sha256(tarball.read_bytes()).hexdigest()
    assert digest == AXE_SHA256, f"{tarball} is not axe-core {AXE_VERSION} (sha256 {digest}): delete it"
    with tarfile.open(tarball) as tf:
        return tf.extractfile("package/axe.min.js").read().decode("utf-8")


def violations(page, impacts=IMPACTS) -> list[str]:
    """Run axe-core on the whole page (open shadow roots included; WCAG A and AA rules and axe's
    best practices) and list the violations of the given impacts."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(content=axe_source())
    found = page.evaluate(
        """async (impacts) => {
      const result = await axe.run(document, {resultTypes: ['violations']});
      return result.violations.filter((v) => impacts.includes(v.impact)).map((v) =>
        `${v.id}: ${v.help} (${v.nodes.length}) ` + v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join(' '));
    }""",
        list(impacts),
    )
    return found
