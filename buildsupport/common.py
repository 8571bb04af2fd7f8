"""What every build step shares: the project's paths, the pinned places, the error the build
stops with, content hashes and atomic writes (a build that stops half-way leaves no half file)."""

from __future__ import annotations

import hashlib
import os
import re
import secrets
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STATIC = ROOT / "static"
LOCK_PATH = ROOT / "build.lock.json"
DEFAULT_DIST = ROOT / "dist"
DEFAULT_CACHE = Path(os.environ.get("KV_EXPLORABLE_CACHE") or Path.home() / ".cache" / "kv-explorable")
PYODIDE_CDN = "https://cdn.jsdelivr.net/pyodide/v{version}/full/"
# Panel builds stylesheet URLs from PANEL_CDN_ROOT; at build time it points here and every
# occurrence is rewritten to the site's own relative path.
SENTINEL_CDN = "https://panel-cdn.invalid/"
# Bumped whenever the slimming/compiling recipe changes (invalidates derived cache entries).
RECIPE = "11"
PYTHON_IN_PYODIDE = "python3.13"


class BuildError(RuntimeError):
    """A file is missing or does not match its recorded hash; the message says how to fix it."""


def log(msg: str) -> None:
    print(f"[build] {msg}", flush=True)


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def short_key(*parts: str, n: int = 16) -> str:
    """A cache key from the inputs that decide a derived file (cached by what made it)."""
    return sha256_bytes("|".join(parts).encode())[:n]


def dir_digest(tree: Path) -> str:
    """One hash of a folder's file names and contents (the app archive is cached by it)."""
    h = hashlib.sha256()
    for p in sorted(tree.rglob("*")):
        if p.is_file():
            h.update(p.relative_to(tree).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def canonical(name: str) -> str:
    """A distribution's normalized name (PEP 503), the key of Pyodide's lock file."""
    return re.sub(r"[-_.]+", "-", name).lower()


def hashed_name(name: str, data: bytes, n: int = 10) -> str:
    """style.css -> style.0123456789.css: the name changes with the content, so it can be cached forever."""
    stem, dot, ext = name.partition(".")
    return f"{stem}.{sha256_bytes(data)[:n]}.{ext}" if dot else f"{name}.{sha256_bytes(data)[:n]}"


def part_path(path: Path) -> Path:
    """Where to write `path` before renaming it into place: beside it, named for this process and call, so
    two builds sharing a cache (tests in parallel, a benchmark beside a build) never write one file."""
    return path.with_name(f"{path.name}.{os.getpid()}-{secrets.token_hex(4)}.part")


def write_atomic(path: Path, data: bytes) -> Path:
    """Write next to the target, then rename: a cache entry is either whole or absent."""
    path.parent.mkdir(parents=True, exist_ok=True)
    part = part_path(path)
    part.write_bytes(data)
    os.replace(part, path)
    return path


# Recommended Content-Security-Policy, found with headless Chromium (tests/test_site_e2e.py::
# test_page_works_under_csp; docs/embedding.md has the evidence):
#   'wasm-unsafe-eval'  Pyodide compiles WebAssembly (worker)
#   'unsafe-eval'       Panel's ReactiveHTML (pn.FlexBox, the app's own components) builds its
#                       scripts with new Function(); Pyodide's run_js (used by Panel) evaluates JS
#   style 'unsafe-inline'  Bokeh and Panel inject <style> elements into their shadow roots
#   worker-src blob:    the reader's code sandbox: a blob: worker under a policy of its own
#                       (app/sandbox/host.js)
CSP = (
    "default-src 'self'; script-src 'self' 'wasm-unsafe-eval' 'unsafe-eval'; "
    "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
    "connect-src 'self'; worker-src 'self' blob:; object-src 'none'; base-uri 'self'; form-action 'none'"
)
