"""El borrador y la comprobación: speculative decoding round by round (logic.py: SpecRun, and SpecLab,
its speed measured here, next to the chapter's formula). logic.py (and with it model/speculative.py)
is imported, and the draft checkpoint fetched, when the section opens."""

from __future__ import annotations

import panel as pn
from bokeh.core.properties import value as bk_value
from bokeh.models import ColumnDataSource, Range1d, Rect, Span

from ...components.fields import WRAP_LABEL
from ...components.widgets import RangeInput
from ...figure.parts import esc
from ...i18n import num
from ...state import clock
from ...style import BLUE, GREY, INK, ORANGE, PALETTE, VERMILLION, show_token
from ..base import SteppedSection, Stepper
from ..drawing import cell_columns, cell_figure, fit_y, lab_table, series_figure, swatches

SPEC_SEEDS = 7  # texts per k, one per seed, each with the draft and without (medians)


COLUMN_STYLE = {
    1: (PALETTE["mid"], PALETTE["faint"]),
    3: (PALETTE["surface"], VERMILLION),
}  # kept, cut (EMPTY: not drawn)
NEW_COLOR = {"target": (BLUE, PALETTE["target-deep"]), "draft": (ORANGE, PALETTE["draft-deep"])}
SPEED_STYLE = {
    "speedup": (INK, "circle", "solid"),
    "by_clock": (BLUE, "square", "dashed"),
    "count": (GREY, "triangle", "dotted"),
}
SPEC_AXIS = {"target": "spec_axis_target", "draft": "spec_axis_draft"}  # the grid's rows, by model
SPEC_ROW = {"target": "spec_row_target", "draft": "spec_row_draft"}
SPEC_NEW = {"target": "spec_new_target", "draft": "spec_new_draft"}
SPEC_PLOT = {"speedup": "spec_plot_speedup", "by_clock": "spec_plot_by_clock", "count": "spec_plot_count"}
SPEC_MODE = ("spec_mode_0", "spec_mode_1")  # sampled, greedy
MARK_TITLE = {
    "prompt": "prompt_token",
    "text": "sampled_token",
    "proposed": "spec_proposed",
    "accepted": "spec_accepted",
    "rejected": "spec_rejected",
    "untested": "spec_untested",
    "resampled": "spec_resampled",
    "bonus": "spec_bonus",
}


