"""Below the figure: the reader's own timing lab, the lesson's first cell, the
quiz with its challenge, and how much context fits. Thin views over
app.lab, app.cell, app.quiz, app.challenge and app.calculator.
"""
from __future__ import annotations

import asyncio
import functools

import numpy as np
import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Legend, LegendItem, Range1d

from model.timing import table_positions, window_ids

from model.cost import GiB, Architecture

from . import calculator, cell, challenge, clock, quiz, sandbox
from .fields import FIELD_WIDTH, WRAP_LABEL, NumberField
from .i18n import num, plain_number, sci, size, tr
from .lab import TimingLab
from .parts import esc, off_the_loop, scroll_region
from .style import CSS, GREEN, GREY
from .widgets import Disclosure


# Each section's title, by its key (app/beyond.py and app/smaller_view.py have sections too).
TITLE = {"lab": "lab_title", "prove": "prove_title", "quiz": "quiz_title", "ctx": "ctx_title",
         "small": "small_title", "batch": "batch_title", "spec": "spec_title"}


class Section:
    """A collapsible card whose widgets are built the first time it opens (the page
    starts faster and lighter); `apply_language()` sets every label."""

    key = ""

    @property
    def title_key(self) -> str:
        return TITLE[self.key]

    def __init__(self, view):
        self.view = view                     # the Explorable (app/page.py): its session, sandbox, language
        self.card = Disclosure()
        self.built = False
        self.card.param.watch(lambda e: e.new or self.ensure_built(), "collapsed")
        view.session.settings.param.watch(lambda _e: self.relabel(), "lang")
        self.apply_language()

    # Both go through the session's dispatch (app/session.py): their changes reach the browser in
    # one message, in order, so a new figure arrives before the labels that name its models.
    def relabel(self):
        with self.view.session.dispatch():
            self.apply_language()

    def ensure_built(self):
        if not self.built:
            self.built = True
            with self.view.session.dispatch():
                self.build()
                self.apply_language()

    def build(self):
        raise NotImplementedError

    @property
    def lang(self) -> str:
        return self.view.lang

    def t(self, msg_id: str, **kw) -> str:
        return tr(self.lang, msg_id, **kw)

    def html_pane(self, **kw):
        return pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", **kw)

    def apply_language(self):
        self.card.title = self.t(self.title_key)
        if self.built:
            self.label()

    def label(self):
        """Every label of the built widgets, in the current language."""


class MeasuringSection(Section):
    """A section that measures in the reader's browser: one run at a time, with its progress, and
    cancellable between parts. `new_lab()` makes the measurement (an app.lab.Stepwise);
    `render()` shows it; `runs` counts the runs started (tests wait for theirs)."""

    def measure_controls(self):
        """The run and cancel buttons and the progress bar, in one row."""
        self.lab = None
        self.runs = 0
        self.run_button = pn.widgets.Button(color="primary", width=220)
        self.cancel_button = pn.widgets.Button(color="default", width=140, disabled=True)
        self.progress = pn.indicators.Progress(value=0, max=10, width=260, bar_color="success", visible=False)
        self.run_button.on_click(self.run)
        self.cancel_button.on_click(lambda _e: self.lab and self.lab.cancel())
        return pn.FlexBox(self.run_button, self.cancel_button, self.progress, align_items="center", gap="10px")

    def new_lab(self):
        raise NotImplementedError

    def render(self):
        """The measurement so far (its table, plot and sentences), not its status line."""
        raise NotImplementedError

    def status_line(self) -> str:
        """The status line of the current run (status_html)."""
        raise NotImplementedError

    def show(self):
        """The measurement, then its status line, last: whoever waits for the status (a test, a
        screen reader's live region) finds the rest drawn (the static site sends each change as a
        message of its own)."""
        self.render()
        self.status.object = "" if self.lab is None else self.status_line()

    async def run(self, _event=None):
        if self.lab is not None and not self.lab.finished:
            return                                    # already running: one run at a time
        self.lab = lab = self.new_lab()
        self.runs += 1
        # changes made from a coroutine reach the browser through pn.io.unlocked (no-op under Pyodide)
        with pn.io.unlocked():
            self.run_button.disabled, self.cancel_button.disabled = True, False
            self.progress.max, self.progress.value, self.progress.visible = lab.total, 0, True
            self.show()
        try:
            while await off_the_loop(lab.advance):
                with pn.io.unlocked():
                    self.progress.value = lab.done
                    self.show()
                await asyncio.sleep(0.01)             # the browser's messages (Cancel) get in here
        finally:
            with pn.io.unlocked():
                self.run_button.disabled, self.cancel_button.disabled = False, True
                self.progress.visible = False
                self.show()

    def status_html(self, testid: str, text: str) -> str:
        """The run's state, for the reader and for tests (which run, running or done)."""
        state = "done" if self.lab.finished else "running"
        return (f"<p role='status' data-testid='{testid}' data-run='{self.runs}' data-state='{state}'>"
                f"{esc(text)}</p>")


