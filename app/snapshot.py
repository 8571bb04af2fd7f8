"""The page's first paint: the explorable's initial state as plain HTML and CSS.

build.py writes it into index.html, so the reader sees the text, the empty
cache grid, the bars and the numbers before any script has run; the live
Panel document replaces it when Python is ready. Drawn from the same view the
app builds (its HTML panes verbatim, its grid and bars redrawn in CSS: one
column per position, one gradient stop per stored number), it costs the
browser a few milliseconds where rendering a Bokeh document took 0.6 s of the
CPU that Pyodide's start needs.
"""
from __future__ import annotations

import html
import math
from pathlib import Path

import numpy as np

from .figures import grid_rows
from .i18n import num, tr
from .state import COMPUTED, FUTURE
from .style import CELL_PALETTE, CSS, ticks

PALETTE = CELL_PALETTE
SNAP_CSS = CSS.replace(":host,", "").replace(":host", ".kv-snap") + (
    Path(__file__).resolve().parent / "snapshot.css").read_text(encoding="utf-8")


def _color(v: float) -> str:
    return PALETTE[int(np.clip((v + 1) / 2 * len(PALETTE), 0, len(PALETTE) - 1))]


def _column(values, scale: float) -> str:
    """One stored vector as a vertical strip of colours, first number at the bottom (as the live grid)."""
    step = 100 / len(values)
    stops = ",".join(f"{_color(v / scale)} {i * step:.3f}% {(i + 1) * step:.3f}%" for i, v in enumerate(values))
    return f"background:linear-gradient(to top,{stops})"


def _x(pos: float, n: int) -> str:
    return f"{(pos - 0.5) / n * 100:.3f}%"


def nice_step(top: float) -> float:
    """A round step (1, 2 or 5 times a power of ten) for about five ticks up to `top`."""
    raw = top / 5
    power = 10 ** math.floor(math.log10(raw))
    return next(m * power for m in (1, 2, 5, 10) if m * power >= raw)


def _grid(view) -> str:
    ex, n, rows = view.ex, view.n, grid_rows(view.ex.cfg)
    t = lambda msg, **kw: tr(view.lang, msg, **kw)
    states = ex.cell_states()
    band_h, top = 44, 20                                   # px per row, room for the ▲ marks
    height = top + band_h * len(rows)
    labels, bands = [], []
    for i, (block, kind) in enumerate(rows):
        y = top + i * band_h
        labels.append(f"<span style='top:{y + band_h / 2}px'>{html.escape(t('row_' + kind, l=block + 1))}</span>")
        vecs, scale = ex.vectors(block, kind), ex.kv_scale[block, kind]
        cells = []
        for p in range(ex.t):
            cls = "cell now" if states[p] == COMPUTED else "cell"
            cells.append(f"<div class='{cls}' style='{_column(vecs[p], scale)}'></div>")
        future = int((states == FUTURE).sum())
        if future:
            cells.append(f"<div class='cell future' style='flex:{future}'></div>")
        bands.append(f"<div class='band' style='top:{y + 3}px;height:{band_h - 6}px'>{''.join(cells)}</div>")
    marks = "".join(f"<span class='mark' style='left:{_x(p + 1, n)}'>▲</span>"
                    for p in np.flatnonzero(states == COMPUTED))
    xticks = "".join(f"<span class='xt' style='left:{_x(p, n)}'>{p}</span>" for p in ticks(n))
    return (f"<div class='fig' style='height:{height}px'><div class='ylab'>{''.join(labels)}</div>"
            f"<div class='plot'>{marks}{''.join(bands)}{xticks}</div></div>"
            f"<div class='xlab'>{html.escape(t('grid_x'))}</div>")


def _reads(view) -> str:
    """What the newest query reads (app/figures.py QueryReads): a row of cells per layer and head."""
    from bokeh.palettes import Blues9
    palette, weights, n = list(reversed(Blues9)), view.reads.weights(), view.n
    rows = []
    for row in weights[::-1]:                          # top of the figure first
        cells = "".join(
            f"<div class='cell' style='background:"
            f"{palette[int(np.clip((np.log10(max(w, 1e-3)) + 3) / 3 * len(palette), 0, len(palette) - 1))]}'></div>"
            for w in row if w == w)
        rows.append(f"<div class='band' style='position:static;height:12px;margin:2px 0'>{cells}"
                    f"<div style='flex:{n - view.ex.t}'></div></div>")
    return (view.reads.heading.object + f"<div class='fig' style='margin-left:70px;display:block'>{''.join(rows)}</div>"
            + view.reads.proof.object)


