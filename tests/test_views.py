"""The views patch only what changed; after any sequence of actions, what the browser has
(the data sources) is exactly what the state says. The page follows the model's own
configuration: another n_ctx, another page."""

import html as html_module
import json
import re

import numpy as np
import panel as pn
import pytest

from app.figure.grid import cell_style, grid_rows
from app.main import create_view
from app.state.settings import Settings


def assert_in_sync(v):
    ex, n, grid, bars = v.ex, v.n, v.grid, v.bars.bars
    rows = grid_rows(ex.cfg)
    states = ex.cell_states()
    vecs = [ex.vectors(b, k) for b, k in rows]
    cells = grid.cells.data
    for i in range(len(rows)):
        for p in range(n):
            cell = grid.cell(i, p, states, vecs)
            assert (cells["state"][i * n + p], cells["tok"][i * n + p], cells["values"][i * n + p]) == (
                cell[3],
                cell[2],
                cell[4],
            ), (i, p)
    for i, (block, kind) in enumerate(rows):
        img = grid.images.data["image"][i]
        assert np.allclose(img[:, : ex.t], ex.vectors(block, kind).T / ex.kv_scale[block, kind], atol=1e-6)
        assert np.isnan(img[:, ex.t :]).all()
    assert np.array_equal(np.round(bars.data["c"][: ex.t] * 1e6), ex.cost_cached[: ex.t])
    assert np.array_equal(np.round(bars.data["tc"][: ex.t] * 1e6), ex.cost_full[: ex.t])
    assert not np.any(bars.data["c"][ex.t :])
    measured = sorted(p for p, m in ex.measures.items() if m.cached_s is not None)
    assert list(v.clock.points.data["pos"]) == measured
    computed = list(np.flatnonzero(states == 2) + 1)
    single = len(computed) == 1  # one column outlined and marked; several: one outline per row
    assert [cells["width"][i * n + p] for i in range(len(rows)) for p in range(n)] == [
        cell_style(states[p], single)[1] for _ in rows for p in range(n)
    ]
    assert list(grid.marks.data["x"]) == (computed if single else [])
    assert list(grid.block.data["w"]) == ([] if single else [float(len(computed))] * len(rows))
    assert computed == (list(range(1, ex.t + 1)) if ex.mode == "full" or ex.t <= ex.n_prompt else [ex.t])
    assert f"t = {ex.t} / {n}" in v.text.layout.object
    # the prefill's note: at every position (the grid does not move on a step), in its mode's words
    said = grid.tr("grid_prefill_full" if ex.mode == "full" else "grid_prefill", n=ex.n_prompt)
    assert grid.prefill.visible and said in html_module.unescape(grid.prefill.object)
    reads = v.reads.image.data["image"][0]  # the newest query's weights (last row: the top)
    assert np.allclose(reads[-1, : ex.t], ex.reads[0][0]) and np.isnan(reads[:, ex.t :]).all()
    assert np.allclose(np.nansum(reads, axis=1), 1.0)


@pytest.mark.parametrize(
    "actions",
    [
        ["step"] * 5,
        ["step", "toggle", "step", "step", "toggle", "step"],
        ["step"] * 3 + ["reset", "step"],
        ["toggle", "reset", "step", "toggle"],
        ["step"] * 3 + ["back", "back", "step", "back"],
        ["toggle", "step", "back", "toggle", "back", "step"],
    ],
)
def test_patched_views_match_the_state(actions):
    v = create_view("?t=40")
    assert_in_sync(v)
    for a in actions:
        v.controls.do(a)
        assert_in_sync(v)


def test_in_sync_through_the_error_and_a_new_language():
    v = create_view("?t=63&lang=en")
    v.controls.do("step")
    v.controls.do("step")  # position 65: the error
    assert v.ex.error is not None and v.error.layout.visible
    assert_in_sync(v)
    v.session.settings.lang = "pt"
    assert_in_sync(v)
    assert v.controls.step_button.name == "Avançar"
    assert v.a11y.lang == "pt" and "avança" in v.advanced.keys.object  # <html lang>, the keyboard's help
    v.controls.do("reset")
    assert not v.error.layout.visible
    assert_in_sync(v)


