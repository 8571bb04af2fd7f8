"""Muchas conversaciones a la vez: B conversations decoded together in one tensor per matrix (logic.py:
Conversations, and BatchLab, what one step of B costs per conversation, measured here). logic.py
(and with it model/batch.py) is imported when the section opens."""

from __future__ import annotations

import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import Range1d

from ...components.widgets import RangeInput
from ...figure.parts import esc
from ...i18n import sci, size
from ...state import clock
from ...style import BLUE, GREEN, HIGHLIGHT, INK, PALETTE, SKY, show_token
from ..base import SteppedSection, Stepper
from ..drawing import cell_columns, cell_figure, fit_y, lab_table, series_figure, swatches, token_text

BATCH_SAMPLES = 7  # interleaved measurements of each B per position (the table shows medians)


SLOT_STYLE = {
    0: (PALETTE["surface-2"], PALETTE["line"]),
    1: (PALETTE["mid"], PALETTE["faint"]),
    2: (GREEN, PALETTE["cache-deep"]),
    3: (HIGHLIGHT, INK),
}  # by logic.py's SLOT_PAD, SLOT_PROMPT, SLOT_SAMPLED, SLOT_NEWEST
POSITION_STYLE = ((SKY, "circle", "dashed"), (BLUE, "square", "solid"), (INK, "triangle", "dotdash"))


