"""The explorable's parts that are text: each a Panel `Viewer` over one Session.

A part builds its widgets once, redraws when the session's revision changes and relabels
when the language does; it reads everything it shows from the session (no copies).
The figures are in app/figures.py; the page that puts them together in app/page.py.
"""
from __future__ import annotations

import asyncio
import html
import sys

import panel as pn
import param

from . import clock
from .i18n import language_names, num, sci, size, tr
from .settings import CACHE, FULL
from .style import CSS, MODE_SWITCH_CSS, show_token
from .widgets import Disclosure, RangeInput, declared

MAX_NOTICES = 3           # notices listed one by one; the rest are counted in one line
MAX_NOTICE_VALUE = 60     # characters of a bad value shown
CLOCK_EXPLAIN = {"slower": "clock_explain_slower", "near": "clock_explain_near", "short": "clock_explain_short"}


def esc(s) -> str:
    return html.escape(str(s))


def html_pane(**kw):
    return pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", **kw)


def scroll_region(label: str, inner: str) -> str:
    """A wide table in a region of its own that scrolls sideways on a narrow screen (the page never
    does), reachable with the keyboard and named for screen readers."""
    return f"<div class='table-scroll' role='region' tabindex='0' aria-label='{esc(label)}'>{inner}</div>"


def defer(fn) -> None:
    """Run fn once the current event has been answered (the page redraws first): on Panel's
    server at its next tick, in Pyodide on the event loop; at once where there is neither (tests)."""
    doc = pn.state.curdoc
    if sys.platform == "emscripten":
        asyncio.get_event_loop().call_soon(fn)
    elif doc is not None and doc.session_context is not None:
        doc.add_next_tick_callback(fn)
    else:
        fn()


_MEASURER = None


async def off_the_loop(fn):
    """fn() for a measurement's part, without holding the other readers. Under Panel's server it runs
    in the server's one measuring thread: the server's loop, which answers every session, takes the
    interpreter back every few milliseconds while it runs (a part of the speculative lab computes for
    almost 2 s; on the loop, every other reader would wait that long), and measurements of different
    readers queue. In the reader's browser (Pyodide, no threads) it runs here: the reader's own
    machine, and the loop yields between parts."""
    global _MEASURER
    doc = pn.state.curdoc
    if sys.platform == "emscripten" or doc is None or doc.session_context is None:
        return fn()
    if _MEASURER is None:
        from concurrent.futures import ThreadPoolExecutor
        _MEASURER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="kv-measure")
    return await asyncio.get_running_loop().run_in_executor(_MEASURER, fn)


class OnSession:
    """What every view over a Session reads: the explorer, the window, the language and its texts."""

    session = None

    @property
    def ex(self):
        return self.session.ex

    @property
    def n(self) -> int:
        return self.session.n_ctx

    @property
    def lang(self) -> str:
        return self.session.settings.lang

    def t(self, msg_id: str, **kw) -> str:
        return tr(self.lang, msg_id, **kw)


class Part(OnSession, pn.viewable.Viewer):
    """A piece of the page over a Session: `build()` once, `relabel()` when the language changes
    (then a full redraw), `redraw()` after every change of the session (of `watches`)."""

    watches = ("revision",)

    def __init__(self, session, **params):
        super().__init__(**params)
        self.session = session
        self.build()
        session.param.watch(lambda _e: self.redraw(), list(self.watches))
        session.param.watch(lambda _e: self.rebuild(), "model")
        session.settings.param.watch(self._relabel, "lang")
        self.relabel()

    def _relabel(self, _event):
        with self.session.dispatch():
            self.relabel()

    def build(self):
        raise NotImplementedError

    def relabel(self):
        self.redraw()

    def rebuild(self):
        """Another model or cache format: draw everything again."""
        self.relabel()

    def redraw(self):
        pass

    def __panel__(self):
        return self.layout


class Header(Part):
    """The title and the introduction, unless the course page has its own (embed=1)."""

    def build(self):
        self.layout = html_pane(visible=not self.session.settings.embed)

    def relabel(self):
        if not self.session.settings.embed:
            intro = self.t("intro", n=self.ex.cfg.n_layers)
            self.layout.object = f"<h1>{esc(self.t('title'))}</h1><p>{esc(intro)}</p>"


class Notices(Part):
    """URL parameters that were ignored, and why (a few, then how many more)."""

    def build(self):
        self.layout = html_pane(visible=False)

    def relabel(self):
        notices = self.session.settings.notices
        items = [self.t("notice_bad", key=cut(k), value=cut(v), why=self.t(why, **kw))
                 for k, v, why, kw in notices[:MAX_NOTICES]]
        if len(notices) > MAX_NOTICES:
            items.append(self.t("notice_more", n=len(notices) - MAX_NOTICES))
        self.layout.object = "".join(f"<div class='notice' role='note'>{esc(s)}</div>" for s in items)
        self.layout.visible = bool(items)


