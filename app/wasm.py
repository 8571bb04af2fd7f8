"""The page's Python side, in one file: what static/worker.js calls in the reader's browser, what
the build's trace runs in Pyodide under Node.js (so the trace records the imports of this very
code), and the build-time prerender's helper.

In the Web Worker, once the app archive is on sys.path:

    wasm = pyodide.pyimport("app.wasm")
    wasm.install_lazy_importer(index_json, base_url, on_loaded)
    wasm.import_panel()
    docs_json, render_items, root_ids = await wasm.start(query)   # the page embeds these
                                       # (= wasm.build_app(query), then await wasm.document())
    wasm.link(send_patch)              # once the page has rendered the document
    wasm.apply_patch(patch)            # each change the reader makes on the page
    wasm.move_to(query)                # before the page has the document: to the reader's latest place
                                       # (then await wasm.document() again)
    wasm.replay(commands_json)         # the reader's clicks on the preview the document was not built with
    wasm.source_modules(names_json)    # diagnostics for the tests

Every private Panel API the site relies on is called here and nowhere else, and
tests/test_wasm.py pins each one: a Panel upgrade that changes one fails there, by name, and
this file is the one to adapt. Panel is imported inside the functions: the worker imports it
with the collector paused (import_panel), the prerender only after setting PANEL_CDN_ROOT.
"""

from __future__ import annotations

import gc
import importlib
import json
import sys

# Changes that came from the page carry this setter, so they are not sent back to it.
SETTER = "js"


def install_lazy_importer(index_json: str, base: str, on_loaded=None):
    """Fetch the modules the build left out of the start-up download on first import (app/lazyimport.py)."""
    from .lazyimport import install

    return install(index_json, base, fetch_sync, on_loaded)


def fetch_sync(url: str) -> bytes:
    """GET with a synchronous XMLHttpRequest (allowed in a Web Worker): an import cannot await."""
    from js import Uint8Array, XMLHttpRequest

    xhr = XMLHttpRequest.new()
    xhr.open("GET", url, False)
    xhr.responseType = "arraybuffer"
    try:
        xhr.send()
    except Exception as e:  # a network error is a JavaScript exception
        raise OSError(f"{url}: {e}") from e
    if xhr.status != 200:
        raise OSError(f"{url}: HTTP {xhr.status}")
    return Uint8Array.new(xhr.response).to_bytes()


def import_panel() -> None:
    """Import Panel with the cyclic garbage collector paused: start-up allocates much and frees
    little, so collecting during it is wasted time; start() turns it back on at its end."""
    gc.disable()
    import panel  # noqa: F401
    import panel.io.pyodide  # noqa: F401


async def start(query: str) -> tuple[str, str, str]:
    """The app for the page's URL query in a fresh document, as (docs_json, render_items,
    root_ids): the JSON the page gives BokehJS to embed."""
    build_app(query)
    return await document()


_A11Y = None  # the app's keyboard and live region (build_app), which replay acts through
_SESSION = None  # the reader's Session (build_app), which move_to moves
_REPLAYED = 0


def build_app(query: str) -> None:
    """The app for the page's URL query, in a fresh document (the first half of start)."""
    from panel.io.pyodide import init_doc

    from .components.a11y import A11y
    from .main import create_app_and_session

    init_doc()
    app, session = create_app_and_session(query)
    app.servable()
    global _A11Y, _SESSION
    _A11Y = next(iter(app.select(A11y)), None) if hasattr(app, "select") else None
    _SESSION = session


def move_to(query: str) -> None:
    """The app, not yet on the page, moved to the mode and t of the query (the reader's latest place on
    the preview, static/loader/controls.js `go`): the document is then what build_app(query) makes, at
    the cost of the steps alone. A query without them, or a mode or t out of bounds, moves nothing."""
    from .state.settings import MODES, query_dict

    args = query_dict(query)
    mode, t = args.get("mode", "cache"), args.get("t", "")
    if _SESSION is None or mode not in MODES or not t.isdigit():
        return
    n_prompt, n_ctx = _SESSION.ex.n_prompt, _SESSION.n_ctx
    if n_prompt <= int(t) <= n_ctx:
        _SESSION.go_to(mode, int(t))


async def document() -> tuple[str, str, str]:
    """The document build_app made, serialized for BokehJS (the second half of start)."""
    from panel.io.pyodide import write_doc

    docs = await write_doc()
    gc.enable()
    gc.freeze()  # what start-up made stays: later collections skip it
    return docs


def link(send_patch) -> None:
    """From now on send each change the Python side makes to the page: send_patch(patch, buffers, msg_id)."""
    from panel.io.pyodide import _link_docs_worker
    from panel.io.state import state

    _link_docs_worker(state.curdoc, send_patch, setter=SETTER)


def apply_patch(patch) -> None:
    """Apply a change the reader made on the page (BokehJS's JSON patch, a JavaScript object)."""
    from panel.io.pyodide import _convert_json_patch
    from panel.io.state import state

    from .intake import apply_patch as through_the_door

    through_the_door(state.curdoc, _convert_json_patch(patch), setter=SETTER, strict=True)


def replay(commands_json: str) -> None:
    """The reader's actions on the preview (static/loader/controls.js) that the document was not built with, in
    order, as their keys would give them ('step', 'toggle', 'reset', 'back', 'play'): the live app continues
    where the reader is, the step past the window ends in the model's own IndexError."""
    global _REPLAYED
    for command in json.loads(commands_json):
        if _A11Y is not None and command in ("step", "toggle", "reset", "back", "play"):
            _REPLAYED += 1
            _A11Y.command = f"{command}:replay:{_REPLAYED}"


def source_modules(names_json: str) -> str:
    """Import the named modules, then list (JSON) every module imported from source rather than
    from the bytecode the build compiled: the tests' view of what start-up really imports."""
    for name in json.loads(names_json):
        importlib.import_module(name)
    return json.dumps(
        sorted(
            n
            for n, m in list(sys.modules.items())
            if (getattr(getattr(m, "__spec__", None), "origin", None) or "").endswith(".py")
        )
    )


def pyodide_version() -> str:
    """The Pyodide version Panel pins (and tests with): the one the site ships."""
    from panel.io.convert import PYODIDE_VERSION

    return PYODIDE_VERSION.lstrip("v")


def prerender(query: str):
    """At build time, in CPython: the app's view in a document made as Panel's server makes it
    (on-load callbacks run), and the <script> and <link> tags of the resources its models need.
    Returns (view, js_html, css_html)."""
    from bokeh.document import Document
    from panel.io.document import MockSessionContext
    from panel.io.resources import Resources, bundle_resources
    from panel.io.state import set_curdoc, state

    from .main import create_view

    doc = Document()
    doc._session_context = lambda: MockSessionContext(document=doc)
    with set_curdoc(doc):
        view = create_view(query)
        view.layout.server_doc(doc)
        state._on_load(None)
        js, css = bundle_resources(doc.roots, Resources(mode="cdn"))
    return view, js, css
