"""What every part of the figure stands on: a Panel `Viewer` over one Session, and small helpers.

A part builds its widgets once, redraws when the session's revision changes and relabels when the
language does; it reads everything it shows from the session (no copies). The parts themselves:
text.py (title, notices, the text, the error), grid.py (the cache grid), plots.py (what the query reads, cost bars,
clock), readouts.py (the numbers, the data table, the page's state), controls.py (the buttons, the
advanced settings); app/page.py puts them together.
"""

from __future__ import annotations

import asyncio
import functools
import html
import sys
import time

import panel as pn
import param

from ..components.widgets import declared
from ..i18n import tr
from ..style import CSS


def esc(s) -> str:
    return html.escape(str(s))


def html_pane(**kw):
    return pn.pane.HTML("", stylesheets=[CSS], sizing_mode="stretch_width", **kw)


def colour_scale(palette: list[str], low: str, high: str, label: str) -> str:
    """A figure's colour scale as a small bar between its two ends' labels, inline in its note (an
    image for screen readers, named by `label`)."""
    stops = ", ".join(palette)
    return (
        f"<span class='scale' role='img' aria-label='{esc(label)}'><span aria-hidden='true'>{esc(low)}</span>"
        f"<span class='scale-bar' style='background: linear-gradient(to right, {stops})'></span>"
        f"<span aria-hidden='true'>{esc(high)}</span></span>"
    )


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


def later(ms: int, fn) -> None:
    """Run fn once, in ms milliseconds: on Panel's server as a one-shot callback of the session's
    document (Bokeh removes it once it has run), in Pyodide on the event loop; nowhere where there is
    neither (tests: nothing runs by itself there)."""
    doc = pn.state.curdoc
    if sys.platform == "emscripten":
        asyncio.get_event_loop().call_later(ms / 1000, fn)
    elif doc is not None and doc.session_context is not None:
        doc.add_timeout_callback(fn, ms)


_MEASURER = None


async def off_the_loop(fn):
    """fn() for a measurement's part, without holding the other readers. Under Panel's server it runs
    in the server's one measuring thread (app/state/fair.py): the server's loop, which answers every
    session, takes the interpreter back every few milliseconds while it runs (a part of the speculative
    lab computes for almost 2 s; on the loop, every other reader would wait that long); parts run one at
    a time, each session's in turn, so a reader's part waits for one part of each other reader at most,
    and each starts once the loop has run what it had ready (a reader's message being handled does not
    share the interpreter with a part started meanwhile). In the reader's browser (Pyodide, no threads)
    it runs here: the reader's own machine, and the loop yields between parts."""
    global _MEASURER
    doc = pn.state.curdoc
    if sys.platform == "emscripten" or doc is None or doc.session_context is None:
        return fn()
    if _MEASURER is None:
        from ..state.fair import FairQueue, loop_idle

        loop = asyncio.get_running_loop()  # the server's one loop, every session's
        _MEASURER = FairQueue(before=functools.partial(loop_idle, loop))
    return await asyncio.wrap_future(_MEASURER.submit(doc.session_context.id, fn))


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

    def tr(self, msg_id: str, **kw) -> str:
        """The text of msg_id in the page's language; a text that says where the page measures
        ({where}, {where_mine}, {where_start}) says it of this page (`where`)."""
        if msg_id in where_keys():
            kw = {**self.where(), **kw}
        return tr(self.lang, msg_id, **kw)

    def where(self) -> dict:
        """Where the page's measurements run: the reader's browser on the static site, the server's
        machine under Panel's server (session.on_server), in each form the texts use (PLACES)."""
        side = 1 if self.session.on_server else 0
        return {field: tr(self.lang, keys[side]) for field, keys in PLACES.items()}


# The fields that say where the page measures, and their keys: (in the browser, on the server)
PLACES = {
    "where": ("where_browser", "where_server"),
    "where_mine": ("where_mine_browser", "where_mine_server"),
    "where_start": ("where_start_browser", "where_start_server"),
}


@functools.cache
def where_keys() -> frozenset:
    """The keys whose text, in any language, names where the page measures."""
    from ..i18n import CATALOGS

    return frozenset(
        key
        for lang in CATALOGS
        for key, m in CATALOGS[lang].messages.items()
        if any("{where" in text for text in m.msgstr)
    )


