"""The explorable's three figures, each a Part (app/parts.py) over one Session:

- `CacheGrid`: the cache, one column per position, one row per stored matrix (K and V of
  every layer), each cell the real vector in colour; what this step computed and read.
- `CostBars`: the multiplications of every token, with the cache and without it.
- `ClockPlot`: the time each step took, measured here.

Each figure is built once; a redraw sends the browser only what changed (new columns, the
cells whose state changed, new bars and points), which keeps a step under 50 ms in Pyodide.
"""
from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import (ColumnDataSource, FixedTicker, HoverTool, Legend, LegendItem, LinearColorMapper, Range1d,
                          Span)

from .i18n import num
from .parts import Part, esc, html_pane
from .state import COMPUTED, FUTURE, READ
from .style import CELL_PALETTE, GREEN, GREY, INK, position_figure, show_token

BAND = 1.0            # height of one row of the grid, in data units
FILL = 0.84           # part of it the cells fill
CELL_STYLE = {FUTURE: ("#cccccc", 0.5), READ: ("#9a9a9a", 0.5), COMPUTED: (INK, 2.2)}


def grid_rows(cfg) -> list[tuple[int, str]]:
    """(layer, 'k' | 'v') for every row of the grid, top to bottom."""
    return [(layer, kind) for layer in range(cfg.n_layers) for kind in ("k", "v")]


