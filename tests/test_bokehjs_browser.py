"""bokeh-tables on demand (buildsupport/site.py ON_DEMAND_SCRIPTS, static/loader/staging.js runOnDemand): the static
site in headless Chromium never downloads or runs it, and a patch that brings a table into the live page
waits for it, the patches after it (and the reader's changes to Python) in their order."""

from __future__ import annotations

import pytest
from bokeh.core.serialization import Serializer
from bokeh.models import ColumnDataSource, DataTable, TableColumn

from tests.browser import chromium_missing, open_page, serve, wait_ready, wait_t

pytestmark = pytest.mark.skipif(chromium_missing() is not None, reason=str(chromium_missing()))

TABLES = "**/assets/js/bokeh-tables.*"


def table_json() -> dict:
    """A DataTable of three rows as Bokeh's Python serializes it into a patch, its ids made unlike the
    live document's."""
    source = ColumnDataSource(data={"pos": [1, 2, 3], "tok": ["uno", "dos", "tres"]})
    columns = [TableColumn(field="pos", title="pos"), TableColumn(field="tok", title="tok")]
    table = DataTable(source=source, columns=columns, width=300, height=120, reorderable=False)

    def renamed(v):
        if isinstance(v, dict):
            return {k: "kvt-" + x if k == "id" else renamed(x) for k, x in v.items()}
        return [renamed(x) for x in v] if isinstance(v, list) else v

    return renamed(Serializer(deferred=False).encode(table))


# Three patches as the worker sends them, one right after the other: the table appended to the live page's
# first root, a property of the table (which exists only once the first is applied), one of the root.
SEND = """([table, tag]) => {
  const doc = kv.worker.jsdoc, root = doc.roots()[0];
  const children = root.children.map((c) => ({ id: c.id })).concat([table]);
  const send = (events) => kv.worker.dispatchEvent(
    new MessageEvent("message", { data: { type: "patch", patch: { events }, buffers: [] } }));
  send([{ kind: "ModelChanged", model: { id: root.id }, attr: "children", new: children }]);
  send([{ kind: "ModelChanged", model: { id: table.id }, attr: "width", new: 321 }]);
  send([{ kind: "ModelChanged", model: { id: root.id }, attr: "tags", new: [tag] }]);
}"""
# the rows drawn (SlickGrid's cells, in the table view's shadow root)
CELLS = """() => {
  const out = [];
  const walk = (node) => {
    for (const el of node.querySelectorAll("*")) {
      if (el.classList.contains("slick-cell")) out.push(el.textContent);
      if (el.shadowRoot) walk(el.shadowRoot);
    }
  };
  walk(document);
  return out;
}"""
STATE = """(id) => {
  const doc = kv.worker.jsdoc, table = doc.get_model_by_id(id);
  return { width: table ? table.width : null, tags: doc.roots()[0].tags, tables: typeof Bokeh.Tables,
           tabulator: Bokeh.loader["@bokehjs/base"].default_resolver.get("panel.models.tabulator.DataTabulator") != null };
}"""


def test_a_table_runs_the_tables_bundle_and_one_it_cannot_have_stops_the_page(site, browser):
    """The static site never downloads or runs bokeh-tables until a patch brings a table. If the script
    cannot be had then, the live page cannot show what Python has, so it stops and says so, and its
    reload button brings the reader back to the same place, where the next table loads it: the table is
    drawn, and the patches after it (a property of the table, one of the root) are applied in their
    order, with a clean console."""
    with serve(site) as url:
        page, requests = open_page(browser, url + "index.html?lang=es")
        wait_ready(page)
        page.get_by_role("button", name="Avanzar").click()
        wait_t(page, 3)
        assert not [r for r in requests if "bokeh-tables" in r]
        assert page.evaluate("typeof Bokeh.Tables") == "undefined"

        page.context.route(TABLES, lambda route: route.abort())
        table = table_json()
        page.evaluate(SEND, [table, "after"])
        page.wait_for_function("document.body.hasAttribute('data-error')")
        assert "bokeh-tables" in page.get_attribute("body", "data-error")
        assert "bokeh-tables" in page.inner_text("#kv-error")
        assert page.evaluate(STATE, table["id"])["width"] is None
        assert page.is_hidden("#kv-dismiss")

        page.context.unroute(TABLES)
        page.click("#kv-retry")  # "Recargar": the same state, from the URL the page keeps
        page.wait_for_url("**t=3**")
        wait_ready(page)
        wait_t(page, 3)
        said = len(page.console_messages)
        page.evaluate(SEND, [table, "again"])
        page.wait_for_function(f"({CELLS})().includes('tres')")
        assert [r for r in requests if "bokeh-tables" in r]
        assert page.evaluate("kv.onDemandFor") == "DataTable"
        assert page.evaluate(STATE, table["id"]) == {
            "width": 321,
            "tags": ["again"],
            "tables": "object",
            "tabulator": True,
        }
        assert page.get_attribute("#kv-error", "hidden") is not None
        page.get_by_role("button", name="Avanzar").click()
        wait_t(page, 4)
        console = page.console_messages[said:]
        assert not [m for m in console if m.startswith(("error", "warning", "pageerror"))], console