def test_widgets_are_the_settings():
    """One object: the URL's values, the widgets' values and bounds, and the share link."""
    v = create_view("?lang=en&seed=7&speed=9&top_p=0.8")
    s = v.session.settings
    assert (v.advanced.seed.value, v.controls.speed.value, v.advanced.top_p.value) == (7, 9, 0.8)
    assert (v.controls.speed.start, v.controls.speed.end) == s.param.speed.bounds
    assert (v.advanced.top_p.start, v.advanced.top_p.end, v.advanced.top_p.step) == (0.05, 1.0, 0.05)
    v.advanced.seed.value = 3  # the widget changes the setting, which restarts the text
    assert s.seed == 3 and v.ex.settings.seed == 3 and v.ex.t == 2
    v.controls.mode_switch.value = "full"
    assert s.mode == "full" and v.ex.mode == "full"
    s.mode = "cache"  # and the setting moves the widget
    assert v.controls.mode_switch.value == "cache"


def test_share_link_reproduces_the_state():
    v = create_view("?lang=en&seed=7")
    for _ in range(5):
        v.controls.do("step")
    v.controls.do("toggle")
    v.advanced.layout.collapsed = False
    link = v.advanced.share.object.split("href='")[1].split("'")[0].replace("&amp;", "&")
    again = create_view(link)
    assert again.ex.ids == v.ex.ids and again.ex.mode == "full" and again.lang == "en"
    assert Settings.from_query(link).notices == []
    assert v.a11y.page_state["query"] == link  # what a reload after a failure keeps


def test_html_snapshot_draws_the_state():
    from app.figure.snapshot import PROGRESS, render

    v = create_view("?lang=en&mode=full&t=10")
    html = render(v)
    assert "t = 10 / 64" in html and "<script" not in html
    top, bottom = html.split(PROGRESS)  # the loading progress goes between them
    assert "Step" in top and "K, layer 1" in bottom and "aria-hidden='true'" in bottom.split(">")[0]
    # the title and text pictures for the eyes; the controls real buttons (static/loader/controls.js answers them),
    # between them: the text grows under the buttons, as in the live page
    assert (
        top.count("<div class='kv-picture' aria-hidden='true'>") == 2
        and "aria-hidden" not in top.split("<div class='kv-snap'")[1][:40]
    )
    assert top.index("<h1>") < top.index("data-kv='step'") < top.index("class='tpos'")
    buttons = re.findall(r"<button type='button'[^>]*data-kv='(\w+)'", top)
    assert buttons == ["step", "play", "back", "reset", "mode", "mode"], buttons  # every action in the bar
    says = json.loads(html_module.unescape(re.search(r'data-says="([^"]*)"', top).group(1)))
    assert says["mode"]["full"] == "Mode: No cache." and says["step"].startswith("Position 10 of 64")
    assert says["reset"] == "Reset: “La Nela”, position 2 of 64."
    assert (
        says["back"]
        == "One step back: t = 10. The cache is cut to 10 positions (truncate): nothing is recomputed, and Step will draw the same token again."
    )
    # without the cache every column is computed: one outline per row around all ten, one line over them
    assert html.count("class='now' style='left:0.000%;width:15.625%'") == 4
    assert html.count("class='bracket'") == 1 and html.count("class='mark'") == 0
    assert html.count("class='cell future'") == 4  # one hatched band per row
    assert html.count("class='bar full'") == 10  # the grey ramp, mode=full shows it at once
    assert html.count("class='bar cached'") == 2 * 10  # the green bars, and again in the strip
    v.controls.do("toggle")
    cached = render(v)  # with the cache: only the new column
    assert cached.count("class='now' style='left:14.062%;width:1.562%'") == 4 and cached.count("class='mark'") == 1
    cached = render(create_view("?lang=es&t=10"))
    assert cached.count("class='bar full'") == 0 and cached.count("class='bar cached'") == 10