# -- 1. Your milliseconds -------------------------------------------------------------------------

LAB_SAMPLES = 9          # measurements of each way per position (interleaved; the table shows medians)


class LabSection(MeasuringSection):
    key = "lab"

    def build(self):
        self.intro = self.html_pane()
        controls = self.measure_controls()
        self.status = self.html_pane()
        self.table = self.html_pane()
        self.source = ColumnDataSource({"t": [], "cached_ms": [], "full_ms": []})
        n = self.view.n
        from bokeh.plotting import figure     # with the section: not at the page's start-up
        f = figure(height=220, sizing_mode="stretch_width", x_range=Range1d(0, n + 2), toolbar_location=None,
                   tools="", min_border_left=10, visible=False)       # shown with the first measurement
        full_line = f.line("t", "full_ms", source=self.source, color=GREY, line_width=2, line_dash="dashed")
        self.full_glyph = f.scatter("t", "full_ms", source=self.source, marker="square", size=8, color=GREY)
        cached_line = f.line("t", "cached_ms", source=self.source, color=GREEN, line_width=2)
        self.cached_glyph = f.scatter("t", "cached_ms", source=self.source, marker="circle", size=8, color=GREEN)
        self.legend = [LegendItem(label="", renderers=[cached_line, self.cached_glyph]),
                       LegendItem(label="", renderers=[full_line, self.full_glyph])]
        f.add_layout(Legend(items=self.legend, location="top_left", background_fill_alpha=0.85))
        f.y_range.start = 0
        f.xaxis.ticker = FixedTicker(ticks=list(table_positions(self.view.ex.cfg)))
        f.outline_line_color = None
        self.hover = HoverTool(renderers=[self.full_glyph, self.cached_glyph])
        f.add_tools(self.hover)
        self.fig = f
        self.explain = self.html_pane()
        self.plot_heading = self.html_pane(visible=False)
        self.plot = pn.pane.Bokeh(f, sizing_mode="stretch_width", visible=False)
        self.card.objects = [self.intro, controls, self.status, self.table, self.plot_heading, self.plot, self.explain]

    def label(self):
        positions = table_positions(self.view.ex.cfg)
        self.intro.object = (f"<p>{esc(self.t('lab_intro', n=len(positions), t=positions[-1], s=LAB_SAMPLES))}"
                             f"</p>")
        self.legend[0].label, self.legend[1].label = bk_value(self.t("with_cache")), bk_value(self.t("without_cache"))
        self.run_button.name = self.t("lab_run")
        self.cancel_button.name = self.t("lab_cancel")
        self.plot_heading.object = f"<h3>{esc(self.t('lab_plot_title'))}</h3>"
        self.fig.xaxis.axis_label = self.t("grid_x")
        self.fig.yaxis.axis_label = self.t("clock_plot_y")
        self.hover.tooltips = [(self.t("grid_x"), "@t"), (self.t("with_cache") + " (ms)", "@cached_ms{0.000}"),
                               (self.t("without_cache") + " (ms)", "@full_ms{0.000}")]
        self.show()

    def new_lab(self) -> TimingLab:
        ex = self.view.ex                             # the page's text, or the same seed's full window
        ids = ex.ids if ex.full else window_ids(ex.gpt, seed=ex.settings.seed, top_p=ex.settings.top_p)
        return TimingLab(ex.gpt, ids, positions=table_positions(ex.cfg), samples=LAB_SAMPLES)

    def render(self):
        lab, lang = self.lab, self.lang
        if lab is None:
            self.table.object = self.explain.object = ""
            return
        rows = lab.rows
        head = "".join(f"<th>{esc(self.t(k))}</th>" for k in
                       ("table_pos", "lab_c", "lab_tc", "table_ms_cached", "table_ms_full", "lab_clock", "lab_count"))
        ratio = lambda x: clock.ratio_text(x, lang)
        body = "".join(
            f"<tr><td>{r['t']}</td><td>{num(r['c'], lang)}</td><td>{num(r['tc'], lang)}</td>"
            f"<td>{clock.ms_text(r['cached_s'], lang)}</td><td>{clock.ms_text(r['full_s'], lang)}</td>"
            f"<td><b>{ratio(r['clock_ratio'])}×</b> <span class='spread'>({ratio(r['ratio_low'])}–"
            f"{ratio(r['ratio_high'])})</span></td><td>{num(r['count_ratio'], lang)}×</td></tr>" for r in rows)
        by_row = lab.by_row
        extra = ""
        if by_row:
            extra = (f"<p data-testid='lab-rows'>{esc(self.t('lab_rows', n=by_row['rows'], per_row=clock.ms_text(by_row['per_row_in_pass_s'], lang), alone=clock.ms_text(by_row['one_row_s'], lang), x=ratio(by_row['ratio'])))}</p>")
        self.table.object = scroll_region(self.t("lab_title"), (
            f"<table class='data' data-testid='lab-table'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>")) + extra
        reading = lab.summary
        self.explain.object = ("" if reading is None else "<p class='explain' data-testid='lab-explain'>" + " ".join(
            esc(self.t(key, **values)) for key, values in clock.table_sentences(reading, lang)) + "</p>")
        self.source.data = {"t": [r["t"] for r in rows], "cached_ms": [r["cached_s"] * 1e3 for r in rows],
                            "full_ms": [r["full_s"] * 1e3 for r in rows]}
        self.plot.visible = self.plot_heading.visible = self.fig.visible = bool(rows)

    def status_line(self) -> str:
        lab = self.lab
        state = ("lab_cancelled" if lab.cancelled else "lab_done") if lab.finished else "lab_running"
        return self.status_html("lab-status", self.t(state, done=lab.done, total=lab.total, n=lab.total, s=LAB_SAMPLES))


