"""The explorable's figures, each a Part (app/figure/parts.py) over one Session:

- `CacheGrid` (app/figure/grid.py): the cache, one column per position, one row per stored
  matrix (K and V of every layer), each cell the real vector in colour; what this step computed
  and read; on a phone, the newest positions zoomed in.
- `QueryReads`: what the newest token's query reads, one row per layer and head.
- `CostBars`: the multiplications of every token, with the cache and without it.
- `ClockPlot` (app/figure/clock_plot.py): the time each step took, measured here.

Each figure is built once; a redraw sends the browser only what changed (new columns, the
cells whose state changed, new bars and points), which keeps a step under 50 ms in Pyodide.
"""

from __future__ import annotations

import math

import numpy as np
import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import (
    ColumnDataSource,
    FixedTicker,
    HoverTool,
    Image,
    Legend,
    LegendItem,
    LogColorMapper,
    Range1d,
    Span,
    VBar,
)
from bokeh.palettes import Blues9

from model import cost

from ..i18n import num, sci
from ..state.settings import CACHE, FULL
from ..style import (
    GREEN,
    GREY,
    INK,
    PALETTE,
    position_figure,
    set_ticks,
)
from .parts import Part, colour_scale, esc, html_pane

READS_PALETTE = list(reversed(Blues9))  # the attention map: light (0.001) to dark blue (1)


class QueryReads(Part):
    """What the newest token's query reads: its attention weights over every cached position, one row
    per layer and head, under the grid's columns (log colour scale; exact values on hover). Without
    the cache, the proof that the rows the full pass computed again are the ones the cache kept."""

    def figure_height(self) -> int:
        """Room for the axis and 14 px per row (the first paint takes the same: app/figure/snapshot.py)."""
        return 40 + 14 * len(self.rows)

    def build(self):
        cfg = self.ex.cfg
        self.rows = [(layer, head) for layer in range(cfg.n_layers) for head in range(cfg.n_heads)]
        self.heading, self.proof = html_pane(), html_pane()
        self.image = ColumnDataSource({"image": [np.full((len(self.rows), self.n), np.nan, dtype=np.float32)]})
        f = position_figure(self.n, self.figure_height(), y_range=Range1d(0, len(self.rows)))
        r = f.add_glyph(
            self.image,
            Image(
                image="image",
                x=0.5,
                y=0,
                dw=self.n,
                dh=len(self.rows),
                color_mapper=LogColorMapper(
                    palette=READS_PALETTE,
                    low=1e-3,
                    high=1.0,
                    low_color=PALETTE["surface"],
                    nan_color=(0, 0, 0, 0),
                ),
            ),
        )
        self.hover = HoverTool(renderers=[r], tooltips="")
        f.add_tools(self.hover)
        f.yaxis.ticker = FixedTicker(ticks=[i + 0.5 for i in range(len(self.rows))])
        f.css_classes = ["kv-reads"]
        self.figure = f
        self.layout = pn.Column(
            self.heading,
            pn.pane.Bokeh(f, sizing_mode="stretch_width"),
            self.proof,
            sizing_mode="stretch_width",
            margin=0,
        )

    def relabel(self):
        tr, f = self.tr, self.figure
        scale = colour_scale(READS_PALETTE, num(0.001, self.lang, 3), "1", tr("scale_reads"))
        self.heading.object = (
            f"<h3>{esc(tr('reads_title'))}</h3><p class='legend-inline'>{esc(tr('reads_note'))} {scale}</p>"
        )
        f.xaxis.axis_label, f.yaxis.axis_label = tr("grid_x"), tr("reads_y")
        f.yaxis.major_label_overrides = {
            i + 0.5: f"{layer + 1}·{head + 1}" for i, (layer, head) in enumerate(reversed(self.rows))
        }
        self.hover.tooltips = [(tr("grid_x"), "$x{0}"), (tr("reads_weight"), "@image{0.0000}")]
        self.redraw()

    def weights(self) -> np.ndarray:
        """(rows, n) the newest query's weights per (layer, head); NaN past t. Bokeh draws array row 0
        at the bottom, so layer 1, head 1 is the last row (the top of the figure)."""
        ex = self.ex
        img = np.full((len(self.rows), self.n), np.nan, dtype=np.float32)
        for i, (layer, head) in enumerate(self.rows):
            img[len(self.rows) - 1 - i, : ex.t] = ex.reads[layer][head]
        return img

    def redraw(self):
        self.image.data = {"image": [self.weights()]}
        ex, m = self.ex, self.ex.clock()
        if ex.t <= ex.n_prompt or m.recomputed is None:
            text = self.tr("reads_prefill", t=ex.t) if ex.t <= ex.n_prompt else ""
        elif self.session.settings.mode == FULL:
            text = self.tr("reads_full", t=ex.t, prev=ex.t - 1, diff=sci(m.recomputed, self.lang))
        else:
            text = self.tr("reads_cached", t=ex.t, n=ex.t - 1, diff=sci(m.recomputed, self.lang))
        self.proof.object = f"<p class='legend-inline' data-testid='reads-proof'>{esc(text)}</p>"


