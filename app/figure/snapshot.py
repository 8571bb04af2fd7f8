"""The page's first paint: the explorable's initial state as plain HTML and CSS.

build.py writes it into index.html, so the reader sees the text, the empty
cache grid, the bars and the numbers before any script has run; the live
Panel document replaces it when Python is ready. Drawn from the same view the
app builds (its HTML panes verbatim, its grid and bars redrawn in CSS: one
column per position, one gradient stop per stored number), it costs the
browser a few milliseconds, where rendering a Bokeh document would take the
CPU that Pyodide's start needs.
"""

from __future__ import annotations

import html
import json
import math
from pathlib import Path

import numpy as np

from ..i18n import num, translator
from ..state.explorer import COMPUTED
from ..state.settings import MODES
from ..style import CELL_PALETTE, CSS, read_css, ticks, zoom_ticks
from .clock_plot import ClockPlot
from .grid import ROW_KEY, ZOOM, CacheGrid, computed_block, grid_rows, zoom_window
from .plots import CostBars
from .png import indexed_png
from .strip import STRIP_CSS

PALETTE = CELL_PALETTE
SNAP_CSS = (
    CSS.replace(":host,", "").replace(":host", ".kv-snap")
    + read_css(Path(__file__).resolve().parent / "snapshot.css")
    + STRIP_CSS
)


def color_indices(values) -> np.ndarray:
    """Palette index of each number (already divided by its row's scale), as the live grid's colour
    mapper does it: -1..1 in len(PALETTE) equal steps."""
    return np.clip(((np.asarray(values) + 1) / 2 * len(PALETTE)).astype(int), 0, len(PALETTE) - 1)


def grid_image(ex) -> bytes:
    """The cache grid of the explorer's text as a palette PNG: one pixel column per position, one
    band of d pixel rows per grid row (K and V of each block, top to bottom), each vector's first
    number at the bottom, as the live grid draws it. Every preview of this text shows the first t
    columns of this one image."""
    bands = []
    for block, kind in grid_rows(ex.cfg):
        scaled = ex.vectors(block, kind).T / ex.kv_scale[block, kind]  # (d, t)
        bands.append(color_indices(scaled)[::-1])
    pixels = np.concatenate(bands).astype(np.uint8)
    return indexed_png([row.tobytes() for row in pixels], PALETTE)


def _x(pos: float, n: int) -> str:
    return f"{(pos - 0.5) / n * 100:.3f}%"