def cut(s: str, limit: int = MAX_NOTICE_VALUE) -> str:
    return s if len(s) <= limit else s[:limit] + "…"


class TokenText(Part):
    """The text so far, one box per token: the prompt's dashed, the newest highlighted. A box never
    breaks across lines; its spaces show as faint dots (still spaces for screen readers and copying);
    a newline shows as ⏎ at the end of its line, then the line breaks; two or more in a row end the
    paragraph (one gap, not a line holding a lone ⏎)."""

    def build(self):
        self.layout = html_pane()

    def redraw(self):
        ex = self.ex
        toks = ex.tokens()
        spans = []
        for i, s in enumerate(toks):
            cls = ["tok"] + (["prompt"] if i < ex.n_prompt else []) + (["current"] if i == len(toks) - 1 else [])
            if s.strip("\n") == "":
                cls.append("nl")
            title = self.t("prompt_token" if i < ex.n_prompt else "sampled_token") + f" {i + 1}"
            spans.append(f"<span class='{' '.join(cls)}' title='{esc(title)}'>{token_html(s)}</span>")
            spans.append(line_break(toks, i))
        self.layout.object = (f"<p><span class='tpos'>{self.t('position', t=ex.t, n=self.n)}</span></p>"
                              f"<div class='text' lang='es'>{''.join(spans)}</div>")


def token_html(s: str) -> str:
    """A token's text: newlines as ⏎, each space a real space drawn as a faint dot."""
    return esc(show_token(s)).replace(" ", "<span class='sp'> </span>")


def line_break(toks: list[str], i: int) -> str:
    """What follows token i: nothing, a line break after the last of a run of newlines, or the end of
    a paragraph after two or more."""
    if not toks[i].endswith("\n") or (i + 1 < len(toks) and toks[i + 1].startswith("\n")):
        return ""
    run = 0
    for s in reversed(toks[:i + 1]):
        if s.strip("\n"):
            run += len(s) - len(s.rstrip("\n"))
            break
        run += len(s)
    return "<br>" if run == 1 else "<span class='para'></span>"


class ErrorBox(Part):
    """The error of the last step: the lesson's IndexError at n_ctx + 1, or a failure as what it is."""

    def build(self):
        self.layout = html_pane(visible=False)

    def redraw(self):
        e = self.ex.error
        if e is None:
            self.layout.visible = False
            self.layout.object = ""
            return
        self.layout.object = error_html(self.t, e, self.n)
        self.layout.visible = True


def error_html(t, e, n: int, testid: str = "error", explain: str = "error_explain") -> str:
    """A step's error as the reader sees it: the lesson's IndexError past the window (with `explain`),
    or a failure as what it is. `t`: the language's tr."""
    heading, explain = ("error_heading", explain) if e.lesson else ("step_failed_heading", "step_failed_explain")
    return (f"<div class='error' role='alert' data-testid='{testid}' data-lesson='{str(e.lesson).lower()}'>"
            f"<h2>{esc(t(heading, pos=e.position))}</h2>"
            f"<p><code>{esc(e.type_name)}: {esc(e.message)}</code></p>"
            f"<p>{esc(t(explain, n=n, pos=e.position))}</p></div>")