# -- 2. Prove it ------------------------------------------------------------------------------------

def code_editor(value: str, height: int):
    return pn.widgets.TextAreaInput(value=value, height=height, sizing_mode="stretch_width",
                                    stylesheets=["textarea { font-family: ui-monospace, Menlo, Consolas, monospace; "
                                                 "font-size: 14px; line-height: 1.4; }"])


class LatestCode:
    """The code to run: the latest of what was typed (value_input, sent while typing) and what the
    page set (value), so a click right after typing runs what is on the screen."""

    def __init__(self, editor):
        self.editor = editor
        self.code = editor.value
        editor.param.watch(self._typed, ["value", "value_input"])

    def _typed(self, *events):
        self.code = events[-1].new            # both may change in one update, with the same text


def output_html(t, answer) -> str:
    """What the code printed (capped by the sandbox), as a block of text."""
    if not answer.output and not answer.more:
        return ""
    more = f"\n{t('code_more', n=answer.more)}" if answer.more else ""
    return (f"<p class='explain'>{esc(t('code_output'))}</p>"
            f"<pre class='code' data-testid='code-output'>{esc(chr(10).join(answer.output) + more)}</pre>")


def failure_html(t, lang, answer, limit_s) -> str | None:
    """The sentence for a run that did not finish normally (stopped, crashed, ...); None if it did."""
    key = {"timeout": "code_stopped", "crashed": "code_crashed", "unavailable": "code_unavailable",
           "garbled": "code_garbled", "busy": "code_busy"}.get(answer.status)
    if key is None:
        return None
    text = t(key, limit=num(answer.limit_s or limit_s, lang), message=answer.message or answer.url)
    return f"<div class='feedback wrong' role='status' data-testid='code-stopped'>{esc(text)}</div>"


