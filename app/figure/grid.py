"""The cache grid: one column per position, one row per stored matrix (K and V of every layer), each
cell the real vector in colour; what this step computed and read. On a phone it shows the newest
positions zoomed in, with the whole window as a strip under it (ZOOM).
"""

from __future__ import annotations

import numpy as np
import panel as pn
from bokeh.models import (
    ColumnDataSource,
    CustomJS,
    FixedTicker,
    HoverTool,
    Image,
    LinearColorMapper,
    MultiLine,
    Range1d,
    Rect,
    Scatter,
)

from ..i18n import num
from ..state.explorer import COMPUTED, FUTURE, READ
from ..state.settings import FULL
from ..style import CELL_PALETTE, INK, PALETTE, PHONE_MEDIA, position_figure, show_token, ticks, zoom_ticks
from .parts import Part, colour_scale, esc, html_pane

BAND = 1.0  # height of one row of the grid, in data units
FILL = 0.84  # part of it the cells fill
CELL_STYLE = {FUTURE: (PALETTE["line"], 0.5), READ: (PALETTE["untested"], 0.5), COMPUTED: (INK, 2.2)}
OUTLINE = 2.2  # the computed columns' outline


def cell_style(state: int, single: bool) -> tuple[str, float]:
    """A lone computed column (a step with the cache) is outlined cell by cell; a block of them (the
    prefill, every step without the cache) is outlined once around the block (`computed_block`), so a
    narrow grid does not turn into dark stripes."""
    return CELL_STYLE[READ if state == COMPUTED and not single else state]


def computed_block(states) -> tuple[int, int] | None:
    """(first, last) position of the computed columns when there are several, else None."""
    computed = np.flatnonzero(states == COMPUTED) + 1
    return (int(computed[0]), int(computed[-1])) if len(computed) > 1 else None


def kv_width(cfg) -> int:
    """Numbers a position keeps per layer for K (and as many for V): H_kv d_k (d_model in the lesson)."""
    return cfg.n_kv_heads * cfg.d_head


ROW_KEY = {"k": "row_k", "v": "row_v"}  # a grid row's label, by its kind


def grid_rows(cfg) -> list[tuple[int, str]]:
    """(layer, 'k' | 'v') for every row of the grid, top to bottom."""
    return [(layer, kind) for layer in range(cfg.n_layers) for kind in ("k", "v")]


ZOOM = 16  # positions the grid shows on a phone (app/style PHONE_MEDIA): the newest, 14 px each at 360 px


def zoom_window(t: int, n: int) -> tuple[int, int]:
    """(first, last) position the grid shows zoomed in: the newest ZOOM positions, 1..ZOOM until t
    passes them. The same in the live figure (ZOOM_JS) and the first paint (app/figure/snapshot.py)."""
    last = max(min(ZOOM, n), t)
    return last - min(ZOOM, n) + 1, last


def zoom_overview(t: int, n: int, text: str) -> str:
    """Under a zoomed grid, the whole window as a strip (positions 1..n: computed, still empty) with the
    part shown outlined, and `text` saying which. Hidden on a wider page (app/style/style.css)."""
    a, b = zoom_window(t, n)
    return (
        f"<div class='zoom-overview' data-testid='grid-zoom'><div class='strip kv-canvas' aria-hidden='true'>"
        f"<i class='known' style='width:{t / n * 100:.3f}%'></i>"
        f"<i class='shown' style='left:{(a - 1) / n * 100:.3f}%;width:{(b - a + 1) / n * 100:.3f}%'></i>"
        f"</div><span>{esc(text)}</span></div>"
    )


# The live grid's zoom: the browser knows the page's width, so it sets the x range itself (no
# round trip to Python) when the page resizes (the frame's width changes) and on every step (the
# hatched future's width, n - t, changes).
ZOOM_JS = """
const zoomed = window.matchMedia(media).matches
const t = n - (future.data.w.length ? future.data.w[0] : 0)
const last = Math.max(size, t), first = last - size + 1
const [start, end] = zoomed ? [first - 0.5, last + 0.5] : [0.5, n + 0.5]
// the view's zoom is the browser's alone: never sent to Python, which reads neither
if (x_range.start !== start || x_range.end !== end) x_range.setv({start, end}, {sync: false})
const want = zoomed ? fine : coarse
if (String(ticker.ticks) !== String(want)) ticker.setv({ticks: want}, {sync: false})
"""


