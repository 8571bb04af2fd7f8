"""Below the figure: the reader's own timing lab, the lesson's first cell, the
quiz with its challenge, and how much context fits. Thin views over
app.lab, app.cell, app.quiz, app.challenge and app.calculator.
"""
from __future__ import annotations

import asyncio

import numpy as np
import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Legend, LegendItem, Range1d
from bokeh.plotting import figure

from model.timing import table_positions, window_ids

from . import calculator, cell, challenge, clock, quiz, sandbox
from .i18n import num, sci, tr
from .lab import TimingLab
from .parts import esc, scroll_region
from .style import CSS, GREEN, GREY
from .widgets import Disclosure


class Section:
    """A collapsible card whose widgets are built the first time it opens (the page
    starts faster and lighter); `apply_language()` sets every label."""

    key = ""

    def __init__(self, view):
        self.view = view                     # the Explorable (app/page.py): its session, sandbox, language
        self.card = Disclosure()
        self.built = False
        self.card.param.watch(lambda e: e.new or self.ensure_built(), "collapsed")
        view.session.settings.param.watch(lambda _e: self.apply_language(), "lang")
        self.apply_language()

    def ensure_built(self):
        if not self.built:
            self.built = True
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
        self.card.title = self.t(f"{self.key}_title")
        if self.built:
            self.label()

    def label(self):
        """Every label of the built widgets, in the current language."""


# -- 1. Your milliseconds -------------------------------------------------------------------------

LAB_SAMPLES = 7          # measurements of each way per position (interleaved; the table shows medians)


class LabSection(Section):
    key = "lab"

    def build(self):
        self.lab: TimingLab | None = None
        self.intro = self.html_pane()
        self.run_button = pn.widgets.Button(color="primary", width=220)
        self.cancel_button = pn.widgets.Button(color="default", width=140, disabled=True)
        self.progress = pn.indicators.Progress(value=0, max=10, width=260, bar_color="success", visible=False)
        self.status = self.html_pane()
        self.table = self.html_pane()
        self.source = ColumnDataSource({"t": [], "cached_ms": [], "full_ms": []})
        n = self.view.n
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
        self.run_button.on_click(self.run)
        self.cancel_button.on_click(lambda _e: self.lab and self.lab.cancel())
        self.card.objects = [self.intro, pn.FlexBox(self.run_button, self.cancel_button, self.progress,
                                                    align_items="center", gap="10px"),
                             self.status, self.table, self.plot_heading, self.plot, self.explain]

    def label(self):
        positions = table_positions(self.view.ex.cfg)
        self.intro.object = (f"<p>{esc(self.t('lab_intro', k=len(positions), n=positions[-1], s=LAB_SAMPLES))}"
                             f"</p>")
        self.legend[0].label, self.legend[1].label = bk_value(self.t("with_cache")), bk_value(self.t("without_cache"))
        self.run_button.name = self.t("lab_run")
        self.cancel_button.name = self.t("lab_cancel")
        self.plot_heading.object = f"<h3>{esc(self.t('lab_plot_title'))}</h3>"
        self.fig.xaxis.axis_label = self.t("grid_x")
        self.fig.yaxis.axis_label = self.t("clock_plot_y")
        self.hover.tooltips = [(self.t("grid_x"), "@t"), (self.t("with_cache") + " (ms)", "@cached_ms{0.000}"),
                               (self.t("without_cache") + " (ms)", "@full_ms{0.000}")]
        self.render()

    async def run(self, _event=None):
        if self.lab is not None and not self.lab.finished:
            return                                    # already running: one run at a time
        ex = self.view.ex                             # the page's text, or the same seed's full window
        ids = ex.ids if ex.full else window_ids(ex.gpt, seed=ex.settings.seed, top_p=ex.settings.top_p)
        self.lab = lab = TimingLab(self.view.ex.gpt, ids, positions=table_positions(ex.cfg), samples=LAB_SAMPLES)
        # changes made from a coroutine reach the browser through pn.io.unlocked (no-op under Pyodide)
        with pn.io.unlocked():
            self.run_button.disabled, self.cancel_button.disabled = True, False
            self.progress.max, self.progress.value, self.progress.visible = lab.total, 0, True
            self.render()
        try:
            while lab.advance():
                with pn.io.unlocked():
                    self.progress.value = lab.done
                    self.render()
                await asyncio.sleep(0.01)             # the browser's messages (Cancel) get in here
        finally:
            with pn.io.unlocked():
                self.run_button.disabled, self.cancel_button.disabled = False, True
                self.progress.visible = False
                self.render()

    def render(self):
        lab, lang = self.lab, self.lang
        if lab is None:
            self.status.object = self.table.object = self.explain.object = ""
            return
        state = ("lab_cancelled" if lab.cancelled else "lab_done") if lab.finished else "lab_running"
        self.status.object = (f"<p role='status' data-testid='lab-status'>"
                              f"{esc(self.t(state, done=lab.done, total=lab.total, s=LAB_SAMPLES))}</p>")
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
        self.intro.object = f"<p>{esc(self.t('prove_intro', limit=cell.LIMIT_S, n=n, m=n + 1))}</p>"
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
        if self.view.sandbox.busy:
            return
        code = self.code.code
        if one_more:
            code = cell.one_more(code, self.view.n)
            self.editor.value = code
        self.result.object = (f"<div data-testid='prove-result' data-state='running' "
                              f"data-run='{self.view.sandbox.next_run}'><p role='status'>"
                              f"{esc(self.t('code_running'))}</p></div>")
        self.view.sandbox.submit(cell.payload(code, self.view.ex.settings.seed, self.lang), self.show,
                                 limit_s=cell.LIMIT_S)

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

