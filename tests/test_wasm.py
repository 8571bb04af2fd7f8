"""app/wasm.py, the page's Python side, in CPython: one test per private Panel API it calls, so a
Panel upgrade that renames, re-signs or changes one of them fails here, by name.

panel.io.pyodide imports the modules only Pyodide has; tests/pyodide_stand_ins.py stands in for
them (a Web Worker without a DOM). Everything else is the real Panel and the real app.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re

import pytest

from buildsupport.lockfile import load_lock
from tests.fresh import in_fresh_loop
from tests.pyodide_stand_ins import JsObject, pyodide_stand_ins

# Each private Panel (or Bokeh) call app/wasm.py makes, and the arguments it passes: they must
# still bind to the function's signature.
CALLS = {
    "panel.io.pyodide:init_doc": ((), {}),
    "panel.io.pyodide:write_doc": ((), {}),
    "panel.io.pyodide:_link_docs_worker": (("doc", "send_patch"), {"setter": "js"}),
    "panel.io.pyodide:_convert_json_patch": (("patch",), {}),
    "bokeh.document:Document.apply_json_patch": (("doc", "patch"), {"setter": "js"}),
    "panel.io.document:MockSessionContext": ((), {"document": "doc"}),
    "panel.io.state:set_curdoc": (("doc",), {}),
    "panel.io.state:state._on_load": ((None,), {}),
    "panel.io.resources:bundle_resources": (("roots", "resources"), {}),
    "panel.io.resources:Resources": ((), {"mode": "cdn"}),
}


@pytest.fixture(scope="module")
def wasm():
    with pyodide_stand_ins():
        from app import wasm

        wasm.import_panel()
        yield wasm


@pytest.fixture(scope="module")
def page(wasm):
    """The app started for ?lang=en&t=5, as the worker starts it."""
    from panel.io.state import state

    started = in_fresh_loop(wasm.start("?lang=en&t=5"))
    docs = [json.loads(s) for s in started]
    return {"docs": docs, "doc": state.curdoc, "sent": []}


@pytest.fixture(scope="module")
def linked(wasm, page):
    """The page after "rendered": linked, the patches sent to the page kept in page["sent"]."""
    wasm.link(lambda patch, buffers, msg_id: page["sent"].append(patch))
    return page


def resolve(target: str):
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("target", sorted(CALLS))
def test_private_api_exists_with_the_signature_wasm_uses(wasm, target):
    args, kwargs = CALLS[target]
    inspect.signature(resolve(target)).bind(*args, **kwargs)  # TypeError if the call no longer fits


def test_start_inits_a_document_and_writes_its_json(wasm, page):
    """init_doc + create_app(query).servable() + write_doc: the JSON BokehJS embeds."""
    docs_json, render_items, root_ids = page["docs"]
    ((docid, doc),) = docs_json.items()
    assert render_items[0]["docid"] == docid and list(render_items[0]["roots"]) == root_ids
    assert [r["id"] for r in doc["roots"]] == root_ids == [m.id for m in page["doc"].roots]
    assert '"Step"' in json.dumps(doc)  # English, as the query asks
    assert page["doc"].callbacks.hold_value == "combine"  # init_doc holds events until the page links


def test_link_releases_the_document(linked):
    assert linked["doc"].callbacks.hold_value is None


def bokeh_models(doc, kind: str) -> list:
    return [m for m in doc.models if type(m).__name__ == kind]


def test_page_click_reaches_the_app_and_its_redraw_reaches_the_page(wasm, linked):
    """_convert_json_patch + apply_json_patch in, _link_docs_worker out."""
    step = next(b for b in bokeh_models(linked["doc"], "Button") if b.label == "Step")
    linked["sent"].clear()
    click = {
        "kind": "MessageSent",
        "msg_type": "bokeh_event",
        "msg_data": {
            "type": "event",
            "name": "button_click",
            "values": {"type": "map", "entries": [["model", {"id": step.id}]]},
        },
    }
    wasm.apply_patch(JsObject({"events": [click]}))
    sent = json.dumps(linked["sent"])
    assert "t = 6 / 64" in sent, sent[:500]


def test_page_changes_are_applied_and_not_sent_back(wasm, linked):
    """apply_json_patch(setter="js") and _link_docs_worker(setter="js"): no echo to the page."""
    seed = next(s for s in bokeh_models(linked["doc"], "Spinner") if s.value == 0)  # Ajustes avanzados
    linked["sent"].clear()
    wasm.apply_patch(
        JsObject({"events": [{"kind": "ModelChanged", "model": {"id": seed.id}, "attr": "value", "new": 7}]})
    )
    assert seed.value == 7
    assert seed.id not in json.dumps(linked["sent"])


def test_prerender_builds_the_view_in_a_server_like_document(wasm):
    """MockSessionContext, set_curdoc, state._on_load, bundle_resources, Resources(mode='cdn')."""
    from app.figure.snapshot import render

    view, js, css = wasm.prerender("?lang=pt")
    assert "Avançar" in render(view)
    scripts = re.findall(r'<script[^>]*\bsrc="([^"]+)"', js)
    assert any(re.search(r"/bokeh-\d+\.\d+\.\d+\.min\.js$", u) for u in scripts), scripts
    assert any(u.endswith("/panel.min.js") for u in scripts), scripts


def test_pyodide_version_is_the_one_the_lock_records(wasm):
    """panel.io.convert.PYODIDE_VERSION: the site ships the Pyodide Panel pins."""
    assert wasm.pyodide_version() == load_lock()["pyodide"]["version"]


def test_source_modules_lists_what_was_imported_from_source(wasm):
    listed = json.loads(wasm.source_modules(json.dumps(["email.mime.text"])))
    assert "email.mime.text" in listed and "sys" not in listed  # sys is built in: no .py