class Readouts(Part):
    """The numbers, in one pane (one layout pass per step): this token, the totals, the cache's
    memory, the clock next to the count, and the proof."""

    watches = ("revision", "clock")

    def build(self):
        self.layout = html_pane()

    def redraw(self):
        c = self.ex.costs()
        self.layout.object = ("<div class='cards'>" + self.card_token(c) + self.card_totals(c)
                              + self.card_memory(c) + self.card_clock() + self.card_proof() + "</div>")

    def both_ways(self, cached: str, full: str, ratio: str, testid: str) -> str:
        """Two rows (with / without the cache, the current mode outlined) and their ratio."""
        on = self.session.settings.mode == CACHE
        act = lambda yes: " active" if yes else ""
        return (f"<div class='row{act(on)}'><span><span class='swatch cached'></span> {self.t('with_cache')}</span>"
                f"<span class='num cached' data-testid='{testid}-cached'>{cached}</span></div>"
                f"<div class='row{act(not on)}'><span><span class='swatch full'></span> {self.t('without_cache')}"
                f"</span><span class='num full' data-testid='{testid}-full'>{full}</span></div>"
                f"<div class='row'><span></span><span class='num big' data-testid='{testid}-ratio'>{ratio}</span></div>")

    def card(self, testid: str, heading: str, body: str, wide: bool = False) -> str:
        return (f"<div class='card{' wide' if wide else ''}' data-testid='{testid}'><h3>{esc(heading)}</h3>"
                f"{body}</div>")

    def card_token(self, c) -> str:
        lang = self.lang
        return self.card("this-token", self.t("this_token", t=c["t"]),
                         self.both_ways(num(c["cached"], lang), num(c["full"], lang), f"{num(c['ratio'], lang)}×", "token"))

    def card_totals(self, c) -> str:
        lang = self.lang
        return self.card("totals", self.t("totals", n=c["t"]),
                         self.both_ways(num(c["total_cached"], lang), num(c["total_full"], lang),
                                        f"{num(c['total_ratio'], lang, 1)}×", "total"))

    def card_memory(self, c) -> str:
        """What the cache holds now: its numbers, and its real bytes (8 a number in the lesson's
        float64; fewer, and their scales, in the other formats)."""
        lang, cfg, fmt = self.lang, self.ex.cfg, self.ex.fmt
        if fmt == "float64":
            kib = c["cache_bytes"] / 1024
            value = self.t("memory_value", numbers=num(c["cache_numbers"], lang), kib=num(kib, lang, 1 if kib % 1 else 0))
        else:
            value = self.t("memory_value_fmt", numbers=num(c["cache_numbers"], lang), size=size(c["cache_bytes"], lang),
                           fmt=fmt)
        if cfg.n_kv_heads == cfg.n_heads:
            formula = self.t("memory_formula", L=cfg.n_layers, t=c["t"], d=cfg.d_model)
        else:
            formula = self.t("memory_formula_kv", L=cfg.n_layers, t=c["t"], H=cfg.n_kv_heads, dk=cfg.d_head)
        return self.card("memory", self.t("memory"), f"<div class='num big' data-testid='memory-numbers'>{esc(value)}"
                                                      f"</div><div class='num explain'>{esc(formula)}</div>")

    def card_clock(self) -> str:
        """This position's clock, both ways, next to the count; at the window's end, what it means."""
        ex, lang, t = self.ex, self.lang, self.ex.t
        m = ex.clock()
        if m.clock is None:
            key = "clock_prompt" if t <= ex.n_prompt else "clock_pending" if m.proof is not None else "clock_none"
            body = f"<p class='explain' data-testid='clock-state'>{esc(self.t(key))}</p>"
        else:
            c, count = m.clock, ex.cost_full[t - 1] / ex.cost_cached[t - 1]
            body = self.both_ways(f"{clock.ms_text(c.a_s, lang)} ms", f"{clock.ms_text(c.b_s, lang)} ms",
                                  esc(self.t("clock_ratio", x=clock.ratio_text(c.ratio, lang), n=num(count, lang))),
                                  "clock")
            body += (f"<p class='explain'>{esc(self.t('clock_spread', n=c.samples, lo=clock.ratio_text(c.ratio_low, lang), hi=clock.ratio_text(c.ratio_high, lang)))}</p>")
            if t == self.n:
                body += (f"<p class='explain' data-testid='clock-explain'>"
                         f"{esc(self.t(CLOCK_EXPLAIN[clock.verdict(c.ratio, count)], n=num(count, lang), x=clock.ratio_text(c.ratio, lang)))}</p>")
        return self.card("clock", f"{self.t('clock_heading')} · {self.t('clock_last')}", body, wide=True)

    def card_proof(self) -> str:
        proof = self.ex.clock().proof
        text = self.t("proof_value", diff=sci(proof, self.lang)) if proof is not None else self.t("proof_none")
        fmt = self.ex.fmt
        explain = self.t("proof_explain") if fmt == "float64" else self.t("proof_explain_fmt", fmt=fmt)
        explain = f"<p class='explain'>{esc(explain)}</p>" if proof is not None else ""   # nothing compared yet
        return self.card("proof-card", self.t("proof_heading"), f"<p data-testid='proof'>{esc(text)}</p>{explain}")


