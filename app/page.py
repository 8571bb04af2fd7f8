"""The whole explorable for one reader: every part over one Session, in the page's order.

    Explorable(session).layout     -> what `panel serve` and the static site show

Top to bottom: title and introduction (unless embedded), notices about the URL, the figure (the
text, the control bar that sticks while the figure is in view, Reset and the speed, the cache grid,
the cost bars, the error of the last step, the numbers, the clock), advanced settings, the data
table, then the sections below the figure (each built when first opened) and the invisible helpers
(keyboard and live region; code sandbox; the page's state).
"""

from __future__ import annotations

import math

import panel as pn

from . import intake
from .components.a11y import A11y, use_accessible_design
from .figure.clock_plot import ClockPlot
from .figure.controls import AdvancedSettings, Controls
from .figure.grid import CacheGrid
from .figure.parts import OnSession, defer, esc, html_pane, later
from .figure.plots import CostBars, QueryReads
from .figure.readouts import DataTable, PageState, Readouts
from .figure.text import ErrorBox, Header, Notices, TokenText
from .sandbox import CodeSandbox
from .sections import SECTIONS


class Explorable(OnSession, pn.viewable.Viewer):
    def __init__(self, session, **params):
        super().__init__(**params)
        self.session = session
        use_accessible_design()
        session.dispatch = pn.io.unlocked  # redraws reach the browser from any callback
        if intake.served(pn.state.curdoc):  # one server for every reader: costly switches are spaced
            session.on_server = True
            session.schedule = lambda s, fn: defer(fn) if s <= 0 else later(math.ceil(s * 1000), fn)
        self.a11y = A11y(theme=session.settings.theme, height=0, margin=0, sizing_mode="stretch_width")
        self.sandbox = CodeSandbox(height=0, margin=0, sizing_mode="stretch_width")
        # The page's state (the query a reload and the share link keep) redraws first at every change, so it
        # reaches the browser before the figure's patches: a reload, or a page stopped in between, keeps
        # the position the reader sees, never the one before.
        self.state = PageState(session, self.a11y)
        self.header, self.notices, self.text = Header(session), Notices(session), TokenText(session)
        self.controls, self.error = Controls(session, self.a11y), ErrorBox(session)
        self.grid, self.reads, self.bars = CacheGrid(session), QueryReads(session), CostBars(session)
        self.readouts, self.clock = Readouts(session), ClockPlot(session)
        self.advanced, self.table = AdvancedSettings(session), DataTable(session)
        self.more_heading = html_pane()
        self.sections = [section(self) for section in SECTIONS]
        session.settings.param.watch(self._language_changed, "lang")
        self.relabel()
        self.say_language()
        # The figure in a column of its own: the control bar sticks to the screen's top while the figure
        # is in view, and goes with it (app/style/bar.css). The error of the step past the window shows
        # under the bars, and says so on the bar's line: nothing above the bars moves. The bar comes
        # before the text it writes: the text takes a line more every few steps, and under the buttons it
        # moves none of them, so Avanzar stays under a finger tapping it. The preview has the same order
        # (app/figure/snapshot.py).
        self.figure = pn.Column(
            self.controls,
            self.controls.more,
            self.text,
            self.grid,
            self.reads,
            self.bars,
            self.error,
            self.readouts,
            self.clock,
            sizing_mode="stretch_width",
            margin=0,
        )
        self.layout = pn.Column(
            self.header,
            self.notices,
            self.figure,
            self.advanced,
            self.table,
            self.more_heading,
            *[s.card for s in self.sections],
            self.a11y,
            self.sandbox,
            self.state,
            sizing_mode="stretch_width",
            max_width=1400,
            margin=(0, 8),
        )

    def publish_state(self, weights: bool = False) -> None:
        self.state.redraw(weights=weights)

    def relabel(self):
        self.more_heading.object = f"<h2>{esc(self.tr('more_heading'))}</h2>"

    def _language_changed(self, _event):
        """The page's own labels at once, <html lang> once every part and section has its new labels (on a
        shared server they take turns: Session.in_turns)."""
        self.relabel()
        self.session.in_turns(self.say_language)

    def say_language(self):
        self.a11y.lang = self.lang

    def __panel__(self):
        return self.layout