def png_pixels(data: bytes) -> np.ndarray:
    """The palette indices of an 8-bit palette PNG without interlacing (what app/figure/png.py writes)."""
    import struct
    import zlib

    pos, chunks = 8, {}
    while pos < len(data):
        size, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunks[kind] = chunks.get(kind, b"") + data[pos + 8 : pos + 8 + size]
        pos += size + 12
    width, height = struct.unpack(">II", chunks[b"IHDR"][:8])
    raw = np.frombuffer(zlib.decompress(chunks[b"IDAT"]), dtype=np.uint8).reshape(height, width + 1)
    assert not raw[:, 0].any()  # filter 0 on every row
    return raw[:, 1:]


def test_the_grid_image_is_the_grid():
    """The preview's grid image: one column per position, each row's vectors over its scale, first
    number at the bottom, in the live grid's palette steps."""
    from app.figure.snapshot import color_indices, grid_image

    v = create_view("?t=64")
    ex, d = v.ex, v.ex.cfg.d_model
    pixels = png_pixels(grid_image(ex))
    assert pixels.shape == (len(grid_rows(ex.cfg)) * d, 64)
    for i, (block, kind) in enumerate(grid_rows(ex.cfg)):
        band = pixels[i * d : (i + 1) * d][::-1]
        assert np.array_equal(band, color_indices(ex.vectors(block, kind).T / ex.kv_scale[block, kind]))


def test_every_state_a_url_asks_for_is_prerendered_as_the_page_starts():
    """The previews (stepped once through the window) are the page a URL opens, but for the clock,
    which the reader's browser measures after the page is live."""
    from app.figure.snapshot import render, render_states

    states = dict(render_states(create_view, "pt"))
    assert len(states) == 2 * 63 + 1 and isinstance(states.pop("grid"), bytes)
    for query, name in (
        ("?lang=pt&t=40", "pt-cache-40.html"),
        ("?lang=pt&mode=full&t=64", "pt-full-64.html"),
        ("?lang=pt&mode=sin", "pt-full-2.html"),
    ):
        v = create_view(query)
        if v.ex.t in v.ex.measures:
            v.ex.measures[v.ex.t].clock = None  # not measured yet: what the preview shows
        v.readouts.redraw()
        assert render(v) == states[name], query


def test_the_grey_ramp_waits_for_the_first_switch():
    """The lesson's second experiment: "cambia a sin caché: las barras grises forman una rampa"."""
    v = create_view("?lang=es&t=30")
    bars = v.bars
    assert not bars.full.visible and not bars.strip_pane.visible
    assert bars.figure.y_range.end == bars.scales.cached  # the green bars fill the plot
    assert bars.scales.cached / 1.0 > bars.ex.cost_cached[-1] / 1e6 > 0.6 * bars.scales.cached
    v.controls.do("toggle")
    assert bars.full.visible and bars.strip_pane.visible and bars.figure.y_range.end == bars.scales.full
    assert bars.scales.zoom == 50 and "50 veces" in bars.note.object
    v.controls.do("toggle")
    v.controls.do("reset")  # seen once, it stays
    assert bars.full.visible and bars.full.glyph.fill_alpha < 0.5


def test_a_model_with_another_window_gets_its_own_page(gpt):
    """Every number of the model's configuration is read from its Config: with n_ctx = 32 the axes,
    the bounds, the texts and the error's position follow."""
    from dataclasses import replace

    from model import MiniGPT

    small = MiniGPT.random(replace(gpt.config, n_ctx=32), seed=1, tokenizer=gpt.tokenizer)
    v = create_view("?lang=en&t=40", gpt=small)  # 40 is past this window: a notice
    s = v.session.settings
    assert s.param.t.bounds == (2, 32) and [n[0] for n in s.notices] == ["t"] and v.ex.t == 2
    assert v.grid.figure.x_range.end == 32.5 and v.bars.figure.x_range.end == 32.5
    assert list(v.grid.figure.xaxis.ticker.ticks) == [1, 4, 8, 12, 16, 20, 24, 28, 32]
    assert "t = 2 / 32" in v.text.layout.object
    assert v.grid.images.data["image"][0].shape == (64, 32)
    for _ in range(31):
        v.controls.do("step")
    assert "t = 32 / 32" in v.text.layout.object and "2 · 2 · 32 · 64" in v.readouts.layout.object
    v.controls.do("step")
    assert v.ex.error.lesson and v.ex.error.position == 33
    assert "Position 33 does not exist" in v.error.layout.object and "32 rows" in v.error.layout.object
    prove = next(x for x in v.sections if x.key == "cell")
    prove.ensure_built()
    assert "while len(ids) < 32:" in prove.editor.value and prove.to65_button.name == "Change 32 to 33 and run"