class Part(OnSession, pn.viewable.Viewer):
    """A piece of the page over a Session: `build()` once, `relabel()` when the language changes
    (then a full redraw), `redraw()` after every change of the session (of `watches`)."""

    watches = ("revision",)

    def __init__(self, session, **params):
        super().__init__(**params)
        self.session = session
        self.build()
        session.param.watch(lambda *_e: self.redraw(), list(self.watches))
        session.param.watch(lambda _e: self.rebuild(), "model")
        session.settings.param.watch(self._relabel, "lang")
        self.relabel()

    def _relabel(self, _event):
        """Another language: relabelled at once on the reader's own machine, at a turn of its own on a
        shared server (Session.in_turns: the switch is then many short pieces, not one long one)."""
        self.session.in_turns(self._relabel_now)

    def _relabel_now(self):
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
    """`tick()` every `period()` ms while running, counted from the start of one tick to the start of
    the next: the time a step takes, and the work it leaves for right after it (the clock's
    measurement, `defer`), is part of the period, not added to it. A step that takes longer than the
    period is followed by the next as soon as it is done: the rate is then what the machine can do,
    and `rate()` says what it was. One timer at a time (`later`), none left behind: a stopped run's
    timer finds its run over and does nothing. No threads, no sleeps (works under Pyodide).

    With `catch_up` n > 1, a tick that comes late (a slow page took longer than the period to draw the
    step before) makes the steps due by then, up to n, in one: `tick(k)`, each step due one period after
    the one before. The rate then stays the setting's while a step's drawing takes up to n periods: on a
    slow phone the reader sees the text and the bars advance by two or three tokens at a time, at the
    speed the slider says, instead of one at a time, slower."""

    KEEP = 6  # the last ticks' start times `rate()` reads

    def __init__(self, tick, period, after=None, catch_up: int = 1):
        """`after(fn)`: run fn once the tick's work is done (by default `defer`: once what it
        deferred has run; the figure's Controls waits for the page to have drawn it)."""
        self.tick, self.period, self.after, self.catch_up = tick, period, after or defer, catch_up
        self.running = False
        self._run = 0  # which run a pending timer belongs to
        self._due = 0.0  # when the next step is due (catch_up > 1)
        self._made: list[int] = []  # steps made by each of the last ticks, counted from the run's start
        self._starts: list[float] = []
        self._drawn: list[tuple[int, float]] = []  # (steps drawn so far, when the page said so): `drawn`

    def run(self, on: bool) -> bool:
        """Start or stop it; whether that changed anything. The first step comes at once."""
        if on == self.running:
            return False
        self.running, self._run, self._starts, self._drawn, self._made = on, self._run + 1, [], [], []
        self._due = time.perf_counter()
        if on:
            run = self._run
            later(0, lambda: self._fire(run))
        return True

    def _fire(self, run: int) -> None:
        if run != self._run or not self.running:
            return
        now, period = time.perf_counter(), self.period() / 1000
        self._starts = (self._starts + [now])[-self.KEEP :]
        if self.catch_up > 1:
            steps = min(self.catch_up, 1 + int(max(0.0, now - self._due) / period))
            self._due = max(self._due + steps * period, now)  # no debt beyond what a tick makes up
            self._made = (self._made + [(self._made[-1] if self._made else 0) + steps])[-self.KEEP :]
            self.tick(steps)
        else:
            self._made = (self._made + [(self._made[-1] if self._made else 0) + 1])[-self.KEEP :]
            self.tick()
        if run == self._run and self.running:
            self.after(lambda: self._next(run))  # after what the step deferred (and the page drew)

    def _next(self, run: int) -> None:
        if run != self._run or not self.running:
            return
        due = self._due if self.catch_up > 1 else self._starts[-1] + self.period() / 1000
        later(max(0, round((due - time.perf_counter()) * 1000)), lambda: self._fire(run))

    def time_left(self, seconds: float) -> bool:
        """Whether the current tick's period still has `seconds` left, counted from its start."""
        if not self.running or not self._starts:
            return True
        return self._starts[-1] + self.period() / 1000 - time.perf_counter() >= seconds

    DRAWN_WINDOW = 2.5  # s of the page's answers `rate()` reads (they may come in bursts)

    def drawn(self, steps: int) -> None:
        """The page says it has drawn `steps` steps of this run so far (one answer may cover several)."""
        if self.running:
            now = time.perf_counter()
            self._drawn = [d for d in self._drawn if d[1] >= now - self.DRAWN_WINDOW] + [(steps, now)]

    def rate(self) -> float | None:
        """Steps per second lately (None before there are enough): the steps the page said it drew
        over its last DRAWN_WINDOW seconds of answers, where a second of them is there; else the last
        few ticks (Python's own steps)."""
        if len(self._drawn) >= 3 and self._drawn[-1][1] - self._drawn[0][1] >= 1.0:
            (a, t0), (b, t1) = self._drawn[0], self._drawn[-1]
            return (b - a) / (t1 - t0)
        if len(self._starts) < 4:
            return None
        return (self._made[-1] - self._made[0]) / (self._starts[-1] - self._starts[0])

    def retime(self):
        """A new period: the next step keeps it (and the rate is measured afresh)."""
        self._starts, self._drawn, self._made = self._starts[-1:], self._drawn[-1:], self._made[-1:]
        self._due = time.perf_counter()
