"""A number the reader types, written and read the way the page's language writes numbers.

Bokeh's numeric inputs (behind Panel's IntInput and FloatInput) show `str(value)` or a
numbro format, and their input filter refuses any character but digits and one decimal
point: they cannot show «4,125» or «7 000 000 000» and still be edited. So a number is a
TextInput: app/i18n's plain_number() writes it, parse_number() reads it.
"""

from __future__ import annotations

import panel as pn

from ..i18n import parse_number, plain_number

# Bokeh keeps a widget's title on one line; a long one ran into the next widget.
WRAP_LABEL = ".bk-input-group { white-space: normal; } label { overflow-wrap: anywhere; }"
FIELD_WIDTH = 180


class NumberField:
    """One number in [lo, hi] (whole if `integer`): `value` is the last valid one the reader typed
    or the page set, None while the text is not such a number."""

    def __init__(self, key: str, lo: float, hi: float, integer: bool = False, digits: int = 3):
        self.key, self.lo, self.hi, self.integer, self.digits = key, lo, hi, integer, digits
        self.widget = pn.widgets.TextInput(width=FIELD_WIDTH, stylesheets=[WRAP_LABEL])
        self.value: float | int | None = None

    def show(self, value, lang: str) -> None:
        """Set the number (and the text that writes it in `lang`)."""
        self.value = value
        self.widget.value = plain_number(value, lang, 0 if self.integer else self.digits)

    def read(self, lang: str):
        """The number the text says, or None if it says none in [lo, hi]."""
        x = parse_number(self.widget.value, lang)
        if x is None or not self.lo <= x <= self.hi or (self.integer and x != int(x)):
            self.value = None
        else:
            self.value = int(x) if self.integer else x
        return self.value

    def expected(self, tr, lang: str) -> str:
        """What the field takes, in words: 'un número entero de 1 a 512'."""
        return tr(
            "ctx_expect_int" if self.integer else "ctx_expect_num",
            lo=plain_number(self.lo, lang),
            hi=plain_number(self.hi, lang),
        )
