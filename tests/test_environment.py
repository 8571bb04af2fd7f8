"""The running environment is the locked one: pyproject.toml's `[tool.uv]` pins every package of the
resolved environment (buildsupport/pins.py writes them), and the venv the tests run in holds exactly
those, each at its pinned version. `.ci/run` runs this file first, so a machine that resolved
anything else stops before the suite."""

from __future__ import annotations

import re
import sys
import tomllib
from datetime import datetime
from functools import cache
from importlib.metadata import distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PROJECT = canonicalize_name(PYPROJECT["project"]["name"])
SEEDED = {"pip", "setuptools", "wheel"}  # what a venv may be created with: ignored unless pinned


@cache
def pins() -> dict[str, str]:
    """name -> version of every pin whose marker applies here."""
    out = {}
    for line in PYPROJECT["tool"]["uv"]["constraint-dependencies"]:
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", line
        if req.marker is None or req.marker.evaluate():
            name = canonicalize_name(req.name)
            assert name not in out, f"{name} is pinned twice where both apply"
            out[name] = spec.version
    return out


@cache
def installed() -> dict[str, str]:
    """name -> version of every distribution the running interpreter can import."""
    found: dict[str, str] = {}
    for dist in distributions():
        name = canonicalize_name(dist.metadata["Name"])
        found.setdefault(name, dist.version)  # the first on sys.path is the one imported
    return found


def test_every_installed_package_is_pinned_at_its_version():
    want, have = pins(), installed()
    ignored = {PROJECT} | (SEEDED - set(want))
    wrong = {n: (v, want.get(n, "not pinned")) for n, v in have.items() if n not in ignored and want.get(n) != v}
    assert wrong == {}, f"installed (version, pinned): {wrong}; run `uv sync --extra test` ({sys.prefix})"


def test_every_pin_that_applies_here_is_installed():
    missing = {n: v for n, v in pins().items() if n not in installed()}
    assert missing == {}, "pinned but not installed: run `uv sync --extra test`"


def test_the_project_requirements_are_among_the_pins():
    """Every direct dependency (every extra) is pinned, at a version its own requirement accepts."""
    project = PYPROJECT["project"]
    direct = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    pinned = pins()
    for line in direct:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate():
            name = canonicalize_name(req.name)
            assert name in pinned and req.specifier.contains(pinned[name], prereleases=True), (line, pinned.get(name))


def test_the_linter_is_pinned_exactly():
    """ruff's rules change between versions: the test extra names one version, and the pins agree."""
    (line,) = [r for r in PYPROJECT["project"]["optional-dependencies"]["test"] if re.match(r"ruff\b", r)]
    assert re.fullmatch(r"ruff==[0-9.]+", line), line
    assert pins()["ruff"] == line.split("==")[1]


def test_the_resolution_cannot_move():
    """No file published after a fixed date: the pinned versions' files are the ones resolved."""
    date = PYPROJECT["tool"]["uv"]["exclude-newer"]
    assert datetime.fromisoformat(date.replace("Z", "+00:00")).tzinfo is not None, date
