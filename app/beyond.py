"""Beyond the lesson, below the figure: batching and speculative decoding, run and measured in the
reader's browser. Thin views over app/batching.py and app/speculation.py.

Each section is built the first time its card opens, and only then imports its logic (and with
it model/batch.py or model/speculative.py) and, for speculative decoding, loads the draft
checkpoint (app/checkpoints.py: on the static site, fetched then).
"""
from __future__ import annotations

from pathlib import Path

import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Legend, LegendItem, Range1d, Rect, Span

from . import clock
from .fields import WRAP_LABEL
from .i18n import num, sci, size
from .parts import Animation, error_html, esc, scroll_region
from .sections import MeasuringSection
from .style import BLUE, CSS, GREEN, GREY, HIGHLIGHT, INK, ORANGE, SKY, VERMILLION, position_figure, show_token
from .widgets import RangeInput

BEYOND_CSS = CSS + Path(__file__).with_name("beyond.css").read_text(encoding="utf-8")
BATCH_SAMPLES = 7        # interleaved measurements of each B per position (the table shows medians)
SPEC_SEEDS = 7           # texts per k, one per seed, each with the draft and without (medians)


def beyond_pane(**kw):
    return pn.pane.HTML("", stylesheets=[BEYOND_CSS], sizing_mode="stretch_width", **kw)


def token_text(vocab, ids) -> str:
    return "".join(show_token(vocab[i]) for i in ids)


def swatches(t, items) -> str:
    """A legend in words: (css class, message key) pairs, each with its swatch."""
    return " ".join(f"<span class='key'><span class='sw {cls}'></span>{esc(t(key))}</span>" for cls, key in items)


class Stepper:
    """Step, Animate and Reset for a section, animated as the figure's Controls is (Animation);
    `step()` returns False to stop the animation."""

    def __init__(self, step, reset, period):
        self.step, self.reset = step, reset
        self.animation = Animation(self.tick, period)
        self.step_button = pn.widgets.Button(color="primary", width=190)
        self.play_button = pn.widgets.Toggle(width=190)
        self.reset_button = pn.widgets.Button(width=190)
        self.names = ("", "")
        self.step_button.on_click(lambda _e: self.step())
        self.reset_button.on_click(lambda _e: self.restart())
        self.play_button.param.watch(lambda e: self.play(e.new), "value")
        self.row = pn.FlexBox(self.step_button, self.play_button, self.reset_button, align_items="center",
                              gap="8px", sizing_mode="stretch_width")

    def label(self, step: str, play: str, pause: str, reset: str):
        self.step_button.name, self.reset_button.name, self.names = step, reset, (play, pause)
        self.play_button.name = self.names[self.play_button.value]

    def tick(self):
        if not self.step():
            self.play_button.value = False

    def play(self, on: bool):
        self.play_button.name = self.names[on]
        self.animation.run(on)

    def restart(self):
        self.play_button.value = False
        self.reset()


CELL_COLUMNS = ("x", "y", "color", "line", "what", "tok")


def cell_figure(n_ctx: int, height: int, y_range, hatch: str):
    """A figure of cells over positions (or slots) 1..n_ctx, plain or hatched (two glyphs: a hatch
    pattern per cell makes every redraw far slower). -> (figure, plain cells' source, hatched cells')."""
    f = position_figure(n_ctx, height, y_range=y_range)
    f.yaxis.ticker = FixedTicker(ticks=[])               # one tick per row, set by the section
    sources = [ColumnDataSource({k: [] for k in CELL_COLUMNS}) for _ in range(2)]
    style = dict(x="x", y="y", width=0.9, height=0.8, fill_color="color", line_color="line")
    plain = f.add_glyph(sources[0], Rect(**style))
    hatched = f.add_glyph(sources[1], Rect(hatch_pattern=hatch, hatch_color="#8a8a8a", hatch_alpha=0.6,
                                           hatch_scale=5, **style))
    f.add_tools(HoverTool(renderers=[plain, hatched], tooltips="@what «@tok»"))
    return f, sources[0], sources[1]