def _bar_plot(view, top: float, height: int, kinds, legend: str, ylabel: str) -> str:
    """One bar chart of positions 1..t, `kinds` the bars drawn ('full', 'cached'), y up to `top` millions."""
    ex, n = view.ex, view.n
    values, labels = view.bars.scales.ticks(top, view.lang)
    lines = "".join(f"<div class='gridline' style='bottom:{v / top * 100:.2f}%'></div>" for v in values)
    yt = "".join(f"<span style='top:{100 - v / top * 100:.2f}%'>{labels[v]}</span>" for v in values)
    costs = {"full": ex.cost_full, "cached": ex.cost_cached}
    bars = "".join(f"<div class='bar {k}' style='left:{_x(p + 1, n)};width:{80 / n:.3f}%;"
                   f"height:{min(costs[k][p] / 1e6 / top, 1) * 100:.3f}%'></div>" for p in range(ex.t) for k in kinds)
    xticks = "".join(f"<span class='xt' style='left:{_x(p, n)}'>{p}</span>" for p in ticks(n))
    return (f"<div class='fig' style='height:{height}px;margin-top:8px'><div class='ylab'>{yt}"
            f"<span class='yaxis'>{html.escape(ylabel)}</span></div>"
            f"<div class='plot'>{lines}{bars}{legend}{xticks}</div></div>")


def _bars(view) -> str:
    """The cost bars as the live figure draws them: green only on their own scale until the grey
    ramp is revealed (app/figures.py CostBars), then the ramp and the green strip below it."""
    scales, ramp = view.bars.scales, view.session.ramp
    t = lambda msg, **kw: tr(view.lang, msg, **kw)
    legend = (f"<div class='legend'><span class='swatch cached'></span> {html.escape(t('bars_cached'))}"
              + (f"<br><span class='swatch full'></span> {html.escape(t('bars_full'))}" if ramp else "") + "</div>")
    out = _bar_plot(view, scales.full if ramp else scales.cached, 220, ("full", "cached") if ramp else ("cached",),
                    legend, t("bars_y"))
    if ramp:
        zoom = f"<div class='legend'><span class='swatch cached'></span> {html.escape(t('bars_zoom', zoom=num(scales.zoom, view.lang)))}</div>"
        out += _bar_plot(view, scales.cached, 90, ("cached",), zoom, "")
    return out + f"<div class='xlab'>{html.escape(t('grid_x'))}</div>"


def render(view) -> str:
    """The page's current state (app/page.py's Explorable) as one self-contained HTML fragment
    (a <style> and a <div>)."""
    t = lambda msg, **kw: tr(view.lang, msg, **kw)
    mode_on = view.ex.mode
    switch = "".join(f"<span class='{m}{' on' if m == mode_on else ''}'>{'✓ ' if m == mode_on else ''}"
                     f"{html.escape(t('mode_' + m))}</span>" for m in ("cache", "full"))
    controls = (f"<div class='controls'><span class='btn primary'>{html.escape(t('step'))}</span>"
                f"<span class='btn'>{html.escape(t('play'))}</span><span class='btn'>{html.escape(t('reset'))}</span>"
                f"<span class='switch'>{switch}</span><span class='speed'>{html.escape(t('speed'))}: "
                f"<b>{num(view.session.settings.speed, view.lang)}</b><i></i></span></div>")
    cards = "".join(f"<div class='cardhead'>› {html.escape(title)}</div>" for title in
                    [t("advanced"), t("table_heading")])
    more = "".join(f"<div class='cardhead'>› {html.escape(t(s.key + '_title'))}</div>" for s in view.sections)
    body = (view.header.layout.object + view.text.layout.object + controls + view.grid.heading.object
            + (view.grid.prefill.object if view.grid.prefill.visible else "") + _grid(view)
            + view.grid.note.object + _reads(view) + view.bars.heading.object + _bars(view) + view.bars.note.object
            + view.readouts.layout.object + cards
            + view.more_heading.object + more)
    return f"<style>{SNAP_CSS}</style><div class='kv-snap' lang='{view.lang}'>{body}</div>"
