"""What every section below the figure stands on: one base, in three kinds.

- `Section`: a collapsible card (its title the catalogs' `title_key`) whose widgets are built the
  first time it opens (the page starts faster and lighter), relabelled when the language changes.
  A section's `build()` makes its widgets, `label()` writes every text in the current language;
  `pane()` is an HTML pane with the page's styles and the section's own (its folder's style.css).
- `MeasuringSection`: a section that measures in the reader's browser: one run at a time, with its
  progress, cancellable between parts (`new_lab()`: a stepwise.Stepwise; `render()`, `status_line()`).
- `SteppedSection`: a measuring section with something to step through too (`make()`, `draw()`,
  `draw_state()`), with the figure's own Step / Animate / Reset row (`Stepper`).

Each section is a folder of app/sections/ (app/sections/__init__.py lists them in the page's order).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import panel as pn

from ..components.widgets import Disclosure
from ..figure.parts import Animation, OnSession, esc, off_the_loop
from ..figure.text import error_html
from ..style import CSS, read_css


def folder_css(module_file: str) -> str:
    """The page's styles and a section's own: style.css in the folder of `module_file`, if any."""
    own = Path(module_file).with_name("style.css")
    return CSS + (read_css(own) if own.is_file() else "")


class Section(OnSession):
    """A collapsible card whose widgets are built the first time it opens; see the module's docstring.
    `key` is the section's folder (and its tests' handle), `title_key` its title's key; `css` the page's
    styles and its folder's style.css, given to every section defined in a folder that has one."""

    key = ""
    title_key = ""
    css = CSS

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "css" not in cls.__dict__:
            cls.css = folder_css(sys.modules[cls.__module__].__file__)

    def __init__(self, view):
        self.view = view  # the Explorable (app/page.py): its session, sandbox, language
        self.session = view.session
        self.card = Disclosure()
        self.built = False
        self.card.param.watch(lambda e: e.new or self.ensure_built(), "collapsed")
        self.session.settings.param.watch(lambda _e: self.session.in_turns(self.relabel), "lang")
        self.apply_language()

    # Both go through the session's dispatch (app/state/session.py): their changes reach the browser
    # in one message, in order, so a new figure arrives before the labels that name its models.
    def relabel(self):
        with self.session.dispatch():
            self.apply_language()

    def ensure_built(self):
        if not self.built:
            self.built = True
            with self.session.dispatch():
                self.build()
                self.apply_language()

    def build(self):
        raise NotImplementedError

    def pane(self, **kw):
        return pn.pane.HTML("", stylesheets=[self.css], sizing_mode="stretch_width", **kw)

    def control_row(self, *widgets):
        """`widgets` then the section's Step / Animate / Reset row (self.stepper), bottoms aligned, wrapping
        on a narrow screen."""
        return pn.FlexBox(
            *widgets, self.stepper.row, align_items="flex-end", gap="8px 16px", sizing_mode="stretch_width"
        )

    def draw_all(self, *draws) -> None:
        """Each of `draws` in turn, once the section is built, as one change for the browser (the last
        is what a test or a screen reader waits for)."""
        if self.built:
            with pn.io.unlocked():
                for draw in draws:
                    draw()

    def apply_language(self):
        self.card.title = self.tr(self.title_key)
        if self.built:
            self.label()

    def label(self):
        """Every label of the built widgets, in the current language."""


