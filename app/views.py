"""Thin Panel/Bokeh views over `Explorer`: every figure is built once and then
updated by changing its data sources; HTML readouts are re-rendered strings.
"""
from __future__ import annotations

import html
from dataclasses import replace

import numpy as np
import panel as pn
from bokeh.models import (ColumnDataSource, FixedTicker, HoverTool, Legend, LegendItem, LinearColorMapper,
                          Range1d, Span)
from bokeh.core.properties import value as bk_value
from bokeh.palettes import PuOr11
from bokeh.plotting import figure

from . import i18n
from .a11y import A11y
from .sandbox import CodeSandbox
from .i18n import num, sci, tr
from .state import CACHE, COMPUTED, FULL, FUTURE, READ, Explorer
from .urlstate import SPEED_RANGE, UrlState

GREEN = "#009E73"     # with the cache (Okabe-Ito bluish green)
GREY = "#6f6f6f"      # without it
INK = "#1a1a1a"
HIGHLIGHT = "#F0E442"  # the current token (Okabe-Ito yellow)
ROWS = [(0, "k"), (0, "v"), (1, "k"), (1, "v")]   # (block, matrix), top to bottom
BAND = 1.0            # height of one row of the grid, in data units
FILL = 0.84           # part of it the cells fill

CSS = """
:host { --green: %(green)s; --grey: %(grey)s; --ink: %(ink)s; font-size: 16px; color: var(--ink); }
h1 { font-size: 1.45rem; margin: 0.2em 0; line-height: 1.2; }
h2 { font-size: 1.05rem; margin: 0.6em 0 0.2em; }
p { margin: 0.3em 0; line-height: 1.45; }
.text { font-family: Georgia, 'Times New Roman', serif; font-size: 1.15rem; line-height: 2.0; }
.tok { border: 1px solid #b9b9b9; border-radius: 3px; padding: 0 1px; margin: 0 1px; white-space: pre-wrap; }
.tok.prompt { border-style: dashed; font-style: italic; background: #f3f3f3; }
.tok.current { background: %(hl)s; border: 2px solid var(--ink); font-weight: bold; }
.tok.nl { color: #777; }
.tpos { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 1.1rem; font-weight: bold; }
.legend-inline { font-size: 0.85rem; color: #444; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(230px, 1fr)); gap: 10px; }
.card.wide { grid-column: span 2; }
@media (max-width: 560px) { .card.wide { grid-column: auto; } }
.card { border: 1px solid #d0d0d0; border-radius: 6px; padding: 8px 10px; background: #fff; }
.card h3 { font-size: 0.95rem; margin: 0 0 4px; }
.row { display: flex; justify-content: space-between; gap: 8px; align-items: baseline; }
.num { font-family: ui-monospace, Menlo, Consolas, monospace; font-variant-numeric: tabular-nums; }
.big { font-size: 1.25rem; font-weight: bold; }
.cached { color: #00694d; } .full { color: #4a4a4a; }
.active { outline: 2px solid var(--ink); outline-offset: 2px; border-radius: 3px; }
.swatch { display: inline-block; width: 0.9em; height: 0.9em; vertical-align: -0.1em; border: 1px solid #333; }
.swatch.cached { background: var(--green); }
.swatch.full { background: repeating-linear-gradient(45deg, var(--grey) 0 3px, #cfcfcf 3px 6px); }
.error { border: 2px solid #b00020; background: #fff4f4; border-radius: 6px; padding: 8px 12px; }
.error code { font-size: 1rem; }
.notice { border: 1px solid #b58900; background: #fffbe6; border-radius: 6px; padding: 4px 10px; margin: 2px 0;
          font-size: 0.9rem; }
.explain { font-size: 0.92rem; color: #333; }
table.data { border-collapse: collapse; font-size: 0.85rem; width: 100%%; }
table.data th, table.data td { border-bottom: 1px solid #ddd; padding: 2px 6px; text-align: right; }
table.data td.tok, table.data th.tok { text-align: left; font-family: Georgia, serif; }
table.data tr.current { background: #fff7b3; }
pre.code { background: #f6f6f6; border: 1px solid #ddd; border-radius: 4px; padding: 8px; overflow-x: auto;
           font-size: 0.85rem; line-height: 1.4; }
pre.code mark { background: %(hl)s; font-weight: bold; }
.feedback { border-radius: 6px; padding: 6px 10px; margin: 4px 0 10px; }
.feedback.right { border: 2px solid #00694d; background: #effaf5; }
.feedback.right b::before { content: "✓ "; }
.feedback.wrong { border: 2px solid #8a5a00; background: #fff8e6; }
.feedback.wrong b::before { content: "✗ "; }
h3 { font-size: 1rem; margin: 0.8em 0 0.2em; }
@media (prefers-reduced-motion: reduce) { * { transition: none !important; animation: none !important; } }
""" % {"green": GREEN, "grey": GREY, "ink": INK, "hl": HIGHLIGHT}


