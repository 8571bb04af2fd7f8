"""The page's own accessible widgets (ReactiveHTML; their markup, scripts and styles are the
files app/components/disclosure.*, app/components/range.* and app/components/widgets.css):

- `Disclosure`: a section that opens and closes: a heading with a real <button aria-expanded>
  and a visible focus ring, then its body. It stands where a `pn.Card` would (`collapsed`,
  `title`, `objects`), so code written for a card works with it.
- `RangeInput`: a native range input named by its label, linked both ways to a parameter.
"""

from __future__ import annotations

import panel as pn
import param
from panel.reactive import ReactiveHTML

from .files import scripts, stylesheet, template

WIDGETS_CSS = stylesheet("widgets")


class DisclosureButton(ReactiveHTML):
    expanded = param.Boolean(
        default=False,
        doc="Set by Python once the section is open (and built): then "
        "aria-expanded says so, with the content there to read.",
    )
    presses = param.Integer(default=0, bounds=(0, 2**31), doc="The reader pressed the button (click, Enter or Space).")
    label = param.String(default="")

    _from_browser = ("presses",)  # app/intake.py: the only parameter a browser may set
    _template = template("disclosure")
    _scripts = scripts("disclosure")
    _stylesheets = [WIDGETS_CSS]


class Disclosure(pn.viewable.Viewer):
    collapsed = param.Boolean(default=True, doc="Closed: only the heading shows.")
    title = param.String(default="")

    def __init__(self, *objects, margin=(6, 0), **params):
        super().__init__(**params)
        self.button = DisclosureButton(expanded=not self.collapsed, sizing_mode="stretch_width", margin=0)
        self.body = pn.Column(
            *objects,
            visible=not self.collapsed,
            sizing_mode="stretch_width",
            margin=0,
            css_classes=["kv-disclosure-body"],
            styles={
                "border": "1px solid var(--kv-button-line)",
                "border-top": "0",
                "padding": "6px 10px",
                "border-radius": "0 0 6px 6px",
                "box-sizing": "border-box",
            },
        )
        self.layout = pn.Column(self.button, self.body, sizing_mode="stretch_width", margin=margin)
        self.button.param.watch(lambda _e: setattr(self, "collapsed", not self.collapsed), "presses")
        # after every other watcher (a section builds its content in one): aria-expanded comes last
        self.param.watch(self._collapsed, "collapsed", precedence=10)
        self.param.watch(lambda e: setattr(self.button, "label", e.new), "title")
        self.button.label = self.title

    def _collapsed(self, event):
        self.button.expanded = not event.new
        self.body.visible = not event.new

    @property
    def objects(self):
        return self.body.objects

    @objects.setter
    def objects(self, objects):
        self.body.objects = objects

    def __panel__(self):
        return self.layout


class RangeInput(ReactiveHTML):
    value = param.Number(default=0)
    start = param.Number(default=0)
    end = param.Number(default=1)
    step = param.Number(default=1)
    digits = param.Integer(default=0, doc="Decimals shown beside the label.")
    point = param.String(default=".", doc="The decimal point shown (app/i18n number_style).")
    trim = param.Boolean(default=False, doc="Zeros after the last significant decimal dropped (0.9, not 0.90).")
    label = param.String(default="")

    _from_browser = ("value",)
    _template = template("range")
    _scripts = scripts("range")
    _stylesheets = [WIDGETS_CSS]

    @classmethod
    def linked(cls, parameter, digits: int = 0, **kw) -> RangeInput:
        """A range over a numeric parameter's bounds and step, linked both ways to it. The widget's
        value takes the parameter's bounds too: what a browser sends beyond them is refused
        (app/intake.py), from the same declaration that draws the slider."""
        owner, name = parameter.owner, parameter.name
        lo, hi = parameter.bounds
        kw.setdefault("margin", (5, 10))
        widget = cls(value=getattr(owner, name), start=lo, end=hi, step=parameter.step or 1, digits=digits, **kw)
        widget.param.value.bounds = (lo, hi)
        owner.param.watch(lambda e: setattr(widget, "value", e.new), name)
        kind = round if isinstance(parameter, param.Integer) else float
        widget.param.watch(lambda e: setattr(owner, name, kind(e.new)), "value")
        return declared(widget, parameter)


def declared(widget, parameter):
    """The parameter a widget's value goes to: a value from the browser must be one it takes (its type,
    bounds, choices), checked before it reaches the widget (app/intake.py)."""
    widget._browser_declares = {"value": parameter}
    return widget