class DataTable(Part):
    """The figure's data as a table (for screen readers, and anyone who prefers numbers), drawn
    only while its card is open."""

    def build(self):
        self.table = html_pane()
        self.layout = Disclosure(self.table)
        self.layout.param.watch(lambda _e: self.redraw(), "collapsed")

    def relabel(self):
        self.layout.title = self.t("table_heading")
        self.redraw()

    def redraw(self):
        if self.layout.collapsed:
            return
        ex, lang = self.ex, self.lang
        toks = ex.tokens()
        head = "".join(f"<th>{esc(self.t(k))}</th>" for k in
                       ("table_pos", "table_token", "table_cached", "table_full", "table_ms_cached", "table_ms_full"))
        ms = lambda s: num(s * 1e3, lang, 3) if s is not None else "—"
        rows = []
        for p in range(1, ex.t + 1):
            m = ex.measures.get(p)
            cls = " class='current'" if p == ex.t else ""
            rows.append(f"<tr{cls}><td>{p}</td><td class='tok'>{esc(show_token(toks[p - 1]))}</td>"
                        f"<td>{num(ex.cost_cached[p - 1], lang)}</td><td>{num(ex.cost_full[p - 1], lang)}</td>"
                        f"<td>{ms(m.cached_s if m else None)}</td><td>{ms(m.full_s if m else None)}</td></tr>")
        self.table.object = scroll_region(self.t("table_heading"), (
            f"<table class='data'><caption class='sr-only'>{esc(self.t('table_heading'))}"
            f"</caption><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>")) + self.reads_table()

    def reads_table(self) -> str:
        """What the newest query reads (the figure under the grid), as numbers: a row per layer and head."""
        ex = self.ex
        head = "".join(f"<th>{p}</th>" for p in range(1, ex.t + 1))
        rows = "".join(f"<tr><th scope='row'>{esc(self.t('reads_row', l=layer + 1, h=h + 1))}</th>"
                       + "".join(f"<td>{num(w, self.lang, 3)}</td>" for w in ex.reads[layer][h]) + "</tr>"
                       for layer in range(len(ex.reads)) for h in range(ex.reads[layer].shape[0]))
        title = self.t("reads_table", t=ex.t)
        return f"<h3>{esc(title)}</h3>" + scroll_region(title, (
            f"<table class='data' data-testid='reads-table'><thead><tr><th></th>{head}</tr></thead>"
            f"<tbody>{rows}</tbody></table>"))


class PageState(Part):
    """The page's state on <body> (through the A11y helper): the query a reload keeps, and the
    weights' checksum for tests (recomputed when asked, and at every error)."""

    def __init__(self, session, a11y, **params):
        self.a11y = a11y
        super().__init__(session, **params)

    def build(self):
        self.layout = pn.Spacer(width=0, height=0, margin=0)

    def redraw(self, weights: bool = False):
        state = {"query": self.session.settings.query(), "weights": self.a11y.page_state.get("weights", "")}
        if weights or not state["weights"] or self.ex.error is not None:
            state["weights"] = self.ex.weights_digest()
        if state != self.a11y.page_state:
            self.a11y.page_state = state


def linked(widget_class, parameter, **kw):
    """A widget linked both ways to a setting (its bounds and step come from the parameter; the
    parameter's English doc is not shown as the widget's description). The widget's value takes
    the parameter's bounds, and a browser's value must be one the parameter takes (app/intake.py)."""
    if "description" in widget_class.param:
        kw.setdefault("description", None)
    widget = widget_class.from_param(parameter, **kw)
    if isinstance(parameter, param.Number) and isinstance(widget.param.value, param.Number):
        widget.param.value.bounds = parameter.bounds
    return declared(widget, parameter)


class Animation:
    """`tick()` every `period()` ms while running: one periodic callback for the page's whole life,
    started and stopped (Panel keeps every callback it creates, so a new one per press would pile
    up); no threads, no sleeps (works under Pyodide)."""

    def __init__(self, tick, period):
        self.tick, self.period, self._callback = tick, period, None

    @property
    def running(self) -> bool:
        return self._callback is not None and self._callback.running

    def run(self, on: bool) -> bool:
        """Start or stop it; whether that changed anything."""
        if on == self.running:
            return False
        if on:
            if self._callback is None:
                self._callback = pn.state.add_periodic_callback(self.tick, period=self.period(), start=False)
            self._callback.period = self.period()
            self._callback.start()
        else:
            self._callback.stop()
        return True

    def retime(self):
        if self._callback is not None:
            self._callback.period = self.period()    # a running callback restarts with it


