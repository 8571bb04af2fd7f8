"""The explorable's look in one place: the palette by role, light and dark, the stylesheet, and what every figure shares.

Colours are colour-blind safe (Okabe-Ito) and always come with a pattern or a label. Every colour
of the page is a role of PALETTE (light) and of DARK (the same roles on a dark page), defined once
here: the figures read PALETTE (and the names below), every stylesheet reads the same roles as CSS
custom properties, `var(--kv-<role>)`, which `theme_css()` writes once for the whole document (the
page's shell at build time, the page Panel's server sends): light by default, dark when the reader's
system prefers it (`prefers-color-scheme`) or the URL says `theme=dark`, light again for
`theme=light` (`<html data-kv-theme>`). The components' shadow roots inherit them; a stylesheet
never writes a colour by value (tests/test_structure.py).

The figures are drawn on canvases, in PALETTE's colours, on a transparent background. On a dark page
every canvas (and what stands for one in HTML: a colour scale, the preview's figures) is shown
through CANVAS_FILTER, which turns its lightness over and keeps its hues: white is the page's dark,
ink is light, the cache's green stays green, a colour scale runs from dark (nothing) to bright
(much). One drawing, two looks, nothing recoloured in Python.
"""

from __future__ import annotations

from pathlib import Path

from bokeh.models import DataRange1d, FixedTicker, Grid, LinearAxis, Plot, Range1d
from bokeh.palettes import PuOr11

HERE = Path(__file__).resolve().parent