def show_token(s: str) -> str:
    """A token as text to show alone: a newline is drawn as ⏎."""
    return s.replace("\n", "⏎")


class ExplorableView:
    def __init__(self, explorer: Explorer, url: UrlState):
        self.ex = explorer
        self.url = url
        self.lang = url.lang
        self.n = explorer.cfg.n_ctx
        self._callback = None
        self._build_widgets()
        self._build_grid()
        self._build_bars()
        self._build_clock()
        self._build_layout()
        self._forget_drawing()
        self.apply_language()
        self.refresh()

    # -- construction ---------------------------------------------------------------------
    def _html(self, **kw):
        return pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", **kw)

    def _build_widgets(self):
        self.step_button = pn.widgets.Button(color="primary", width=130)
        self.play_button = pn.widgets.Toggle(color="default", width=130)
        self.reset_button = pn.widgets.Button(color="default", width=130)
        self.mode_switch = pn.widgets.RadioButtonGroup(options=[CACHE, FULL], value=self.ex.mode,
                                                       color="success", width=260)
        self.speed = pn.widgets.IntSlider(start=SPEED_RANGE[0], end=SPEED_RANGE[1], value=self.url.speed,
                                          width=220)
        self.seed = pn.widgets.IntInput(value=self.ex.settings.seed, start=0, end=2 ** 32 - 1, width=140)
        self.top_p = pn.widgets.FloatSlider(value=self.ex.settings.top_p, start=0.05, end=1.0, step=0.05,
                                            width=220)
        self.lang_select = pn.widgets.RadioButtonGroup(options={"Español": "es", "English": "en",
                                                                "Português": "pt"}, value=self.lang, width=270)
        self.a11y = A11y(sizing_mode="stretch_width")
        self.sandbox = CodeSandbox(height=0, margin=0, sizing_mode="stretch_width")

        self.step_button.on_click(lambda _e: self.do("step"))
        self.reset_button.on_click(lambda _e: self.do("reset"))
        self.play_button.param.watch(lambda e: self.set_playing(e.new), "value")
        self.mode_switch.param.watch(lambda e: self.set_mode(e.new), "value")
        self.speed.param.watch(lambda e: self._restart_timer(), "value")
        self.seed.param.watch(lambda e: self.reconfigure(), "value")
        self.top_p.param.watch(lambda e: self.reconfigure(), "value_throttled")
        self.lang_select.param.watch(lambda e: self.set_language(e.new), "value")
        self.a11y.param.watch(self._on_key, "command")

        self.header = self._html()
        self.notices = self._html(visible=False)
        self.text = self._html()
        self.error = self._html(visible=False)
        self.readouts = self._html()
        self.grid_note = self._html()
        self.grid_heading = self._html()
        self.bars_heading = self._html()
        self.clock_heading = self._html(visible=False)
        self.table = self._html()
        self.share = self._html()

    def _build_grid(self):
        n = self.n
        # values are shown divided by their row's fixed scale (Explorer.kv_scale)
        self.color = LinearColorMapper(palette=list(reversed(PuOr11)), low=-1, high=1, nan_color=(0, 0, 0, 0))
        # one image per row of the grid: (64 numbers, n positions), NaN where not computed
        ys = [self._band_y(i) for i in range(len(ROWS))]
        self.grid_images = ColumnDataSource({
            "image": [np.full((self.ex.cfg.d_model, n), np.nan, dtype=np.float32) for _ in ROWS],
            "x": [0.5] * len(ROWS), "y": [y - FILL / 2 for y in ys],
            "dw": [n] * len(ROWS), "dh": [FILL] * len(ROWS)})
        cells = {"x": [], "y": [], "row": [], "pos": [], "tok": [], "state": [], "values": [],
                 "line": [], "width": []}
        for i in range(len(ROWS)):
            for pos in range(1, n + 1):
                cells["x"].append(pos)
                cells["y"].append(ys[i])
                cells["row"].append("")
                cells["pos"].append(pos)
                for key, value in (("tok", ""), ("state", ""), ("values", ""), ("line", "#cccccc"),
                                   ("width", 0.5)):
                    cells[key].append(value)
        self.grid_cells = ColumnDataSource(cells)
        self.grid_marks = ColumnDataSource({"x": [], "y": []})
        f = figure(height=230, sizing_mode="stretch_width", x_range=Range1d(0.5, n + 0.5),
                   y_range=Range1d(-0.2, len(ROWS) * BAND + 0.35), toolbar_location=None,
                   tools="", min_border_left=10)
        f.image(image="image", x="x", y="y", dw="dw", dh="dh", source=self.grid_images,
                color_mapper=self.color)
        # not yet computed: one hatched band per row over the future columns (one pattern each,
        # cheap to draw; a hatch per cell made every redraw ~70 ms slower)
        self.grid_future = ColumnDataSource({"x": [n + 1] * len(ROWS), "y": ys, "w": [0] * len(ROWS)})
        f.rect(x="x", y="y", width="w", height=FILL, source=self.grid_future, fill_color="#eeeeee",
               line_color="#cccccc", hatch_pattern="/", hatch_color="#8a8a8a", hatch_alpha=0.35, hatch_scale=6)
        r = f.rect(x="x", y="y", width=0.92, height=FILL, source=self.grid_cells, fill_alpha=0.0,
                   line_color="line", line_width="width")
        f.scatter(x="x", y="y", source=self.grid_marks, marker="triangle", size=9, color=INK)
        self.grid_hover = HoverTool(renderers=[r], tooltips="@row · @pos «@tok» · @state<br>@values")
        f.add_tools(self.grid_hover)
        f.yaxis.ticker = FixedTicker(ticks=ys)
        f.xaxis.ticker = FixedTicker(ticks=[1, 8, 16, 24, 32, 40, 48, 56, 64])
        f.grid.visible = False
        f.outline_line_color = None
        self.grid_fig = f
        self.grid_pane = pn.pane.Bokeh(f, sizing_mode="stretch_width")

    def _band_y(self, i: int) -> float:
        """Centre of row i of the grid (row 0 at the top)."""
        return (len(ROWS) - 1 - i) * BAND + BAND / 2

    def _build_bars(self):
        n, ex = self.n, self.ex
        pos = np.arange(1, n + 1)
        self.bars = ColumnDataSource({"pos": pos, "c": np.zeros(n), "tc": np.zeros(n),
                                      "c_text": [""] * n, "tc_text": [""] * n, "ratio": pos.astype(str)})
        top = float(ex.cost_full[-1]) * 1.06 / 1e6                      # drawn in millions
        f = figure(height=260, sizing_mode="stretch_width", x_range=Range1d(0.5, n + 0.5),
                   y_range=Range1d(0, top), toolbar_location=None, tools="", min_border_left=10)
        self.bar_full = f.vbar(x="pos", top="tc", width=0.8, source=self.bars, fill_color=GREY,
                               line_color=GREY, hatch_pattern="/", hatch_color="white", hatch_alpha=0.6)
        self.bar_cached = f.vbar(x="pos", top="c", width=0.8, source=self.bars, fill_color=GREEN,
                                 line_color="#00513b")
        self.bar_legend = [LegendItem(label="", renderers=[self.bar_cached]),
                           LegendItem(label="", renderers=[self.bar_full])]
        f.add_layout(Legend(items=self.bar_legend, location="top_left", background_fill_alpha=0.8))
        self.bar_hover = HoverTool(renderers=[self.bar_full, self.bar_cached], tooltips="")
        f.add_tools(self.bar_hover)
        self.bar_now = Span(location=2, dimension="height", line_color=INK, line_dash="dashed", line_width=1)
        f.add_layout(self.bar_now)
        f.xaxis.ticker = FixedTicker(ticks=[1, 8, 16, 24, 32, 40, 48, 56, 64])
        f.xgrid.visible = False
        f.outline_line_color = None
        self.bars_fig = f
        self.bars_pane = pn.pane.Bokeh(f, sizing_mode="stretch_width")

    def _build_clock(self):
        n = self.n
        self.clock = ColumnDataSource({"pos": [], "cached_ms": [], "full_ms": []})
        f = figure(height=200, sizing_mode="stretch_width", x_range=Range1d(0.5, n + 0.5),
                   toolbar_location=None, tools="", min_border_left=10)
        self.clock_full = f.scatter(x="pos", y="full_ms", source=self.clock, marker="square", size=6,
                                    color=GREY)
        self.clock_cached = f.scatter(x="pos", y="cached_ms", source=self.clock, marker="circle", size=6,
                                      color=GREEN)
        f.y_range.start = 0
        f.xaxis.ticker = FixedTicker(ticks=[1, 8, 16, 24, 32, 40, 48, 56, 64])
        f.outline_line_color = None
        self.clock_hover = HoverTool(renderers=[self.clock_full, self.clock_cached], tooltips="")
        f.add_tools(self.clock_hover)
        self.clock_fig = f
        f.visible = False
        self.clock_pane = pn.pane.Bokeh(f, sizing_mode="stretch_width", visible=False)

    def _build_layout(self):
        controls = pn.FlexBox(self.step_button, self.play_button, self.reset_button, self.mode_switch,
                              self.speed, align_items="center", gap="8px", sizing_mode="stretch_width")
        self.advanced = pn.Card(pn.FlexBox(self.lang_select, self.seed, self.top_p, gap="12px"),
                                self.share, self.a11y, collapsed=True, sizing_mode="stretch_width")
        self.advanced.param.watch(lambda e: self._render_share(), "collapsed")
        self.table_card = pn.Card(self.table, collapsed=True, sizing_mode="stretch_width")
        self.table_card.param.watch(lambda e: self._render_table(), "collapsed")
        from .sections import ContextSection, LabSection, ProveSection, QuizSection
        self.sections = [LabSection(self), ProveSection(self), QuizSection(self), ContextSection(self)]
        self.more_heading = self._html()
        self.layout = pn.Column(
            self.header, self.notices, self.text, controls, self.error,
            self.grid_heading, self.grid_pane, self.grid_note, self.bars_heading, self.bars_pane, self.readouts,
            self.clock_heading, self.clock_pane, self.advanced, self.table_card,
            self.more_heading, *[section.card for section in self.sections], self.sandbox,
            sizing_mode="stretch_width", max_width=1400, margin=(0, 8))

    # -- language -------------------------------------------------------------------------
    def t(self, msg_id: str, **kw) -> str:
        return tr(self.lang, msg_id, **kw)

    def apply_language(self):
        """Every fixed label, in the current language."""
        t = self.t
        self.step_button.name = t("step")
        self.reset_button.name = t("reset")
        self.play_button.name = t("pause") if self.play_button.value else t("play")
        self.mode_switch.options = {t("mode_cache"): CACHE, t("mode_full"): FULL}
        self.speed.name = t("speed")
        self.seed.name = t("seed")
        self.top_p.name = t("top_p")
        self.lang_select.name = t("language")
        self.advanced.title = t("advanced")
        self.table_card.title = t("table_heading")
        self.a11y.help_text = t("keyboard")
        self.header.object = (f"<h1>{html.escape(t('title'))}</h1><p>{html.escape(t('intro'))}</p>"
                              if not self.url.embed else "")
        self.header.visible = not self.url.embed
        # figure titles are HTML headings: they wrap on a phone, and screen readers find them
        self.grid_heading.object = f"<h2>{html.escape(t('grid_title'))}</h2>"
        self.grid_fig.xaxis.axis_label = t("grid_x")
        self.grid_fig.yaxis.major_label_overrides = {
            self._band_y(i): t("row_" + kind, l=block + 1) for i, (block, kind) in enumerate(ROWS)}
        self.grid_note.object = f"<p class='legend-inline'>{html.escape(t('grid_note'))}</p>"
        self.bars_heading.object = f"<h2>{html.escape(t('bars_title'))}</h2>"
        self.bars_fig.yaxis.axis_label = t("bars_y")
        self.bar_legend[0].label = bk_value(t("bars_cached"))
        self.bar_legend[1].label = bk_value(t("bars_full"))
        self.bars_fig.xaxis.axis_label = t("grid_x")
        self.clock_heading.object = f"<h3>{html.escape(t('clock_plot_title'))}</h3>"
        self.clock_fig.yaxis.axis_label = t("clock_plot_y")
        self.clock_fig.xaxis.axis_label = t("grid_x")
        self.bar_hover.tooltips = [(t("grid_x"), "@pos"), (t("with_cache"), "@c_text"),
                                   (t("without_cache"), "@tc_text"), ("×", "@ratio")]
        self.clock_hover.tooltips = [(t("grid_x"), "@pos"), (t("with_cache") + " (ms)", "@cached_ms{0.000}"),
                                     (t("without_cache") + " (ms)", "@full_ms{0.000}")]
        self.more_heading.object = f"<h2>{html.escape(t('more_heading'))}</h2>"
        for section in self.sections:
            section.apply_language()
        self._render_notices()

    def set_language(self, lang: str):
        if lang not in i18n.LANGS or lang == self.lang:
            return
        self.lang = self.url.lang = lang
        self._forget_drawing()
        self.apply_language()
        self.refresh()

    def _render_notices(self):
        items = [self.t("notice_bad", key=k, value=v, why=self.t(why, **kw))
                 for k, v, why, kw in self.url.notices]
        self.notices.object = "".join(f"<div class='notice' role='note'>{html.escape(s)}</div>" for s in items)
        self.notices.visible = bool(items)

    # -- actions ----------------------------------------------------------------------------
    def do(self, command: str):
        """One user action. Safe to call in any state, as often as a reader clicks."""
        if command == "step":
            self.step()
        elif command == "reset":
            self.reset()
        elif command == "toggle":
            self.mode_switch.value = FULL if self.ex.mode == CACHE else CACHE
        elif command == "play":
            self.play_button.value = not self.play_button.value

    def _on_key(self, event):
        self.do(event.new.split(":")[0])

    def step(self):
        if not self.ex.step():                    # position 65: the animation stops there
            self.set_playing(False)
        self.refresh()
        if self.ex.error:
            e = self.ex.error
            self.a11y.message = self.t("live_error", pos=e.position, type=e.type_name, message=e.message)
        else:
            c = self.ex.costs()
            mode = self.t("mode_cache" if self.ex.mode == CACHE else "mode_full")
            self.a11y.message = self.t("live_step", t=self.ex.t, n=self.n, tok=show_token(self.ex.tokens()[-1]),
                                       mode=mode, c=num(c["cached" if self.ex.mode == CACHE else "full"], self.lang))

    def reset(self):
        self.set_playing(False)
        self.ex.reset()
        self.refresh()
        self.a11y.message = self.t("live_reset", t=self.ex.t, n=self.n)

    def reconfigure(self):
        self.set_playing(False)
        self.ex.configure(seed=self.seed.value, top_p=self.top_p.value)
        self.refresh()

    def set_mode(self, mode: str):
        if mode == self.ex.mode:
            return
        self.ex.set_mode(mode)
        self.refresh()
        self.a11y.message = self.t("live_mode", mode=self.t("mode_cache" if mode == CACHE else "mode_full"))

    # -- animation: a periodic callback, no threads, no sleeps (works under Pyodide) --------------
    def set_playing(self, playing: bool):
        if self.play_button.value != playing:
            self.play_button.value = playing      # the watcher calls back here
            return
        if playing and self.ex.error:             # nothing to animate until Reset
            self.play_button.value = False
            return
        self.play_button.name = self.t("pause") if playing else self.t("play")
        was_playing = self._callback is not None and self._callback.running
        if playing:
            if not was_playing:
                self._timer().start()
            self.a11y.message = self.t("live_play")
        elif was_playing:
            self._callback.stop()
            self.a11y.message = self.t("live_pause")

    def _timer(self):
        """One periodic callback for the view's whole life, started and stopped (Panel keeps
        every callback it creates, so a new one per press would pile up)."""
        if self._callback is None:
            self._callback = pn.state.add_periodic_callback(self.step, period=self._period(), start=False)
        else:
            self._callback.period = self._period()
        return self._callback

    def _period(self) -> int:
        speed = self.speed.value
        if self.a11y.reduced_motion:
            speed = min(speed, 2)
        return int(1000 / speed)

    def _restart_timer(self):
        if self._callback is not None:
            self._callback.period = self._period()    # a running callback restarts with it

    # -- drawing --------------------------------------------------------------------------------
    def refresh(self):
        """Bring every view up to the state. Called once per action."""
        self._render_text()
        self._render_grid()
        self._render_bars()
        self._render_readouts()
        self._render_clock()
        self._render_error()
        if not self.table_card.collapsed:
            self._render_table()
        self._render_share()
        self._publish_state()

    def _publish_state(self, weights: bool = False):
        """The page's state for a reload that keeps the reader's place (and, when asked, the weights'
        checksum for tests): on the page's <body>, through the A11y helper."""
        u = replace(self.url, mode=self.ex.mode, t=self.ex.t, seed=self.ex.settings.seed,
                    top_p=self.ex.settings.top_p, speed=self.speed.value, notices=[])
        state = {"query": u.query(), "weights": self.a11y.page_state.get("weights", "")}
        if weights or not state["weights"] or self.ex.error is not None:
            state["weights"] = self.ex.weights_digest()
        if state != self.a11y.page_state:
            self.a11y.page_state = state

    def _render_share(self):
        """A link that opens the page in this state (language, mode, t, seed, top-p, speed)."""
        if self.advanced.collapsed:
            return
        u = self.url
        u.mode, u.t, u.seed, u.top_p, u.speed = (self.ex.mode, self.ex.t, self.ex.settings.seed,
                                                 self.ex.settings.top_p, self.speed.value)
        query = html.escape(u.query())
        self.share.object = (f"<p>{html.escape(self.t('share'))}: <a href='{query}' target='_blank' rel='noopener' "
                             f"data-testid='share'>{query}</a></p>")

    def _render_text(self):
        toks = self.ex.tokens()
        spans = []
        for i, s in enumerate(toks):
            cls = ["tok"]
            if i < self.ex.n_prompt:
                cls.append("prompt")
            if i == len(toks) - 1:
                cls.append("current")
            if s.strip("\n") == "":
                cls.append("nl")
            title = self.t("prompt_token" if i < self.ex.n_prompt else "sampled_token") + f" {i + 1}"
            spans.append(f"<span class='{' '.join(cls)}' title='{html.escape(title)}'>"
                         f"{html.escape(show_token(s))}</span>" + "<br>" * min(s.count("\n"), 1))
        self.text.object = (f"<p><span class='tpos'>{self.t('position', t=self.ex.t, n=self.n)}</span></p>"
                            f"<div class='text' lang='es'>{''.join(spans)}</div>")

    # The figures are patched: only the cells, bars and points that changed since
    # the last drawing are sent. `self._drawn` remembers what the browser has.

    def _forget_drawing(self):
        """Everything is sent again at the next refresh (new text, new language, first draw)."""
        self._drawn = {"ids": [], "cells": {}, "bars_t": None, "clock": []}

    def _cell(self, i: int, p: int, states, vecs) -> tuple:
        """What cell (row i, position p) shows: (state, hover row, token, values) as sent."""
        ex = self.ex
        block, kind = ROWS[i]
        st = int(states[p])
        state_text = self.t({FUTURE: "cell_future", READ: "cell_read", COMPUTED: "cell_computed"}[st])
        if p < ex.t:
            v = vecs[i][p]
            values = self.t("cell_values", n=v.size, lo=f"{v.min():.2f}", hi=f"{v.max():.2f}")
            tok = show_token(ex.gpt.tokenizer.vocab[ex.ids[p]])
        else:
            values = tok = ""
        return (st, self.t("row_" + kind, l=block + 1), tok, state_text, values)

    def _render_grid(self):
        ex, n, d = self.ex, self.n, self.ex.cfg.d_model
        drawn = self._drawn
        same_text = drawn["ids"] == ex.ids[:len(drawn["ids"])]
        known = len(drawn["ids"]) if same_text else 0
        # the numbers: a stored column never changes, so only new columns are sent
        if known == 0:
            images = []
            for block, kind in ROWS:
                img = np.full((d, n), np.nan, dtype=np.float32)
                img[:, :ex.t] = ex.vectors(block, kind).T / ex.kv_scale[block, kind]   # (d, t)
                images.append(img)
            self.grid_images.data["image"] = images
        elif ex.t > known:
            self.grid_images.patch({"image": [
                ((i, slice(0, d), slice(known, ex.t)),
                 (ex.vectors(block, kind)[known:].T / ex.kv_scale[block, kind]).astype(np.float32).ravel())
                for i, (block, kind) in enumerate(ROWS)]})
        drawn["ids"] = list(ex.ids)
        # the cells' states: only the columns whose state or contents changed
        states = ex.cell_states()
        vecs = [ex.vectors(block, kind) for block, kind in ROWS]
        style = {FUTURE: ("#cccccc", 0.5), READ: ("#9a9a9a", 0.5), COMPUTED: (INK, 2.2)}
        everything = not drawn["cells"] or not same_text
        patch = {k: [] for k in ("row", "tok", "state", "values", "line", "width")}
        for p in range(n):
            if not everything and drawn["cells"][0, p][0] == states[p] and (p < known or states[p] == FUTURE):
                continue                               # same token, same numbers, same state
            for i in range(len(ROWS)):
                cell = self._cell(i, p, states, vecs)
                if drawn["cells"].get((i, p)) == cell:
                    continue
                drawn["cells"][i, p] = cell
                line, width = style[cell[0]]
                for col, value in (("row", cell[1]), ("tok", cell[2]), ("state", cell[3]), ("values", cell[4]),
                                   ("line", line), ("width", width)):
                    patch[col].append((i * n + p, value))
        if patch["state"]:
            self.grid_cells.patch(patch)
        t = ex.t                                       # the hatched band: columns t+1 .. n
        future = {"x": [(t + n + 1) / 2] * len(ROWS), "y": self.grid_future.data["y"],
                  "w": [n - t] * len(ROWS)}
        if future["w"] != list(self.grid_future.data["w"]):
            self.grid_future.data = future
        computed = np.flatnonzero(states == COMPUTED) + 1
        marks = {"x": list(computed), "y": [len(ROWS) * BAND + 0.15] * len(computed)}
        if marks["x"] != list(self.grid_marks.data["x"]):
            self.grid_marks.data = marks

    def _render_bars(self):
        ex = self.ex
        t, last = ex.t, self._drawn["bars_t"]
        if last is None or t < last:                   # first drawing or a new text: all bars
            shown = np.arange(1, self.n + 1) <= t
            self.bars.data.update({"c": np.where(shown, ex.cost_cached, 0) / 1e6,
                                   "tc": np.where(shown, ex.cost_full, 0) / 1e6})
        elif t > last:                                 # new positions: their bars only
            idx = range(last, t)
            self.bars.patch({"c": [(i, ex.cost_cached[i] / 1e6) for i in idx],
                             "tc": [(i, ex.cost_full[i] / 1e6) for i in idx]})
        self._drawn["bars_t"] = t
        cached_on = ex.mode == CACHE
        self.bar_cached.glyph.fill_alpha = 1.0 if cached_on else 0.45
        self.bar_cached.glyph.line_width = 1.5 if cached_on else 0.5
        self.bar_full.glyph.fill_alpha = 0.25 if cached_on else 0.95
        self.bar_full.glyph.line_alpha = 0.5 if cached_on else 1.0
        self.bar_now.location = t

    def _render_readouts(self):
        """The numbers, in one pane (one layout pass per step): this token, the totals, the
        cache's memory, the clock next to the count, and the proof."""
        c = self.ex.costs()
        self.readouts.object = ("<div class='cards'>" + self._card_token(c) + self._card_totals(c)
                                + self._card_memory(c) + self._card_clock() + self._card_proof() + "</div>")

    def _both_ways(self, cached: str, full: str, ratio: str, testid: str) -> str:
        """Two rows (with / without the cache, the current mode outlined) and their ratio."""
        on = self.ex.mode == CACHE
        act = lambda yes: " active" if yes else ""
        return (f"<div class='row{act(on)}'><span><span class='swatch cached'></span> {self.t('with_cache')}</span>"
                f"<span class='num cached' data-testid='{testid}-cached'>{cached}</span></div>"
                f"<div class='row{act(not on)}'><span><span class='swatch full'></span> {self.t('without_cache')}"
                f"</span><span class='num full' data-testid='{testid}-full'>{full}</span></div>"
                f"<div class='row'><span></span><span class='num big' data-testid='{testid}-ratio'>{ratio}</span></div>")

    def _card_token(self, c) -> str:
        lang = self.lang
        return (f"<div class='card' data-testid='this-token'><h3>{html.escape(self.t('this_token', t=c['t']))}</h3>"
                + self._both_ways(num(c["cached"], lang), num(c["full"], lang), f"{num(c['ratio'], lang)}×", "token")
                + "</div>")

    def _card_totals(self, c) -> str:
        lang = self.lang
        return (f"<div class='card' data-testid='totals'><h3>{html.escape(self.t('totals', t=c['t']))}</h3>"
                + self._both_ways(num(c["total_cached"], lang), num(c["total_full"], lang),
                                  f"{num(c['total_ratio'], lang, 1)}×", "total") + "</div>")

    def _card_memory(self, c) -> str:
        lang, kib = self.lang, c["cache_bytes"] / 1024
        value = self.t("memory_value", numbers=num(c["cache_numbers"], lang), kib=num(kib, lang, 1 if kib % 1 else 0))
        return (f"<div class='card' data-testid='memory'><h3>{html.escape(self.t('memory'))}</h3>"
                f"<div class='num big' data-testid='memory-numbers'>{html.escape(value)}</div>"
                f"<div class='num explain'>{html.escape(self.t('memory_formula', t=c['t']))}</div></div>")

    def _card_clock(self) -> str:
        ex, lang, t = self.ex, self.lang, self.ex.t
        m = ex.clock()
        if m.cached_s is None:
            body = f"<p class='explain'>{html.escape(self.t('proof_none' if t <= ex.n_prompt else 'clock_none'))}</p>"
        else:
            ratio = m.full_s / m.cached_s
            body = self._both_ways(f"{num(m.cached_s * 1e3, lang, 3)} ms", f"{num(m.full_s * 1e3, lang, 3)} ms",
                                   html.escape(self.t("clock_ratio", x=num(ratio, lang, 1), n=t)), "clock")
            if t == self.n:
                body += (f"<p class='explain' data-testid='clock-explain'>"
                         f"{html.escape(self.t('clock_explain', n=t, x=num(ratio, lang, 0)))}</p>")
        return (f"<div class='card wide' data-testid='clock'><h3>{html.escape(self.t('clock_heading'))} · "
                f"{html.escape(self.t('clock_last'))}</h3>{body}</div>")

    def _card_proof(self) -> str:
        proof = self.ex.clock().proof
        text = self.t("proof_value", diff=sci(proof, self.lang)) if proof is not None else self.t("proof_none")
        return (f"<div class='card' data-testid='proof-card'><h3>{html.escape(self.t('proof_heading'))}</h3>"
                f"<p data-testid='proof'>{html.escape(text)}</p>"
                f"<p class='explain'>{html.escape(self.t('proof_explain'))}</p></div>")

    def _render_clock(self):
        """The plot of measured times: new points are streamed."""
        ex = self.ex
        pos = sorted(p for p, mm in ex.measures.items() if mm.cached_s is not None)
        drawn = self._drawn["clock"]
        if pos[:len(drawn)] != drawn or len(self.clock.data["pos"]) != len(drawn):   # new text or redraw
            self.clock.data = {"pos": [], "cached_ms": [], "full_ms": []}
            drawn = []
        new = pos[len(drawn):]
        if new:
            self.clock.stream({"pos": new, "cached_ms": [ex.measures[p].cached_s * 1e3 for p in new],
                               "full_ms": [ex.measures[p].full_s * 1e3 for p in new]})
        self._drawn["clock"] = pos
        shown = bool(pos)                              # no empty plot (the figure itself too: a hidden
        if self.clock_pane.visible != shown:           # pane alone still kept its height)
            self.clock_pane.visible = self.clock_heading.visible = self.clock_fig.visible = shown

    def _render_error(self):
        e = self.ex.error
        if e is None:
            self.error.visible = False
            self.error.object = ""
            return
        heading, explain = (("error_heading", "error_explain") if e.lesson
                            else ("step_failed_heading", "step_failed_explain"))
        self.error.object = (
            f"<div class='error' role='alert' data-testid='error' data-lesson='{str(e.lesson).lower()}'>"
            f"<h2>{html.escape(self.t(heading, pos=e.position))}</h2>"
            f"<p><code>{html.escape(e.type_name)}: {html.escape(e.message)}</code></p>"
            f"<p>{html.escape(self.t(explain, n=self.n, pos=e.position))}</p></div>")
        self.error.visible = True

    def _render_table(self):
        if self.table_card.collapsed:
            return
        ex, lang = self.ex, self.lang
        toks = ex.tokens()
        head = "".join(f"<th>{html.escape(self.t(k))}</th>" for k in
                       ("table_pos", "table_token", "table_cached", "table_full", "table_ms_cached", "table_ms_full"))
        rows = []
        for p in range(1, ex.t + 1):
            m = ex.measures.get(p)
            ms = lambda s: num(s * 1e3, lang, 3) if s is not None else "—"
            cls = " class='current'" if p == ex.t else ""
            rows.append(f"<tr{cls}><td>{p}</td><td class='tok'>{html.escape(show_token(toks[p - 1]))}</td>"
                        f"<td>{num(ex.cost_cached[p - 1], lang)}</td><td>{num(ex.cost_full[p - 1], lang)}</td>"
                        f"<td>{ms(m.cached_s if m else None)}</td><td>{ms(m.full_s if m else None)}</td></tr>")
        self.table.object = (f"<table class='data'><caption class='sr-only'>{html.escape(self.t('table_heading'))}"
                             f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")
