"""What every part of the figure stands on: a Panel `Viewer` over one Session, and small helpers.

A part builds its widgets once, redraws when the session's revision changes and relabels when the
language does; it reads everything it shows from the session (no copies). The parts themselves:
text.py (title, notices, the text, the error), plots.py (cache grid, what the query reads, cost bars,
clock), readouts.py (the numbers, the data table, the page's state), controls.py (the buttons, the
advanced settings); app/page.py puts them together.
"""

from __future__ import annotations

import asyncio
import html
import sys

import panel as pn
import param

from ..components.widgets import declared
from ..i18n import tr
from ..style import CSS


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
            self._callback.period = self.period()  # a running callback restarts with it