def nice_step(top: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) for about five ticks up to `top`."""
    raw = top / 5
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _marks(states, n: int) -> str:
    """What this step computed: one column outlined and marked with ▲, or a block of columns (the
    prefill, a step without the cache) outlined once, with a line over it (app/figure/grid.py)."""
    block = computed_block(states)
    if block is None:
        p = int(np.flatnonzero(states == COMPUTED)[0]) + 1
        return (
            f"<span class='mark' style='left:{_x(p, n)}'>▲</span>",
            f"<div class='now' style='left:{(p - 1) / n * 100:.3f}%;width:{100 / n:.3f}%'></div>",
        )
    a, b = block
    box = f"left:{(a - 1) / n * 100:.3f}%;width:{(b - a + 1) / n * 100:.3f}%"
    return f"<span class='bracket' style='{box}'></span>", f"<div class='now' style='{box}'></div>"


def _grid(view, grid_url: str) -> str:
    """The cache grid: each row a band showing the first t columns of the text's grid image
    (grid_image), the rest hatched."""
    ex, n, rows = view.ex, view.n, grid_rows(view.ex.cfg)
    tr = translator(view.lang)
    states = ex.cell_states()
    band_h, top = 44, 20  # px per row, room for the ▲ marks
    height = top + band_h * len(rows)
    mark, outline = _marks(states, n)
    labels, bands = [], []
    for i, (block, kind) in enumerate(rows):
        y = top + i * band_h
        labels.append(f"<span style='top:{y + band_h / 2}px'>{html.escape(tr(ROW_KEY[kind], l=block + 1))}</span>")
        image = (
            f"background-image:linear-gradient(90deg,rgba(255,255,255,.75) 1px,transparent 1px),url({grid_url});"
            f"background-size:{100 / ex.t:.4f}% 100%,{n / ex.t * 100:.3f}% {len(rows) * 100}%;"
            f"background-position:0 0,0 {i / max(len(rows) - 1, 1) * 100:.3f}%"
        )
        future = n - ex.t
        bands.append(
            f"<div class='band' style='top:{y + 3}px;height:{band_h - 6}px'>"
            f"<div class='cells' style='flex:{ex.t};{image}'></div>"
            + (f"<div class='cell future' style='flex:{future}'></div>" if future else "")
            + f"{outline}</div>"
        )
    # on a phone the newest positions zoomed in, as the live grid's ZOOM_JS shows them (snapshot.css):
    # the bands on a track n / w times as wide, moved left by a positions; the zoom's own ticks
    a, w = zoom_window(ex.t, n)[0] - 1, min(ZOOM, n)
    coarse, fine = ticks(n), zoom_ticks(n)
    xticks = "".join(
        f"<span class='xt{' coarse' if p in coarse else ''}{' fine' if p in fine else ''}"
        f"{'' if a < p <= a + w else ' out'}' style='--p:{p}'>{p}</span>"
        for p in sorted({*coarse, *fine})
    )
    return (
        f"<div class='fig kv-canvas' style='height:{height}px'><div class='ylab'>{''.join(labels)}</div>"
        f"<div class='plot zoomable' style='--n:{n};--a:{a};--w:{w}'><div class='view'><div class='track'>"
        f"{mark}{''.join(bands)}</div></div>{xticks}</div></div>"
        f"<div class='xlab'>{html.escape(tr('grid_x'))}</div>"
    )


def _reads(view) -> str:
    """What the newest query reads (app/figure/plots.py QueryReads): a row of cells per layer and head."""
    from bokeh.palettes import Blues9

    palette, weights, n = list(reversed(Blues9)), view.reads.weights(), view.n
    rows = []
    for row in weights[::-1]:  # top of the figure first
        cells = "".join(
            f"<div class='cell' style='background:"
            f"{palette[int(np.clip((np.log10(max(w, 1e-3)) + 3) / 3 * len(palette), 0, len(palette) - 1))]}'></div>"
            for w in row
            if w == w
        )
        rows.append(
            f"<div class='band' style='position:static;height:12px;margin:2px 0'>{cells}"
            f"<div style='flex:{n - view.ex.t}'></div></div>"
        )
    return (
        _pane(view.reads.heading.object)
        + _pane(
            f"<div class='fig kv-canvas' style='margin-left:70px;display:block'>{''.join(rows)}</div>",
            view.reads.figure_height(),
        )
        + _pane(view.reads.proof.object)
    )


def _bar_plot(view, top: float, height: int, kinds, legend: str, ylabel: str) -> str:
    """One bar chart of positions 1..t, `kinds` the bars drawn ('full', 'cached'), y up to `top` millions."""
    ex, n = view.ex, view.n
    values, labels = view.bars.scales.ticks(top, view.lang)
    lines = "".join(f"<div class='gridline' style='bottom:{v / top * 100:.2f}%'></div>" for v in values)
    yt = "".join(f"<span style='top:{100 - v / top * 100:.2f}%'>{labels[v]}</span>" for v in values)
    costs = {"full": ex.cost_full, "cached": ex.cost_cached}
    bars = "".join(
        f"<div class='bar {k}' style='left:{_x(p + 1, n)};width:{80 / n:.3f}%;"
        f"height:{min(costs[k][p] / 1e6 / top, 1) * 100:.3f}%'></div>"
        for p in range(ex.t)
        for k in kinds
    )
    xticks = "".join(f"<span class='xt' style='left:{_x(p, n)}'>{p}</span>" for p in ticks(n))
    # the bars last: a step adds one at the end, and the loader's diff touches that one alone
    return (
        f"<div class='fig kv-canvas' style='height:{height}px;margin-top:8px'><div class='ylab'>{yt}"
        f"<span class='yaxis'>{html.escape(ylabel)}</span></div>"
        f"<div class='plot'>{lines}{legend}{xticks}{bars}</div></div>"
    )


def _bars(view) -> str:
    """The cost bars as the live figure draws them: green only on their own scale until the grey
    ramp is revealed (app/figure/plots.py CostBars), then the ramp and the green strip below it."""
    scales, ramp = view.bars.scales, view.session.ramp
    tr = translator(view.lang)
    legend = (
        f"<div class='legend'><span class='swatch cached'></span> {html.escape(tr('bars_cached'))}"
        + (f"<br><span class='swatch full'></span> {html.escape(tr('bars_full'))}" if ramp else "")
        + "</div>"
    )
    out = _pane(
        _bar_plot(
            view,
            scales.full if ramp else scales.cached,
            220,
            ("full", "cached") if ramp else ("cached",),
            legend,
            tr("bars_y"),
        )
        + f"<div class='xlab'>{html.escape(tr('grid_x'))}</div>",
        FIGURE_HEIGHT["bars"],
    )
    if ramp:  # the strip under the ramp: its legend as text, then the green bars at their own scale
        out += f"<div class='pane flat'>{view.bars.strip_head.object}</div>"
        out += _pane(_bar_plot(view, scales.cached, 100, ("cached",), "", ""), FIGURE_HEIGHT["strip"])
    return out


# The live figures' heights (app/figure/plots.py: position_figure(n, height)): each preview figure takes
# the room its live one will, so the hand-over to the live page moves nothing.
FIGURE_HEIGHT = {
    "grid": CacheGrid.HEIGHT,
    "bars": CostBars.HEIGHT,
    "strip": CostBars.STRIP_HEIGHT,
    "clock": ClockPlot.HEIGHT,
}


def _clock(view) -> str:
    """The clock's plot, where the live page shows it (app/figure/clock_plot.py ClockPlot.shown): its
    heading and an empty frame of its height; its points are measured in the reader's browser."""
    if not view.clock.shown():
        return ""
    tr = translator(view.lang)
    return _pane(view.clock.heading.object) + _pane(
        f"<div class='fig kv-canvas' style='height:{FIGURE_HEIGHT['clock'] - 40}px;margin-top:10px'>"
        f"<div class='ylab'></div><div class='plot'></div></div><div class='xlab'>{html.escape(tr('grid_x'))}</div>",
        FIGURE_HEIGHT["clock"],
    )


