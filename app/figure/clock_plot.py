"""The explorable's third figure: the time each step took, measured here, both ways (a Part over
one Session, app/figure/parts.py), streamed point by point."""

from __future__ import annotations

import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import ColumnDataSource, HoverTool, Legend, LegendItem, Scatter

from ..style import GREEN, GREY, position_figure
from .parts import Part, esc, html_pane


class ClockPlot(Part):
    """The measured time of every step, both ways; hidden at the prompt until there is one, its room kept
    past the prompt until its first point, and made then (fewer models to build and render at start)."""

    watches = ("revision", "clock")
    HEIGHT = 220  # px, the figure's (the first paint takes the same: app/figure/snapshot.py)

    def build(self):
        self.heading = html_pane()
        self.points = ColumnDataSource({"pos": [], "cached_ms": [], "full_ms": []})
        self.figure = None
        # its room until the first point (a figure with no data sent the browser's range back as -inf)
        self.placeholder = pn.Spacer(height=self.HEIGHT, sizing_mode="stretch_width", margin=0)
        self.layout = pn.Column(self.heading, self.placeholder, sizing_mode="stretch_width", margin=0, visible=False)

    def make_figure(self):
        f = position_figure(self.n, self.HEIGHT, grid="xy")
        full = f.add_glyph(
            self.points, Scatter(x="pos", y="full_ms", marker="square", size=6, fill_color=GREY, line_color=GREY)
        )
        cached = f.add_glyph(
            self.points, Scatter(x="pos", y="cached_ms", marker="circle", size=6, fill_color=GREEN, line_color=GREEN)
        )
        self.legend = [LegendItem(label="", renderers=[cached]), LegendItem(label="", renderers=[full])]
        # above the frame, on one line: a point is never under it, wherever the clock puts it
        legend = Legend(items=self.legend, orientation="horizontal", location="top_left", border_line_alpha=0)
        legend.margin, legend.padding = 0, 4
        f.add_layout(legend, "above")
        f.y_range.start = 0
        self.hover = HoverTool(renderers=[full, cached], tooltips="")
        f.add_tools(self.hover)
        self.figure = f
        self.relabel_figure()
        self.layout.objects = [self.heading, pn.pane.Bokeh(f, sizing_mode="stretch_width")]

    def relabel_figure(self):
        tr, f = self.tr, self.figure
        f.yaxis.axis_label, f.xaxis.axis_label = tr("clock_plot_y"), tr("grid_x")
        self.legend[0].label, self.legend[1].label = bk_value(tr("with_cache")), bk_value(tr("without_cache"))
        self.hover.tooltips = [
            (tr("grid_x"), "@pos"),
            (tr("with_cache") + " (ms)", "@cached_ms{0.000}"),
            (tr("without_cache") + " (ms)", "@full_ms{0.000}"),
        ]

    def relabel(self):
        self.heading.object = f"<h3>{esc(self.tr('clock_plot_title'))}</h3>"
        if self.figure is not None:
            self.relabel_figure()
        self.drawn = []
        self.redraw()

    def redraw(self):
        """New points are streamed; a new text starts the plot over."""
        ex = self.ex
        pos = sorted(p for p, m in ex.measures.items() if m.cached_s is not None)
        drawn = self.drawn
        if pos[: len(drawn)] != drawn or len(self.points.data["pos"]) != len(drawn):
            self.points.data = {"pos": [], "cached_ms": [], "full_ms": []}
            drawn = []
        new = pos[len(drawn) :]
        if new:
            self.points.stream(
                {
                    "pos": new,
                    "cached_ms": [ex.measures[p].cached_s * 1e3 for p in new],
                    "full_ms": [ex.measures[p].full_s * 1e3 for p in new],
                }
            )
        self.drawn = pos
        if pos and self.figure is None:
            self.make_figure()
        shown = self.shown()
        if self.layout.visible != shown:  # the figure itself too (a hidden pane alone still kept its height)
            self.layout.visible = shown
            if self.figure is not None:
                self.figure.visible = shown

    def shown(self) -> bool:
        """Once a step is measured, or past the prompt (its point is on its way: the page times a step
        once it has drawn it); at the prompt with nothing measured, no empty plot. The first paint takes
        its room by the same rule (app/figure/snapshot.py)."""
        ex = self.ex
        return ex.t > ex.n_prompt or any(m.cached_s is not None for m in ex.measures.values())