def test_animating_and_resetting_leaks_nothing():
    """30 cycles of Animar, a step, Pausa, Reiniciar: no periodic callback (Panel keeps every one it
    creates; the animation's timers are one-shot, one at a time: app/figure/parts.py Animation), and
    no growth in the objects Python holds."""
    import gc

    import panel as pn
    from bokeh.document import Document
    from panel.io.callbacks import PeriodicCallback
    from panel.io.state import set_curdoc

    doc = Document()
    with set_curdoc(doc):
        v = create_view("?lang=es")
        controls = v.controls

        def cycle():
            controls.do("play")
            controls.step()
            controls.do("play")
            controls.do("reset")

        for _ in range(5):  # warm up caches (formatting, Bokeh property caches)
            cycle()
        gc.collect()
        before = len(gc.get_objects())
        callbacks = sum(isinstance(o, PeriodicCallback) for o in gc.get_objects())  # other tests' too
        for _ in range(30):
            cycle()
        gc.collect()
        after = len(gc.get_objects())
        assert len(pn.state._periodic.get(doc, [])) == 0
        assert sum(isinstance(o, PeriodicCallback) for o in gc.get_objects()) == callbacks
        assert after - before < 300, (before, after)  # not per cycle: 30 cycles of a leak would be more
        assert not controls.animation.running and v.ex.t == 2


def test_tokens_read_as_text():
    """A token box holds its text with each space a real space drawn as a dot; newlines show as ⏎ at
    the end of their line; one breaks the line, two or more end the paragraph (no line left holding a
    lone ⏎)."""
    from app.figure.text import line_break, token_html

    assert token_html(" de") == "<span class='sp'> </span>de" and token_html(" ") == "<span class='sp'> </span>"
    assert token_html("\n") == "⏎" and token_html("<a>") == "&lt;a&gt;"
    toks = ["a", "\n", "b", "\n", "\n", "-", " c"]
    assert [line_break(toks, i) for i in range(len(toks))] == ["", "<br>", "", "", "<span class='para'></span>", "", ""]
    v = create_view("?t=64")
    html = v.text.layout.object
    text = "".join(v.ex.tokens())
    assert html.count("<br>") + 2 * html.count("class='para'") <= text.count("\n")
    assert html.count("class='sp'") == text.count(" ")


def test_the_lab_shows_nothing_empty_before_it_measures():
    from app.sections.timing.view import LAB_SAMPLES

    """Before "Medir": the lab says what it will do, and no empty plot or table takes room."""
    v = create_view("?lang=es")
    lab = v.sections[0]
    lab.card.collapsed = False
    assert lab.built and f"{LAB_SAMPLES} medidas" in lab.intro.object  # what "Medir" will do
    assert not lab.fig.visible and not lab.plot.visible and lab.table.object == ""


def test_what_the_query_reads_and_the_proof_without_the_cache():
    """Each token computes its own column and reads the others: the full pass recomputes the earlier
    rows, and they are the ones the cache kept."""
    v = create_view("?lang=en&t=12")
    assert [w.shape for w in v.ex.reads] == [(4, 12), (4, 12)]
    assert "read the 11 earlier keys and values" in v.reads.proof.object
    v.controls.do("toggle")
    v.controls.do("step")
    m = v.ex.clock()
    assert m.recomputed is not None and m.recomputed < 1e-12 and m.proof < 1e-12
    assert "recomputed rows 1 to 12" in v.reads.proof.object
    v.table.layout.collapsed = False
    assert v.table.table.object.count("<th scope='row'>") == 8 and "layer 2, head 4" in v.table.table.object