def waiting_html(view, testid: str, pane, run: int, queued: bool = False) -> None:
    """A run's result while it has none: running, or waiting in line for another run to end (at the
    latest at that run's time limit)."""
    t = view.t
    state, text = (("queued", t("code_queued", limit=num(view.sandbox.limit_in_flight, view.lang))) if queued
                   else ("running", t("code_running")))
    pane.object = (f"<div data-testid='{testid}' data-state='{state}' data-run='{run}'><p role='status'>"
                   f"{esc(text)}</p></div>")


class ProveSection(Section):
    key = "prove"

    def build(self):
        self.intro = self.html_pane()
        self.editor = code_editor(self.template(), 380)
        self.code = LatestCode(self.editor)
        self.run_button = pn.widgets.Button(color="primary", width=160)
        self.to65_button = pn.widgets.Button(color="warning", width=240)
        self.restore_button = pn.widgets.Button(color="light", width=200)
        self.result = self.html_pane()
        self.run_button.on_click(lambda _e: self.run())
        self.to65_button.on_click(lambda _e: self.run(one_more=True))
        self.restore_button.on_click(lambda _e: self.restore())
        self.card.objects = [self.intro, self.editor,
                             pn.FlexBox(self.run_button, self.to65_button, self.restore_button, gap="10px"),
                             self.result]
        self.view.sandbox.warm(with_model=True)

    def template(self) -> str:
        ex = self.view.ex
        return cell.cell(self.lang, ex.cfg.n_ctx, ex.settings.top_p)

    def label(self):
        n = self.view.n
        self.intro.object = f"<p>{esc(self.t('prove_intro', n=cell.LIMIT_S, window=n, m=n + 1))}</p>"
        self.run_button.name = self.t("prove_run")
        self.to65_button.name = self.t("prove_65", n=n, m=n + 1)
        self.restore_button.name = self.t("prove_restore")
        self.editor.name = self.t("prove_code")
        if self.code.code in [cell.cell(lang, n, self.view.ex.settings.top_p) for lang in cell.CELL]:
            self.editor.value = self.template()        # not edited: follow the language

    def restore(self):
        self.editor.value = self.template()
        self.result.object = ""

    def run(self, one_more: bool = False):
        code = self.code.code
        if one_more:
            code = cell.one_more(code, self.view.n)
            self.editor.value = code
        waiting = functools.partial(waiting_html, self.view, "prove-result", self.result)
        waiting(self.view.sandbox.next_run, queued=self.view.sandbox.busy)      # before: the answer may be at once
        self.view.sandbox.submit(cell.payload(code, self.view.ex.settings.seed, self.lang), self.show,
                                 limit_s=cell.LIMIT_S, key=self.key, on_start=waiting)

    def show(self, answer, run):
        self.view.publish_state(weights=True)      # tests check the app's model is untouched
        t = self.t
        out = failure_html(t, self.lang, answer, cell.LIMIT_S)
        if out is None and answer.status == "error":
            where = t("code_line", line=answer.line) if answer.line else ""
            explain = (f"<p>{esc(t('cell_position_error', n=self.view.n, pos=self.view.n + 1))}</p>"
                       if cell.is_position_error(answer.error_type, answer.message, self.view.n) else "")
            out = (f"<div class='error' role='alert' data-testid='prove-error'><p>{esc(t('code_error'))} {esc(where)}</p>"
                   f"<p><code>{esc(answer.error_type)}: {esc(answer.message)}</code></p>{explain}</div>")
        elif out is None:
            out = f"<p role='status' data-testid='prove-ok'>{esc(t('prove_ok'))}</p>"
        self.result.object = (f"<div data-testid='prove-result' data-state='{answer.status}' data-run='{run}'>"
                              f"{output_html(t, answer)}{out}</div>")