class CacheGrid(Part):
    def build(self):
        self.rows = grid_rows(self.ex.cfg)
        self.heading, self.note = html_pane(), html_pane()
        self.figure = self.make_figure()
        self.layout = pn.Column(self.heading, pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"), self.note,
                                sizing_mode="stretch_width", margin=0)

    def band_y(self, i: int) -> float:
        """Centre of row i of the grid (row 0 at the top)."""
        return (len(self.rows) - 1 - i) * BAND + BAND / 2

    def make_figure(self):
        n, rows = self.n, self.rows
        ys = [self.band_y(i) for i in range(len(rows))]
        # values are shown divided by their row's fixed scale (Explorer.kv_scale); NaN: not computed
        self.images = ColumnDataSource({
            "image": [np.full((self.ex.cfg.d_model, n), np.nan, dtype=np.float32) for _ in rows],
            "x": [0.5] * len(rows), "y": [y - FILL / 2 for y in ys], "dw": [n] * len(rows), "dh": [FILL] * len(rows)})
        size = len(rows) * n
        self.cells = ColumnDataSource({
            "x": [p for _ in rows for p in range(1, n + 1)], "y": [y for y in ys for _ in range(n)],
            "pos": [p for _ in rows for p in range(1, n + 1)], "row": [""] * size, "tok": [""] * size,
            "state": [""] * size, "values": [""] * size, "line": ["#cccccc"] * size, "width": [0.5] * size})
        self.marks = ColumnDataSource({"x": [], "y": []})
        self.future = ColumnDataSource({"x": [n + 1] * len(rows), "y": ys, "w": [0] * len(rows)})
        f = position_figure(n, 230, y_range=Range1d(-0.2, len(rows) * BAND + 0.35))
        f.image(image="image", x="x", y="y", dw="dw", dh="dh", source=self.images,
                color_mapper=LinearColorMapper(palette=CELL_PALETTE, low=-1, high=1, nan_color=(0, 0, 0, 0)))
        # not yet computed: one hatched band per row over the future columns (one pattern each, cheap
        # to draw; a hatch per cell made every redraw ~70 ms slower)
        f.rect(x="x", y="y", width="w", height=FILL, source=self.future, fill_color="#eeeeee", line_color="#cccccc",
               hatch_pattern="/", hatch_color="#8a8a8a", hatch_alpha=0.35, hatch_scale=6)
        r = f.rect(x="x", y="y", width=0.92, height=FILL, source=self.cells, fill_alpha=0.0, line_color="line",
                   line_width="width")
        f.scatter(x="x", y="y", source=self.marks, marker="triangle", size=9, color=INK)
        f.add_tools(HoverTool(renderers=[r], tooltips="@row · @pos «@tok» · @state<br>@values"))
        f.yaxis.ticker = FixedTicker(ticks=ys)
        f.grid.visible = False
        return f

    def relabel(self):
        self.heading.object = f"<h2>{esc(self.t('grid_title'))}</h2>"
        self.note.object = f"<p class='legend-inline'>{esc(self.t('grid_note'))}</p>"
        self.figure.xaxis.axis_label = self.t("grid_x")
        self.figure.yaxis.major_label_overrides = {
            self.band_y(i): self.t("row_" + kind, l=layer + 1) for i, (layer, kind) in enumerate(self.rows)}
        self.drawn = {"ids": [], "cells": {}}        # hover texts are in the language: send them all again
        self.redraw()

    def redraw(self):
        known = self.draw_numbers()
        self.draw_cells(known)
        self.draw_future_and_marks()

    def scaled(self, layer: int, kind: str, start: int = 0) -> np.ndarray:
        """(d, t - start) the stored vectors of positions start+1..t, over their row's scale."""
        ex = self.ex
        return (ex.vectors(layer, kind)[start:].T / ex.kv_scale[layer, kind]).astype(np.float32)

    def draw_numbers(self) -> int:
        """The numbers: a stored column never changes, so only new columns are sent. Returns how
        many positions the browser already had (0: a new text)."""
        ex, n, d = self.ex, self.n, self.ex.cfg.d_model
        drawn = self.drawn["ids"]
        known = len(drawn) if drawn == ex.ids[:len(drawn)] else 0
        if known == 0:
            images = []
            for layer, kind in self.rows:
                img = np.full((d, n), np.nan, dtype=np.float32)
                img[:, :ex.t] = self.scaled(layer, kind)
                images.append(img)
            self.images.data["image"] = images
        elif ex.t > known:
            self.images.patch({"image": [((i, slice(0, d), slice(known, ex.t)), self.scaled(layer, kind, known).ravel())
                                         for i, (layer, kind) in enumerate(self.rows)]})
        self.drawn["ids"] = list(ex.ids)
        return known

    def cell(self, i: int, p: int, states, vecs) -> tuple:
        """What cell (row i, position p) shows: (state, hover row, token, state text, values)."""
        ex = self.ex
        layer, kind = self.rows[i]
        st = int(states[p])
        state_text = self.t({FUTURE: "cell_future", READ: "cell_read", COMPUTED: "cell_computed"}[st])
        if p < ex.t:
            v = vecs[i][p]
            values = self.t("cell_values", n=v.size, lo=f"{v.min():.2f}", hi=f"{v.max():.2f}")
            tok = show_token(ex.gpt.tokenizer.vocab[ex.ids[p]])
        else:
            values = tok = ""
        return (st, self.t("row_" + kind, l=layer + 1), tok, state_text, values)

    def draw_cells(self, known: int):
        """The cells' states and hover texts: only the columns whose state or contents changed."""
        ex, n, cells = self.ex, self.n, self.drawn["cells"]
        states = ex.cell_states()
        vecs = [ex.vectors(layer, kind) for layer, kind in self.rows]
        everything = not cells or known == 0
        patch = {k: [] for k in ("row", "tok", "state", "values", "line", "width")}
        for p in range(n):
            if not everything and cells[0, p][0] == states[p] and (p < known or states[p] == FUTURE):
                continue                                 # same token, same numbers, same state
            for i in range(len(self.rows)):
                cell = self.cell(i, p, states, vecs)
                if cells.get((i, p)) == cell:
                    continue
                cells[i, p] = cell
                line, width = CELL_STYLE[cell[0]]
                for col, value in zip(("row", "tok", "state", "values", "line", "width"), cell[1:] + (line, width)):
                    patch[col].append((i * n + p, value))
        if patch["state"]:
            self.cells.patch(patch)

    def draw_future_and_marks(self):
        t, n, rows = self.ex.t, self.n, len(self.rows)
        future = {"x": [(t + n + 1) / 2] * rows, "y": self.future.data["y"], "w": [n - t] * rows}
        if future["w"] != list(self.future.data["w"]):
            self.future.data = future
        computed = np.flatnonzero(self.ex.cell_states() == COMPUTED) + 1
        marks = {"x": list(computed), "y": [rows * BAND + 0.15] * len(computed)}
        if marks["x"] != list(self.marks.data["x"]):
            self.marks.data = marks