PALETTE = {
    # the lesson's two ways
    "cache": "#009E73",  # with the cache (Okabe-Ito bluish green): bars, marks
    "cache-text": "#00694d",  # the same green as text or a line on white (AA contrast)
    "cache-deep": "#00513b",  # its outlines, a pressed button
    "cache-soft": "#e6f6f0",  # a green tint behind text (an accepted token, a right answer)
    "full": "#6f6f6f",  # without the cache
    "full-text": "#4a4a4a",  # the same grey as text or a line on white
    # the text
    "ink": "#1a1a1a",  # text, outlines of what matters
    "text": "#333333",  # body text of explanations
    "text-soft": "#444444",  # captions, legends
    "muted": "#666666",  # secondary text (AA on white and on `surface-2`)
    "faint": "#8a8a8a",  # marks that must not draw the eye: a space's dot, hatching
    # highlights and the beyond-the-lesson roles (Okabe-Ito)
    "highlight": "#F0E442",  # the current token (yellow)
    "highlight-soft": "#fff7b3",  # the current row of a table
    "draft": "#E69F00",  # the speculative draft's (orange)
    "draft-deep": "#8a5d00",
    "draft-soft": "#fff3d6",
    "target": "#0072B2",  # the mini-GPT's check (blue); the sliders' accent
    "target-deep": "#003f63",
    "target-soft": "#e3f0fa",
    "sky": "#56B4E9",  # a third series (sky blue)
    "cut": "#D55E00",  # rejected, cut off (vermillion)
    "cut-soft": "#fdebe1",
    # states
    "focus": "#0b5cad",  # the focus ring, links
    "focus-soft": "#e7f0fb",
    "error": "#b00020",  # the lesson's IndexError, a failure
    "error-soft": "#fff4f4",
    "danger": "#b02a37",
    "danger-deep": "#8f1f2b",
    "warn": "#8a5a00",
    "warn-deep": "#6e4800",
    "warn-soft": "#fff8e6",  # a wrong answer, "change 64 to 65"
    "notice": "#b58900",
    "notice-soft": "#fffbe6",  # a URL parameter ignored
    # surfaces and lines
    "surface": "#ffffff",  # the page, cards
    "surface-2": "#f4f4f4",  # code, the prompt's tokens, empty bands, a hovered button
    "button": "#f6f8fa",
    "button-hover": "#eaeef2",  # the sections' disclosure buttons
    "button-line": "#c4cbd3",
    "button-line-hover": "#8c959f",
    "border": "#d0d0d0",  # cards
    "rule": "#dddddd",  # table rows, code blocks
    "rule-soft": "#e3e3e3",  # lighter frames, grid lines of a preview
    "grid-empty": "#eeeeee",  # a position not computed yet
    "line": "#cfcfcf",  # outlines of empty cells, the grey ramp's hatch
    "mid": "#bdbdbd",  # a token box, the prompt's slots
    "untested": "#9a9a9a",  # a cell's outline, an untested token
    "input-line": "#bbbbbd",  # a field's border (Bokeh's own)
    "scroll-shadow": "#00000047",  # the shade at the edge of a box that scrolls sideways: there is more
}
DARK = {
    "cache": "#009E73",
    "cache-text": "#4fd1a5",
    "cache-deep": "#8fe0c4",
    "cache-soft": "#143a2f",
    "full": "#8f8f8f",
    "full-text": "#b8b8b8",
    "ink": "#f2f2f2",
    "text": "#dedede",
    "text-soft": "#cfcfcf",
    "muted": "#ababab",
    "faint": "#858585",
    "highlight": "#4a4200",
    "highlight-soft": "#3b3712",
    "draft": "#E69F00",
    "draft-deep": "#f2bd55",
    "draft-soft": "#3d2f0f",
    "target": "#4da3db",
    "target-deep": "#a4d3f2",
    "target-soft": "#15293a",
    "sky": "#56B4E9",
    "cut": "#f0813a",
    "cut-soft": "#3f2216",
    "focus": "#7ab8f7",
    "focus-soft": "#18293f",
    "error": "#ff7a8a",
    "error-soft": "#3b171c",
    "danger": "#f08c96",
    "danger-deep": "#f7b7bd",
    "warn": "#e3ad4f",
    "warn-deep": "#f2cc8c",
    "warn-soft": "#33290f",
    "notice": "#d9aa22",
    "notice-soft": "#2f2a12",
    "surface": "#1b1d23",
    "surface-2": "#272a32",
    "button": "#2b2f38",
    "button-hover": "#363b46",
    "button-line": "#5d6572",
    "button-line-hover": "#8d96a3",
    "border": "#4a4f5a",
    "rule": "#3d414a",
    "rule-soft": "#32363e",
    "grid-empty": "#2c2f36",
    "line": "#4d515a",
    "mid": "#60656f",
    "untested": "#7d828b",
    "input-line": "#6d7480",
    "scroll-shadow": "#000000b3",
}
CANVAS_FILTER = "invert(1) hue-rotate(180deg)"  # a canvas on a dark page: lightness turned over, hues kept
GREEN, GREY, INK = PALETTE["cache"], PALETTE["full"], PALETTE["ink"]
HIGHLIGHT, ORANGE, BLUE, SKY, VERMILLION = (PALETTE[k] for k in ("highlight", "draft", "target", "sky", "cut"))
CELL_PALETTE = list(PuOr11)  # the cache's numbers, -1 to 1 (a mapper's low end first): purple negative, orange positive


def palette_css(palette: dict = PALETTE, selector: str = ":root", extra: str = "") -> str:
    """The palette as CSS custom properties, --kv-<role>, on `selector`."""
    return f"{selector} {{ " + " ".join(f"--kv-{role}: {color};" for role, color in palette.items()) + extra + " }\n"


def theme_css() -> str:
    """The document's palette: light, dark by the reader's system unless the URL said light, dark
    when the URL said so (<html data-kv-theme>). Written once per page (the shell's stylesheet, the
    served page's head); every shadow root inherits it."""
    light = " color-scheme: light; --kv-canvas-filter: none;"
    dark = f" color-scheme: dark; --kv-canvas-filter: {CANVAS_FILTER};"
    return (
        palette_css(PALETTE, ":root", light)
        + "@media (prefers-color-scheme: dark) { "
        + palette_css(DARK, ":root:not([data-kv-theme=light])", dark)
        + "}\n"
        + palette_css(DARK, ":root[data-kv-theme=dark]", dark)
    )