class Controls(Part):
    """Step, animate, reset, the mode switch and the speed; the keyboard (through A11y) and the
    polite live region that says what each action did."""

    def __init__(self, session, a11y, **params):
        self.a11y = a11y
        self.animation = Animation(self.step, self.period)
        super().__init__(session, **params)

    def build(self):
        settings = self.session.settings
        self.step_button = pn.widgets.Button(color="primary", width=130)
        self.play_button = pn.widgets.Toggle(color="default", width=130)
        self.reset_button = pn.widgets.Button(color="default", width=130)
        self.mode_switch = linked(pn.widgets.RadioButtonGroup, settings.param.mode, width=280,
                                  stylesheets=[MODE_SWITCH_CSS])
        self.speed = RangeInput.linked(settings.param.speed, width=220)
        self.step_button.on_click(lambda _e: self.do("step"))
        self.reset_button.on_click(lambda _e: self.do("reset"))
        self.play_button.param.watch(lambda e: self.set_playing(e.new), "value")
        settings.param.watch(self._mode_said, "mode")
        settings.param.watch(lambda _e: self.animation.retime(), "speed")
        self.a11y.param.watch(lambda e: self.do(e.new.split(":")[0]), "command")
        self.layout = pn.FlexBox(self.step_button, self.play_button, self.reset_button, self.mode_switch,
                                 self.speed, align_items="center", gap="8px", sizing_mode="stretch_width")

    def relabel(self):
        t = self.t
        self.step_button.name, self.reset_button.name = t("step"), t("reset")
        self.play_button.name = t("pause") if self.play_button.value else t("play")
        self.mode_switch.options = {t("mode_cache"): CACHE, t("mode_full"): FULL}
        self.speed.label = t("speed")

    # -- actions: safe in any state, as often as a reader clicks ------------------------------
    def do(self, command: str):
        if command == "step":
            self.step()
        elif command == "reset":
            self.reset()
        elif command == "toggle":
            self.session.toggle()
        elif command == "play":
            self.play_button.value = not self.play_button.value

    def step(self):
        if not self.session.step():               # the error: the animation stops there
            self.set_playing(False)
        defer(self.session.measure_clock)         # the clock, once the step is on the page
        ex = self.ex
        if ex.error:
            e = ex.error
            self.a11y.message = self.t("live_error", pos=e.position, type=e.type_name, message=e.message)
        else:
            mode = self.t("mode_cache" if self.session.settings.mode == CACHE else "mode_full")
            c = ex.costs()
            self.a11y.message = self.t("live_step", t=ex.t, n=self.n, tok=show_token(ex.tokens()[-1]), mode=mode,
                                       c=num(c["cached" if self.session.settings.mode == CACHE else "full"], self.lang))

    def reset(self):
        self.set_playing(False)
        self.session.reset()
        self.a11y.message = self.t("live_reset", t=self.ex.t, n=self.n)

    def _mode_said(self, event):
        self.a11y.message = self.t("live_mode", mode=self.t("mode_cache" if event.new == CACHE else "mode_full"))

    # -- animation (Animation) ------------------------------------------------------------------
    def set_playing(self, playing: bool):
        if self.play_button.value != playing:
            self.play_button.value = playing      # the watcher calls back here
            return
        if playing and self.ex.error:             # nothing to animate until Reset
            self.play_button.value = False
            return
        self.play_button.name = self.t("pause") if playing else self.t("play")
        if self.animation.run(playing):
            self.a11y.message = self.t("live_play" if playing else "live_pause")

    def period(self) -> int:
        speed = self.session.settings.speed
        if self.a11y.reduced_motion:
            speed = min(speed, 2)
        return int(1000 / speed)


class AdvancedSettings(Part):
    """Language, seed and top-p; a link to the current state; the keyboard's help."""

    LANGUAGES = {name: lang for lang, name in language_names().items()}     # a catalog each (app/i18n)

    def build(self):
        settings = self.session.settings
        self.lang_select = linked(pn.widgets.RadioButtonGroup, settings.param.lang, options=self.LANGUAGES, width=270)
        self.seed = linked(pn.widgets.IntInput, settings.param.seed, width=140)
        self.top_p = RangeInput.linked(settings.param.top_p, digits=2, width=220)
        self.share, self.keys = html_pane(), html_pane()
        self.layout = Disclosure(pn.FlexBox(self.lang_select, self.seed, self.top_p, gap="12px"), self.share,
                                 self.keys)
        self.layout.param.watch(lambda _e: self.redraw(), "collapsed")

    def relabel(self):
        self.layout.title = self.t("advanced")
        self.lang_select.name, self.seed.name, self.top_p.label = self.t("language"), self.t("seed"), self.t("top_p")
        self.keys.object = f"<p class='explain'>{esc(self.t('keyboard'))}</p>"
        self.redraw()

    def redraw(self):
        """A link that opens the page in this state (language, mode, t, seed, top-p, speed)."""
        if self.layout.collapsed:
            return
        query = esc(self.session.settings.query())
        self.share.object = (f"<p>{esc(self.t('share'))}: <a href='{query}' target='_blank' rel='noopener' "
                             f"data-testid='share'>{query}</a></p>")