class SpeculativeSection(SteppedSection):
    key = "speculative"
    title_key = "spec_title"
    running_key, done_key, cancelled_key = "spec_running", "spec_done", "spec_cancelled"

    def build(self):
        from ...state import checkpoints

        self.draft = checkpoints.load("draft")  # on the static site: fetched now, the first time
        from .logic import SpecChoice

        self.choice = SpecChoice()
        self.make_choices()
        self.intro, self.phase, self.text, self.marks_legend = (self.pane() for _ in range(4))
        self.checks, self.counts, self.same, self.error = (self.pane() for _ in range(4))
        self.grid_head, self.grid_legend = self.pane(), self.pane()
        self.rows = self.grid_rows()
        self.make_grid()
        controls = self.measure_controls()
        self.lab_intro, self.status, self.table, self.explain = (self.pane() for _ in range(4))
        self.plot_fig, self.series = self.lab_figure()
        self.plot = pn.pane.Bokeh(self.plot_fig, sizing_mode="stretch_width", visible=False)
        self.choice.param.watch(lambda e: self.set_k(e.new), "k")
        self.greedy.param.watch(lambda _e: (self.label_lab_intro(), self.reset()), "value")
        self.session.settings.param.watch(lambda *_e: self.reset(), ["seed", "top_p"])
        self.card.objects = self.card_contents(controls)
        self.reset()

    def make_choices(self):
        """What the reader sets: k, sampled or greedy, and the rounds' Step / Animate / Reset row."""
        self.k = RangeInput.linked(self.choice.param.k, width=220)
        self.greedy = pn.widgets.RadioBoxGroup(
            options={"": False, " ": True},
            value=False,
            inline=False,
            stylesheets=[WRAP_LABEL],
            sizing_mode="stretch_width",
            max_width=420,
        )
        self.stepper = Stepper(self.step, self.reset, self.view.controls.period)

    def make_grid(self):
        """The small grid of both models' caches, over one empty band per row drawn once (the window)."""
        n_rows = len(self.rows)
        self.grid, self.cells, self.cut = cell_figure(self.n, 40 + 24 * n_rows, Range1d(n_rows + 0.5, 0.5), "x")
        band = ColumnDataSource({"x": [(self.n + 1) / 2] * n_rows, "y": list(range(1, n_rows + 1))})
        self.grid.add_glyph(
            band,
            Rect(
                x="x", y="y", width=self.n, height=0.8, fill_color=PALETTE["surface-2"], line_color=PALETTE["rule-soft"]
            ),
            level="underlay",
        )
        self.grid.yaxis.ticker.ticks = list(range(1, n_rows + 1))

    def card_contents(self, controls) -> list:
        """The card's contents, top to bottom: the rounds, the grid, then the lab."""
        return [
            self.intro,
            self.control_row(self.k, self.greedy),
            self.phase,
            self.text,
            self.marks_legend,
            self.checks,
            self.counts,
            self.same,
            self.error,
            self.grid_head,
            pn.pane.Bokeh(self.grid, sizing_mode="stretch_width"),
            self.grid_legend,
            *self.lab_contents(controls),
        ]

    def grid_rows(self) -> list[tuple[str, int, str]]:
        """(model, layer, 'K' | 'V') for every row of the small grid: the mini-GPT's, then the draft's."""
        return [
            (m, layer, kind)
            for m, cfg in (("target", self.ex.cfg), ("draft", self.draft.config))
            for layer in range(cfg.n_layers)
            for kind in ("K", "V")
        ]

    def lab_figure(self):
        from .logic import KS

        f, series = series_figure(Range1d(0.5, len(KS) + 0.5), KS, SPEED_STYLE, [("k", "@x"), ("×", "@y{0.00}")])
        f.add_layout(Span(location=1, dimension="width", line_color=GREY, line_dash="dotted", line_width=1))
        return f, series

    def label(self):
        tr = self.tr
        self.intro.object = f"<p>{esc(tr('spec_intro'))}</p>"
        self.k.label = tr("spec_k")
        self.greedy.options = {tr("spec_sampled_mode"): False, tr("spec_greedy"): True}
        self.stepper.label(tr("spec_step"), tr("spec_play"), tr("pause"), tr("spec_reset"))
        self.marks_legend.object = (
            "<p class='legend-inline'>"
            + swatches(
                tr,
                (
                    ("proposed", "spec_proposed"),
                    ("accepted", "spec_accepted"),
                    ("rejected", "spec_rejected"),
                    ("untested", "spec_untested"),
                    ("drawn", "spec_drawn"),
                ),
            )
            + "</p>"
        )
        self.grid_head.object = (
            f"<h3>{esc(tr('spec_grid_title'))}</h3><p class='legend-inline'>{esc(tr('spec_grid_note'))}</p>"
        )
        self.grid_legend.object = (
            "<p class='legend-inline'>"
            + swatches(
                tr,
                (
                    ("kept", "spec_kept"),
                    ("new-target", "spec_new_target"),
                    ("new-draft", "spec_new_draft"),
                    ("cut", "spec_cut"),
                ),
            )
            + "</p>"
        )
        self.grid.xaxis.axis_label = tr("grid_x")
        self.grid.yaxis.major_label_overrides = {
            i + 1: tr(SPEC_AXIS[m], kind=kind, l=layer + 1) for i, (m, layer, kind) in enumerate(self.rows)
        }
        self.label_lab_intro()
        self.run_button.name, self.cancel_button.name = tr("spec_run"), tr("lab_cancel")
        for key, (_src, item) in self.series.items():
            item.label = bk_value(tr(SPEC_PLOT[key]))
        self.plot_fig.xaxis.axis_label, self.plot_fig.yaxis.axis_label = tr("spec_plot_x"), tr("spec_plot_y")
        self.redraw()
        self.show()

    def label_lab_intro(self):
        """The lab's introduction, by mode: with sampling each timing is another seed's text; greedy,
        every timing is the same text."""
        tr, n_new = self.tr, self.n - self.ex.n_prompt
        key = "spec_lab_intro_greedy" if self.greedy.value else "spec_lab_intro"
        self.lab_intro.object = f"<h3>{esc(tr('spec_lab_title'))}</h3><p>{esc(tr(key, n=n_new, s=SPEC_SEEDS))}</p>"

    # -- the rounds --------------------------------------------------------------------------------
    def make(self):
        from .logic import SpecRun

        s = self.ex.settings
        return SpecRun(self.ex.gpt, self.draft, k=self.choice.k, seed=s.seed, top_p=s.top_p, greedy=self.greedy.value)

    def set_k(self, k: int):
        if self.current is not None:
            self.current.k = k  # from the next round on
            self.redraw()

    def draw(self):
        self.draw_text()
        self.draw_checks()
        self.draw_counts()
        self.draw_grid()

    def draw_state(self):
        s, tr = self.current, self.tr
        r = s.round
        if r is None:
            text = tr("spec_phase_none", n=s.k)
        elif s.phase == "draft":
            text = tr("spec_phase_draft", r=s.counts.rounds + 1, n=r.k)
        elif s.phase == "check":
            # without a bonus row (the last draft at the window's end) the pass is the last token and
            # the drafts but the last: k rows
            text = (
                tr("spec_phase_check", r=s.counts.rounds + 1, n=r.k, rows=r.k + 1)
                if r.bonus
                else tr("spec_phase_check_end", r=s.counts.rounds + 1, n=r.k, rows=r.k, p=self.n)
            )
        elif r.accepted < r.k:
            text = tr(
                "spec_phase_rejected",
                r=s.counts.rounds,
                k=r.k,
                a=r.accepted,
                i=r.accepted + 1,
                cut=len(r.drafts) - r.accepted,
            )
        else:
            text = tr(
                "spec_phase_all" if r.next is not None else "spec_phase_all_end", r=s.counts.rounds, n=r.k, w=len(r.new)
            )
        capped = r is not None and s.phase == "draft" and r.k < s.k
        extra = f" {tr('spec_capped', k=r.k, n=self.n)}" if capped else ""
        (t0, t1), (d0, d1) = s.lengths["target"], s.lengths["draft"]
        self.phase.object = (
            f"<p class='phase' data-testid='speculative-phase' data-phase='{s.phase or ''}' "
            f"data-target='{t0} {t1}' data-draft='{d0} {d1}'>{esc(text + extra)}</p>"
        )

    def draw_text(self):
        vocab, tr = self.ex.gpt.tokenizer.vocab, self.tr
        spans = []
        for x, kind in self.current.marks():
            cls = {"text": "tok", "prompt": "tok prompt"}.get(kind, f"tok {kind}")
            spans.append(
                f"<span class='{cls}' data-kind='{kind}' title='{esc(tr(MARK_TITLE[kind]))}'>"
                f"{esc(show_token(vocab[x]))}</span>"
            )
        self.text.object = (
            f"<p><span class='tpos'>{tr('position', t=len(self.current.ids), n=self.n)}</span></p>"
            f"<div class='text' lang='es' data-testid='speculative-text'>{''.join(spans)}</div>"
        )

    def draw_checks(self):
        rows, tr, lang = self.current.check_rows(), self.tr, self.lang
        if not rows:
            self.checks.object = ""
            return
        vocab = self.ex.gpt.tokenizer.vocab
        pct = lambda x: num(x, lang, 3)  # noqa: E731
        verdict = {
            None: "",
            "accepted": "✓ " + tr("spec_accepted"),
            "rejected": "✗ " + tr("spec_rejected"),
            "untested": "– " + tr("spec_untested_short"),
        }
        self.checks.object = lab_table(
            tr,
            tr("spec_title"),
            ["spec_i", "table_token", "spec_q", "spec_p", "spec_chance", "spec_verdict"],
            [
                [
                    str(r["i"]),
                    f"<span class='tok'>{esc(show_token(vocab[r['token']]))}</span>",
                    pct(r["q"]),
                    pct(r["p"]),
                    pct(r["chance"]),
                    esc(verdict[r["verdict"]]),
                ]
                for r in rows
            ],
            "speculative-checks",
        )

    def draw_counts(self):
        s, tr, lang = self.current, self.tr, self.lang
        c = s.counts
        tested = c.accepted + c.rejected
        alpha = num(c.acceptance * 100, lang) + tr("percent") if tested else "–"
        per_pass = num(c.tokens_per_pass, lang, 2) if c.rounds else "–"
        self.counts.object = (
            f"<p data-testid='speculative-counts' data-rounds='{c.rounds}' data-tokens='{c.tokens}' data-drafted='{c.drafted}' "
            f"data-tested='{tested}' data-accepted='{c.accepted}'>"
            f"{esc(tr('spec_counts', rounds=c.rounds, n=c.tokens, per_pass=per_pass, drafted=c.drafted, tested=tested, accepted=c.accepted, alpha=alpha))}</p>"
        )
        same = s.same_as_own
        key = "spec_sampled" if same is None else "spec_same" if same else "spec_differs"
        self.same.object = f"<p class='explain' data-testid='speculative-same' data-same='{same}'>{esc(tr(key))}</p>"

    def draw_grid(self):
        s, tr = self.current, self.tr
        tokens = s.ids if s.round is None else s.ids[: s.round.n] + s.round.drafts  # each column's token
        vocab = self.ex.gpt.tokenizer.vocab
        names = {1: tr("spec_kept"), 3: tr("spec_cut")}
        cells = []
        for i, (m, layer, kind) in enumerate(self.rows):
            for p, st in enumerate(s.columns(m)):
                if st == 0:
                    continue  # not computed: the row's empty band
                fill, line = NEW_COLOR[m] if st == 2 else COLUMN_STYLE[int(st)]
                cells.append(
                    (
                        p + 1,
                        i + 1,
                        fill,
                        line,
                        st == 3,
                        f"{tr(SPEC_ROW[m], kind=kind, l=layer + 1)} · {p + 1} · "
                        f"{tr(SPEC_NEW[m]) if st == 2 else names[int(st)]}",
                        show_token(vocab[tokens[p]]) if p < len(tokens) else "",
                    )
                )
        self.cells.data, self.cut.data = cell_columns(cells)

    # -- the clock ---------------------------------------------------------------------------------
    def new_lab(self):
        from .logic import SpecLab

        s = self.ex.settings
        return SpecLab(
            self.ex.gpt,
            self.draft,
            seeds=range(s.seed, s.seed + SPEC_SEEDS),
            temperature=0.0 if self.greedy.value else 1.0,
            top_p=s.top_p,
        )

    def render(self):
        lab, tr = self.lab, self.tr
        if lab is None:
            return
        rows = lab.rows
        self.table.object = lab_table(
            tr,
            tr("spec_lab_title"),
            [
                "spec_k_short",
                "spec_alpha_short",
                "spec_per_pass",
                "spec_check",
                "spec_ms",
                "spec_measured",
                "spec_by_clock",
                "spec_count_short",
            ],
            [self.lab_row(r) for r in rows],
            "speculative-table",
        )
        for key, (src, _item) in self.series.items():
            src.data = {"x": [r["k"] for r in rows], "y": [r[key] for r in rows]}
        fit_y(self.plot_fig, [src for src, _item in self.series.values()])
        self.plot.visible = self.plot_fig.visible = bool(rows)
        self.explain.object = self.lab_explanation()

    def lab_row(self, r: dict) -> list[str]:
        """One k's row of the lab's table, as HTML cells."""
        tr, lang = self.tr, self.lang
        x2 = lambda x: num(x, lang, 2)  # noqa: E731
        slower = (
            f" <span class='slower'>{esc(tr('spec_takes', x=x2(1 / r['speedup'])))}</span>" if r["speedup"] < 1 else ""
        )
        return [
            str(r["k"]),
            num(r["alpha"] * 100, lang) + tr("percent"),
            f"{x2(r['per_pass'])} ({x2(r['expected'])})",
            clock.ratio_text(r["check_x"], lang) + "×",
            f"{clock.ms_text(r['spec_s'], lang)} / {clock.ms_text(r['plain_s'], lang)}",
            f"<b>{x2(r['speedup'])}×</b> <span class='spread'>({x2(r['low'])}–{x2(r['high'])})</span>" + slower,
            x2(r["by_clock"]) + "×",
            x2(r["count"]) + "×",
        ]

    def lab_explanation(self) -> str:
        """Under the lab: the check's cost c as measured, then what the measurements say (once read)."""
        lab, tr, lang = self.lab, self.tr, self.lang
        x2 = lambda x: num(x, lang, 2)  # noqa: E731
        c = lab.results.get("c")
        head = (
            ""
            if c is None
            else (
                f"<p data-testid='speculative-c'>{esc(tr('spec_c', c_clock=x2(c.ratio), c_count=x2(lab.c_count), n=c.samples, lo=x2(c.ratio_low), hi=x2(c.ratio_high)))}</p>"
            )
        )
        reading = lab.summary
        if reading is None:
            return head
        from .logic import spec_sentences

        return head + (
            "<p class='explain' data-testid='speculative-explain'>"
            + " ".join(esc(tr(key, **values)) for key, values in spec_sentences(reading, lang))
            + "</p>"
        )

    def status_values(self) -> dict:
        lab = self.lab
        done = lab.finished and not lab.cancelled  # the texts measured, or the parts
        return {
            "done": lab.done,
            "total": lab.total,
            "n": len(lab.seeds) if done else lab.total,
            "mode": self.tr(SPEC_MODE[int(lab.kw["temperature"] == 0)]),
        }