def cell_columns(cells) -> tuple[dict, dict]:
    """Cells as (x, y, colour, line colour, hatched, hover text, token) -> the plain ones' columns
    and the hatched ones' (cell_figure's two sources)."""
    out = ({k: [] for k in CELL_COLUMNS}, {k: [] for k in CELL_COLUMNS})
    for x, y, color, line, hatched, what, tok in cells:
        columns = out[bool(hatched)]
        for k, v in zip(CELL_COLUMNS, (x, y, color, line, what, tok)):
            columns[k].append(v)
    return out


def series_figure(x_range, ticks, styles: dict, tooltips, **kw):
    """A plot of a few series over the same x, each a line with its markers and a legend entry, hidden
    until there is something to show. styles: key -> (colour, marker, dash).
    -> (figure, {key: (source with x and y, legend item)})."""
    from bokeh.plotting import figure     # with the section: not at the page's start-up
    f = figure(height=300, sizing_mode="stretch_width", x_range=x_range, toolbar_location=None, tools="",
               min_border_left=10, visible=False, **kw)
    f.xaxis.ticker = FixedTicker(ticks=list(ticks))
    f.y_range.start = 0
    series = {}
    for key, (color, marker, dash) in styles.items():
        src = ColumnDataSource({"x": [], "y": []})
        line = f.line("x", "y", source=src, color=color, line_width=2, line_dash=dash)
        dots = f.scatter("x", "y", source=src, marker=marker, size=8, color=color)
        series[key] = (src, LegendItem(label="", renderers=[line, dots]))
    f.add_layout(Legend(items=[item for _, item in series.values()], border_line_alpha=0), "below")   # off the data
    f.add_tools(HoverTool(tooltips=tooltips))
    f.outline_line_color = None
    return f, series


