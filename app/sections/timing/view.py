"""Tus milisegundos: the lesson's timing table, measured in the reader's browser (logic.py: TimingLab),
its plot, and what it says (app/state/clock.py's sentences, chosen from the numbers)."""

from __future__ import annotations

import functools

import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import HoverTool, Range1d

from model.timing import table_positions, window_ids

from ...figure.parts import esc
from ...i18n import num
from ...state import clock
from ...style import GREEN, GREY
from ..base import MeasuringSection
from ..drawing import fit_y, lab_table, series_figure

LAB_SAMPLES = 9  # measurements of each way per position (interleaved; the table shows medians)
SERIES = {"cached": (GREEN, "circle", "solid"), "full": (GREY, "square", "dashed")}


class TimingSection(MeasuringSection):
    key = "timing"
    title_key = "lab_title"

    def build(self):
        self.intro, self.status, self.table, self.explain = (self.pane() for _ in range(4))
        controls = self.measure_controls()
        positions = table_positions(self.ex.cfg)
        self.fig, self.series = series_figure(Range1d(0, self.n + 2), positions, SERIES, [], height=220)
        self.plot_heading = self.pane(visible=False)
        self.plot = pn.pane.Bokeh(self.fig, sizing_mode="stretch_width", visible=False)
        self.card.objects = [self.intro, controls, self.status, self.table, self.plot_heading, self.plot, self.explain]

    def label(self):
        positions = table_positions(self.ex.cfg)
        self.intro.object = f"<p>{esc(self.tr('lab_intro', n=len(positions), t=positions[-1], s=LAB_SAMPLES))}</p>"
        self.series["cached"][1].label = bk_value(self.tr("with_cache"))
        self.series["full"][1].label = bk_value(self.tr("without_cache"))
        self.run_button.name = self.tr("lab_run")
        self.cancel_button.name = self.tr("lab_cancel")
        self.plot_heading.object = f"<h3>{esc(self.tr('lab_plot_title'))}</h3>"
        self.fig.xaxis.axis_label = self.tr("grid_x")
        self.fig.yaxis.axis_label = self.tr("clock_plot_y")
        self.fig.select_one(HoverTool).tooltips = [(self.tr("grid_x"), "@x"), (self.tr("clock_plot_y"), "@y{0.000}")]
        self.show()

    def new_lab(self):
        from .logic import TimingLab

        ex = self.ex  # the page's text, or the same seed's full window (written where the lab measures)
        seed, top_p = ex.settings.seed, ex.settings.top_p
        ids = list(ex.ids) if ex.full else functools.partial(window_ids, ex.gpt, seed=seed, top_p=top_p)
        return TimingLab(ex.gpt, ids, positions=table_positions(ex.cfg), samples=LAB_SAMPLES)

    def render(self):
        lab, lang = self.lab, self.lang
        if lab is None:
            self.table.object = self.explain.object = ""
            return
        rows = lab.rows
        ratio = lambda x: clock.ratio_text(x, lang)  # noqa: E731
        table = lab_table(
            self.tr,
            self.tr("lab_title"),
            ["table_pos", "lab_c", "lab_tc", "table_ms_cached", "table_ms_full", "lab_clock", "lab_count"],
            [
                [
                    str(r["t"]),
                    num(r["c"], lang),
                    num(r["tc"], lang),
                    clock.ms_text(r["cached_s"], lang),
                    clock.ms_text(r["full_s"], lang),
                    f"<b>{ratio(r['clock_ratio'])}×</b> <span class='spread'>({ratio(r['ratio_low'])}–"
                    f"{ratio(r['ratio_high'])})</span>",
                    f"{num(r['count_ratio'], lang)}×",
                ]
                for r in rows
            ],
            "timing-table",
        )
        by_row = lab.by_row
        if by_row:
            table += f"<p data-testid='timing-rows'>{esc(self.tr('lab_rows', n=by_row['rows'], per_row=clock.ms_text(by_row['per_row_in_pass_s'], lang), alone=clock.ms_text(by_row['one_row_s'], lang), x=ratio(by_row['ratio'])))}</p>"
        self.table.object = table
        reading = lab.summary
        self.explain.object = (
            ""
            if reading is None
            else "<p class='explain' data-testid='timing-explain'>"
            + " ".join(esc(self.tr(key, **values)) for key, values in clock.table_sentences(reading, lang))
            + "</p>"
        )
        for key, seconds in (("cached", "cached_s"), ("full", "full_s")):
            self.series[key][0].data = {"x": [r["t"] for r in rows], "y": [r[seconds] * 1e3 for r in rows]}
        fit_y(self.fig, [src for src, _item in self.series.values()])
        self.plot.visible = self.plot_heading.visible = self.fig.visible = bool(rows)

    def status_values(self) -> dict:
        return {**super().status_values(), "s": LAB_SAMPLES}
