"""The project installs as a package (`pip install .`): a course notebook gets the model and its
checkpoint with `from model import MiniGPT; MiniGPT.load()`, outside the repository.

Offline: the wheel is built with the build backend already in the test environment (hatchling,
no build isolation) and installed with pip from the file alone."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHECK = (
    "import json, model; from model import MiniGPT; gpt = MiniGPT.load(); "
    "print(json.dumps([model.__file__, gpt.n_params(), gpt.tokenizer.encode('La Nela')]))"
)


def pip(*args: str, cwd: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "pip", "--disable-pip-version-check", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    pip("wheel", "--no-deps", "--no-build-isolation", "--no-index", "-w", str(out), str(ROOT), cwd=out)
    (whl,) = out.glob("kv_cache_explorable-*.whl")
    return whl


def test_wheel_holds_the_model_its_checkpoint_and_the_app(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "model/__init__.py",
        "model/gpt.py",
        "model/weights/minigpt.npz",
        "model/weights/tokenizer.json",
        "model/weights/metrics.json",
        "app/main.py",
        "app/wasm.py",
        "app/i18n/__init__.py",
        "app/i18n/po.py",
        "app/i18n/es.po",
        "app/i18n/en.po",
        "app/i18n/pt.po",
    } <= names  # the texts: a catalog per language
    assert not [n for n in names if n.startswith(("tests/", "buildsupport/", "static/")) or n == "build.py"]
    assert not [n for n in names if "__pycache__" in n]


def test_installed_copy_loads_the_checkpoint_outside_the_repository(wheel, tmp_path):
    site = tmp_path / "site"
    pip("install", "--no-deps", "--no-index", "--target", str(site), str(wheel), cwd=tmp_path)
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = subprocess.run(
        [sys.executable, "-P", "-c", CHECK], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    where, n_params, ids = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Path(where).is_relative_to(site) and not Path(where).is_relative_to(ROOT)
    assert n_params == 136448 and len(ids) == 2