class QuizSection(Section):
    key = "quiz"

    def build(self):
        self.intro = self.html_pane()
        self.items = []
        for qid, options, _right in quiz.QUESTIONS:
            question = self.html_pane()
            choice = pn.widgets.RadioBoxGroup(options={o: o for o in options}, inline=False)
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
        self.view.sandbox.warm()

    def label(self):
        self.intro.object = f"<p>{esc(self.t('quiz_intro'))}</p>"
        for i, (qid, question, choice, feedback) in enumerate(self.items):
            question.object = f"<h3>{i + 1}. {esc(self.t(f'quiz_{qid}', T=self.view.n))}</h3>"
            value = choice.value
            options = next(o for q, o, _ in quiz.QUESTIONS if q == qid)
            choice.options = {self.t(f"quiz_{qid}_{o}"): o for o in options}
            choice.value = value
            choice.name = self.t(f"quiz_{qid}", T=self.view.n)
            self.answer(qid)
        self.challenge_intro.object = (f"<h3>{esc(self.t('challenge_title'))}</h3>"
                                       f"<p>{esc(self.t('challenge_intro', limit=sandbox.LIMIT_S))}</p>")
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

    def answer(self, qid: str):
        _, _, choice, feedback = next(item for item in self.items if item[0] == qid)
        if choice.value is None:
            feedback.object = ""
            return
        right = quiz.is_right(qid, choice.value)
        n = quiz.numbers(self.view.ex)
        lang = self.lang
        values = {"t": n["t"], "c": num(n["c"], lang), "tc": num(n["tc"], lang), "T": n["T"],
                  "total_c": num(n["total_c"], lang), "total_tc": num(n["total_tc"], lang),
                  "total_ratio": num(n["total_ratio"], lang, 1), "numbers": num(n["numbers"], lang),
                  "kib": num(n["kib"], lang), "seven_b": num(n["seven_b"], lang),
                  "proof": sci(n["proof"], lang), "rows": n["rows"]}
        verdict = self.t("quiz_right" if right else "quiz_wrong")
        feedback.object = (f"<div class='{'feedback right' if right else 'feedback wrong'}' role='status' "
                           f"data-testid='quiz-{qid}'><b>{esc(verdict)}</b> "
                           f"{esc(self.t(f'quiz_{qid}_why', **values))}</div>")

    def case(self):
        ex = self.view.ex
        return ex.gpt.attention_at(ex.ids, self.block.value, self.head.value)

    def check(self):
        if self.view.sandbox.busy:
            return
        q, K, V, out = self.case()
        where = self.t("challenge_where", t=self.view.ex.t, block=self.block.value + 1, head=self.head.value + 1)
        self.result.object = (f"<div data-testid='challenge-result' data-state='running' "
                              f"data-run='{self.view.sandbox.next_run}'><p role='status'>"
                              f"{esc(self.t('code_running'))}</p></div>")
        self.view.sandbox.submit(challenge.payload(self.code.code, q, K, V),
                                 lambda answer, run: self.show_check(challenge.judge(answer, out), out, where, run))

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
                    f"{esc(self.t('challenge_' + verdict.problem, shape=verdict.shape, expected=tuple(np.shape(out))))}</div>")
        else:
            body = failure_html(self.t, self.lang, answer, sandbox.LIMIT_S)
        self.result.object = (f"<div data-testid='challenge-result' data-state='{verdict.kind}' data-run='{run}'>{body}"
                              f"{output_html(self.t, answer)}</div>")

    def show_solution(self):
        self.editor.value = challenge.SOLUTION.get(self.lang, challenge.SOLUTION["es"])


# -- 4. How much context fits -------------------------------------------------------------------------