def test_the_grids_colours_say_what_its_note_says():
    """Orange if positive, purple if negative (the grid's note, in every language): the mapper gives
    its palette's first colour to -1, the last to +1, and the scale beside the note runs the same way."""
    from app.figure.parts import colour_scale
    from app.i18n import tr
    from app.style import CELL_PALETTE

    rgb = lambda c: tuple(int(c[i : i + 2], 16) for i in (1, 3, 5))
    negative, positive = rgb(CELL_PALETTE[0]), rgb(CELL_PALETTE[-1])
    assert negative[2] > negative[1] and positive[0] > positive[2]  # purple (blue over green), orange (red over blue)
    v = create_view("?lang=es&t=5")
    assert "naranja si es positivo y morado si es negativo" in v.grid.note.object
    assert colour_scale(CELL_PALETTE, "−", "+", tr("es", "scale_cells")) in v.grid.note.object


def test_the_grid_zooms_on_a_phone_to_the_newest_positions():
    """The zoom's window, the strip under it and the first paint's zoom: one rule (app/figure/grid.py),
    one media query for the stylesheets and the live figure (app/style PHONE_MEDIA)."""
    from app.figure.grid import zoom_window
    from app.figure.snapshot import SNAP_CSS, render
    from app.style import CSS, PHONE_MEDIA, read_css, ticks
    from buildsupport.site import STATIC

    assert [zoom_window(t, 64) for t in (2, 16, 17, 22, 64)] == [(1, 16), (1, 16), (2, 17), (7, 22), (49, 64)]
    assert zoom_window(5, 8) == (1, 8)  # a window smaller than the zoom: all of it
    v = create_view("?lang=es&t=22")
    note = v.grid.note.object
    assert "posiciones 7 a 22 de 64" in note and "width:34.375%" in note and "left:9.375%;width:25.000%" in note
    v.controls.do("step")
    assert "posiciones 8 a 23 de 64" in v.grid.note.object
    html = render(v)
    assert "style='--n:64;--a:7;--w:16'" in html and v.grid.note.object in html
    shown = re.findall(r"<span class='xt[^']*fine(?! out)' style='--p:(\d+)'>", html)
    assert shown == ["8", "12", "16", "20"], shown
    assert re.findall(r"<span class='xt coarse[^']*' style='--p:(\d+)'>", html) == [str(p) for p in ticks(64)]
    for css in (CSS, SNAP_CSS, read_css(STATIC / "style.css")):
        assert "(--kv-phone)" not in css
    assert SNAP_CSS.count(f"@media {PHONE_MEDIA}") >= 2  # the grid's zoom, and the strip in the shared CSS


@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_the_sections_say_where_they_measure(lang):
    """The measuring sections name where they run: the reader's browser on the static site, the
    server's machine under Panel's server; every built text has its place filled in."""
    from app.i18n import tr

    for on_server, mine in ((False, "where_mine_browser"), (True, "where_mine_server")):
        v = create_view(f"?lang={lang}")
        v.session.on_server = on_server
        for s in v.sections:
            s.ensure_built()
        timing = next(s for s in v.sections if s.key == "timing")
        assert timing.run_button.name == tr(lang, "lab_run", where_mine=tr(lang, mine))
        assert tr(lang, mine) in timing.run_button.name
        texts = [s.card.title for s in v.sections] + [
            html_module.unescape(str(getattr(o, "object", None) or getattr(o, "name", "")))
            for s in v.sections
            for o in s.card.body.select(lambda o: isinstance(o, (pn.pane.HTML, pn.pane.Markdown, pn.widgets.Button)))
        ]
        assert len(texts) > 50 and not [t for t in texts if "{where" in t]
        here = tr(lang, "where_server" if on_server else "where_browser")
        assert sum(here in t for t in texts) >= 4  # the lab's title and the batching, serving and speculation texts
