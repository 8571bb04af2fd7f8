"""The linter and the formatter (ruff, configured in pyproject.toml) are clean on the whole
repository: the fast tier runs them, so CI does too."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def ruff(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("ruff") or pytest.skip("ruff is not installed: uv sync --extra test")
    return subprocess.run([exe, *args], cwd=ROOT, capture_output=True, text=True, timeout=120)


def test_ruff_check_is_clean():
    done = ruff("check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_leaves_every_file_as_it_is():
    done = ruff("format", "--no-cache", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_linter_sees_a_real_error(tmp_path):
    """The check above could pass by checking nothing: an unused import in a file of the
    repository's configuration is reported."""
    bad = ROOT / "tests" / f"_lint_probe_{tmp_path.name}.py"
    bad.write_text("import os\n", encoding="utf-8")
    try:
        done = ruff("check", "--no-cache", str(bad.relative_to(ROOT)))
    finally:
        bad.unlink()
    assert done.returncode == 1 and "F401" in done.stdout, done.stdout + sys.version