class ContextSection(Section):
    key = "ctx"

    def build(self):
        self.intro = self.html_pane()
        self.preset = pn.widgets.Select(options=list(calculator.PRESETS), value="7b-gqa", width=300)
        p = calculator.PRESETS["7b-gqa"]
        self.layers = pn.widgets.IntInput(value=p.n_layers, start=1, end=512, width=140)
        self.kv_heads = pn.widgets.IntInput(value=p.n_kv_heads, start=1, end=512, width=140)
        self.d_head = pn.widgets.IntInput(value=p.d_head, start=1, end=1024, width=140)
        self.kv_bytes = pn.widgets.Select(options={"fp16 / bf16 (2)": 2.0, "fp32 (4)": 4.0, "int8 (1)": 1.0,
                                                   "float64 (8)": 8.0}, value=p.kv_bytes, width=170)
        self.params = pn.widgets.FloatInput(value=p.n_params / 1e9, start=0.0, end=10_000.0, step=0.5, width=160)
        self.bits = pn.widgets.Select(options={"fp16 (16)": 16.0, "int8 (8)": 8.0, "4-bit (4.125)": 4.125,
                                               "fp32 (32)": 32.0, "float64 (64)": 64.0}, value=p.bits, width=170)
        self.gpu = pn.widgets.FloatInput(value=p.gpu_gib, start=0.0, end=100_000.0, step=1.0, width=140)
        self.overhead = pn.widgets.FloatInput(value=p.overhead_gib, start=0.0, end=1000.0, step=0.5, width=140)
        self.users = pn.widgets.IntInput(value=1, start=1, end=100_000, width=140)
        self.result = self.html_pane()
        self.assumptions = self.html_pane()
        self.inputs = [self.layers, self.kv_heads, self.d_head, self.kv_bytes, self.params, self.bits,
                       self.gpu, self.overhead, self.users]
        self._loading = False
        for w in self.inputs:
            w.param.watch(lambda _e: self.render(), "value")
        self.preset.param.watch(lambda e: self.load(e.new), "value")
        self.card.objects = [self.intro, self.preset, pn.FlexBox(*self.inputs, gap="10px"), self.result,
                             self.assumptions]

    def label(self):
        self.intro.object = f"<p>{esc(self.t('ctx_intro'))}</p>"
        value = self.preset.value
        self.preset.options = {self.t(f"ctx_preset_{k.replace('.', '_').replace('-', '_')}"): k
                               for k in calculator.PRESETS}
        self.preset.value = value
        self.preset.name = self.t("ctx_preset")
        for w, k in zip(self.inputs, ("layers", "kv_heads", "d_head", "kv_bytes", "params", "bits", "gpu",
                                      "overhead", "users")):
            w.name = self.t(f"ctx_{k}")
        self.assumptions.object = f"<p class='explain'>{esc(self.t('ctx_assumptions'))}</p>"
        self.render()

    def load(self, key: str):
        p = calculator.PRESETS[key]
        self._loading = True
        try:
            self.layers.value, self.kv_heads.value, self.d_head.value = p.n_layers, p.n_kv_heads, p.d_head
            self.kv_bytes.value, self.params.value, self.bits.value = p.kv_bytes, p.n_params / 1e9, p.bits
            self.gpu.value, self.overhead.value, self.users.value = p.gpu_gib, p.overhead_gib, p.users
        finally:
            self._loading = False
        self.render()

    def current(self) -> calculator.Preset:
        values = [w.value for w in self.inputs]
        if any(v is None for v in values):
            return None
        return calculator.Preset("custom", n_params=self.params.value * 1e9, n_layers=self.layers.value,
                                 n_kv_heads=self.kv_heads.value, d_head=self.d_head.value,
                                 kv_bytes=self.kv_bytes.value, bits=self.bits.value, gpu_gib=self.gpu.value,
                                 overhead_gib=self.overhead.value, users=self.users.value)

    def render(self):
        if self._loading:
            return
        p, lang = self.current(), self.lang
        if p is None:
            self.result.object = f"<p role='status'>{esc(self.t('ctx_incomplete'))}</p>"
            return
        tokens = p.tokens_per_user()
        per_token = p.bytes_per_token()
        gib = 1024 ** 3
        free = p.free_bytes()
        verdict = self.t("ctx_tokens", tokens=num(tokens, lang), users=num(p.users, lang))
        detail = self.t("ctx_detail", per_token=num(per_token / 1024, lang, 1 if per_token % 1024 else 0),
                        weights=num(p.weights_bytes() / gib, lang, 2), free=num(max(free, 0) / gib, lang, 2),
                        total=num(p.users * tokens, lang))
        none = f"<p class='explain'>{esc(self.t('ctx_none'))}</p>" if tokens == 0 else ""
        self.result.object = (f"<div class='card' role='status'><p class='big num' data-testid='ctx-tokens'>"
                              f"{esc(verdict)}</p><p class='explain'>{esc(detail)}</p>{none}</div>")