def nice_below(x: float) -> float:
    """The largest 1, 2, 2.5 or 5 times a power of ten that is at most x."""
    power = 10 ** math.floor(math.log10(x))
    return max(m * power for m in (1, 2, 2.5, 5, 10) if m * power <= x)


def nice_step(top: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) for about five ticks up to `top`."""
    raw = top / 5
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


class BarScales:
    """The two scales of the cost bars, in millions of multiplications: `full` fits the grey ramp
    t·c(t); `cached` fits the green bars c(t), `zoom` times taller (a round number)."""

    def __init__(self, ex):
        self.full = float(ex.cost_full[-1]) * 1.06 / 1e6
        self.zoom = nice_below(self.full / (float(ex.cost_cached[-1]) * 1.15 / 1e6))
        self.cached = self.full / self.zoom

    def ticks(self, top: float, lang: str) -> tuple[list[float], dict]:
        step = nice_step(top)
        values = [i * step for i in range(int(top / step) + 1)]
        digits = max(0, -math.floor(math.log10(step))) if step < 1 else 0
        return values, {v: num(v, lang, digits) for v in values}


class CostBars(Part):
    """The multiplications of every token. Until the reader first switches to no cache, only the
    green bars c(t), on their own scale (they barely change: the lesson's first observation);
    from then on the grey ramp t·c(t) too, and a strip below that keeps the green bars visible
    at `zoom` times their height. The current mode's bars are solid, the other's faded."""

    HEIGHT, STRIP_HEIGHT = 260, 130  # px, the figure's and the strip's (the first paint takes the same)

    def build(self):
        n, ex = self.n, self.ex
        pos = np.arange(1, n + 1)
        self.scales = BarScales(ex)
        self.heading, self.note = html_pane(), html_pane()
        self.bars = ColumnDataSource(
            {
                "pos": pos,
                "c": np.zeros(n),
                "tc": np.zeros(n),
                "c_text": [""] * n,
                "tc_text": [""] * n,
                "ratio": [f"{p}×" for p in pos],
            }
        )
        f = position_figure(n, self.HEIGHT, y_range=Range1d(0, self.scales.cached), grid="y")
        self.full = f.add_glyph(
            self.bars,
            VBar(
                x="pos",
                top="tc",
                width=0.8,
                fill_color=GREY,
                line_color=GREY,
                hatch_pattern="/",
                hatch_color="white",
                hatch_alpha=0.6,
            ),
            visible=False,
        )
        self.cached = f.add_glyph(
            self.bars, VBar(x="pos", top="c", width=0.8, fill_color=GREEN, line_color=PALETTE["cache-deep"])
        )
        self.legend = [LegendItem(label="", renderers=[self.cached]), LegendItem(label="", renderers=[self.full])]
        self.legend_box = Legend(items=self.legend[:1], location="top_left", background_fill_alpha=0.85)
        f.add_layout(self.legend_box)
        self.hover = HoverTool(renderers=[self.full, self.cached], tooltips="")
        f.add_tools(self.hover)
        self.now = Span(location=2, dimension="height", line_color=INK, line_dash="dashed", line_width=1)
        f.add_layout(self.now)
        f.css_classes = ["kv-bars"]  # for tests and styles
        self.figure, self.strip = f, None
        # the strip is made when the ramp is first revealed (fewer models to build and render at start)
        self.strip_pane = pn.Column(sizing_mode="stretch_width", margin=0, visible=False)
        self.strip_head = html_pane(visible=False, margin=(0, 10))  # the strip's legend, as text that wraps
        self.layout = pn.Column(
            self.heading,
            pn.pane.Bokeh(f, sizing_mode="stretch_width"),
            self.strip_head,
            self.strip_pane,
            self.note,
            sizing_mode="stretch_width",
            margin=0,
        )

    def rebuild(self):
        """Another model: other costs, other scales."""
        self.scales = BarScales(self.ex)
        if self.strip is not None:
            self.strip.y_range.end = self.scales.cached
        self.relabel()

    def make_strip(self):
        """The green bars again, at their own scale, under the ramp, in the strip's pane."""
        s = position_figure(self.n, self.STRIP_HEIGHT, y_range=Range1d(0, self.scales.cached), grid="y")
        s.add_glyph(self.bars, VBar(x="pos", top="c", width=0.8, fill_color=GREEN, line_color=PALETTE["cache-deep"]))
        s.xaxis.major_label_text_font_size = "0pt"
        s.css_classes = ["kv-bars-zoom"]
        self.strip = s
        self.relabel_strip()
        self.strip_pane.objects = [pn.pane.Bokeh(s, sizing_mode="stretch_width")]

    def relabel_strip(self):
        values, labels = self.scales.ticks(self.scales.cached, self.lang)
        set_ticks(self.strip.yaxis[0], values, labels)
        self.strip_head.object = (
            f"<p class='legend-inline'><span class='swatch cached'></span> "
            f"{esc(self.tr('bars_zoom', zoom=num(self.scales.zoom, self.lang)))}</p>"
        )

    def relabel(self):
        tr, f, lang, ex = self.tr, self.figure, self.lang, self.ex
        self.heading.object = f"<h2>{esc(tr('bars_title'))}</h2>"
        f.xaxis.axis_label, f.yaxis.axis_label = tr("grid_x"), tr("bars_y")
        if self.strip is not None:
            self.relabel_strip()
        values, labels = self.scales.ticks(self.scales.cached, lang)
        set_ticks(f.yaxis[0], values, labels)
        self.legend[0].label, self.legend[1].label = bk_value(tr("bars_cached")), bk_value(tr("bars_full"))
        self.hover.tooltips = [
            (tr("grid_x"), "@pos"),
            (tr("with_cache"), "@c_text"),
            (tr("without_cache"), "@tc_text"),
            ("×", "@ratio"),
        ]
        self.bars.data.update(
            {"c_text": [num(c, lang) for c in ex.cost_cached], "tc_text": [num(c, lang) for c in ex.cost_full]}
        )
        self.drawn_t, self.revealed = None, None
        self.redraw()

    def redraw(self):
        ex, t, last = self.ex, self.ex.t, self.drawn_t
        if last is None or t < last:  # first drawing or a new text: all bars
            shown = np.arange(1, self.n + 1) <= t
            self.bars.data.update(
                {"c": np.where(shown, ex.cost_cached, 0) / 1e6, "tc": np.where(shown, ex.cost_full, 0) / 1e6}
            )
        elif t > last:  # new positions: their bars only
            idx = range(last, t)
            self.bars.patch(
                {"c": [(i, ex.cost_cached[i] / 1e6) for i in idx], "tc": [(i, ex.cost_full[i] / 1e6) for i in idx]}
            )
        self.drawn_t = t
        self.reveal(self.session.ramp)
        cached_on = self.session.settings.mode == CACHE
        self.cached.glyph.fill_alpha = 1.0 if cached_on else 0.5
        self.full.glyph.fill_alpha = 0.35 if cached_on else 0.95
        self.full.glyph.line_alpha = 0.5 if cached_on else 1.0
        self.now.location = t

    def reveal(self, ramp: bool):
        """Before the first switch to no cache: green bars only, on their scale. After: the ramp."""
        if ramp == self.revealed:
            return
        self.revealed = ramp
        f, lang = self.figure, self.lang
        top = self.scales.full if ramp else self.scales.cached
        values, labels = self.scales.ticks(top, lang)
        f.y_range.end = top
        set_ticks(f.yaxis[0], values, labels)
        if ramp and self.strip is None:
            self.make_strip()
        self.full.visible = ramp
        self.strip_pane.visible = self.strip_head.visible = ramp
        self.legend_box.items = self.legend if ramp else self.legend[:1]
        cfg = self.ex.cfg
        growth = (self.ex.cost_cached[-1] / self.ex.cost_cached[0] - 1) * 100
        self.note.object = (
            f"<p class='legend-inline' data-testid='bars-note'>"
            f"{esc(self.tr('bars_note_full' if ramp else 'bars_note_cache', n=self.n, zoom=num(self.scales.zoom, lang), pct=num(growth, lang), eq=num(cost.attention_equals_matrices_at(cfg), lang)))}</p>"
        )
