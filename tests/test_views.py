"""The views patch only what changed; after any sequence of actions, what the
browser has (the data sources) is exactly what the state says."""
import numpy as np
import pytest

from app.main import create_view
from app.views import ROWS


def assert_in_sync(v):
    ex, n = v.ex, v.n
    states = ex.cell_states()
    vecs = [ex.vectors(b, k) for b, k in ROWS]
    cells = v.grid_cells.data
    for i in range(len(ROWS)):
        for p in range(n):
            cell = v._cell(i, p, states, vecs)
            assert (cells["state"][i * n + p], cells["tok"][i * n + p], cells["values"][i * n + p]) == \
                (cell[3], cell[2], cell[4]), (i, p)
    for i, (block, kind) in enumerate(ROWS):
        img = v.grid_images.data["image"][i]
        assert np.allclose(img[:, :ex.t], ex.vectors(block, kind).T / ex.kv_scale[block, kind], atol=1e-6)
        assert np.isnan(img[:, ex.t:]).all()
    assert np.array_equal(np.round(v.bars.data["c"][:ex.t] * 1e6), ex.cost_cached[:ex.t])
    assert np.array_equal(np.round(v.bars.data["tc"][:ex.t] * 1e6), ex.cost_full[:ex.t])
    assert not np.any(v.bars.data["c"][ex.t:])
    measured = sorted(p for p, m in ex.measures.items() if m.cached_s is not None)
    assert list(v.clock.data["pos"]) == measured
    assert list(v.grid_marks.data["x"]) == list(np.flatnonzero(states == 2) + 1)


@pytest.mark.parametrize("actions", [
    ["step"] * 5,
    ["step", "toggle", "step", "step", "toggle", "step"],
    ["step"] * 3 + ["reset", "step"],
    ["toggle", "reset", "step", "toggle"],
])
def test_patched_views_match_the_state(actions):
    v = create_view("?t=40")
    assert_in_sync(v)
    for a in actions:
        v.do(a)
        assert_in_sync(v)


def test_in_sync_through_the_error_and_a_new_language():
    v = create_view("?t=63&lang=en")
    v.do("step")
    v.do("step")                               # position 65: the error
    assert v.ex.error is not None and v.error.visible
    assert_in_sync(v)
    v.set_language("pt")
    assert_in_sync(v)
    assert v.step_button.name == "Avançar"
    v.do("reset")
    assert not v.error.visible
    assert_in_sync(v)


def test_share_link_reproduces_the_state():
    from app.urlstate import parse
    v = create_view("?lang=en&seed=7")
    for _ in range(5):
        v.do("step")
    v.do("toggle")
    v.advanced.collapsed = False
    link = v.share.object.split("href='")[1].split("'")[0].replace("&amp;", "&")
    again = create_view(link)
    assert again.ex.ids == v.ex.ids and again.ex.mode == "full" and again.lang == "en"
    assert parse(link).notices == []


def test_html_snapshot_draws_the_state():
    from app.snapshot import render
    v = create_view("?lang=en&mode=full&t=10")
    html = render(v)
    assert "t = 10 / 64" in html and "<script" not in html
    assert html.count("class='cell now'") == 4 * 10          # without the cache every column is computed
    assert html.count("class='cell future'") == 4             # one hatched band per row
    assert html.count("class='bar ") == 2 * 10                 # both bars of each position so far
    assert "Step" in html and "K, block 1" in html
    v.do("toggle")
    assert render(v).count("class='cell now'") == 4           # with the cache: only the new column


def test_animating_and_resetting_leaks_nothing():
    """30 cycles of Animar, a step, Pausa, Reiniciar: one periodic callback for the view's whole life
    (Panel keeps every callback it creates), and no growth in the objects Python holds."""
    import gc

    import panel as pn
    from bokeh.document import Document
    from panel.io.callbacks import PeriodicCallback
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        v = create_view("?lang=es")

        def cycle():
            v.do("play")
            v.step()
            v.do("play")
            v.do("reset")

        for _ in range(5):                       # warm up caches (formatting, Bokeh property caches)
            cycle()
        gc.collect()
        before = len(gc.get_objects())
        for _ in range(30):
            cycle()
        gc.collect()
        after = len(gc.get_objects())
        assert len(pn.state._periodic.get(doc, [])) == 1
        assert sum(isinstance(o, PeriodicCallback) for o in gc.get_objects()) == 1
        assert after - before < 300, (before, after)      # not per cycle: 30 cycles of a leak would be more
        assert not v._callback.running and v.ex.t == 2
