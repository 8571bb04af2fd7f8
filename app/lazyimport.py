"""Modules the page does not import at start-up, fetched the first time something imports them.

The build leaves them out of the wheels and the standard library and packs them in *-lazy.zip
archives, with an index (module -> archive, path, is a package); see buildsupport/wheels.py.
This finder, last on sys.meta_path, fetches an archive once, checks its sha256, extracts it under
its root folder and imports the module from there. A download that fails or does not match its
hash is an ImportError naming the URL: the import fails as if the module were absent.

The fetch function is given (the page: a synchronous XMLHttpRequest, app/wasm.py), so the finder
runs in plain CPython too.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.util
import io
import json
import os
import sys
import time
import zipfile
from collections.abc import Callable

Fetch = Callable[[str], bytes]  # url -> bytes; raises OSError on failure
OnLoaded = Callable[[str, float, str], None]  # (url, milliseconds, module that asked)


class LazyFinder(importlib.abc.MetaPathFinder):
    def __init__(self, index: dict, base: str, fetch: Fetch, on_loaded: OnLoaded | None = None):
        self.archives = index["archives"]  # [{"url", "sha256", "root"}]
        self.modules = index["modules"]  # name -> [archive number, path in it, is a package]
        self.base = base
        self.fetch = fetch
        self.on_loaded = on_loaded
        self.extracted: set[int] = set()

    def find_spec(self, name, path=None, target=None):
        hit = self.modules.get(name)
        if hit is None:
            return None
        n, rel, is_pkg = hit
        if n not in self.extracted:
            self._extract(n, name)
        full = os.path.join(self.archives[n]["root"], rel)
        return importlib.util.spec_from_file_location(
            name, full, submodule_search_locations=[os.path.dirname(full)] if is_pkg else None
        )

    def _extract(self, n: int, name: str) -> None:
        archive = self.archives[n]
        url = self.base + archive["url"]
        start = time.perf_counter()
        try:
            data = self.fetch(url)
        except OSError as e:
            raise ImportError(f"{name}: fetching {url} failed ({e})", name=name) from e
        if hashlib.sha256(data).hexdigest() != archive["sha256"]:
            raise ImportError(f"{name}: {url} does not match its sha256", name=name)
        os.makedirs(archive["root"], exist_ok=True)
        zipfile.ZipFile(io.BytesIO(data)).extractall(archive["root"])
        importlib.invalidate_caches()
        self.extracted.add(n)
        if self.on_loaded is not None:
            self.on_loaded(url, (time.perf_counter() - start) * 1000, name)


def install(index_json: str, base: str, fetch: Fetch, on_loaded: OnLoaded | None = None) -> LazyFinder:
    """Put a finder for the index (lazy-modules.json's text) last on sys.meta_path."""
    finder = LazyFinder(json.loads(index_json), base, fetch, on_loaded)
    sys.meta_path.append(finder)
    return finder
