"""Lugares que se liberan: continuous batching (logic.py: the mini-GPT's 16 requests served both ways,
ServeLab, which serves them both ways on the reader's clock and times the steps the model of cost
charges, and the chapter's simulation: its natural reading over seeds, then its quoted pair). logic.py
(and with it model/scheduler.py) is imported when the section opens."""

from __future__ import annotations

import panel as pn
from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Range1d, Rect, Text

from ...figure.parts import esc
from ...i18n import num
from ...state import clock
from ...style import BLUE, GREEN, INK, PALETTE, position_figure
from ..base import MeasuringSection
from ..drawing import lab_table, token_text

POLICY = {"static": "cb_static", "continuous": "cb_continuous"}
STATE = {"prefill": "cb_prefill", "decode": "cb_decode", "held": "cb_held", "idle": "cb_idle"}
CELL_STYLE = {
    "prefill": (BLUE, PALETTE["target-deep"]),
    "decode": (GREEN, PALETTE["cache-deep"]),
    "held": (PALETTE["surface-2"], PALETTE["line"]),
    "idle": (PALETTE["surface"], PALETTE["line"]),
}
GANTT_COLUMNS = ("x", "y", "color", "line", "what")
LABEL_MIN = 3  # steps: a request's stay at least this long carries its number in the picture


def gantt_figure(n_steps: int, slots: int):
    """Slots (rows) over steps (columns): plain cells, hatched ones (padding), each request's stay
    outlined with its number. -> (figure, plain cells' source, hatched cells', stays', labels')."""
    f = position_figure(n_steps, 52 + 30 * slots, y_range=Range1d(slots + 0.5, 0.5))
    f.yaxis.ticker = FixedTicker(ticks=list(range(1, slots + 1)))
    f.xaxis.ticker = FixedTicker(ticks=[1] + list(range(10, n_steps + 1, 10)))
    sources = [ColumnDataSource({k: [] for k in GANTT_COLUMNS}) for _ in range(2)]
    style = dict(x="x", y="y", width=1, height=0.8, fill_color="color", line_color="line", line_width=0.5)
    plain = f.add_glyph(sources[0], Rect(**style))
    hatched = f.add_glyph(
        sources[1], Rect(hatch_pattern="/", hatch_color=PALETTE["faint"], hatch_alpha=0.8, hatch_scale=6, **style)
    )
    stays = ColumnDataSource({"x": [], "y": [], "w": []})
    f.add_glyph(stays, Rect(x="x", y="y", width="w", height=0.8, fill_alpha=0, line_color=INK, line_width=1.5))
    labels = ColumnDataSource({"x": [], "y": [], "text": []})
    f.add_glyph(
        labels,
        Text(
            x="x",
            y="y",
            text="text",
            text_align="center",
            text_baseline="middle",
            text_font_size="11px",
            text_color=INK,
            text_font_style="bold",
        ),
    )
    f.add_tools(HoverTool(renderers=[plain, hatched], tooltips="@what"))
    return f, sources[0], sources[1], stays, labels