def lab_table(t, label: str, head: list[str], rows: list[list[str]], testid: str) -> str:
    """A table of cells (HTML) under the headings' message keys, in a scroll region named `label`
    (as every wide table of the page: parts.scroll_region)."""
    th = "".join(f"<th>{esc(t(k))}</th>" for k in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return scroll_region(label, f"<table class='data' data-testid='{testid}'><thead><tr>{th}</tr></thead>"
                                f"<tbody>{body}</tbody></table>")


ERROR_EXPLAIN = {"batch": "batch_error_explain", "spec": "spec_error_explain"}     # by the section's key


class SteppedSection(MeasuringSection):
    """A section with something to step through as well as to measure: `make()` builds it (again on
    every reset), its `advance()` takes one step, `draw()` shows it and `error` its error; every
    redraw goes through pn.io.unlocked (steps come from clicks and the animation's periodic callback)."""

    current = None

    def make(self):
        raise NotImplementedError

    def draw(self):
        raise NotImplementedError

    def draw_state(self):
        """The line that says where the stepping is, drawn last (MeasuringSection.show)."""
        raise NotImplementedError

    def reset(self):
        self.current = self.make()
        self.redraw()

    def step(self) -> bool:
        ok = self.current.advance()
        self.redraw()
        return ok

    def redraw(self):
        if self.current is None:
            return
        with pn.io.unlocked():
            self.draw()
            e = self.current.error               # the position table's IndexError past the window
            self.error.object = "" if e is None else error_html(self.t, e, self.view.n, f"{self.key}-error",
                                                                ERROR_EXPLAIN[self.key])
            self.draw_state()


# -- Batching --------------------------------------------------------------------------------------

SLOT_STYLE = {0: ("#f4f4f4", "#cfcfcf"), 1: ("#bdbdbd", "#8a8a8a"), 2: (GREEN, "#00513b"),
              3: (HIGHLIGHT, INK)}          # app/batching.py's SLOT_PAD, SLOT_PROMPT, SLOT_SAMPLED, SLOT_NEWEST
POSITION_STYLE = ((SKY, "circle", "dashed"), (BLUE, "square", "solid"), (INK, "triangle", "dotdash"))


class BatchSection(SteppedSection):
    key = "batch"

    def build(self):
        from .batching import BatchChoice
        self.choice = BatchChoice()
        self.size = RangeInput.linked(self.choice.param.B, width=220)
        self.stepper = Stepper(self.step, self.reset, self.view.controls.period)
        self.intro, self.state, self.texts, self.error = (beyond_pane() for _ in range(4))
        self.memory, self.proof, self.tensor_head, self.legend = (beyond_pane() for _ in range(4))
        n = self.view.n
        self.tensor, self.cells, self.padding = cell_figure(n, 180, Range1d(self.choice.B + 0.5, 0.5), "/")
        controls = self.measure_controls()
        self.lab_intro, self.status, self.table, self.explain = (beyond_pane() for _ in range(4))
        self.plot_fig, self.lines = self.lab_figure()
        self.plot = pn.pane.Bokeh(self.plot_fig, sizing_mode="stretch_width", visible=False)
        self.choice.param.watch(lambda _e: self.reset(), "B")
        self.view.session.settings.param.watch(lambda _e: self.reset(), ["seed", "top_p"])
        self.card.objects = [self.intro, pn.FlexBox(self.size, self.stepper.row, align_items="flex-end",
                                                    gap="8px 16px", sizing_mode="stretch_width"),
                             self.state, self.texts, self.error, self.tensor_head,
                             pn.pane.Bokeh(self.tensor, sizing_mode="stretch_width"), self.legend, self.memory,
                             self.proof, self.lab_intro, controls, self.status, self.table, self.plot, self.explain]
        self.reset()

    def positions(self) -> tuple[int, ...]:
        n = self.view.n
        return (n // 8, n // 2, n)

    def lab_figure(self):
        return series_figure(Range1d(0.8, 40), (1, 2, 4, 8, 16, 32), dict(zip(self.positions(), POSITION_STYLE)),
                             [("B", "@x"), ("ms", "@y{0.0000}")], x_axis_type="log")

    def label(self):
        t = self.t
        self.intro.object = f"<p>{esc(t('batch_intro'))}</p>"
        self.size.label = t("batch_B")
        self.stepper.label(t("batch_step"), t("batch_play"), t("pause"), t("batch_reset"))
        self.tensor_head.object = (f"<h3>{esc(t('batch_tensor_title'))}</h3>"
                                   f"<p class='legend-inline'>{esc(t('batch_tensor_note'))}</p>")
        self.legend.object = "<p class='legend-inline'>" + swatches(t, (
            ("pad", "batch_pad"), ("prompt", "batch_prompt"), ("sampled", "batch_sampled"),
            ("newest", "batch_newest"))) + "</p>"
        self.tensor.xaxis.axis_label, self.tensor.yaxis.axis_label = t("batch_x"), t("batch_y")
        positions = self.positions()
        self.lab_intro.object = (f"<h3>{esc(t('batch_lab_title'))}</h3><p>{esc(t('batch_lab_intro', a=positions[0], b=positions[1], c=positions[2], n=BATCH_SAMPLES))}</p>")
        self.run_button.name, self.cancel_button.name = t("batch_run"), t("lab_cancel")
        for pos, (_src, item) in self.lines.items():
            item.label = bk_value(t("batch_position", t=pos))
        self.plot_fig.xaxis.axis_label, self.plot_fig.yaxis.axis_label = t("batch_plot_x"), t("batch_plot_y")
        self.redraw()
        self.show()

    # -- the conversations -------------------------------------------------------------------------
    def make(self):
        from .batching import Conversations
        s = self.view.ex.settings
        return Conversations(self.view.ex.gpt, self.choice.B, seed=s.seed, top_p=s.top_p)

    def draw(self):
        self.draw_texts()
        self.draw_tensor()
        self.draw_memory()

    def draw_texts(self):
        c, t, vocab = self.current, self.t, self.view.ex.gpt.tokenizer.vocab
        items = []
        for b, ids in enumerate(c.ids):
            sampled = ids[c.n_prompt[b]:]
            newest = f"<span class='tok current'>{esc(token_text(vocab, sampled[-1:]))}</span>" if sampled else ""
            items.append(f"<li data-testid='batch-text' data-seed='{c.seeds[b]}'><span class='meta'>"
                         f"{esc(t('batch_conv', b=b + 1, seed=c.seeds[b], t=len(ids)))}</span> "
                         f"<span class='tok prompt'>{esc(token_text(vocab, ids[:c.n_prompt[b]]))}</span>"
                         f"{esc(token_text(vocab, sampled[:-1]))}{newest}</li>")
        self.texts.object = f"<ol class='convos' lang='es'>{''.join(items)}</ol>"

    def draw_state(self):
        c, t = self.current, self.t
        lengths = [len(x) for x in c.ids]
        self.state.object = (f"<p data-testid='batch-state' data-steps='{c.steps}' data-b='{c.B}'>"
                             f"{esc(t('batch_state', steps=c.steps, B=c.B, lo=min(lengths), hi=max(lengths), n=self.view.n))}</p>")

    def draw_tensor(self):
        c, t, vocab = self.current, self.t, self.view.ex.gpt.tokenizer.vocab
        kinds = c.slot_kinds()
        what = {0: t("batch_pad"), 1: t("batch_prompt"), 2: t("batch_sampled"), 3: t("batch_newest")}
        cells = []
        for b, ids in enumerate(c.ids):
            first = c.slots - len(ids)
            for s in range(c.slots):
                kind, pos = int(kinds[b, s]), s - first + 1
                color, line = SLOT_STYLE[kind]
                cells.append((s + 1, b + 1, color, line, kind == 0,
                              t("batch_cell", b=b + 1, s=s + 1, what=what[kind], pos=pos if pos > 0 else "–"),
                              show_token(vocab[ids[pos - 1]]) if pos > 0 else ""))
        self.cells.data, self.padding.data = cell_columns(cells)
        if self.tensor.height != 70 + 14 * c.B:            # a new B: the figure's rows (not at every step)
            self.tensor.y_range.start, self.tensor.y_range.end = c.B + 0.5, 0.5
            self.tensor.height = 70 + 14 * c.B
            self.tensor.yaxis.ticker.ticks = list(range(1, c.B + 1)) if c.B <= 8 else [1] + list(range(4, c.B + 1, 4))

    def draw_memory(self):
        from .batching import memory_values
        c, lang = self.current, self.lang
        m = c.memory()
        self.memory.object = (f"<p data-testid='batch-memory' data-tensor='{m['tensor']}' data-row='{m['row']}' "
                              f"data-own='{m['own_total']}' data-b='{m['B']}' data-slots='{m['slots']}'>"
                              f"{esc(self.t('batch_memory', **memory_values(m, lang, size)))}</p>")
        self.proof.object = (f"<p data-testid='batch-proof' data-diff='{c.proof!r}'>"
                             f"{esc(self.t('batch_proof', diff=sci(c.proof, lang), B=c.B))}</p>")

    # -- the clock ---------------------------------------------------------------------------------
    def new_lab(self):
        from .batching import BATCHES, BatchLab
        return BatchLab(self.view.ex.gpt, self.positions(), batches=BATCHES + (self.choice.B,),
                        samples=BATCH_SAMPLES, seed=self.view.ex.settings.seed)

    def render(self):
        lab, t, lang = self.lab, self.t, self.lang
        if lab is None:
            return
        ms, ratio = (lambda x: clock.ms_text(x, lang)), (lambda x: clock.ratio_text(x, lang))
        rows = lab.rows
        self.table.object = lab_table(t, t("batch_lab_title"), ["table_pos", "batch_B_short", "batch_ms_step",
                                                               "batch_ms_per", "batch_gain", "batch_cache"],
                                      [[str(r["t"]), str(r["B"]), ms(r["step_s"]), ms(r["per_s"]),
                                        f"<b>{ratio(r['gain'])}×</b> <span class='spread'>({ratio(r['gain_low'])}–"
                                        f"{ratio(r['gain_high'])})</span>", size(r["cache_bytes"], lang)]
                                       for r in rows], "batch-table")
        for pos, (src, _item) in self.lines.items():
            mine = [r for r in rows if r["t"] == pos]
            src.data = {"x": [r["B"] for r in mine], "y": [r["per_s"] * 1e3 for r in mine]}
        self.plot.visible = self.plot_fig.visible = bool(rows)
        reading = lab.summary
        if reading is None:
            self.explain.object = ""
            return
        from .batching import batch_sentences
        self.explain.object = ("<p class='explain' data-testid='batch-explain'>" + " ".join(
            esc(t(key, **values)) for key, values in batch_sentences(reading, lang)) + "</p>")

    def status_line(self) -> str:
        lab = self.lab
        state = ("lab_cancelled" if lab.cancelled else "batch_done") if lab.finished else "lab_running"
        return self.status_html("batch-status", self.t(state, done=lab.done, total=lab.total, n=lab.total, s=lab.samples))


# -- Speculative decoding ---------------------------------------------------------------------------

COLUMN_STYLE = {1: ("#bdbdbd", "#8a8a8a"), 3: ("#ffffff", VERMILLION)}     # kept, cut (EMPTY: not drawn)
NEW_COLOR = {"target": (BLUE, "#003f63"), "draft": (ORANGE, "#8a5d00")}
SPEED_STYLE = {"speedup": (INK, "circle", "solid"), "by_clock": (BLUE, "square", "dashed"),
               "count": (GREY, "triangle", "dotted")}
SPEC_AXIS = {"target": "spec_axis_target", "draft": "spec_axis_draft"}     # the grid's rows, by model
SPEC_ROW = {"target": "spec_row_target", "draft": "spec_row_draft"}
SPEC_NEW = {"target": "spec_new_target", "draft": "spec_new_draft"}
SPEC_PLOT = {"speedup": "spec_plot_speedup", "by_clock": "spec_plot_by_clock", "count": "spec_plot_count"}
SPEC_MODE = ("spec_mode_0", "spec_mode_1")                                 # sampled, greedy
MARK_TITLE = {"prompt": "prompt_token", "text": "sampled_token", "proposed": "spec_proposed",
              "accepted": "spec_accepted", "rejected": "spec_rejected", "untested": "spec_untested",
              "resampled": "spec_resampled", "bonus": "spec_bonus"}


class SpecSection(SteppedSection):
    key = "spec"

    def build(self):
        from . import checkpoints
        self.draft = checkpoints.load("draft")            # on the static site: fetched now, the first time
        from .speculation import SpecChoice
        self.choice = SpecChoice()
        self.k = RangeInput.linked(self.choice.param.k, width=220)
        self.greedy = pn.widgets.RadioBoxGroup(options={"": False, " ": True}, value=False, inline=False,
                                               stylesheets=[WRAP_LABEL], sizing_mode="stretch_width", max_width=420)
        self.stepper = Stepper(self.step, self.reset, self.view.controls.period)
        self.intro, self.phase, self.text, self.marks_legend = (beyond_pane() for _ in range(4))
        self.checks, self.counts, self.same, self.error = (beyond_pane() for _ in range(4))
        self.grid_head, self.grid_legend = beyond_pane(), beyond_pane()
        self.rows = self.grid_rows()
        self.grid, self.cells, self.cut = cell_figure(self.view.n, 40 + 24 * len(self.rows),
                                                      Range1d(len(self.rows) + 0.5, 0.5), "x")
        n_rows = len(self.rows)                      # the window: one empty band per row, drawn once
        band = ColumnDataSource({"x": [(self.view.n + 1) / 2] * n_rows, "y": list(range(1, n_rows + 1))})
        self.grid.add_glyph(band, Rect(x="x", y="y", width=self.view.n, height=0.8, fill_color="#f7f7f7",
                                       line_color="#e3e3e3"), level="underlay")
        self.grid.yaxis.ticker.ticks = list(range(1, len(self.rows) + 1))
        controls = self.measure_controls()
        self.lab_intro, self.status, self.table, self.explain = (beyond_pane() for _ in range(4))
        self.plot_fig, self.series = self.lab_figure()
        self.plot = pn.pane.Bokeh(self.plot_fig, sizing_mode="stretch_width", visible=False)
        self.choice.param.watch(lambda e: self.set_k(e.new), "k")
        self.greedy.param.watch(lambda _e: self.reset(), "value")
        self.view.session.settings.param.watch(lambda _e: self.reset(), ["seed", "top_p"])
        self.card.objects = [self.intro, pn.FlexBox(self.k, self.greedy, self.stepper.row, align_items="flex-end",
                                                    gap="8px 16px", sizing_mode="stretch_width"),
                             self.phase, self.text, self.marks_legend, self.checks, self.counts, self.same,
                             self.error, self.grid_head, pn.pane.Bokeh(self.grid, sizing_mode="stretch_width"),
                             self.grid_legend, self.lab_intro, controls, self.status, self.table, self.plot,
                             self.explain]
        self.reset()

    def grid_rows(self) -> list[tuple[str, int, str]]:
        """(model, layer, 'K' | 'V') for every row of the small grid: the mini-GPT's, then the draft's."""
        return [(m, layer, kind) for m, cfg in (("target", self.view.ex.cfg), ("draft", self.draft.config))
                for layer in range(cfg.n_layers) for kind in ("K", "V")]

    def lab_figure(self):
        from .speculation import KS
        f, series = series_figure(Range1d(0.5, len(KS) + 0.5), KS, SPEED_STYLE, [("k", "@x"), ("×", "@y{0.00}")])
        f.add_layout(Span(location=1, dimension="width", line_color=GREY, line_dash="dotted", line_width=1))
        return f, series

    def label(self):
        t = self.t
        self.intro.object = f"<p>{esc(t('spec_intro'))}</p>"
        self.k.label = t("spec_k")
        self.greedy.options = {t("spec_sampled_mode"): False, t("spec_greedy"): True}
        self.stepper.label(t("spec_step"), t("spec_play"), t("pause"), t("spec_reset"))
        self.marks_legend.object = "<p class='legend-inline'>" + swatches(t, (
            ("proposed", "spec_proposed"), ("accepted", "spec_accepted"), ("rejected", "spec_rejected"),
            ("untested", "spec_untested"), ("drawn", "spec_drawn"))) + "</p>"
        self.grid_head.object = (f"<h3>{esc(t('spec_grid_title'))}</h3>"
                                 f"<p class='legend-inline'>{esc(t('spec_grid_note'))}</p>")
        self.grid_legend.object = "<p class='legend-inline'>" + swatches(t, (
            ("kept", "spec_kept"), ("new-target", "spec_new_target"), ("new-draft", "spec_new_draft"),
            ("cut", "spec_cut"))) + "</p>"
        self.grid.xaxis.axis_label = t("grid_x")
        self.grid.yaxis.major_label_overrides = {
            i + 1: t(SPEC_AXIS[m], kind=kind, l=layer + 1) for i, (m, layer, kind) in enumerate(self.rows)}
        n_new = self.view.n - self.view.ex.n_prompt
        self.lab_intro.object = (f"<h3>{esc(t('spec_lab_title'))}</h3>"
                                 f"<p>{esc(t('spec_lab_intro', n=n_new, s=SPEC_SEEDS))}</p>")
        self.run_button.name, self.cancel_button.name = t("spec_run"), t("lab_cancel")
        for key, (_src, item) in self.series.items():
            item.label = bk_value(t(SPEC_PLOT[key]))
        self.plot_fig.xaxis.axis_label, self.plot_fig.yaxis.axis_label = t("spec_plot_x"), t("spec_plot_y")
        self.redraw()
        self.show()

    # -- the rounds --------------------------------------------------------------------------------
    def make(self):
        from .speculation import SpecRun
        s = self.view.ex.settings
        return SpecRun(self.view.ex.gpt, self.draft, k=self.choice.k, seed=s.seed, top_p=s.top_p,
                       greedy=self.greedy.value)

    def set_k(self, k: int):
        if self.current is not None:
            self.current.k = k                         # from the next round on
            self.redraw()

    def draw(self):
        self.draw_text()
        self.draw_checks()
        self.draw_counts()
        self.draw_grid()

    def draw_state(self):
        s, t = self.current, self.t
        r = s.round
        if r is None:
            text = t("spec_phase_none", n=s.k)
        elif s.phase == "draft":
            text = t("spec_phase_draft", r=s.counts.rounds + 1, n=r.k)
        elif s.phase == "check":
            text = t("spec_phase_check", r=s.counts.rounds + 1, n=r.k, rows=r.k + 1 if r.bonus else r.k)
        elif r.accepted < r.k:
            text = t("spec_phase_rejected", r=s.counts.rounds, k=r.k, a=r.accepted, i=r.accepted + 1,
                     cut=len(r.drafts) - r.accepted)
        else:
            text = t("spec_phase_all" if r.next is not None else "spec_phase_all_end", r=s.counts.rounds, n=r.k,
                     w=len(r.new))
        capped = r is not None and s.phase == "draft" and r.k < s.k
        extra = f" {t('spec_capped', k=r.k, n=self.view.n)}" if capped else ""
        (t0, t1), (d0, d1) = s.lengths["target"], s.lengths["draft"]
        self.phase.object = (f"<p class='phase' data-testid='spec-phase' data-phase='{s.phase or ''}' "
                             f"data-target='{t0} {t1}' data-draft='{d0} {d1}'>{esc(text + extra)}</p>")

    def draw_text(self):
        vocab, t = self.view.ex.gpt.tokenizer.vocab, self.t
        spans = []
        for i, (x, kind) in enumerate(self.current.marks()):
            cls = {"text": "tok", "prompt": "tok prompt"}.get(kind, f"tok {kind}")
            spans.append(f"<span class='{cls}' data-kind='{kind}' title='{esc(t(MARK_TITLE[kind]))}'>"
                         f"{esc(show_token(vocab[x]))}</span>")
        self.text.object = (f"<p><span class='tpos'>{t('position', t=len(self.current.ids), n=self.view.n)}</span></p>"
                            f"<div class='text' lang='es' data-testid='spec-text'>{''.join(spans)}</div>")

    def draw_checks(self):
        rows, t, lang = self.current.check_rows(), self.t, self.lang
        if not rows:
            self.checks.object = ""
            return
        vocab = self.view.ex.gpt.tokenizer.vocab
        pct = lambda x: num(x, lang, 3)                       # noqa: E731
        verdict = {None: "", "accepted": "✓ " + t("spec_accepted"), "rejected": "✗ " + t("spec_rejected"),
                   "untested": "– " + t("spec_untested_short")}
        self.checks.object = lab_table(t, t("spec_title"),
                                       ["spec_i", "table_token", "spec_q", "spec_p", "spec_chance", "spec_verdict"],
                                       [[str(r["i"]), f"<span class='tok'>{esc(show_token(vocab[r['token']]))}</span>",
                                         pct(r["q"]), pct(r["p"]), pct(r["chance"]), esc(verdict[r["verdict"]])]
                                        for r in rows], "spec-checks")

    def draw_counts(self):
        s, t, lang = self.current, self.t, self.lang
        c = s.counts
        tested = c.accepted + c.rejected
        alpha = num(c.acceptance * 100, lang) + t("percent") if tested else "–"
        per_pass = num(c.tokens_per_pass, lang, 2) if c.rounds else "–"
        self.counts.object = (
            f"<p data-testid='spec-counts' data-rounds='{c.rounds}' data-tokens='{c.tokens}' data-drafted='{c.drafted}' "
            f"data-tested='{tested}' data-accepted='{c.accepted}'>"
            f"{esc(t('spec_counts', rounds=c.rounds, n=c.tokens, per_pass=per_pass, drafted=c.drafted, tested=tested, accepted=c.accepted, alpha=alpha))}</p>")
        same = s.same_as_own
        key = "spec_sampled" if same is None else "spec_same" if same else "spec_differs"
        self.same.object = f"<p class='explain' data-testid='spec-same' data-same='{same}'>{esc(t(key))}</p>"

    def draw_grid(self):
        s, t = self.current, self.t
        tokens = s.ids if s.round is None else s.ids[:s.round.n] + s.round.drafts      # each column's token
        vocab = self.view.ex.gpt.tokenizer.vocab
        names = {1: t("spec_kept"), 3: t("spec_cut")}
        cells = []
        for i, (m, layer, kind) in enumerate(self.rows):
            for p, st in enumerate(s.columns(m)):
                if st == 0:
                    continue                         # not computed: the row's empty band
                fill, line = NEW_COLOR[m] if st == 2 else COLUMN_STYLE[int(st)]
                cells.append((p + 1, i + 1, fill, line, st == 3,
                              f"{t(SPEC_ROW[m], kind=kind, l=layer + 1)} · {p + 1} · "
                              f"{t(SPEC_NEW[m]) if st == 2 else names[int(st)]}",
                              show_token(vocab[tokens[p]]) if p < len(tokens) else ""))
        self.cells.data, self.cut.data = cell_columns(cells)

    # -- the clock ---------------------------------------------------------------------------------
    def new_lab(self):
        from .speculation import SpecLab
        s = self.view.ex.settings
        return SpecLab(self.view.ex.gpt, self.draft, seeds=range(s.seed, s.seed + SPEC_SEEDS),
                       temperature=0.0 if self.greedy.value else 1.0, top_p=s.top_p)

    def render(self):
        lab, t, lang = self.lab, self.t, self.lang
        if lab is None:
            return
        x2 = lambda x: num(x, lang, 2)                        # noqa: E731
        rows = lab.rows
        self.table.object = lab_table(
            t, t("spec_lab_title"), ["spec_k_short", "spec_alpha_short", "spec_per_pass", "spec_check", "spec_ms", "spec_measured",
                "spec_by_clock", "spec_count_short"],
            [[str(r["k"]), num(r["alpha"] * 100, lang) + t("percent"), f"{x2(r['per_pass'])} ({x2(r['expected'])})",
              clock.ratio_text(r["check_x"], lang) + "×", f"{clock.ms_text(r['spec_s'], lang)} / {clock.ms_text(r['plain_s'], lang)}",
              f"<b>{x2(r['speedup'])}×</b> <span class='spread'>({x2(r['low'])}–{x2(r['high'])})</span>",
              x2(r["by_clock"]) + "×", x2(r["count"]) + "×"] for r in rows], "spec-table")
        for key, (src, _item) in self.series.items():
            src.data = {"x": [r["k"] for r in rows], "y": [r[key] for r in rows]}
        self.plot.visible = self.plot_fig.visible = bool(rows)
        c = lab.results.get("c")
        head = "" if c is None else (f"<p data-testid='spec-c'>{esc(t('spec_c', c_clock=x2(c.ratio), c_count=x2(lab.c_count), n=c.samples, lo=x2(c.ratio_low), hi=x2(c.ratio_high)))}</p>")
        reading = lab.summary
        if reading is None:
            self.explain.object = head
            return
        from .speculation import spec_sentences
        self.explain.object = head + ("<p class='explain' data-testid='spec-explain'>" + " ".join(
            esc(t(key, **values)) for key, values in spec_sentences(reading, lang)) + "</p>")

    def status_line(self) -> str:
        lab, t = self.lab, self.t
        state = ("spec_cancelled" if lab.cancelled else "spec_done") if lab.finished else "spec_running"
        mode = t(SPEC_MODE[int(lab.kw['temperature'] == 0)])
        n = len(lab.seeds) if state == "spec_done" else lab.total         # the texts measured, or the parts
        return self.status_html("spec-status", t(state, done=lab.done, total=lab.total, n=n, mode=mode))
