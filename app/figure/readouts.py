"""The parts of the figure that are numbers: the readouts (this token, the totals, the cache's
memory, the clock, the proof, the newest token's candidates), the data as a table, and the page's
state on <body>."""

from __future__ import annotations

import panel as pn

from ..components.widgets import Disclosure
from ..i18n import num, sci, size
from ..sections.quiz.logic import QUESTIONS
from ..state import clock
from ..state.settings import CACHE
from ..style import show_token
from .parts import Part, esc, html_pane, scroll_region

CLOCK_EXPLAIN = {"slower": "clock_explain_slower", "near": "clock_explain_near", "short": "clock_explain_short"}


class Readouts(Part):
    """The numbers, in one pane (one layout pass per step): this token, the totals, the cache's
    memory, the clock next to the count, and the proof."""

    watches = ("revision", "clock")

    def build(self):
        self.layout = html_pane()

    def redraw(self):
        c = self.ex.costs()
        self.layout.object = (
            "<div class='cards'>"
            + self.card_token(c)
            + self.card_totals(c)
            + self.card_memory(c)
            + self.card_clock()
            + self.card_proof()
            + self.card_candidates()
            + "</div>"
        )

    def both_ways(self, cached: str, full: str, ratio: str, testid: str) -> str:
        """Two rows (with / without the cache, the current mode outlined) and their ratio."""
        on = self.session.settings.mode == CACHE
        act = lambda yes: " active" if yes else ""
        return (
            f"<div class='row{act(on)}'><span><span class='swatch cached'></span> {self.tr('with_cache')}</span>"
            f"<span class='num cached' data-testid='{testid}-cached'>{cached}</span></div>"
            f"<div class='row{act(not on)}'><span><span class='swatch full'></span> {self.tr('without_cache')}"
            f"</span><span class='num full' data-testid='{testid}-full'>{full}</span></div>"
            f"<div class='row'><span></span><span class='num big' data-testid='{testid}-ratio'>{ratio}</span></div>"
        )

    def card(self, testid: str, heading: str, body: str, wide: bool = False) -> str:
        return f"<div class='card{' wide' if wide else ''}' data-testid='{testid}'><h3>{esc(heading)}</h3>{body}</div>"

    def card_token(self, c) -> str:
        lang = self.lang
        return self.card(
            "this-token",
            self.tr("this_token", t=c["t"]),
            self.both_ways(num(c["cached"], lang), num(c["full"], lang), f"{num(c['ratio'], lang)}×", "token"),
        )

    def card_totals(self, c) -> str:
        lang = self.lang
        return self.card(
            "totals",
            self.tr("totals", n=c["t"]),
            self.both_ways(
                num(c["total_cached"], lang), num(c["total_full"], lang), f"{num(c['total_ratio'], lang, 1)}×", "total"
            ),
        )

    def card_memory(self, c) -> str:
        """What the cache holds now: its numbers, and its real bytes (8 a number in the lesson's
        float64; fewer, and their scales, in the other formats)."""
        lang, cfg, fmt = self.lang, self.ex.cfg, self.ex.fmt
        if fmt == "float64":
            kib = c["cache_bytes"] / 1024
            value = self.tr(
                "memory_value", numbers=num(c["cache_numbers"], lang), kib=num(kib, lang, 1 if kib % 1 else 0)
            )
        else:
            value = self.tr(
                "memory_value_fmt", numbers=num(c["cache_numbers"], lang), size=size(c["cache_bytes"], lang), fmt=fmt
            )
        if cfg.n_kv_heads == cfg.n_heads:
            formula = self.tr("memory_formula", L=cfg.n_layers, t=c["t"], d=cfg.d_model)
        else:
            formula = self.tr("memory_formula_kv", L=cfg.n_layers, t=c["t"], H=cfg.n_kv_heads, dk=cfg.d_head)
        return self.card(
            "memory",
            self.tr("memory"),
            f"<div class='num big' data-testid='memory-numbers'>{esc(value)}"
            f"</div><div class='num explain'>{esc(formula)}</div>",
        )

    def card_clock(self) -> str:
        """This position's clock, both ways, next to the count; at the window's end, what it means."""
        ex, lang, t = self.ex, self.lang, self.ex.t
        m, count = ex.clock(), ex.cost_full[t - 1] / ex.cost_cached[t - 1]
        if m.clock is None:  # the same rows, waiting: the card keeps its height (nothing below jumps)
            key = (
                "clock_prompt"
                if t <= ex.n_prompt
                else "clock_waits"
                if m.waited
                else "clock_pending"
                if m.proof is not None
                else "clock_none"
            )
            body = self.both_ways("… ms", "… ms", esc(self.tr("clock_ratio", x="…", n=num(count, lang))), "clock")
            body += f"<p class='explain clock-note' data-testid='clock-state'>{esc(self.tr(key))}</p>"
        else:
            c = m.clock
            body = self.both_ways(
                f"{clock.ms_text(c.a_s, lang)} ms",
                f"{clock.ms_text(c.b_s, lang)} ms",
                esc(self.tr("clock_ratio", x=clock.ratio_text(c.ratio, lang), n=num(count, lang))),
                "clock",
            )
            body += f"<p class='explain clock-note'>{esc(self.tr('clock_spread', n=c.samples, lo=clock.ratio_text(c.ratio_low, lang), hi=clock.ratio_text(c.ratio_high, lang)))}</p>"
            if t == self.n:
                body += (
                    f"<p class='explain' data-testid='clock-explain'>"
                    f"{esc(self.tr(CLOCK_EXPLAIN[clock.verdict(c.ratio, count)], n=num(count, lang), x=clock.clock_text(c.ratio, lang)))}</p>"
                )
        return self.card("clock", f"{self.tr('clock_heading')} · {self.tr('clock_last')}", body, wide=True)

    def card_proof(self) -> str:
        proof = self.ex.clock().proof
        if proof is None:
            text = esc(self.tr("proof_none"))
        else:  # the value on a line of its own: the card's height does not depend on its digits
            value = f"<span class='num proof-value'>{esc(sci(proof, self.lang))}</span>"
            text = esc(self.tr("proof_value", diff="\x00")).replace("\x00", value)
        fmt = self.ex.fmt
        explain = (
            self.tr("proof_explain")
            if fmt == "float64"
            else self.tr("proof_explain_int4")
            if fmt == "int4"
            else self.tr("proof_explain_fmt", fmt=fmt)
        )
        explain = f"<p class='explain'>{esc(explain)}</p>" if proof is not None else ""  # nothing compared yet
        return self.card("proof-card", self.tr("proof_heading"), f"<p data-testid='proof'>{text}</p>{explain}")

    SHOWN = 8  # rows of candidates, always (the card keeps its height from step to step)

    def card_candidates(self) -> str:
        """What the sampler weighed for the newest token: its likeliest tokens with the model's
        probabilities, where top-p cut (a dashed line over the first token left out), and ▶ on the
        one sampled, in the last row when it ranked lower; at the prompt (nothing sampled yet), what
        the first draw will weigh."""
        ex, lang, top_p = self.ex, self.lang, self.session.settings.top_p
        c, drawn = ex.newest_candidates(n=None)
        ranked = list(enumerate(c.top, start=1))
        shown = ranked[: self.SHOWN]
        if drawn is not None and all(tok != drawn for _rank, (tok, _p, _k) in shown):
            shown[-1] = next(r for r in ranked if r[1][0] == drawn)  # the sampled one, further down
        words = ex.gpt.tokenizer.token_strings([tok for _rank, (tok, _p, _kept) in shown])
        rows, most = [], c.top[0][1]  # the bars' scale: the likeliest token
        cut = esc(self.tr("candidates_cut"))
        for (rank, (tok, p, kept)), word in zip(shown, words):
            first_cut = not kept and rank == c.n_kept + 1
            cls = (
                ["kept" if kept else "cut"] + (["first-cut"] if first_cut else []) + (["drawn"] if tok == drawn else [])
            )
            said, title = (f"<span class='sr-only'>{cut}. </span>", f" title='{cut}'") if first_cut else ("", "")
            testid = " data-testid='candidate-drawn'" if tok == drawn else ""
            rank_text = f"{'▶ ' if tok == drawn else ''}{'… ' if rank > self.SHOWN else ''}{rank}"
            rows.append(
                f"<tr class='{' '.join(cls)}'{testid}{title}>"
                f"<td>{said}{rank_text}</td><td class='word'>{token_mark(word)}</td>"
                f"<td>{esc(self.tr('candidates_percent', p=num(100 * p, lang, 1)))}</td>"
                f"<td class='pbar' aria-hidden='true'><span style='width:{100 * p / most:.1f}%'></span></td></tr>"
            )
        explain, heading = (
            ("candidates_explain", "candidates_heading")
            if drawn is not None
            else ("candidates_explain_next", "candidates_heading_next")
        )
        t = ex.t if drawn is not None else ex.t + 1
        head = "".join(
            f"<th{cls}>{esc(self.tr(k))}</th>"
            for k, cls in (("candidates_rank", ""), ("table_token", " style='text-align:left'"), ("candidates_p", ""))
        )
        table = (
            f"<table class='data candidates' data-testid='candidates' data-kept='{c.n_kept}'>"
            f"<caption class='sr-only'>{esc(self.tr(heading, t=t))}</caption>"
            f"<thead><tr>{head}<th aria-hidden='true'></th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        )
        note = self.tr(explain, n=c.n_kept, p=num(top_p, lang, 2), mass=num(100 * c.kept_mass, lang, 1))
        note = f"<p class='explain candidates-note'>{esc(note)}</p>"
        return self.card("candidates-card", self.tr(heading, t=t), table + note, wide=True)


def token_mark(word: str) -> str:
    """A token as a box on one line of a table: its spaces drawn as faint dots in the text itself (a
    lone space's box is then as tall as any other), newlines as ⏎, as in the text above."""
    dots = esc(show_token(word)).replace(" ", "<span class='sp-dot' aria-hidden='true'>·</span>")
    return f"<span class='tok'>{dots}</span>"


class DataTable(Part):
    """The figure's data as a table (for screen readers, and anyone who prefers numbers), drawn
    only while its card is open."""

    def build(self):
        self.table = html_pane()
        self.layout = Disclosure(self.table)
        self.layout.param.watch(lambda _e: self.redraw(), "collapsed")

    def relabel(self):
        self.layout.title = self.tr("table_heading")
        self.redraw()

    def redraw(self):
        if self.layout.collapsed:
            return
        ex, lang = self.ex, self.lang
        toks = ex.tokens()
        head = "".join(
            f"<th>{esc(self.tr(k))}</th>"
            for k in ("table_pos", "table_token", "table_cached", "table_full", "table_ms_cached", "table_ms_full")
        )
        ms = lambda s: num(s * 1e3, lang, 3) if s is not None else "—"
        rows = []
        for p in range(1, ex.t + 1):
            m = ex.measures.get(p)
            cls = " class='current'" if p == ex.t else ""
            rows.append(
                f"<tr{cls}><td>{p}</td><td class='tok'>{esc(show_token(toks[p - 1]))}</td>"
                f"<td>{num(ex.cost_cached[p - 1], lang)}</td><td>{num(ex.cost_full[p - 1], lang)}</td>"
                f"<td>{ms(m.cached_s if m else None)}</td><td>{ms(m.full_s if m else None)}</td></tr>"
            )
        self.table.object = (
            scroll_region(
                self.tr("table_heading"),
                (
                    f"<table class='data'><caption class='sr-only'>{esc(self.tr('table_heading'))}"
                    f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
                ),
            )
            + self.reads_table()
        )

    def reads_table(self) -> str:
        """What the newest query reads (the figure under the grid), as numbers: a row per layer and head."""
        ex = self.ex
        head = "".join(f"<th>{p}</th>" for p in range(1, ex.t + 1))
        rows = "".join(
            f"<tr><th scope='row'>{esc(self.tr('reads_row', l=layer + 1, h=h + 1))}</th>"
            + "".join(f"<td>{num(w, self.lang, 3)}</td>" for w in ex.reads[layer][h])
            + "</tr>"
            for layer in range(len(ex.reads))
            for h in range(ex.reads[layer].shape[0])
        )
        title = self.tr("reads_table", t=ex.t)
        return f"<h3>{esc(title)}</h3>" + scroll_region(
            title,
            (
                f"<table class='data' data-testid='reads-table'><thead><tr><td></td>{head}</tr></thead>"
                f"<tbody>{rows}</tbody></table>"
            ),
        )


class PageState(Part):
    """The page's state on <body> (through the A11y helper): the query a reload keeps, and the
    weights' checksum for tests (recomputed when asked, and at every error)."""

    def __init__(self, session, a11y, **params):
        self.a11y = a11y
        super().__init__(session, **params)

    def build(self):
        self.layout = pn.Spacer(width=0, height=0, margin=0)

    def redraw(self, weights: bool = False):
        state = {
            "query": self.session.settings.query(),
            "weights": self.a11y.page_state.get("weights", ""),
            "progress": self.session.progress.as_dict(len(QUESTIONS)),
        }
        if weights or not state["weights"] or self.ex.error is not None:
            state["weights"] = self.ex.weights_digest()
        if state != self.a11y.page_state:
            self.a11y.page_state = state