class BatchSection(SteppedSection):
    key = "batch"
    title_key = "batch_title"
    done_key = "batch_done"

    def build(self):
        from .logic import BatchChoice

        self.choice = BatchChoice()
        self.size = RangeInput.linked(self.choice.param.B, width=220)
        self.stepper = Stepper(self.step, self.reset, self.view.controls.period)
        self.intro, self.state, self.texts, self.error = (self.pane() for _ in range(4))
        self.memory, self.proof, self.tensor_head, self.legend = (self.pane() for _ in range(4))
        n = self.n
        self.tensor, self.cells, self.padding = cell_figure(n, 180, Range1d(self.choice.B + 0.5, 0.5), "/")
        controls = self.measure_controls()
        self.lab_intro, self.status, self.table, self.explain = (self.pane() for _ in range(4))
        self.plot_fig, self.lines = self.lab_figure()
        self.plot = pn.pane.Bokeh(self.plot_fig, sizing_mode="stretch_width", visible=False)
        self.choice.param.watch(lambda _e: self.reset(), "B")
        self.session.settings.param.watch(lambda *_e: self.reset(), ["seed", "top_p"])
        self.card.objects = [
            self.intro,
            self.control_row(self.size),
            self.state,
            self.texts,
            self.error,
            self.tensor_head,
            pn.pane.Bokeh(self.tensor, sizing_mode="stretch_width"),
            self.legend,
            self.memory,
            self.proof,
            *self.lab_contents(controls),
        ]
        self.reset()

    def positions(self) -> tuple[int, ...]:
        n = self.n
        return (n // 8, n // 2, n)

    def lab_figure(self):
        return series_figure(
            Range1d(0.8, 40),
            (1, 2, 4, 8, 16, 32),
            dict(zip(self.positions(), POSITION_STYLE)),
            [("B", "@x"), ("ms", "@y{0.0000}")],
            x_axis_type="log",
        )

    def label(self):
        tr = self.tr
        self.intro.object = f"<p>{esc(tr('batch_intro'))}</p>"
        self.size.label = tr("batch_B")
        self.stepper.label(tr("batch_step"), tr("batch_play"), tr("pause"), tr("batch_reset"))
        self.tensor_head.object = (
            f"<h3>{esc(tr('batch_tensor_title'))}</h3><p class='legend-inline'>{esc(tr('batch_tensor_note'))}</p>"
        )
        self.legend.object = (
            "<p class='legend-inline'>"
            + swatches(
                tr,
                (
                    ("pad", "batch_pad"),
                    ("prompt", "batch_prompt"),
                    ("sampled", "batch_sampled"),
                    ("newest", "batch_newest"),
                ),
            )
            + "</p>"
        )
        self.tensor.xaxis.axis_label, self.tensor.yaxis.axis_label = tr("batch_x"), tr("batch_y")
        positions = self.positions()
        self.lab_intro.object = f"<h3>{esc(tr('batch_lab_title'))}</h3><p>{esc(tr('batch_lab_intro', a=positions[0], b=positions[1], c=positions[2], n=BATCH_SAMPLES))}</p>"
        self.run_button.name, self.cancel_button.name = tr("batch_run"), tr("lab_cancel")
        for pos, (_src, item) in self.lines.items():
            item.label = bk_value(tr("batch_position", t=pos))
        self.plot_fig.xaxis.axis_label, self.plot_fig.yaxis.axis_label = tr("batch_plot_x"), tr("batch_plot_y")
        self.redraw()
        self.show()

    # -- the conversations -------------------------------------------------------------------------
    def make(self):
        from .logic import Conversations

        s = self.ex.settings
        return Conversations(self.ex.gpt, self.choice.B, seed=s.seed, top_p=s.top_p)

    def draw(self):
        self.draw_texts()
        self.draw_tensor()
        self.draw_memory()

    def draw_texts(self):
        c, tr, vocab = self.current, self.tr, self.ex.gpt.tokenizer.vocab
        items = []
        for b, ids in enumerate(c.ids):
            sampled = ids[c.n_prompt[b] :]
            newest = f"<span class='tok current'>{esc(token_text(vocab, sampled[-1:]))}</span>" if sampled else ""
            items.append(
                f"<li data-testid='batch-text' data-seed='{c.seeds[b]}'><span class='meta'>"
                f"{esc(tr('batch_conv', b=b + 1, seed=c.seeds[b], t=len(ids)))}</span> "
                f"<span class='tok prompt'>{esc(token_text(vocab, ids[: c.n_prompt[b]]))}</span>"
                f"{esc(token_text(vocab, sampled[:-1]))}{newest}</li>"
            )
        self.texts.object = f"<ol class='convos' lang='es'>{''.join(items)}</ol>"

    def draw_state(self):
        c, tr = self.current, self.tr
        lengths = [len(x) for x in c.ids]
        self.state.object = (
            f"<p data-testid='batch-state' data-steps='{c.steps}' data-b='{c.B}'>"
            f"{esc(tr('batch_state', steps=c.steps, B=c.B, lo=min(lengths), hi=max(lengths), n=self.n))}</p>"
        )

    def draw_tensor(self):
        c, tr, vocab = self.current, self.tr, self.ex.gpt.tokenizer.vocab
        kinds = c.slot_kinds()
        what = {0: tr("batch_pad"), 1: tr("batch_prompt"), 2: tr("batch_sampled"), 3: tr("batch_newest")}
        cells = []
        for b, ids in enumerate(c.ids):
            first = c.slots - len(ids)
            for s in range(c.slots):
                kind, pos = int(kinds[b, s]), s - first + 1
                color, line = SLOT_STYLE[kind]
                cells.append(
                    (
                        s + 1,
                        b + 1,
                        color,
                        line,
                        kind == 0,
                        tr("batch_cell", b=b + 1, s=s + 1, what=what[kind], pos=pos if pos > 0 else "–"),
                        show_token(vocab[ids[pos - 1]]) if pos > 0 else "",
                    )
                )
        self.cells.data, self.padding.data = cell_columns(cells)
        if self.tensor.height != 70 + 14 * c.B:  # a new B: the figure's rows (not at every step)
            self.tensor.y_range.start, self.tensor.y_range.end = c.B + 0.5, 0.5
            self.tensor.height = 70 + 14 * c.B
            self.tensor.yaxis.ticker.ticks = list(range(1, c.B + 1)) if c.B <= 8 else [1] + list(range(4, c.B + 1, 4))

    def draw_memory(self):
        from .logic import memory_values

        c, lang = self.current, self.lang
        m = c.memory()
        self.memory.object = (
            f"<p data-testid='batch-memory' data-tensor='{m['tensor']}' data-row='{m['row']}' "
            f"data-own='{m['own_total']}' data-b='{m['B']}' data-slots='{m['slots']}'>"
            f"{esc(self.tr('batch_memory', **memory_values(m, lang, size)))}</p>"
        )
        self.proof.object = (
            f"<p data-testid='batch-proof' data-diff='{c.proof!r}'>"
            f"{esc(self.tr('batch_proof', diff=sci(c.proof, lang), B=c.B))}</p>"
        )

    # -- the clock ---------------------------------------------------------------------------------
    def new_lab(self):
        from .logic import BATCHES, BatchLab

        return BatchLab(
            self.ex.gpt,
            self.positions(),
            batches=BATCHES + (self.choice.B,),
            samples=BATCH_SAMPLES,
            seed=self.ex.settings.seed,
        )

    def render(self):
        lab, tr, lang = self.lab, self.tr, self.lang
        if lab is None:
            return
        ms, ratio = (lambda x: clock.ms_text(x, lang)), (lambda x: clock.ratio_text(x, lang))
        rows = lab.rows
        self.table.object = lab_table(
            tr,
            tr("batch_lab_title"),
            ["table_pos", "batch_B_short", "batch_ms_step", "batch_ms_per", "batch_gain", "batch_cache"],
            [
                [
                    str(r["t"]),
                    str(r["B"]),
                    ms(r["step_s"]),
                    ms(r["per_s"]),
                    f"<b>{ratio(r['gain'])}×</b> <span class='spread'>({ratio(r['gain_low'])}–"
                    f"{ratio(r['gain_high'])})</span>",
                    size(r["cache_bytes"], lang),
                ]
                for r in rows
            ],
            "batch-table",
        )
        for pos, (src, _item) in self.lines.items():
            mine = [r for r in rows if r["t"] == pos]
            src.data = {"x": [r["B"] for r in mine], "y": [r["per_s"] * 1e3 for r in mine]}
        fit_y(self.plot_fig, [src for src, _item in self.lines.values()])
        self.plot.visible = self.plot_fig.visible = bool(rows)
        reading = lab.summary
        if reading is None:
            self.explain.object = ""
            return
        from .logic import batch_sentences

        self.explain.object = (
            "<p class='explain' data-testid='batch-explain'>"
            + " ".join(esc(tr(key, **values)) for key, values in batch_sentences(reading, lang))
            + "</p>"
        )