# What stands for a canvas in HTML (a colour scale, the preview's figures) is drawn in the light
# palette and shown through the same filter as the canvases, so its colours are theirs.
CANVAS_LIKE_CSS = palette_css(PALETTE, ".scale-bar, .kv-canvas", " filter: var(--kv-canvas-filter, none);")
# every figure's own stylesheet (Bokeh's `stylesheets`, in its shadow root)
CANVAS_CSS = ":host { filter: var(--kv-canvas-filter, none); }"

# A phone's page: tables tighten, and the cache grid shows its newest positions zoomed in
# (app/figure/grid.py ZOOM: 64 positions in a phone's plot are 3 to 4 px each). The live grid asks
# the browser this media query (its CustomJS), the stylesheets name it `@media (--kv-phone)`:
# read_css() writes it in, so the two cannot disagree.
PHONE_MEDIA = "(max-width: 520px)"


def read_css(path: Path) -> str:
    """A stylesheet of the page, its named media query written in."""
    return path.read_text(encoding="utf-8").replace("@media (--kv-phone)", f"@media {PHONE_MEDIA}")


CSS = CANVAS_LIKE_CSS + read_css(HERE / "style.css")
MODE_SWITCH_CSS = read_css(HERE / "mode_switch.css")
BAR_CSS = read_css(HERE / "bar.css")


def canvas_look(f):
    """A figure's canvas as the theme wants it: transparent (the page's surface shows), shown through
    the theme's filter. -> the figure."""
    f.background_fill_color = None
    f.border_fill_color = None
    f.stylesheets = [*f.stylesheets, CANVAS_CSS]
    return f


def ticks(n_ctx: int) -> list[int]:
    """Position ticks for an axis of n_ctx positions: 1, then every eighth of the window."""
    step = max(1, n_ctx // 8)
    return [1] + list(range(step, n_ctx + 1, step))


def zoom_ticks(n_ctx: int) -> list[int]:
    """The ticks of a zoomed position axis (a few positions shown): 1, then every fourth."""
    return [1] + list(range(4, n_ctx + 1, 4))


FRAME_LEFT = 76  # px left of every figure's frame: their position axes line up, column under column


def position_figure(n_ctx: int, height: int, y_range=None, grid: str = "", **kw) -> Plot:
    """A plot over positions 1..n_ctx, with the page's plain look (no toolbar, no outline, no title),
    an axis below and one on the left, and the grid lines `grid` names ("x", "y", "xy").

    Made of Bokeh's models, not bokeh.plotting's figure(): importing bokeh.plotting would add to the
    page's start-up in Pyodide, and figure() adds a title and a second, faded copy of every
    glyph that the page never shows. Glyphs go in with plot.add_glyph(source, glyph)."""
    f = Plot(
        height=height,
        sizing_mode="stretch_width",
        x_range=Range1d(0.5, n_ctx + 0.5),
        y_range=y_range if y_range is not None else DataRange1d(),
        toolbar_location=None,
        title=None,
        min_border_left=FRAME_LEFT,
        min_border_right=12,
        outline_line_color=None,
        **kw,
    )
    canvas_look(f)
    xaxis, yaxis = LinearAxis(ticker=FixedTicker(ticks=ticks(n_ctx))), LinearAxis()
    f.add_layout(xaxis, "below")
    f.add_layout(yaxis, "left")
    for dim, axis in enumerate((xaxis, yaxis)):
        if "xy"[dim] in grid:
            f.add_layout(Grid(dimension=dim, axis=axis), "center")
    return f


def set_ticks(axis, values, labels=None) -> None:
    """The axis' ticks at `values` (named by `labels`), on the axis' own FixedTicker: a new ticker model
    would make Bokeh walk every model of the document again, as many times as it is set."""
    if isinstance(axis.ticker, FixedTicker):
        axis.ticker.ticks = list(values)
    else:
        axis.ticker = FixedTicker(ticks=list(values))
    if labels is not None:
        axis.major_label_overrides = labels


def show_token(s: str) -> str:
    """A token as text to show alone: a newline is drawn as ⏎."""
    return s.replace("\n", "⏎")
