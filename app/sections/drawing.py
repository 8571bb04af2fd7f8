"""What the sections draw alike: tables of measurements, plots of a few series, grids of cells
(conversations' slots, caches' positions), legends in words. Bokeh models only (no bokeh.plotting
at the page's start-up: it comes with the first section that plots)."""

from __future__ import annotations

import math

from bokeh.models import ColumnDataSource, FixedTicker, HoverTool, Legend, LegendItem, Range1d, Rect

from ..figure.parts import esc, scroll_region
from ..style import PALETTE, canvas_look, position_figure, show_token


def token_text(vocab, ids) -> str:
    return "".join(show_token(vocab[i]) for i in ids)


def swatches(tr, items) -> str:
    """A legend in words: (css class, message key) pairs, each with its swatch."""
    return " ".join(f"<span class='key'><span class='sw {cls}'></span>{esc(tr(key))}</span>" for cls, key in items)


CELL_COLUMNS = ("x", "y", "color", "line", "what", "tok")


def cell_figure(n_ctx: int, height: int, y_range, hatch: str):
    """A figure of cells over positions (or slots) 1..n_ctx, plain or hatched (two glyphs: a hatch
    pattern per cell makes every redraw far slower). -> (figure, plain cells' source, hatched cells')."""
    f = position_figure(n_ctx, height, y_range=y_range)
    f.yaxis.ticker = FixedTicker(ticks=[])  # one tick per row, set by the section
    sources = [ColumnDataSource({k: [] for k in CELL_COLUMNS}) for _ in range(2)]
    style = dict(x="x", y="y", width=0.9, height=0.8, fill_color="color", line_color="line")
    plain = f.add_glyph(sources[0], Rect(**style))
    hatched = f.add_glyph(
        sources[1], Rect(hatch_pattern=hatch, hatch_color=PALETTE["faint"], hatch_alpha=0.6, hatch_scale=5, **style)
    )
    f.add_tools(HoverTool(renderers=[plain, hatched], tooltips="@what «@tok»"))
    return f, sources[0], sources[1]


def cell_columns(cells) -> tuple[dict, dict]:
    """Cells as (x, y, colour, line colour, hatched, hover text, token) -> the plain ones' columns
    and the hatched ones' (cell_figure's two sources)."""
    out = ({k: [] for k in CELL_COLUMNS}, {k: [] for k in CELL_COLUMNS})
    for x, y, color, line, hatched, what, tok in cells:
        columns = out[bool(hatched)]
        for k, v in zip(CELL_COLUMNS, (x, y, color, line, what, tok)):
            columns[k].append(v)
    return out


def series_figure(x_range, ticks, styles: dict, tooltips, **kw):
    """A plot of a few series over the same x, each a line with its markers and a legend entry, hidden
    until there is something to show. styles: key -> (colour, marker, dash).
    -> (figure, {key: (source with x and y, legend item)})."""
    from bokeh.plotting import figure  # with the section: not at the page's start-up

    kw.setdefault("height", 300)
    f = figure(
        sizing_mode="stretch_width",
        x_range=x_range,
        y_range=Range1d(0, 1),  # set with the data (fit_y): an automatic range over no data is -inf in BokehJS
        toolbar_location=None,
        tools="",
        min_border_left=10,
        visible=False,
        **kw,
    )
    canvas_look(f)
    f.xaxis.ticker = FixedTicker(ticks=list(ticks))
    series = {}
    for key, (color, marker, dash) in styles.items():
        src = ColumnDataSource({"x": [], "y": []})
        line = f.line("x", "y", source=src, color=color, line_width=2, line_dash=dash)
        dots = f.scatter("x", "y", source=src, marker=marker, size=8, color=color)
        series[key] = (src, LegendItem(label="", renderers=[line, dots]))
    f.add_layout(Legend(items=[item for _, item in series.values()], border_line_alpha=0), "below")  # off the data
    f.add_tools(HoverTool(tooltips=tooltips))
    f.outline_line_color = None
    return f, series


def fit_y(fig, sources, column: str = "y") -> None:
    """A figure's y axis from 0 to its sources' largest value and a tenth more, as BokehJS's automatic
    range pads it; 0 to 1 with no data yet."""
    top = max((y for src in sources for y in src.data[column] if math.isfinite(y)), default=0)
    fig.y_range.end = top * 1.1 if top > 0 else 1


def lab_table(tr, label: str, head: list[str], rows: list[list[str]], testid: str) -> str:
    """A table of cells (HTML) under the headings' message keys, in a scroll region named `label`
    (as every wide table of the page: parts.scroll_region)."""
    th = "".join(f"<th>{esc(tr(k))}</th>" for k in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return scroll_region(
        label, f"<table class='data' data-testid='{testid}'><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"
    )
