"""The other checkpoints (shared K/V heads, the speculative draft), loaded when the reader asks.

The lesson's checkpoint ships with the app; these do not (the page starts without them). Under
`panel serve` they are files beside the model. On the static site the build ships each as its own
hashed file and writes their manifest into the app archive (checkpoints.json in its app/: name ->
file -> url, sha256); the first time a reader picks one, the worker fetches it (a synchronous request:
the app's interpreter runs in a worker), checks its sha256 and writes it where the model looks.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from model import MiniGPT
from model.checkpoint import CHECKPOINTS_DIR, VARIANTS, load_metrics

HERE = Path(__file__).resolve().parent
MANIFEST = HERE.parent / "checkpoints.json"  # in the app archive's app/, written by the build
_loaded: dict[str, MiniGPT] = {}


class FetchError(RuntimeError):
    """A checkpoint file could not be fetched or did not match its sha256."""


def read_only(gpt: MiniGPT) -> MiniGPT:
    """Shared by every session under `panel serve`: nobody writes to it."""
    for a in gpt.params.values():
        a.flags.writeable = False
    return gpt


def fetch_bytes(url: str) -> bytes:
    """GET url from the worker, synchronously (Pyodide only)."""
    from js import URL as JsURL
    from js import Uint8Array, XMLHttpRequest, location

    full = JsURL.new(url, location.href).href
    xhr = XMLHttpRequest.new()
    xhr.open("GET", full, False)
    xhr.responseType = "arraybuffer"
    xhr.send()
    if xhr.status != 200:
        raise FetchError(f"{full}: HTTP {xhr.status}")
    return Uint8Array.new(xhr.response).to_bytes()


def ensure_files(name: str, fetch=fetch_bytes, manifest: Path = MANIFEST, only=None) -> None:
    """Put the checkpoint's files (or `only` those) where the model looks, fetching the ones missing
    (static site)."""
    if not manifest.is_file():
        return  # panel serve, tests: the files are in the repository
    entry = json.loads(manifest.read_text(encoding="utf-8")).get(name, {})
    folder = CHECKPOINTS_DIR / name
    for filename, where in entry.items():
        if only is not None and filename not in only:
            continue
        target = folder / filename
        if target.is_file():
            continue
        data = fetch(where["url"])
        if hashlib.sha256(data).hexdigest() != where["sha256"]:
            raise FetchError(f"{where['url']}: content does not match its sha256")
        folder.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def load(name: str | None) -> MiniGPT:
    """The lesson's model (None) or a variant by name (model.checkpoint.VARIANTS), once per process."""
    key = name or "lesson"
    if key not in _loaded:
        if name is not None:
            if name not in VARIANTS:
                raise KeyError(f"no checkpoint {name!r}; there are {sorted(VARIANTS)}")
            if sys.platform == "emscripten":
                ensure_files(name)
        _loaded[key] = read_only(MiniGPT.load(name))
    return _loaded[key]


def load_every() -> None:
    """Every checkpoint now: a server that all readers share loads them before its first reader,
    not inside one reader's switch while the others wait."""
    for name in (None, *VARIANTS):
        load(name)


def metrics(name: str | None) -> dict:
    """What training measured (held-out loss, ...), from the checkpoint's metrics.json."""
    if name is None:
        return load_metrics()
    if sys.platform == "emscripten":
        ensure_files(name, only=("metrics.json",))  # a few hundred bytes, not the weights
    return load_metrics(CHECKPOINTS_DIR / name / "metrics.json")