class CacheGrid(Part):
    HEIGHT = 230  # px, the figure's (the first paint takes the same: app/figure/snapshot.py)

    def build(self):
        self.rows = grid_rows(self.ex.cfg)
        # the prefill's note stays at every position (its words by mode): the grid never moves on a step
        self.heading, self.note, self.prefill = html_pane(), html_pane(), html_pane()
        self.figure = self.make_figure()
        self.layout = pn.Column(
            self.heading,
            self.prefill,
            pn.pane.Bokeh(self.figure, sizing_mode="stretch_width"),
            self.note,
            sizing_mode="stretch_width",
            margin=0,
        )

    def rebuild(self):
        """Another model: its cache holds H_kv d_k numbers per position and layer."""
        self.images.data = {
            **self.images.data,
            "image": [np.full((kv_width(self.ex.cfg), self.n), np.nan, dtype=np.float32) for _ in self.rows],
        }
        self.relabel()

    def band_y(self, i: int) -> float:
        """Centre of row i of the grid (row 0 at the top)."""
        return (len(self.rows) - 1 - i) * BAND + BAND / 2

    def make_figure(self):
        ys = [self.band_y(i) for i in range(len(self.rows))]
        self.make_sources(ys)
        f = position_figure(self.n, self.HEIGHT, y_range=Range1d(-0.2, len(self.rows) * BAND + 0.35))
        self.add_values(f)
        self.add_future(f)
        self.add_cells(f)
        self.add_marks(f)
        f.yaxis.ticker = FixedTicker(ticks=ys)
        self.zoom_on_phones(f)
        return f

    def make_sources(self, ys: list[float]):
        """The figure's data: the values (one image per row), the cells (one per row and position), what
        this step computed (add_marks) and the hatched future (one band per row)."""
        n, rows = self.n, self.rows
        # values are shown divided by their row's fixed scale (Explorer.kv_scale); NaN: not computed
        self.images = ColumnDataSource(
            {
                "image": [np.full((kv_width(self.ex.cfg), n), np.nan, dtype=np.float32) for _ in rows],
                "x": [0.5] * len(rows),
                "y": [y - FILL / 2 for y in ys],
                "dw": [n] * len(rows),
                "dh": [FILL] * len(rows),
            }
        )
        size = len(rows) * n
        self.cells = ColumnDataSource(
            {
                "x": [p for _ in rows for p in range(1, n + 1)],
                "y": [y for y in ys for _ in range(n)],
                "pos": [p for _ in rows for p in range(1, n + 1)],
                "row": [""] * size,
                "tok": [""] * size,
                "state": [""] * size,
                "values": [""] * size,
                "line": [PALETTE["line"]] * size,
                "width": [0.5] * size,
            }
        )
        self.marks = ColumnDataSource({"x": [], "y": []})
        self.block = ColumnDataSource({"x": [], "y": [], "w": []})  # one outline per row
        self.bracket = ColumnDataSource({"xs": [], "ys": []})  # over the block
        self.future = ColumnDataSource({"x": [n + 1] * len(rows), "y": ys, "w": [0] * len(rows)})

    def add_values(self, f):
        """Every stored number in colour, one image per row."""
        f.add_glyph(
            self.images,
            Image(
                image="image",
                x="x",
                y="y",
                dw="dw",
                dh="dh",
                color_mapper=LinearColorMapper(palette=CELL_PALETTE, low=-1, high=1, nan_color=(0, 0, 0, 0)),
            ),
        )

    def add_future(self, f):
        """Not yet computed: one hatched band per row over the future columns (one pattern per row
        keeps each redraw cheap; a hatch per cell would be redrawn cell by cell)."""
        f.add_glyph(
            self.future,
            Rect(
                x="x",
                y="y",
                width="w",
                height=FILL,
                fill_color=PALETTE["grid-empty"],
                line_color=PALETTE["line"],
                hatch_pattern="/",
                hatch_color=PALETTE["faint"],
                hatch_alpha=0.35,
                hatch_scale=6,
            ),
        )

    def add_cells(self, f):
        """Each cell's outline (its state's line), with what the hover says of it."""
        r = f.add_glyph(
            self.cells,
            Rect(x="x", y="y", width=0.92, height=FILL, fill_alpha=0.0, line_color="line", line_width="width"),
        )
        f.add_tools(HoverTool(renderers=[r], tooltips="@row · @pos «@tok» · @state<br>@values"))

    def add_marks(self, f):
        """What this step computed: a block's outline with a bracket over it, or a triangle over a lone
        column."""
        f.add_glyph(
            self.block, Rect(x="x", y="y", width="w", height=FILL, fill_alpha=0.0, line_color=INK, line_width=OUTLINE)
        )
        f.add_glyph(self.marks, Scatter(x="x", y="y", marker="triangle", size=9, fill_color=INK, line_color=INK))
        f.add_glyph(self.bracket, MultiLine(xs="xs", ys="ys", line_color=INK, line_width=2))

    def zoom_on_phones(self, f):
        """The browser sets the zoomed x range itself (ZOOM_JS) on a resize and on every step."""
        n = self.n
        zoom = CustomJS(
            args=dict(
                media=PHONE_MEDIA,
                n=n,
                size=min(ZOOM, n),
                future=self.future,
                x_range=f.x_range,
                ticker=f.xaxis[0].ticker,
                coarse=ticks(n),
                fine=zoom_ticks(n),
            ),
            code=ZOOM_JS,
        )
        f.js_on_change("inner_width", zoom)
        self.future.js_on_change("data", zoom)

    def relabel(self):
        self.heading.object = f"<h2>{esc(self.tr('grid_title'))}</h2>"
        cfg = self.ex.cfg
        shared = self.tr("grid_shared", n=cfg.n_heads // cfg.n_kv_heads) if cfg.n_kv_heads < cfg.n_heads else ""
        scale = colour_scale(CELL_PALETTE, "−", "+", self.tr("scale_cells"))
        self.legend = (
            f"<p class='legend-inline'>{esc(self.tr('grid_note', n=cfg.n_kv_heads, dk=cfg.d_head))}"
            f"{esc(shared)} {esc(self.tr('grid_note_block'))} {scale}</p>"
        )
        self.figure.xaxis.axis_label = self.tr("grid_x")
        self.figure.yaxis.major_label_overrides = {
            self.band_y(i): self.tr(ROW_KEY[kind], l=layer + 1) for i, (layer, kind) in enumerate(self.rows)
        }
        self.drawn = {"ids": [], "cells": {}}  # hover texts are in the language: send them all again
        self.redraw()

    def redraw(self):
        known = self.draw_numbers()
        self.draw_cells(known)
        self.draw_future_and_marks()
        key = "grid_prefill_full" if self.session.settings.mode == FULL else "grid_prefill"
        text = f"<p class='legend-inline' data-testid='prefill'>{esc(self.tr(key, n=self.ex.n_prompt))}</p>"
        if self.prefill.object != text:
            self.prefill.object = text
        a, b = zoom_window(self.ex.t, self.n)
        note = zoom_overview(self.ex.t, self.n, self.tr("grid_zoom", a=a, b=b, n=self.n)) + self.legend
        if self.note.object != note:
            self.note.object = note

    def scaled(self, layer: int, kind: str, start: int = 0) -> np.ndarray:
        """(d, t - start) the stored vectors of positions start+1..t, over their row's scale."""
        ex = self.ex
        return (ex.vectors(layer, kind)[start:].T / ex.kv_scale[layer, kind]).astype(np.float32)

    def draw_numbers(self) -> int:
        """The numbers: a stored column never changes, so only new columns are sent. Returns how
        many positions the browser already had (0: a new text)."""
        ex, n, d = self.ex, self.n, kv_width(self.ex.cfg)
        drawn = self.drawn["ids"]
        known = len(drawn) if drawn == ex.ids[: len(drawn)] else 0
        if known == 0:
            images = []
            for layer, kind in self.rows:
                img = np.full((d, n), np.nan, dtype=np.float32)
                img[:, : ex.t] = self.scaled(layer, kind)
                images.append(img)
            self.images.data["image"] = images
        elif ex.t > known:
            self.images.patch(
                {
                    "image": [
                        ((i, slice(0, d), slice(known, ex.t)), self.scaled(layer, kind, known).ravel())
                        for i, (layer, kind) in enumerate(self.rows)
                    ]
                }
            )
        self.drawn["ids"] = list(ex.ids)
        return known

    def cell(self, i: int, p: int, states, vecs) -> tuple:
        """What cell (row i, position p) shows: (state, hover row, token, state text, values)."""
        ex = self.ex
        layer, kind = self.rows[i]
        st = int(states[p])
        key = {FUTURE: "cell_future", READ: "cell_read", COMPUTED: "cell_computed"}[st]
        if st == COMPUTED and ex.t <= ex.n_prompt:
            key = "cell_prefill"
        state_text = self.tr(key)
        if p < ex.t:
            v = vecs[i][p]
            values = self.tr("cell_values", n=v.size, lo=num(v.min(), self.lang, 2), hi=num(v.max(), self.lang, 2))
            tok = show_token(ex.gpt.tokenizer.vocab[ex.ids[p]])
        else:
            values = tok = ""
        return (st, self.tr(ROW_KEY[kind], l=layer + 1), tok, state_text, values)

    def draw_cells(self, known: int):
        """The cells' states and hover texts: only the columns whose state or contents changed."""
        ex, n, cells = self.ex, self.n, self.drawn["cells"]
        states = ex.cell_states()
        vecs = [ex.vectors(layer, kind) for layer, kind in self.rows]
        prefill = ex.t <= ex.n_prompt  # the prompt's columns say "in the prefill"
        single = computed_block(states) is None
        everything = (
            not cells or known == 0 or self.drawn.get("prefill") != prefill or self.drawn.get("single") != single
        )
        self.drawn["prefill"], self.drawn["single"] = prefill, single
        patch = {k: [] for k in ("row", "tok", "state", "values", "line", "width")}
        for p in range(n):
            if not everything and cells[0, p][0] == states[p] and (p < known or states[p] == FUTURE):
                continue  # same token, same numbers, same state
            for i in range(len(self.rows)):
                cell = self.cell(i, p, states, vecs)
                cell += cell_style(cell[0], single)
                if cells.get((i, p)) == cell:
                    continue
                cells[i, p] = cell
                for col, value in zip(("row", "tok", "state", "values", "line", "width"), cell[1:]):
                    patch[col].append((i * n + p, value))
        if patch["state"]:
            self.cells.patch(patch)

    def draw_future_and_marks(self):
        t, n, rows = self.ex.t, self.n, len(self.rows)
        future = {"x": [(t + n + 1) / 2] * rows, "y": self.future.data["y"], "w": [n - t] * rows}
        if future["w"] != list(self.future.data["w"]):
            self.future.data = future
        states = self.ex.cell_states()
        block, top = computed_block(states), rows * BAND + 0.15
        computed = [] if block else list(np.flatnonzero(states == COMPUTED) + 1)
        if computed != list(self.marks.data["x"]):
            self.marks.data = {"x": computed, "y": [top] * len(computed)}
        a, b = (block[0] - 0.5, block[1] + 0.5) if block else (0, 0)
        spans = (
            {"x": [(a + b) / 2] * rows, "y": self.future.data["y"], "w": [b - a] * rows}
            if block
            else {"x": [], "y": [], "w": []}
        )
        if spans["w"] != list(self.block.data["w"]):
            self.block.data = spans
            self.bracket.data = (
                {"xs": [[a + 0.1, a + 0.1, b - 0.1, b - 0.1]], "ys": [[top - 0.1, top, top, top - 0.1]]}
                if block
                else {"xs": [], "ys": []}
            )