class ContinuousSection(MeasuringSection):
    key = "continuous"
    title_key = "cb_title"
    running_key, done_key, cancelled_key = "cb_running", "cb_done", "cb_cancelled"

    def build(self):
        from .logic import POLICIES, window_runs

        self.served = window_runs(self.ex.gpt)  # the 16 requests, served both ways
        n_steps = max(len(s.steps) for s in self.served.schedules.values())
        slots = self.served.schedules["static"].n_slots
        self.intro, self.gantt_head, self.legend, self.same, self.texts = (self.pane() for _ in range(5))
        self.heads, self.figures, self.sources = {}, {}, {}
        parts = []
        for p in POLICIES:
            self.heads[p] = self.pane()
            f, *srcs = gantt_figure(n_steps, slots)
            self.figures[p], self.sources[p] = f, srcs
            parts += [self.heads[p], pn.pane.Bokeh(f, sizing_mode="stretch_width")]
        controls = self.measure_controls()
        self.lab_intro, self.status, self.costs_table, self.window_table = (self.pane() for _ in range(4))
        self.window_explain, self.chapter_head, self.chapter_table = (self.pane() for _ in range(3))
        self.chapter_natural, self.chapter_tuned = self.pane(), self.pane()
        self.chapter_explain, self.window_note = self.pane(), self.pane()
        self.card.objects = [
            self.intro,
            self.gantt_head,
            *parts,
            self.legend,
            self.same,
            self.texts,
            self.lab_intro,
            controls,
            self.status,
            self.costs_table,
            self.window_table,
            self.window_explain,
            self.chapter_head,
            self.chapter_natural,
            self.chapter_tuned,
            self.chapter_table,
            self.chapter_explain,
            self.window_note,
        ]

    def label(self):
        from .logic import POSITION, ROUNDS, SLOTS, chapter_facts, seed_readings, window_facts

        tr, lang = self.tr, self.lang
        runs = self.served
        facts = window_facts(runs, self.n)
        self.intro.object = f"<p>{esc(tr('cb_intro'))}</p>"
        self.draw_head(facts)
        self.legend.object = (
            "<p class='legend-inline'>"
            + " ".join(
                f"<span class='key'><span class='sw cb-{s}'></span>{esc(tr(k))}</span>" for s, k in STATE.items()
            )
            + "</p>"
        )
        for p, fig in self.figures.items():
            fig.xaxis.axis_label, fig.yaxis.axis_label = tr("cb_x"), tr("cb_y")
            self.draw_gantt(p)
        self.draw_texts()
        w = chapter_facts()
        self.chapter_how = tr(
            "cb_chapter_how",
            n=w["n"],
            median=num(w["median"], lang),
            max=w["max"],
            total=num(w["total"], lang),
            slots=w["slots"],
        )
        n = len(runs.requests)
        self.lab_intro.object = (
            f"<h3>{esc(tr('cb_lab_title'))}</h3>"
            f"<p>{esc(tr('cb_lab_intro', n=n, slots=SLOTS, rounds=ROUNDS, pos=POSITION))}</p>"
        )
        self.run_button.name, self.cancel_button.name = tr("cb_run"), tr("lab_cancel")
        at_once = seed_readings()["at_once"]  # the chapter read naturally: every request queued at once
        note = tr(
            "cb_window_note",
            n_ctx=facts["n_ctx"],
            median=num(facts["median"], lang),
            max=facts["max"],
            hold=facts["hold"],
            chapter_max=facts["chapter_max"],
            tps=clock.ratio_text(facts["tps"], lang),
            lat=clock.ratio_text(facts["lat"], lang),
            ch_tps=clock.ratio_text(at_once["throughput"]["p50"], lang),
            ch_lat=clock.ratio_text(at_once["latency"]["p50"], lang),
        )
        self.window_note.object = f"<p class='explain' data-testid='continuous-window-note'>{esc(note)}</p>"
        self.show()

    def draw_head(self, facts: dict):
        """The picture's heading and note, with how to see a cell's words: a hover with a mouse, a tap on
        a touch screen (app/style/style.css shows the one for the screen in hand)."""
        tr, runs = self.tr, self.served
        note = tr(
            "cb_gantt_note",
            n=facts["n"],
            slots=runs.schedules["static"].n_slots,
            median=num(facts["median"], self.lang),
            max=facts["max"],
            total=facts["total"],
        )
        self.gantt_head.object = (
            f"<h3>{esc(tr('cb_gantt_title'))}</h3><p>{esc(note)} "
            f"<span class='on-mouse'>{esc(tr('cb_gantt_hover'))}</span>"
            f"<span class='on-touch' data-testid='continuous-tap'>{esc(tr('cb_gantt_tap'))}</span></p>"
        )

    # -- the slots over time ---------------------------------------------------------------------------
    def draw_gantt(self, policy: str):
        from .logic import cells, counts, segments

        tr = self.tr
        schedule = self.served.schedules[policy]
        plain, hatched, stays, labels = self.sources[policy]
        out = ({k: [] for k in GANTT_COLUMNS}, {k: [] for k in GANTT_COLUMNS})
        for step, slot, request, state in cells(schedule):
            color, line = CELL_STYLE[state]
            what = (
                tr("cb_cell_idle", step=step + 1, slot=slot + 1)
                if request < 0
                else tr("cb_cell", step=step + 1, slot=slot + 1, r=request + 1, state=tr(STATE[state]))
            )
            for k, v in zip(GANTT_COLUMNS, (step + 1, slot + 1, color, line, what)):
                out[state == "held"][k].append(v)
        plain.data, hatched.data = out
        segs = segments(schedule)
        stays.data = {
            "x": [(g.entered + g.left) / 2 + 1 for g in segs],
            "y": [g.slot + 1 for g in segs],
            "w": [g.left - g.entered + 1 for g in segs],
        }
        shown = [g for g in segs if g.left - g.entered + 1 >= LABEL_MIN]
        labels.data = {
            "x": [(g.entered + g.left) / 2 + 1 for g in shown],
            "y": [g.slot + 1 for g in shown],
            "text": [str(g.request + 1) for g in shown],
        }
        c = counts(schedule)
        self.heads[policy].object = (
            f"<h4>{esc(tr(POLICY[policy]))}</h4><p data-testid='continuous-counts-{policy}' data-steps='{c['steps']}' "
            f"data-held='{c['held']}' data-idle='{c['idle']}'>"
            f"{esc(tr('cb_counts', steps=c['steps'], cells=c['cells'], held=c['held'], idle=c['idle']))}</p>"
        )

    def draw_texts(self):
        from .logic import POLICIES

        tr, runs, vocab = self.tr, self.served, self.ex.gpt.tokenizer.vocab
        n = len(runs.requests)
        same = {p: runs.same(p) for p in POLICIES}
        answer = tr("cb_yes") if runs.all_same else tr("cb_no")
        mark = "✓" if runs.all_same else "✗"
        self.same.object = (
            f"<p class='continuous-same' data-testid='continuous-same' data-same='{runs.all_same}' "
            f"data-static='{same['static']}' data-continuous='{same['continuous']}' data-n='{n}'>"
            f"<span aria-hidden='true'>{mark}</span> "
            f"{esc(tr('cb_same', answer=answer, total=n, **same))}</p>"
        )
        items = []
        for r in runs.requests:
            ids = runs.texts["continuous"][r.id]
            items.append(
                f"<li data-testid='continuous-text'><span class='meta'>"
                f"{esc(tr('cb_request', r=r.id + 1, seed=r.seed, new=r.n_new))}</span> "
                f"<span class='tok prompt'>{esc(token_text(vocab, ids[: len(r.prompt)]))}</span>"
                f"{esc(token_text(vocab, ids[len(r.prompt) :]))}</li>"
            )
        self.texts.object = (
            f"<details class='continuous-texts'><summary>{esc(tr('cb_texts', total=n))}</summary>"
            f"<ol class='convos' lang='es'>{''.join(items)}</ol></details>"
        )

    # -- the clock, and both policies at it ------------------------------------------------------------
    def new_lab(self):
        from .logic import ServeLab

        return ServeLab(self.ex.gpt, self.served.requests)

    def render(self):
        tr = self.tr
        self.chapter_head.object = (
            f"<h3>{esc(tr('cb_chapter_title'))}</h3><p data-testid='continuous-chapter-how'>{esc(self.chapter_how)}</p>"
        )
        self.chapter_natural.object, self.chapter_tuned.object = self.chapter_readings()
        if self.lab is None:
            return
        self.render_costs()
        costs = self.lab.costs
        if costs is None:
            for pane in (self.window_table, self.window_explain, self.chapter_table, self.chapter_explain):
                pane.object = ""
            return
        from .logic import SLOTS, chapter_rows, counts, modelled_rows

        m, model, c = self.lab.measured(), modelled_rows(self.served, costs), chapter_rows(costs[8])
        shown = {p: {**m[p], "steps": counts(self.served.schedules[p])["steps"]} for p in POLICY}
        label = tr("cb_window_table", n=len(self.served.requests), slots=SLOTS, rounds=m["rounds"])
        self.window_table.object = self.policy_table(label, shown, "continuous-window-table")
        w = c["workload"]
        label = tr("cb_chapter_table", seed=w["seed"], every=w["interval"], slots=w["slots"])
        self.chapter_table.object = self.policy_table(label, c, "continuous-chapter-table")
        self.window_explain.object = self.window_explanation(m, model, costs)
        self.chapter_explain.object = self.chapter_explanation(c, costs)

    def render_costs(self):
        """The step's cost at each batch size, as measured here."""
        tr, lang = self.tr, self.lang
        ms = lambda x: clock.ms_text(x, lang)  # noqa: E731
        rows = [[str(r["B"]), ms(r["median_s"]), f"{ms(r['low_s'])}–{ms(r['high_s'])}"] for r in self.lab.rows()]
        label = tr("cb_costs_title")
        self.costs_table.object = f"<h4>{esc(label)}</h4>" + lab_table(
            tr, label, ["cb_B", "cb_ms_step", "cb_range"], rows, "continuous-costs"
        )

    def window_explanation(self, m: dict, model: dict, costs: dict) -> str:
        """What serving the 16 requests both ways measured here, each sentence chosen from its ratio's
        spread, then the model of cost beside it."""
        from .logic import measured_sentence_keys

        tr, lang = self.tr, self.lang
        ms = lambda x: clock.ms_text(x, lang)  # noqa: E731
        ratio = lambda x: clock.ratio_text(x, lang)  # noqa: E731
        t, lat = m["throughput"], m["latency"]
        s, c = m["static"], m["continuous"]
        values = {
            "x": ratio(t.ratio),
            "lo": ratio(t.ratio_low),
            "hi": ratio(t.ratio_high),
            "y": ratio(lat.ratio),
            "ylo": ratio(lat.ratio_low),
            "yhi": ratio(lat.ratio_high),
            "ts": num(s["per_second"], lang),
            "tc": num(c["per_second"], lang),
            "ls": ms(s["mean_s"]),
            "lc": ms(c["mean_s"]),
            "ms": ms(s["median_s"]),
            "mc": ms(c["median_s"]),
            "ps": ms(s["p90_s"]),
            "pc": ms(c["p90_s"]),
            "rounds": m["rounds"],
        }
        mr = model["ratios"]
        modelled = {
            "c1": ms(costs[1]),
            "c4": ms(costs[4]),
            "mx": ratio(mr["throughput"]),
            "my": ratio(mr["mean"]),
        }
        said = [tr(k, **values) for k in measured_sentence_keys(m)]
        return (
            f"<p class='explain' data-testid='continuous-window-explain' "
            f"data-throughput='{t.ratio!r}' data-throughput-low='{t.ratio_low!r}' "
            f"data-throughput-high='{t.ratio_high!r}' data-latency='{lat.ratio!r}' "
            f"data-latency-low='{lat.ratio_low!r}' data-latency-high='{lat.ratio_high!r}'>"
            + esc(" ".join(said))
            + "</p><p class='explain' data-testid='continuous-window-model' "
            f"data-throughput='{mr['throughput']!r}' data-latency='{mr['mean']!r}'>"
            + esc(tr("cb_window_model", **modelled))
            + "</p>"
        )

    def chapter_readings(self) -> tuple[str, str]:
        """The chapter's natural reading over the committed seeds (its sentence and table), then the
        quoted pair, said to be chosen: neither needs the reader's clock (ratios of steps)."""
        from .logic import chapter_facts, chapter_pair, seed_readings

        tr, lang = self.tr, self.lang
        ratio = lambda x: clock.ratio_text(x, lang)  # noqa: E731
        sr, w, pair = seed_readings(), chapter_facts(), chapter_pair()
        at, st = sr["at_once"], sr["stream"]
        # tx, tlo, thi: the tokens-a-second ratio's median, 10th and 90th percentiles; lx, llo, lhi: latency's
        spread_of = {
            f"{a}{b}": ratio(at[k][q])
            for a, k in (("t", "throughput"), ("l", "latency"))
            for b, q in (("x", "p50"), ("lo", "p10"), ("hi", "p90"))
        }
        facts = {"n": w["n"], "seeds": sr["seeds"], "first": sr["first"], "last": sr["last"]}
        natural = tr("cb_chapter_natural", **facts, **spread_of, lmax=ratio(at["latency"]["max"]))
        spread = lambda r: f"{ratio(r['p50'])} ({ratio(r['p10'])}–{ratio(r['p90'])})"  # noqa: E731
        rows = [
            [esc(tr("cb_seeds_at_once")), spread(at["throughput"]), spread(at["latency"])],
            [esc(tr("cb_seeds_stream", every=w["interval"])), spread(st["throughput"]), spread(st["latency"])],
        ]
        label = tr("cb_seeds_table", seeds=sr["seeds"])
        table = f"<h4>{esc(label)}</h4>" + lab_table(
            tr, label, ["cb_seeds_reading", "cb_seeds_tps", "cb_seeds_latency"], rows, "continuous-seeds"
        )
        tuned = tr(
            "cb_chapter_tuned",
            every=w["interval"],
            seed=w["seed"],
            hits=st["hits"],
            seeds=sr["seeds"],
            low=num(pair["low"], lang, 2),
            high=num(pair["high"], lang, 2),
            over=pair["over"],
            x=num(pair["throughput"], lang, 2),  # to the digits that place it inside low..high
            y=num(pair["latency"], lang, 1),
            sx=ratio(st["throughput"]["p50"]),
            sy=ratio(st["latency"]["p50"]),
        )
        return (
            f"<p class='explain' data-testid='continuous-chapter-natural' "
            f"data-throughput='{at['throughput']['p50']!r}' data-latency='{at['latency']['p50']!r}'>"
            f"{esc(natural)}</p>{table}",
            f"<p class='explain' data-testid='continuous-chapter-tuned' data-throughput='{pair['throughput']!r}' "
            f"data-latency='{pair['latency']!r}' data-hits='{st['hits']}'>{esc(tuned)}</p>",
        )

    def chapter_explanation(self, c: dict, costs: dict) -> str:
        """The chapter's pair at the reader's step of 8: what its table shows, in seconds."""
        tr, lang = self.tr, self.lang
        ms = lambda x: clock.ms_text(x, lang)  # noqa: E731
        cr = c["ratios"]
        cv = {
            "c8": ms(costs[8]),
            "ts": num(c["static"]["per_second"], lang),
            "tc": num(c["continuous"]["per_second"], lang),
            "ls": ms(c["static"]["mean_s"]),
            "lc": ms(c["continuous"]["mean_s"]),
        }
        return (
            f"<p class='explain' data-testid='continuous-chapter-explain' "
            f"data-throughput='{cr['throughput']!r}' data-latency='{cr['mean']!r}'>"
            f"{esc(tr('cb_chapter_read', **cv))}</p>"
        )

    def policy_table(self, label: str, rows: dict, testid: str) -> str:
        tr, lang = self.tr, self.lang
        ms = lambda x: clock.ms_text(x, lang)  # noqa: E731
        body = [
            [
                esc(tr(POLICY[p])),
                str(r["steps"]),
                num(r["per_second"], lang),
                ms(r["mean_s"]),
                ms(r["median_s"]),
                ms(r["p90_s"]),
            ]
            for p, r in ((p, rows[p]) for p in POLICY)
        ]
        head = ["cb_policy", "cb_steps", "cb_tps", "cb_mean", "cb_median", "cb_p90"]
        return f"<h4>{esc(label)}</h4>" + lab_table(tr, label, head, body, testid)