# -- 3. Check your intuition ---------------------------------------------------------------------------

CHALLENGE_PROBLEM = {"no_function": "challenge_no_function", "not_numbers": "challenge_not_numbers",
                     "too_big": "challenge_too_big", "wrong_shape": "challenge_wrong_shape"}   # app/challenge.py


class QuizSection(Section):
    key = "quiz"

    def build(self):
        self.intro = self.html_pane()
        self.items = []
        for qid, options, _right in quiz.QUESTIONS:
            question = self.html_pane()
            choice = pn.widgets.RadioBoxGroup(options={o: o for o in options}, inline=False,
                                              stylesheets=[WRAP_LABEL])
            choice.value = None                       # nothing chosen until the reader chooses
            feedback = self.html_pane()
            choice.param.watch(lambda e, q=qid: self.answer(q), "value")
            self.items.append((qid, question, choice, feedback))
        self.challenge_intro = self.html_pane()
        self.block = pn.widgets.Select(options={"1": 0, "2": 1}, value=0, width=110)
        self.head = pn.widgets.Select(options={str(h + 1): h for h in range(4)}, value=0, width=110)
        self.editor = code_editor(challenge.template(self.lang, self.view.ex.cfg.d_head), 230)
        self.check_button = pn.widgets.Button(color="primary", width=180)
        self.solution_button = pn.widgets.Button(color="light", width=180)
        self.result = self.html_pane()
        self.code = LatestCode(self.editor)
        self.check_button.on_click(lambda _e: self.check())
        self.solution_button.on_click(lambda _e: self.show_solution())
        objects = [self.intro]
        for _qid, question, choice, feedback in self.items:
            objects += [question, choice, feedback]
        objects += [self.challenge_intro, pn.FlexBox(self.block, self.head, gap="10px"), self.editor,
                    pn.FlexBox(self.check_button, self.solution_button, gap="10px"), self.result]
        self.card.objects = objects
        self.view.session.settings.param.watch(lambda _e: self.label(), "seed")   # the options' order
        self.view.sandbox.warm()

    def label(self):
        self.intro.object = f"<p>{esc(self.t('quiz_intro'))}</p>"
        values, shown = quiz.values(self.view.ex, self.lang), quiz.order(self.view.ex.settings.seed)
        for i, (qid, question, choice, feedback) in enumerate(self.items):
            question.object = f"<h3>{i + 1}. {esc(self.t(quiz.QUESTION_KEY[qid], **values))}</h3>"
            value = choice.value
            choice.options = {self.t(quiz.OPTION_KEY[qid][o], **values): o for o in shown[qid]}
            choice.value = value
            choice.name = self.t(quiz.QUESTION_KEY[qid], **values)
            self.answer(qid, values)
        self.challenge_intro.object = (f"<h3>{esc(self.t('challenge_title'))}</h3>"
                                       f"<p>{esc(self.t('challenge_intro', n=sandbox.LIMIT_S))}</p>")
        self.block.name = self.t("challenge_block")
        self.head.name = self.t("challenge_head")
        self.editor.name = self.t("challenge_code")
        dk = self.view.ex.cfg.d_head
        if self.code.code in [challenge.template(lang, dk) for lang in challenge.TEMPLATE]:
            self.editor.value = challenge.template(self.lang, dk)    # not edited: follow the language
        elif self.code.code in challenge.SOLUTION.values():
            self.editor.value = challenge.SOLUTION.get(self.lang, challenge.SOLUTION["es"])
        self.check_button.name = self.t("challenge_check")
        self.solution_button.name = self.t("challenge_solution")

    def answer(self, qid: str, values: dict | None = None):
        _, _, choice, feedback = next(item for item in self.items if item[0] == qid)
        if choice.value is None:
            feedback.object = ""
            return
        right = quiz.is_right(qid, choice.value)
        values = values or quiz.values(self.view.ex, self.lang)
        verdict = self.t("quiz_right" if right else "quiz_wrong")
        feedback.object = (f"<div class='{'feedback right' if right else 'feedback wrong'}' role='status' "
                           f"data-testid='quiz-{qid}'><b>{esc(verdict)}</b> "
                           f"{esc(self.t(quiz.WHY_KEY[qid], **values))}</div>")

    def case(self):
        ex = self.view.ex
        return ex.gpt.attention_at(ex.ids, self.block.value, self.head.value)

    def check(self):
        q, K, V, out = self.case()
        where = self.t("challenge_where", t=self.view.ex.t, block=self.block.value + 1, head=self.head.value + 1)
        waiting = functools.partial(waiting_html, self.view, "challenge-result", self.result)
        waiting(self.view.sandbox.next_run, queued=self.view.sandbox.busy)      # before: the answer may be at once
        self.view.sandbox.submit(challenge.payload(self.code.code, q, K, V),
                                 lambda answer, run: self.show_check(challenge.judge(answer, out), out, where, run),
                                 key=self.key, on_start=waiting)

    def show_check(self, verdict, out, where, run):
        self.view.publish_state(weights=True)      # tests check the app's model is untouched
        lang, answer = self.lang, verdict.answer
        if verdict.kind == "right":
            body = f"<div class='feedback right' role='status'><b>{esc(self.t('challenge_ok', diff=sci(verdict.diff, lang)))}</b> {esc(where)}</div>"
        elif verdict.kind == "wrong":
            body = (f"<div class='feedback wrong' role='status'>"
                    f"{esc(self.t('challenge_diff', diff=sci(verdict.diff, lang)))} {esc(where)}</div>")
        elif verdict.kind == "error":
            line = self.t("code_line", line=answer.line) if answer.line else ""
            body = (f"<div class='feedback wrong' role='status'>{esc(self.t('code_error'))} {esc(line)}"
                    f"<pre class='code'>{esc(answer.error_type)}: {esc(answer.message)}</pre>"
                    f"{esc(self.t('challenge_hint_error'))}</div>")
        elif verdict.kind == "problem":
            body = (f"<div class='feedback wrong' role='status'>"
                    f"{esc(self.t(CHALLENGE_PROBLEM[verdict.problem], shape=verdict.shape, expected=tuple(np.shape(out))))}</div>")
        else:
            body = failure_html(self.t, self.lang, answer, sandbox.LIMIT_S)
        self.result.object = (f"<div data-testid='challenge-result' data-state='{verdict.kind}' data-run='{run}'>{body}"
                              f"{output_html(self.t, answer)}</div>")

    def show_solution(self):
        self.editor.value = challenge.SOLUTION.get(self.lang, challenge.SOLUTION["es"])


