"""Accessibility: the design every widget gets, and a small browser-side helper.

`AccessibleDesign` adds app/components/a11y.css to every widget (a focus ring that shows, labels that wrap).
`A11y` (its scripts in app/components/a11y.js) is the polite live region, kept outside any closed section:
one element whose text changes, so screen readers announce each step; it keeps <html lang> in
the page's language, reports `prefers-reduced-motion` and when the page has drawn an animation's
step (`beat`, `shown`), and listens to the keyboard, never for a
key the focused control needs itself (typing in a field, Space on a button, arrows on a radio
or a slider). Works the same under `panel serve` and Pyodide.
"""

from __future__ import annotations

import panel as pn
import param
from panel.reactive import ReactiveHTML
from panel.theme import Native
from panel.theme.base import Inherit
from panel.widgets.base import Widget

from .files import scripts, stylesheet, template

A11Y_CSS = stylesheet("a11y")


class AccessibleDesign(Native):
    """Panel's native look, plus app/components/a11y.css on every widget: a visible focus ring, wrapping labels."""

    modifiers = {Widget: {"stylesheets": [Inherit, A11Y_CSS]}}


def use_accessible_design() -> None:
    """Every component made from now on (in this session) gets AccessibleDesign."""
    pn.config.design = AccessibleDesign


class A11y(ReactiveHTML):
    message = param.String(default="", doc="What the live region says now.")
    command = param.String(default="", doc="Last keyboard command, as 'name:time:random'.")
    reduced_motion = param.Boolean(default=False, doc="The reader prefers reduced motion.")
    lang = param.String(default="es", doc="The page's language, on <html lang> (screen readers' voice).")
    theme = param.Selector(
        default="auto", objects=["auto", "light", "dark"], doc="The URL's theme, on <html data-kv-theme> (app/style)."
    )
    page_state = param.Dict(
        default={},
        doc="query: the URL query of the current state (a reload keeps it); "
        "weights: a checksum of the model's weights (tests); "
        "progress: the reader's milestones and quiz (app/state/progress.py).",
    )

    beat = param.Integer(
        default=0,
        doc="Bumped after each step of the figure's animation: the page answers with `shown` once it has drawn it.",
    )
    shown = param.Integer(
        default=0, bounds=(0, 2**31), doc="The last beat the page has drawn (the animation's next step waits for it)."
    )

    _from_browser = ("command", "reduced_motion", "shown")  # app/intake.py
    _template = template("a11y")
    _scripts = scripts("a11y")
    _stylesheets = [A11Y_CSS]
