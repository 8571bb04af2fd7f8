"""Every number the page writes, as its language writes it: the figure and every section below it, opened
and stepped, in each catalog's language. No ordinary space inside a number (es groups thousands with a
narrow no-break space, which does not break across lines) or before a percent sign (es and pt put a
no-break space there, en none); es, which keeps the course's decimal point, writes no zeros after the
point's last significant digit (8.5, not 8.500, which a reader in Spain takes for eight thousand five
hundred)."""

import html
import re

import panel as pn
import pytest
from bokeh.models import ColumnDataSource

from app.i18n import LANGS, NARROW_NBSP, num, number_style, sci
from app.main import create_view
from app.state.explorer import Measure
from model.timing import Comparison

TAG = re.compile(r"<[^>]+>")
GROUPED_WITH_A_SPACE = re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d])")  # 98 304 (not "Llama 2 70B")
SPACE_BEFORE_PERCENT = re.compile(r"\d %")
TRAILING_ZERO = re.compile(r"(?<![\d.])\d+\.\d*0(?![\d.])")  # 8.500, 32.0 (not 3.11.0, a version)
PERCENT_AS_WRITTEN = {"en": re.compile(r"\d[\u00a0\u202f ]%"), "es": re.compile(r"\d%"), "pt": re.compile(r"\d%")}


def shown(layout) -> list[str]:
    """Every text a layout shows: its HTML panes (as text), its widgets' names and options, and the
    strings its Bokeh figures carry (hover texts, labels)."""
    out = []
    for obj in layout.select():
        o = getattr(obj, "object", None)
        if isinstance(o, str):
            out.append(html.unescape(TAG.sub("\n", o)))
        if isinstance(obj, pn.widgets.Widget):
            out.append(str(obj.name))
            out += [str(x) for x in (getattr(obj, "options", None) or [])]
        if isinstance(obj, pn.pane.Bokeh) and o is not None:
            for source in o.select(ColumnDataSource):
                out += [x for column in source.data.values() for x in column if isinstance(x, str)]
    return out


def page_texts(lang: str) -> dict[str, list[str]]:
    """The figure after a few steps, with its data table open (and clock times in it), and every section
    opened (a stepped one stepped a few times): {where: texts}."""
    v = create_view(f"?lang={lang}&t=12")
    for _ in range(3):
        v.controls.do("step")
    for t, (a, b) in {13: (0.00120, 0.0305), 14: (0.000012, 1.5)}.items():
        v.ex.measures[t] = Measure(clock=Comparison(a, b, b / a, b / a, b / a, 7))
    v.table.layout.collapsed = False
    v.table.redraw()
    texts = {}
    for s in v.sections:
        s.ensure_built()
        for _ in range(3 if hasattr(s, "stepper") else 0):
            s.step()
        texts[s.key] = shown(s.card.layout)
    texts["figure"] = [t for t in shown(v.layout) if not any(t in ts for ts in texts.values())]
    return texts


@pytest.mark.parametrize("lang", LANGS)
def test_every_number_is_written_as_its_language_writes_it(lang):
    texts = page_texts(lang)
    assert set(texts) > {"figure", "quantized", "paged", "timing"}
    rules = {"space inside a number": GROUPED_WITH_A_SPACE, "space before %": SPACE_BEFORE_PERCENT}
    rules["% not as the language writes it"] = PERCENT_AS_WRITTEN[lang]
    if lang == "es":
        rules["zero after the point"] = TRAILING_ZERO
    bad = [
        f"{where}, {rule}: …{t[max(0, m.start() - 40) : m.end() + 20]}…"
        for where, ts in texts.items()
        for t in ts
        for rule, rx in rules.items()
        for m in rx.finditer(t)
    ]
    assert not bad, "\n".join(bad)
    said = "\n".join(texts["quantized"])
    percent = {"es": "\u00a0%", "pt": "\u00a0%", "en": "%"}[lang]
    assert re.search(rf"\d{percent}\)", said)  # the agreement in the table, with the language's percent
    assert num(136_448, lang) in said  # the model's parameters, from the model


def test_spanish_numbers_end_at_their_last_significant_digit():
    assert [num(x, "es", 3) for x in (32, 8.5, 4.1875, 0.001, 0.0)] == ["32", "8.5", "4.188", "0.001", "0"]
    assert num(98_304, "es") == f"98{NARROW_NBSP}304" and num(12_345.6, "es", 2) == f"12{NARROW_NBSP}345.6"
    assert num(8.5, "en", 3) == "8.500" and num(8.5, "pt", 3) == "8,500"  # the others keep their digits
    assert sci(4.0e-15, "es") == "4e-15" and sci(4.44e-15, "es") == "4.4e-15" and sci(4.0e-15, "pt") == "4,0e-15"


def test_the_quantized_sections_counts_are_the_models_shown():
    """With 2 K/V heads the section quantizes that model: its parameters, not the lesson's model's."""
    v = create_view("?lang=es")
    s = next(x for x in v.sections if x.key == "quantized")
    s.ensure_built()
    assert f"{num(98_304, 'es')} de sus {num(136_448, 'es')} parámetros" in s.intro.object
    v.session.settings.kv_heads = 2
    assert f"{num(90_112, 'es')} de sus {num(128_256, 'es')} parámetros" in s.intro.object


@pytest.mark.parametrize("lang", LANGS)
def test_a_slider_writes_its_value_as_num_does(lang):
    """The top-p slider's value is written by the browser (app/components/range.js: toFixed, then the zeros
    dropped when `trim`, then the point): with number_style it is num's text at every position of its range."""
    style = number_style(lang)
    for i in range(1, 21):
        v = round(i * 0.05, 2)
        shown = f"{v:.2f}"
        shown = f"{float(shown):g}" if style["trim"] else shown  # JavaScript's String(Number(s))
        assert shown.replace(".", style["point"]) == num(v, lang, 2), v