class MeasuringSection(Section):
    """A section that measures in the reader's browser: one run at a time, with its progress, and
    cancellable between parts. `new_lab()` makes the measurement (an app/sections/stepwise.py Stepwise);
    `render()` shows it; `runs` counts the runs started (tests wait for theirs)."""

    # On a server all readers share, a run's table is drawn again at most this often (seconds) while it
    # measures, and at its end; the progress bar moves at every part. On the reader's machine: every part.
    SHOWN_EVERY = 0.25

    def measure_controls(self):
        """The run and cancel buttons and the progress bar, in one row."""
        self.lab = None
        self.runs = 0
        self.run_button = pn.widgets.Button(color="primary", width=220)
        self.cancel_button = pn.widgets.Button(color="default", width=140, disabled=True)
        self.progress = pn.indicators.Progress(value=0, max=10, width=260, bar_color="success", visible=False)
        self.run_button.on_click(self.run)
        self.cancel_button.on_click(lambda _e: self.lab and self.lab.cancel())
        return pn.FlexBox(self.run_button, self.cancel_button, self.progress, align_items="center", gap="10px")

    def new_lab(self):
        raise NotImplementedError

    def render(self):
        """The measurement so far (its table, plot and sentences), not its status line."""
        raise NotImplementedError

    # the status line's texts: running, done and cancelled (a section may name its own)
    running_key, done_key, cancelled_key = "lab_running", "lab_done", "lab_cancelled"

    def lab_contents(self, controls) -> list:
        """The measurement's part of a card, top to bottom: its intro, its controls (measure_controls()),
        the status line, the table, the plot and the sentences written from them."""
        return [self.lab_intro, controls, self.status, self.table, self.plot, self.explain]

    def status_values(self) -> dict:
        """What the status line's texts are filled with (parts done, of how many, samples each)."""
        lab = self.lab
        return {"done": lab.done, "total": lab.total, "n": lab.total, "s": lab.samples}

    def status_line(self) -> str:
        """The current run's state, in words and for tests (data-testid '<key>-status')."""
        lab = self.lab
        key = (self.cancelled_key if lab.cancelled else self.done_key) if lab.finished else self.running_key
        return self.status_html(f"{self.key}-status", self.tr(key, **self.status_values()))

    def show(self):
        """The measurement, then its status line, last: whoever waits for the status (a test, a
        screen reader's live region) finds the rest drawn (the static site sends each change as a
        message of its own)."""
        self.render()
        self.status.object = "" if self.lab is None else self.status_line()

    async def run(self, _event=None):
        if self.lab is not None and not self.lab.finished:
            return  # already running: one run at a time
        self.lab = lab = self.new_lab()
        self.runs += 1
        # changes made from a coroutine reach the browser through pn.io.unlocked (no-op under Pyodide)
        with pn.io.unlocked():
            self.run_button.disabled, self.cancel_button.disabled = True, False
            self.progress.max, self.progress.value, self.progress.visible = lab.total, 0, True
            self.show()
        shown = time.monotonic()
        try:
            while await off_the_loop(lab.advance):
                with pn.io.unlocked():
                    self.progress.value = lab.done
                    if time.monotonic() - shown >= (self.SHOWN_EVERY if self.session.on_server else 0):
                        self.show()
                        shown = time.monotonic()
                await asyncio.sleep(0.01)  # the browser's messages (Cancel) get in here
        finally:
            with pn.io.unlocked():
                self.run_button.disabled, self.cancel_button.disabled = False, True
                self.progress.visible = False
                self.show()

    def status_html(self, testid: str, text: str) -> str:
        """The run's state, for the reader and for tests (which run, running or done)."""
        state = "done" if self.lab.finished else "running"
        return f"<p role='status' data-testid='{testid}' data-run='{self.runs}' data-state='{state}'>{esc(text)}</p>"


class Stepper:
    """Step, Animate and Reset for a section, animated as the figure's Controls is (Animation);
    `step()` returns False to stop the animation."""

    def __init__(self, step, reset, period):
        self.step, self.reset = step, reset
        self.animation = Animation(self.tick, period)
        self.step_button = pn.widgets.Button(color="primary", width=190)
        self.play_button = pn.widgets.Toggle(width=190)
        self.reset_button = pn.widgets.Button(width=190)
        self.names = ("", "")
        self.step_button.on_click(lambda _e: self.step())
        self.reset_button.on_click(lambda _e: self.restart())
        self.play_button.param.watch(lambda e: self.play(e.new), "value")
        self.row = pn.FlexBox(
            self.step_button,
            self.play_button,
            self.reset_button,
            align_items="center",
            gap="8px",
            sizing_mode="stretch_width",
        )

    def label(self, step: str, play: str, pause: str, reset: str):
        self.step_button.name, self.reset_button.name, self.names = step, reset, (play, pause)
        self.play_button.name = self.names[self.play_button.value]

    def tick(self):
        if not self.step():
            self.play_button.value = False

    def play(self, on: bool):
        self.play_button.name = self.names[on]
        self.animation.run(on)

    def restart(self):
        self.play_button.value = False
        self.reset()


ERROR_EXPLAIN = {"batch": "batch_error_explain", "speculative": "spec_error_explain"}  # by the section's key


class SteppedSection(MeasuringSection):
    """A section with something to step through as well as to measure: `make()` builds it (again on
    every reset), its `advance()` takes one step, `draw()` shows it and `error` its error; every
    redraw goes through pn.io.unlocked (steps come from clicks and the animation's periodic callback)."""

    current = None

    def make(self):
        raise NotImplementedError

    def draw(self):
        raise NotImplementedError

    def draw_state(self):
        """The line that says where the stepping is, drawn last (MeasuringSection.show)."""
        raise NotImplementedError

    def reset(self):
        self.current = self.make()
        self.redraw()

    def step(self) -> bool:
        ok = self.current.advance()
        self.redraw()
        return ok

    def redraw(self):
        if self.current is None:
            return
        with pn.io.unlocked():
            self.draw()
            e = self.current.error  # the position table's IndexError past the window
            self.error.object = (
                "" if e is None else error_html(self.tr, e, self.view.n, f"{self.key}-error", ERROR_EXPLAIN[self.key])
            )
            self.draw_state()
