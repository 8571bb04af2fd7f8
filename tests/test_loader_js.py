"""The page loader's JavaScript under Node.js's own test runner (tests/js/loader/*.test.mjs): its
modules (static/loader/) imported as modules, its classic scripts (static/boot.js, diff.js, keys.js)
required; no browser, no DOM but a small stand-in."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests" / "js" / "loader"
NODE = shutil.which("node")


@pytest.mark.skipif(NODE is None, reason="Node.js not found (apt-get install nodejs)")
def test_the_loader_passes_its_node_tests():
    files = sorted(TESTS.glob("*.test.mjs"))
    assert len(files) >= 6, files
    done = subprocess.run(
        [NODE, "--test", *(str(f.relative_to(ROOT)) for f in files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