def _card(title: str) -> str:
    """A section's closed disclosure, as the live page draws it (app/components/widgets.css)."""
    return f"<div class='cardhead'><span class='chevron'></span><span>{html.escape(title)}</span></div>"


def _pane(inner: str, height: int | None = None, kind: str = "") -> str:
    """One of the live page's panes (Panel's margin of 5 px above and below, none collapsing: snapshot.css),
    or, `height` px tall, a figure's (no margin above or below)."""
    style = f" style='height:{height}px'" if height else ""
    kind = kind or ("flat" if height else "")  # a figure's pane has no margin above or below
    return f"<div class='pane{' ' + kind if kind else ''}'{style}>{inner}</div>"


MODE_KEY = {"cache": "mode_cache", "full": "mode_full"}
GRID_URL = "__KV_GRID_URL__"  # the build writes the grid image's address here
PROGRESS = "<!--kv-progress-->"  # between the controls and the figure: where the page shows its loading


def says(view) -> dict[str, str]:
    """What the live page says (its live region, app/figure/controls.py) when the reader's action lands
    on this state, and its labels, for the preview's loader to answer the controls with the same words
    before Python runs (static/loader/controls.js): `step` a step to here, `reset`, `mode[m]` a switch to mode m,
    `back` a step back to here, `back_none` one at the prompt (nothing to undo), `play`/`pause` the
    animation, `full` Animar at the window's end; `pause_label` Animar's label while it plays."""
    tr, c = translator(view.lang), view.controls
    ex = view.ex
    step = c.step_said() + (f" {c.window_full()}" if ex.full else "")
    out = {
        "step": step,
        "reset": tr("live_reset", t=ex.n_prompt, n=view.n),
        "play": tr("live_play"),
        "pause": tr("live_pause"),
        "full": c.window_full(),
        "back": tr("live_back", t=ex.t),
        "back_none": tr("live_back_none"),
        "play_label": tr("play"),
        "pause_label": tr("pause"),
    }
    out["mode"] = {m: tr("live_mode", mode=tr(MODE_KEY[m])) for m in MODES}
    return out


