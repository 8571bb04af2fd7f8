"""The section "A smaller cache" (beyond the lesson): the reader picks how many key/value heads the model
has and how the cache stores its numbers; the figure above follows (app/state/session.py switches the
model and the format), and this section says what that costs and saves, then compares every
combination on real arrays. Built the first time it opens: nothing of it (the other checkpoints,
model.quantize) is fetched or imported before.
"""

from __future__ import annotations

import asyncio
import functools
import math

import panel as pn
from bokeh.models import ColumnDataSource, FactorRange, HoverTool, Range1d

from ...figure.parts import esc, linked, off_the_loop
from ...i18n import num, sci, size
from ...state import checkpoints
from ...style import GREEN, PALETTE, canvas_look
from ..base import Section
from ..drawing import fit_y
from . import logic as smaller


def two_digits(x: float, lang: str) -> str:
    """A drift as a reader compares it: two significant digits, in plain decimals (0.0035, 0.14, 2.7)."""
    return num(x, lang, max(0, 1 - math.floor(math.log10(x)))) if x > 0 else "0"


class SmallerSection(Section):
    key = "smaller"
    title_key = "small_title"

    def build(self):
        self.intro, self.status, self.losses, self.result = (self.pane() for _ in range(4))
        self.kv = linked(pn.widgets.RadioButtonGroup, self.session.asked.param.kv_heads, width=300)
        self.precision = linked(pn.widgets.RadioButtonGroup, self.session.asked.param.precision, width=360)
        self.compare_button = pn.widgets.Button(color="primary", width=260)
        self.compare_button.on_click(self.compare)
        self.source = ColumnDataSource({"x": [], "kib": [], "loss": [], "drift": [], "label": []})
        self.chart = self.make_chart()
        self.chart_pane = pn.pane.Bokeh(self.chart, sizing_mode="stretch_width", visible=False)
        self.card.objects = [
            self.intro,
            pn.FlexBox(self.kv, self.precision, gap="12px"),
            self.status,
            self.losses,
            self.compare_button,
            self.chart_pane,
            self.result,
        ]
        self.session.param.watch(lambda *_e: self.render_status(), ["revision", "model"])
        self.rows = []

    def make_chart(self):
        factors = [(str(h), f) for h in smaller.KV_HEADS for f in smaller.FORMATS]
        from bokeh.plotting import figure  # with the section: not at the page's start-up

        f = figure(
            height=260,
            sizing_mode="stretch_width",
            x_range=FactorRange(*factors),
            y_range=Range1d(0, 1),  # set with the data (fit_y): an automatic range over no data is -inf in BokehJS
            toolbar_location=None,
            tools="",
            min_border_left=60,
        )
        canvas_look(f)
        bars = f.vbar(
            x="x", top="kib", width=0.8, source=self.source, fill_color=GREEN, line_color=PALETTE["cache-deep"]
        )
        self.hover = HoverTool(renderers=[bars], tooltips="")
        f.add_tools(self.hover)
        f.xgrid.visible = False
        f.xaxis.major_label_orientation = 0.9
        f.outline_line_color = None
        return f

    def label(self):
        tr = self.tr
        self.intro.object = f"<p>{esc(tr('small_intro'))}</p><p class='explain'>{esc(tr('small_real'))}</p>"
        self.kv.name, self.precision.name = tr("small_kv"), tr("small_precision")
        self.kv.options = {tr("small_kv_4"): 4, "2": 2, tr("small_kv_1"): 1}
        self.compare_button.name = tr("small_compare")
        self.chart.yaxis.axis_label, self.chart.xaxis.axis_label = tr("small_chart_y"), tr("small_chart_x")
        self.hover.tooltips = [
            ("", "@label"),
            ("KiB", "@kib{0.0}"),
            (tr("small_loss"), "@loss{0.0000}"),
            ("Δ logits", "@drift"),
        ]
        self.render_status()
        self.render_losses()
        self.render_result()

    def render_status(self):
        """What the cache in the figure holds now, and what it changed."""
        ex, lang, tr = self.ex, self.lang, self.tr
        per_token = smaller.per_token_bytes(ex.cache)
        text = tr(
            "small_now",
            n=ex.cfg.n_kv_heads,
            fmt=ex.fmt,
            per=size(per_token, lang),
            n_ctx=ex.cfg.n_ctx,
            window=size(per_token * ex.cfg.n_ctx, lang),
        )
        if ex.fmt != "float64":
            now, most = ex.drift.get(ex.t), max(ex.drift.values(), default=None)
            if most is not None:
                text += " " + tr("small_drift", now=sci(now or 0.0, lang), most=sci(most, lang))
            if ex.switched_at:
                text += " " + tr("small_restart", p=ex.switched_at)
            else:
                where = ex.departure()
                text += " " + (tr("small_departs", p=where) if where else tr("small_same"))
        self.status.object = f"<p role='status' data-testid='small-status'>{esc(text)}</p>"

    def render_losses(self):
        """Each model's held-out loss, what it is next to the lesson's, and the quantized cache's drift
        over the held-out windows: all from the checkpoints' metrics.json."""
        tr, lang = self.tr, self.lang
        metrics = {h: checkpoints.metrics(smaller.CHECKPOINT[h]) for h in smaller.KV_HEADS}
        spreads = {h: smaller.seed_spread(m) for h, m in metrics.items()}
        with_seeds = any(spreads.values())
        loss = lambda x: num(x, lang, 4)  # noqa: E731
        rows = ""
        for h, m in metrics.items():
            spread = spreads[h]
            extra = (
                ""
                if not with_seeds
                else (f"<td>{loss(spread[0])}–{loss(spread[1])} ({spread[2]})</td>" if spread else "<td>–</td>")
            )
            rows += f"<tr><td>{h}</td><td>{loss(m['held_out_loss'])}</td>{extra}</tr>"
        head = f"<th>{esc(tr('small_kv'))}</th><th>{esc(tr('small_loss'))}</th>"
        if with_seeds:
            head += f"<th>{esc(tr('small_loss_seeds'))}</th>"
        lesson = metrics[smaller.KV_HEADS[0]]
        context = tr(
            "small_loss_context",
            held=loss(lesson["held_out_loss"]),
            train=loss(lesson["train_loss"]),
            lesson=num(lesson.get("lesson_reported_loss", 3.2), lang, 1),
        )
        runs = tr(
            "small_loss_runs" if with_seeds else "small_loss_one_run",
            l2=loss(metrics[2]["held_out_loss"]),
            l4=loss(lesson["held_out_loss"]),
        )
        self.losses.object = (
            f"<table class='data' data-testid='small-losses'><caption>{esc(tr('small_losses'))}"
            f"</caption><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
            f"<p class='explain' data-testid='small-loss-context'>{esc(context)} {esc(runs)}</p>"
            + self.drift_table(metrics)
        )

    def drift_table(self, metrics: dict) -> str:
        """The quantized cache's drift over the novel's held-out windows, per model and format (median and
        max of each window's largest |Δ logits|), and where the sampled text departs."""
        tr, lang = self.tr, self.lang
        spreads = {h: smaller.drift_spread(m) for h, m in metrics.items()}
        formats = [f for f in smaller.FORMATS if f != "float64" and all(f in s for s in spreads.values())]
        if not formats:
            return ""
        windows = spreads[smaller.KV_HEADS[0]][formats[0]]["windows"]
        body = "".join(
            f"<tr><td>{h}</td>"
            + "".join(f"<td>{two_digits(s[f]['median'], lang)} / {two_digits(s[f]['max'], lang)}</td>" for f in formats)
            + "</tr>"
            for h, s in spreads.items()
        )
        head = f"<th>{esc(tr('small_kv'))}</th>" + "".join(f"<th>{f}</th>" for f in formats)
        html = (
            f"<table class='data' data-testid='small-drift-spread'><caption>"
            f"{esc(tr('small_drift_spread', windows=windows))}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>"
        )
        d4, d8 = (smaller.departure_range(spreads.values(), f) for f in ("int4", "int8"))
        if d4 and d8:
            seeds = metrics[smaller.KV_HEADS[0]]["kv_cache_drift"]["int4"]["first_departure"]["seeds"]
            html += (
                f"<p class='explain' data-testid='small-departs-spread'>"
                f"{esc(tr('small_departs_spread', s0=min(seeds), s1=max(seeds), lo4=d4[0], hi4=d4[1], lo8=d8[0], hi8=d8[1]))}</p>"
            )
        return html

    async def compare(self, _event=None):
        """Every combination, measured on real arrays, one at a time (the page stays responsive)."""
        from model.timing import window_ids

        settings = self.session.settings
        self.compare_button.disabled, self.rows = True, []
        try:
            for h in smaller.KV_HEADS:
                gpt = checkpoints.load(smaller.CHECKPOINT[h])
                ids = await off_the_loop(functools.partial(window_ids, gpt, seed=settings.seed, top_p=settings.top_p))
                loss = checkpoints.metrics(smaller.CHECKPOINT[h])["held_out_loss"]
                for fmt in smaller.FORMATS:
                    part = functools.partial(smaller.combination, gpt, ids, h, fmt, loss, self.ex.n_prompt)
                    self.rows.append(await off_the_loop(part))
                    with pn.io.unlocked():
                        self.render_result()
                    await asyncio.sleep(0.01)
        finally:
            with pn.io.unlocked():
                self.compare_button.disabled = False

    def render_result(self):
        rows, lang = self.rows, self.lang
        self.source.data = {
            "x": [(str(r.kv_heads), r.fmt) for r in rows],
            "kib": [r.window_bytes / 1024 for r in rows],
            "loss": [r.held_out_loss for r in rows],
            "drift": [sci(r.drift, lang) for r in rows],
            "label": [f"{r.kv_heads} · {r.fmt}" for r in rows],
        }
        fit_y(self.chart, [self.source], "kib")
        self.chart_pane.visible = self.chart.visible = bool(rows)
        if not rows:
            self.result.object = ""
            return
        body = "".join(
            f"<tr><td>{r.kv_heads}</td><td>{r.fmt}</td><td>{size(r.window_bytes, lang)}</td>"
            f"<td>{num(r.held_out_loss, lang, 4)}</td><td>{sci(r.drift, lang)}</td></tr>"
            for r in rows
        )
        head = "".join(
            f"<th>{esc(self.tr(k))}</th>"
            for k in ("small_kv", "small_precision", "small_window", "small_loss", "small_drift_head")
        )
        self.result.object = (
            f"<table class='data' data-testid='small-table'><thead><tr>{head}</tr></thead>"
            f"<tbody>{body}</tbody></table>{self.summary()}"
        )

    def windows(self) -> int:
        """How many held-out windows the drift's spread was measured over (metrics.json)."""
        drift = checkpoints.metrics(smaller.CHECKPOINT[smaller.KV_HEADS[0]]).get("kv_cache_drift") or {}
        return next((d["windows"] for d in drift.values()), 0)

    def summary(self) -> str:
        """The comparison in one sentence, from its numbers (once every combination is measured)."""
        rows = {(r.kv_heads, r.fmt): r for r in self.rows}
        if len(rows) < len(smaller.KV_HEADS) * len(smaller.FORMATS):
            return ""
        lesson, smallest, lang = rows[4, "float64"], rows[1, "int4"], self.lang
        text = self.tr(
            "small_summary",
            lesson=size(lesson.window_bytes, lang),
            smallest=size(smallest.window_bytes, lang),
            x=num(lesson.window_bytes / smallest.window_bytes, lang, 1),
            l4=num(lesson.held_out_loss, lang, 4),
            l2=num(rows[2, "float64"].held_out_loss, lang, 4),
            l1=num(rows[1, "float64"].held_out_loss, lang, 4),
            d8=sci(rows[4, "int8"].drift, lang),
            d4=sci(rows[4, "int4"].drift, lang),
            windows=self.windows(),
        )
        return f"<p class='explain' data-testid='small-summary'>{esc(text)}</p>"