class CostBars(Part):
    def build(self):
        n, ex = self.n, self.ex
        pos = np.arange(1, n + 1)
        self.heading = html_pane()
        self.bars = ColumnDataSource({"pos": pos, "c": np.zeros(n), "tc": np.zeros(n), "c_text": [""] * n,
                                      "tc_text": [""] * n, "ratio": [f"{p}×" for p in pos]})
        f = position_figure(n, 260, y_range=Range1d(0, float(ex.cost_full[-1]) * 1.06 / 1e6))   # in millions
        self.full = f.vbar(x="pos", top="tc", width=0.8, source=self.bars, fill_color=GREY, line_color=GREY,
                           hatch_pattern="/", hatch_color="white", hatch_alpha=0.6)
        self.cached = f.vbar(x="pos", top="c", width=0.8, source=self.bars, fill_color=GREEN, line_color="#00513b")
        self.legend = [LegendItem(label="", renderers=[self.cached]), LegendItem(label="", renderers=[self.full])]
        f.add_layout(Legend(items=self.legend, location="top_left", background_fill_alpha=0.8))
        self.hover = HoverTool(renderers=[self.full, self.cached], tooltips="")
        f.add_tools(self.hover)
        self.now = Span(location=2, dimension="height", line_color=INK, line_dash="dashed", line_width=1)
        f.add_layout(self.now)
        f.xgrid.visible = False
        self.figure = f
        self.layout = pn.Column(self.heading, pn.pane.Bokeh(f, sizing_mode="stretch_width"),
                                sizing_mode="stretch_width", margin=0)

    def relabel(self):
        t, f, lang, ex = self.t, self.figure, self.lang, self.ex
        self.heading.object = f"<h2>{esc(t('bars_title'))}</h2>"
        f.xaxis.axis_label, f.yaxis.axis_label = t("grid_x"), t("bars_y")
        self.legend[0].label, self.legend[1].label = bk_value(t("bars_cached")), bk_value(t("bars_full"))
        self.hover.tooltips = [(t("grid_x"), "@pos"), (t("with_cache"), "@c_text"), (t("without_cache"), "@tc_text"),
                               ("×", "@ratio")]
        self.bars.data.update({"c_text": [num(c, lang) for c in ex.cost_cached],
                               "tc_text": [num(c, lang) for c in ex.cost_full]})
        self.drawn_t = None
        self.redraw()

    def redraw(self):
        ex, t, last = self.ex, self.ex.t, self.drawn_t
        if last is None or t < last:                     # first drawing or a new text: all bars
            shown = np.arange(1, self.n + 1) <= t
            self.bars.data.update({"c": np.where(shown, ex.cost_cached, 0) / 1e6,
                                   "tc": np.where(shown, ex.cost_full, 0) / 1e6})
        elif t > last:                                   # new positions: their bars only
            idx = range(last, t)
            self.bars.patch({"c": [(i, ex.cost_cached[i] / 1e6) for i in idx],
                             "tc": [(i, ex.cost_full[i] / 1e6) for i in idx]})
        self.drawn_t = t
        cached_on = self.session.settings.mode == "cache"
        self.cached.glyph.fill_alpha = 1.0 if cached_on else 0.45
        self.cached.glyph.line_width = 1.5 if cached_on else 0.5
        self.full.glyph.fill_alpha = 0.25 if cached_on else 0.95
        self.full.glyph.line_alpha = 0.5 if cached_on else 1.0
        self.now.location = t


class ClockPlot(Part):
    """The measured time of every step, both ways; hidden (no empty plot) until there is one."""

    def build(self):
        self.heading = html_pane()
        self.points = ColumnDataSource({"pos": [], "cached_ms": [], "full_ms": []})
        f = position_figure(self.n, 200)
        full = f.scatter(x="pos", y="full_ms", source=self.points, marker="square", size=6, color=GREY)
        cached = f.scatter(x="pos", y="cached_ms", source=self.points, marker="circle", size=6, color=GREEN)
        f.y_range.start = 0
        self.hover = HoverTool(renderers=[full, cached], tooltips="")
        f.add_tools(self.hover)
        self.figure = f
        self.layout = pn.Column(self.heading, pn.pane.Bokeh(f, sizing_mode="stretch_width"),
                                sizing_mode="stretch_width", margin=0, visible=False)

    def relabel(self):
        t, f = self.t, self.figure
        self.heading.object = f"<h3>{esc(t('clock_plot_title'))}</h3>"
        f.yaxis.axis_label, f.xaxis.axis_label = t("clock_plot_y"), t("grid_x")
        self.hover.tooltips = [(t("grid_x"), "@pos"), (t("with_cache") + " (ms)", "@cached_ms{0.000}"),
                               (t("without_cache") + " (ms)", "@full_ms{0.000}")]
        self.drawn = []
        self.redraw()

    def redraw(self):
        """New points are streamed; a new text starts the plot over."""
        ex = self.ex
        pos = sorted(p for p, m in ex.measures.items() if m.cached_s is not None)
        drawn = self.drawn
        if pos[:len(drawn)] != drawn or len(self.points.data["pos"]) != len(drawn):
            self.points.data = {"pos": [], "cached_ms": [], "full_ms": []}
            drawn = []
        new = pos[len(drawn):]
        if new:
            self.points.stream({"pos": new, "cached_ms": [ex.measures[p].cached_s * 1e3 for p in new],
                                "full_ms": [ex.measures[p].full_s * 1e3 for p in new]})
        self.drawn = pos
        if self.layout.visible != bool(pos):      # no empty plot: the figure itself too (a hidden pane
            self.layout.visible = self.figure.visible = bool(pos)   # alone still kept its height)