def render(view, grid_url: str = GRID_URL) -> str:
    """The page's current state (app/page.py's Explorable) as HTML: two <div class='kv-snap'>, the title,
    controls and text, then the figures, with PROGRESS between them, where the page's loader puts its
    progress (static/loader/progress.js); styled by `style()`; `grid_url`: the address of the text's grid_image.
    Everything but the controls is a picture for the eyes, hidden from screen readers; the controls
    are buttons the loader answers from the prerendered states, with the live page's words (`says`),
    until the live page takes over."""
    tr = translator(view.lang)
    mode_on = view.ex.mode
    switch = "".join(
        f"<button type='button' class='{m}{' on' if m == mode_on else ''}' data-kv='mode' data-mode='{m}' "
        f"aria-pressed='{'true' if m == mode_on else 'false'}'>{'✓ ' if m == mode_on else ''}"
        f"{html.escape(tr(MODE_KEY[m]))}</button>"
        for m in ("cache", "full")
    )
    said, kind = view.controls.state_said()  # the live page's two rows (app/figure/controls.py)
    data = html.escape(json.dumps(says(view), ensure_ascii=False), quote=True)
    controls = (
        f"<div class='controls topbar' data-kv-state='{view.ex.mode}-{view.ex.t}' data-says=\"{data}\">"
        f"<button type='button' class='btn primary' data-kv='step'>{html.escape(tr('step'))}</button>"
        f"<button type='button' class='btn' data-kv='play'>{html.escape(tr('play'))}</button>"
        f"<span class='bar-t'>{html.escape(tr('position', t=view.ex.t, n=view.n))}</span>"
        f"<button type='button' class='btn back' data-kv='back'>{html.escape(tr('back'))}</button>"
        f"<button type='button' class='btn' data-kv='reset'>{html.escape(tr('reset'))}</button>"
        f"<span class='switch' role='group'>{switch}</span>"
        f"<span class='status' aria-hidden='true'><span class='said {kind}'>{html.escape(said)}</span>"
        f"<span class='hint'>{html.escape(tr('keys_hint'))}</span></span>"
        f"<div class='strip-host'>{view.controls.strip.layout.object}</div></div>"
        f"<div class='controls more'><span class='speed' aria-hidden='true'><span class='label'>{html.escape(tr('speed'))}: "
        f"<b>{num(view.session.settings.speed, view.lang)}</b></span><i style='--at:{_speed_at(view):.4f}'></i></span>"
        "<span class='speed-note'></span></div>"
    )
    cards = "".join(_card(title) for title in [tr("advanced"), tr("table_heading")])
    more = "".join(_card(s.tr(s.title_key)) for s in view.sections)
    picture = lambda inner: f"<div class='kv-picture' aria-hidden='true'>{inner}</div>"
    top = (
        picture(_pane(view.header.layout.object, kind="kv-head"))
        + controls
        + picture(_pane(view.text.layout.object))  # under the buttons, as in the live page (app/page.py)
    )
    bottom = (
        _pane(view.grid.heading.object)
        + _pane(view.grid.prefill.object)
        + _pane(_grid(view, grid_url), FIGURE_HEIGHT["grid"])
        + _pane(view.grid.note.object)
        + _reads(view)
        + _pane(view.bars.heading.object)
        + _bars(view)
        + _pane(view.bars.note.object)
        + _pane(view.readouts.layout.object)
        + _clock(view)
        + cards
        + _pane(view.more_heading.object)
        + more
    )
    part = f"<div class='kv-snap' lang='{view.lang}'>"
    return f"{part}{top}</div>{PROGRESS}{part[:-1]} aria-hidden='true'>{bottom}</div>"


def _speed_at(view) -> float:
    """Where the speed's thumb sits on its slider, 0 (slowest) to 1."""
    low, high = view.session.settings.param.speed.bounds
    return (view.session.settings.speed - low) / (high - low)


def style() -> str:
    """The previews' stylesheet, once in the page for every preview."""
    return f"<style>{SNAP_CSS}</style>"


def state_name(lang: str, mode: str, t: int) -> str:
    """The file name of one preview, as the page's loader builds it (static/loader/config.js stateName)."""
    return f"{lang}-{mode}-{t}.html"


def render_states(make_view, lang: str):
    """Every state a URL can ask for with the default seed and top-p, in one language: each mode at
    each position, stepped as the page steps. Yields (state_name, html); then the text's grid
    image as ("grid", png bytes). make_view(query) -> a fresh Explorable."""
    window = None
    for mode in MODES:
        view = make_view(f"?lang={lang}&mode={mode}")
        ex = view.ex
        while True:
            yield state_name(lang, mode, ex.t), render(view)
            if ex.full:
                break
            view.session.step()
        window = window or list(ex.ids)
        if list(ex.ids) != window:
            raise RuntimeError(
                f"the {mode} mode wrote another text than the cache mode: one grid image per text cannot show both"
            )
    yield "grid", grid_image(ex)
