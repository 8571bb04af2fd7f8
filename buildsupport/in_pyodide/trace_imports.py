"""Run the page's start-up (app/wasm.py, the calls static/worker.js makes) and list every module
it imports, or tries to: the build ships those compiled and leaves the rest for first import.

In Pyodide under Node.js (run.js), with the app and the unpacked wheels on sys.path, once per
URL query the build prerenders. Imports that fail (a library catching ImportError) count too:
in the browser they would fetch a lazy archive for nothing.
"""

from __future__ import annotations

import asyncio
import json
import sys

NO_LAZY_MODULES = json.dumps({"archives": [], "modules": {}})


class Recorder:
    """A meta path finder that finds nothing and remembers every name asked for."""

    def __init__(self):
        self.names: set[str] = set()

    def find_spec(self, name, path=None, target=None):
        self.names.add(name)


def ignore(*args) -> None:
    """Stands in for the page's callbacks: nothing listens under Node.js."""


async def settle() -> None:
    """Let on-load callbacks, which run as tasks, finish (a periodic one would not: 10 s at most)."""
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    if pending:
        await asyncio.wait(pending, timeout=10)


async def trace(queries_json: str) -> str:
    """JSON list of the modules imported (or attempted) by the page's start-up for each query."""
    recorder = Recorder()
    sys.meta_path.insert(0, recorder)
    from app import wasm

    wasm.install_lazy_importer(NO_LAZY_MODULES, "", ignore)
    wasm.import_panel()
    for query in json.loads(queries_json):
        await wasm.start(query)
        wasm.link(ignore)
        await settle()
    return json.dumps(sorted(set(sys.modules) | recorder.names))
