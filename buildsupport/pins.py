"""The locked environment: pyproject.toml's `[tool.uv]` table pins every package of the resolved
environment (every extra) at one version, and takes no file published after a fixed date, so that
`uv run --extra test ...` installs the same packages on every machine. uv.lock stays out of the
repository (it records the package index's address); this table is what the repository keeps of it.

    uv run python -m buildsupport.pins                        # re-resolve as of now and rewrite the pins
    uv run python -m buildsupport.pins --exclude-newer DATE   # ... as of DATE (RFC 3339, UTC)

then `uv sync --extra test`, the fast tier, and commit pyproject.toml. It leaves the project's own
requirements as they are: a direct dependency pinned there (ruff, whose rules change between
versions) moves only when that pin is edited. tests/test_environment.py checks the running
environment against the table.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
TABLE = re.compile(r"^\[tool\.uv\]\n(?:(?!\[).*\n|\n)*", re.M)  # the table, up to the next one
COMMENT = (
    "# The resolved environment: every package (all extras) at one version, no file published after\n"
    "# exclude-newer. Written by `uv run python -m buildsupport.pins`; tests/test_environment.py checks\n"
    "# the running environment against it.\n"
)


def uv() -> str:
    """The uv that runs this (`uv run` names itself in $UV), else the one on PATH."""
    found = os.environ.get("UV") or shutil.which("uv")
    if not found:
        sys.exit("uv is not installed: pip install uv")
    return found


def table(exclude_newer: str, pins: list[str]) -> str:
    """The `[tool.uv]` table's text."""
    lines = "".join(f'    "{pin}",\n' for pin in pins)
    body = f"constraint-dependencies = [\n{lines}]\n" if pins else ""
    return f'[tool.uv]\n{COMMENT}exclude-newer = "{exclude_newer}"\n{body}'


def with_table(text: str, new: str) -> str:
    """pyproject.toml's text with its `[tool.uv]` table replaced by `new` (added at the end if none)."""
    if TABLE.search(text):
        return TABLE.sub(lambda _m: new + "\n", text, count=1).rstrip("\n") + "\n"
    return text.rstrip("\n") + "\n\n" + new


def resolve(exclude_newer: str) -> list[str]:
    """Every package of the environment, resolved afresh as of `exclude_newer` with the project's own
    requirements only: name==version, with the marker of where it applies."""
    subprocess.run([uv(), "lock", "--upgrade"], cwd=ROOT, check=True)
    out = subprocess.run(
        [uv(), "export", "--frozen", "--all-extras", "--no-hashes", "--no-emit-project", "--no-header"]
        + ["--no-annotate"],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    pins = [line.strip() for line in out.splitlines() if line.strip() and not line.lstrip().startswith(("#", "-"))]
    bad = [p for p in pins if "==" not in p or "://" in p]
    if bad:
        sys.exit(f"uv export gave what is not a pinned version: {bad}")
    return pins


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Re-resolve the environment and rewrite pyproject.toml's pins.")
    ap.add_argument(
        "--exclude-newer",
        default=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        metavar="DATE",
        help="take no file published after DATE (RFC 3339; default: now)",
    )
    args = ap.parse_args(argv)
    original = PYPROJECT.read_text(encoding="utf-8")
    PYPROJECT.write_text(with_table(original, table(args.exclude_newer, [])), encoding="utf-8")
    try:
        pins = resolve(args.exclude_newer)
    except BaseException:
        PYPROJECT.write_text(original, encoding="utf-8")
        raise
    PYPROJECT.write_text(with_table(original, table(args.exclude_newer, pins)), encoding="utf-8")
    print(f"pinned {len(pins)} packages as of {args.exclude_newer}: now `uv sync --extra test`", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
