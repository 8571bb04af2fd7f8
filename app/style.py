"""The explorable's look in one place: the palette, the stylesheet, and what every figure shares.

Colours are colour-blind safe (Okabe-Ito) and always come with a pattern or a label. The
stylesheet is app/style.css; its custom properties (--green, ...) are the palette below.
"""
from __future__ import annotations

from pathlib import Path

from bokeh.models import DataRange1d, FixedTicker, Grid, LinearAxis, Plot, Range1d
from bokeh.palettes import PuOr11

HERE = Path(__file__).resolve().parent

GREEN = "#009E73"       # with the cache (Okabe-Ito bluish green)
GREY = "#6f6f6f"        # without it
INK = "#1a1a1a"
HIGHLIGHT = "#F0E442"   # the current token (Okabe-Ito yellow)
ORANGE = "#E69F00"      # the speculative draft's (Okabe-Ito orange)
BLUE = "#0072B2"        # the mini-GPT's check (Okabe-Ito blue)
SKY = "#56B4E9"         # Okabe-Ito sky blue
VERMILLION = "#D55E00"  # rejected, cut off (Okabe-Ito vermillion)
CELL_PALETTE = list(reversed(PuOr11))   # the cache's numbers: orange positive, purple negative

PALETTE_CSS = f":host, .kv-snap {{ --green: {GREEN}; --grey: {GREY}; --ink: {INK}; --highlight: {HIGHLIGHT}; }}\n"
CSS = PALETTE_CSS + (HERE / "style.css").read_text(encoding="utf-8")
MODE_SWITCH_CSS = (HERE / "mode_switch.css").read_text(encoding="utf-8")


def ticks(n_ctx: int) -> list[int]:
    """Position ticks for an axis of n_ctx positions: 1, then every eighth of the window."""
    step = max(1, n_ctx // 8)
    return [1] + list(range(step, n_ctx + 1, step))


FRAME_LEFT = 76          # px left of every figure's frame: their position axes line up, column under column


def position_figure(n_ctx: int, height: int, y_range=None, grid: str = "", **kw) -> Plot:
    """A plot over positions 1..n_ctx, with the page's plain look (no toolbar, no outline, no title),
    an axis below and one on the left, and the grid lines `grid` names ("x", "y", "xy").

    Made of Bokeh's models, not bokeh.plotting's figure(): importing bokeh.plotting cost the page's
    start-up about 0.2 s in Pyodide, and figure() adds a title and a second, faded copy of every
    glyph that the page never shows. Glyphs go in with plot.add_glyph(source, glyph)."""
    f = Plot(height=height, sizing_mode="stretch_width", x_range=Range1d(0.5, n_ctx + 0.5),
             y_range=y_range if y_range is not None else DataRange1d(), toolbar_location=None, title=None,
             min_border_left=FRAME_LEFT, min_border_right=12, outline_line_color=None, **kw)
    xaxis, yaxis = LinearAxis(ticker=FixedTicker(ticks=ticks(n_ctx))), LinearAxis()
    f.add_layout(xaxis, "below")
    f.add_layout(yaxis, "left")
    for dim, axis in enumerate((xaxis, yaxis)):
        if "xy"[dim] in grid:
            f.add_layout(Grid(dimension=dim, axis=axis), "center")
    return f


def show_token(s: str) -> str:
    """A token as text to show alone: a newline is drawn as ⏎."""
    return s.replace("\n", "⏎")
