"""Stand-ins for the two modules only Pyodide has, `js` and `pyodide`, so that panel.io.pyodide
imports in CPython and app/wasm.py's calls into Panel run here as in the page's Web Worker.

They do what the worker's bridge needs and no more: `js` has no `document` (a Web Worker has
none, so Panel takes its worker path), JSON goes through Python's json, and a JavaScript object
(JsObject) converts to Python with to_py() as a Pyodide JsProxy does.

    with pyodide_stand_ins():
        from app import wasm
        ...

Importing panel.io.pyodide changes process-wide settings (Bokeh's resources mode, Panel's async
executor, Bokeh's simple ids) and app.wasm.start freezes the garbage collector: the context
manager puts all of that back, and removes the stand-ins and panel.io.pyodide from sys.modules.
"""

from __future__ import annotations

import contextlib
import copy
import gc
import json
import os
import sys
from types import ModuleType, SimpleNamespace


class JsObject:
    """A JavaScript object as Python sees it in Pyodide (a JsProxy): to_py() converts it."""

    def __init__(self, value):
        self.value = value

    def to_py(self, default_converter=None):
        return copy.deepcopy(self.value)


def to_js(obj, **kwargs):
    """Python -> JavaScript: objects stay as they are; bytes become a typed array with its buffer."""
    return SimpleNamespace(buffer=bytes(obj)) if isinstance(obj, (bytes, bytearray, memoryview)) else obj


def js_module() -> ModuleType:
    js = ModuleType("js")
    js.JSON = SimpleNamespace(parse=json.loads, stringify=json.dumps)
    js.XMLHttpRequest = None  # imported by panel.io.pyodide, not called by the worker bridge
    js.Map = SimpleNamespace(new=dict)
    js.Object = SimpleNamespace(entries=lambda obj: list(obj.items()))
    return js


def pyodide_modules() -> dict[str, ModuleType]:
    pyodide, ffi, code = ModuleType("pyodide"), ModuleType("pyodide.ffi"), ModuleType("pyodide.code")
    ffi.to_js = to_js
    ffi.jsnull = object()
    ffi.create_proxy = lambda f: f
    code.run_js = lambda source: lambda entries: dict(entries)  # Panel's only run_js: a dict converter
    pyodide.ffi, pyodide.code = ffi, code
    # Panel tells Pyodide by this name (state._is_pyodide); there, with one document per page, its
    # state.curdoc falls back to Bokeh's current document outside the task that made it.
    return {"pyodide": pyodide, "pyodide.ffi": ffi, "pyodide.code": code, "_pyodide": ModuleType("_pyodide")}


@contextlib.contextmanager
def pyodide_stand_ins():
    import param
    from bokeh.settings import settings as bokeh_settings
    from panel.io import resources
    from panel.io.state import state

    saved = (dict(os.environ), resources.RESOURCE_MODE, param.parameterized.async_executor)
    added = {"js": js_module(), **pyodide_modules()}
    sys.modules.update(added)
    try:
        yield
    finally:
        for name in [*added, "panel.io.pyodide"]:
            sys.modules.pop(name, None)
        vars(sys.modules["panel.io"]).pop("pyodide", None)
        os.environ.clear()
        os.environ.update(saved[0])
        resources.RESOURCE_MODE, param.parameterized.async_executor = saved[1:]
        bokeh_settings.simple_ids.unset_value()
        state.curdoc = None
        gc.unfreeze()
        gc.enable()