# -- 4. How much context fits -------------------------------------------------------------------------

class ContextSection(Section):
    """The calculator: a model (its numbers, from a preset or typed) and a machine; the tokens of
    context each user gets, capped at the model's window."""
    key = "ctx"
    MODEL = ("layers", "kv_heads", "d_head", "kv_bytes", "params", "bits", "window")
    MACHINE = ("gpu", "overhead", "users")
    LABEL = {"layers": "ctx_layers", "kv_heads": "ctx_kv_heads", "d_head": "ctx_d_head", "kv_bytes": "ctx_kv_bytes",
             "params": "ctx_params", "bits": "ctx_bits", "window": "ctx_window", "gpu": "ctx_gpu",
             "overhead": "ctx_overhead", "users": "ctx_users"}
    PRESET = {"7b-mha": "ctx_preset_7b_mha", "mini": "ctx_preset_mini", "0.5b": "ctx_preset_0_5b",
              "7b-gqa": "ctx_preset_7b_gqa", "13b": "ctx_preset_13b", "70b": "ctx_preset_70b"}   # app/calculator.py

    def build(self):
        ex = self.view.ex
        self.presets = calculator.presets(ex.cfg, next(iter(ex.gpt.params.values())).itemsize)
        self.intro, self.result, self.assumptions = self.html_pane(), self.html_pane(), self.html_pane()
        self.preset = pn.widgets.Select(options=list(self.presets), value=calculator.DEFAULT,
                                        sizing_mode="stretch_width", max_width=520, stylesheets=[WRAP_LABEL],
                                        css_classes=["ctx-fields"])
        self.fields = {"layers": NumberField("layers", 1, 512, integer=True),
                       "kv_heads": NumberField("kv_heads", 1, 512, integer=True),
                       "d_head": NumberField("d_head", 1, 1024, integer=True),
                       "params": NumberField("params", 1, 1e13, integer=True),
                       "window": NumberField("window", 1, 1e8, integer=True),
                       "gpu": NumberField("gpu", 0, 1e5), "overhead": NumberField("overhead", 0, 1e3),
                       "users": NumberField("users", 1, 1e6, integer=True)}
        self.kv_bytes = pn.widgets.Select(width=FIELD_WIDTH, stylesheets=[WRAP_LABEL])
        self.bits = pn.widgets.Select(width=FIELD_WIDTH, stylesheets=[WRAP_LABEL])
        self.model_heading, self.machine_heading = self.html_pane(), self.html_pane()
        self._loading = False
        for w in self.widgets().values():
            w.param.watch(lambda _e: self.render(), "value")
        self.preset.param.watch(lambda e: self.load(e.new), "value")
        row = dict(flex_wrap="wrap", align_items="flex-end", gap="8px 14px", sizing_mode="stretch_width",
                   css_classes=["ctx-fields"])
        self.card.objects = [self.intro, self.preset, self.model_heading,
                             pn.FlexBox(*[self.widgets()[k] for k in self.MODEL], **row), self.machine_heading,
                             pn.FlexBox(*[self.widgets()[k] for k in self.MACHINE], **row), self.result,
                             self.assumptions]
        self.relabel_choices()
        self.load(self.preset.value)

    def widgets(self) -> dict:
        """Every input by its key: the number fields' text inputs and the two selects."""
        return {**{k: f.widget for k, f in self.fields.items()}, "kv_bytes": self.kv_bytes, "bits": self.bits}

    def label(self):
        self._loading = True
        try:
            self.relabel_choices()
            for key, w in self.widgets().items():
                w.name = self.t(self.LABEL[key])
            for f in self.fields.values():
                if f.value is not None:
                    f.show(f.value, self.lang)          # the same number, written the new language's way
        finally:
            self._loading = False
        self.intro.object = f"<p>{esc(self.t('ctx_intro'))}</p>"
        self.model_heading.object = f"<h3>{esc(self.t('ctx_model'))}</h3>"
        self.machine_heading.object = f"<h3>{esc(self.t('ctx_machine'))}</h3>"
        self.assumptions.object = "".join(f"<p class='explain'>{esc(s)}</p>" for s in self.notes())
        self.render()

    def relabel_choices(self):
        """The presets' names and the selects' options, with the language's numbers."""
        lang, value = self.lang, self.preset.value
        self.preset.options = {self.t(self.PRESET[k],
                                      L=p.model.n_layers, d=num(p.model.d_model, lang), n=p.model.n_kv_heads,
                                      dh=p.model.d_head): k for k, p in self.presets.items()}
        self.preset.value = value
        self.preset.name = self.t("ctx_preset")
        bits, kv = self.bits.value, self.kv_bytes.value
        names = {"4-bit": self.t("ctx_4bit")}
        self.bits.options = {f"{names.get(k, k)} ({plain_number(b, lang)})": b for k, b in calculator.BITS.items()}
        self.kv_bytes.options = {f"{'fp16 / bf16' if k == 'fp16' else k} ({plain_number(b, lang)})": b
                                 for k, b in calculator.KV_BYTES.items()}
        self.bits.value, self.kv_bytes.value = bits, kv

    def notes(self) -> list[str]:
        """The assumptions, where each context window comes from, and the chapter's two GBs."""
        lang, P, checks = self.lang, self.presets, calculator.chapter_checks()
        short = lambda x: plain_number(x, lang, 3)                       # noqa: E731
        w05 = P["0.5b"].with_(bits=calculator.BITS["fp32"]).weights_bytes()
        return [
            self.t("ctx_assumptions", c13_4bit=num(checks["13b_4bit_8gb"], lang),
                   gpu8=calculator.CHAPTER_TABLES["13b_4bit_8gb"][2], gpu16=calculator.CHAPTER_TABLES["7b_int8_16gb"][2],
                   c7_int8=num(checks["7b_int8_16gb"], lang), c13_int8=num(checks["13b_int8_16gb"], lang),
                   overhead=short(calculator.OVERHEAD_GIB), b7=num(P["7b-gqa"].model.n_params / 1e9, lang, 1),
                   b13=num(P["13b"].model.n_params / 1e9, lang, 1), bits4=short(calculator.BITS["4-bit"]),
                   group=calculator.GROUP),
            self.t("ctx_windows", **{k: num(P[p].window, lang) for k, p in
                                     (("mini", "mini"), ("l7", "7b-mha"), ("c05", "0.5b"), ("c7", "7b-gqa"),
                                      ("c13", "13b"), ("c70", "70b"))}),
            self.t("ctx_units", w7=num(P["7b-gqa"].with_(bits=16).weights_bytes() / GiB, lang, 1),
                   w05_gb=num(w05 / 1e9, lang, 2), w05_gib=num(w05 / GiB, lang, 2)),
            self.t("ctx_knobs"),
        ]

    def load(self, key: str):
        p = self.presets[key]
        m, lang = p.model, self.lang
        self._loading = True
        try:
            for k, v in (("layers", m.n_layers), ("kv_heads", m.n_kv_heads), ("d_head", m.d_head),
                         ("params", round(m.n_params)), ("window", m.n_ctx), ("gpu", p.gpu_gib),
                         ("overhead", p.overhead_gib), ("users", p.users)):
                self.fields[k].show(v, lang)
            self.kv_bytes.value, self.bits.value = p.kv_bytes, p.bits
        finally:
            self._loading = False
        self.render()

    def current(self):
        """The calculator's model and machine as typed, or the first field that is not a number."""
        lang = self.lang
        for f in self.fields.values():
            if f.read(lang) is None:
                return f
        v = {k: f.value for k, f in self.fields.items()}
        model = Architecture(v["params"], v["layers"], v["kv_heads"], v["kv_heads"], v["d_head"], v["window"])
        return calculator.Preset("custom", model, bits=self.bits.value, kv_bytes=self.kv_bytes.value,
                                 gpu_gib=v["gpu"], overhead_gib=v["overhead"], users=v["users"])

    def render(self):
        if self._loading or self.bits.value is None or self.kv_bytes.value is None:
            return
        p, lang = self.current(), self.lang
        if isinstance(p, NumberField):
            text = self.t("ctx_invalid", field=self.t(self.LABEL[p.key]), what=p.expected(self.t, lang))
            self.result.object = f"<p role='status' data-testid='ctx-invalid'>{esc(text)}</p>"
            return
        self.result.object = self.verdict_html(p)

    def verdict_html(self, p: calculator.Preset) -> str:
        lang, tokens = self.lang, p.tokens_per_user()
        verdict = self.t("ctx_tokens", n=tokens, users=num(p.users, lang))
        cap = (f"<p class='explain' data-testid='ctx-cap'>{esc(self.t('ctx_capped', n=p.window, by_memory=num(p.tokens_by_memory(), lang)))}</p>"
               if p.capped() else "")
        detail = self.t("ctx_detail", per_token=size(p.bytes_per_token(), lang), weights=size(p.weights_bytes(), lang),
                        free=size(max(p.free_bytes(), 0), lang), n=p.users * tokens,
                        used=size(p.cache_bytes(), lang))
        none = f"<p class='explain'>{esc(self.t('ctx_none'))}</p>" if tokens == 0 else ""
        return (f"<div class='card' role='status'><p class='big num' data-testid='ctx-tokens'>{esc(verdict)}</p>"
                f"{cap}<p class='explain' data-testid='ctx-detail'>{esc(detail)}</p>{none}</div>")
