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

import numpy as np
from bokeh.palettes import PuOr11

from .i18n import num
from .state import COMPUTED, FUTURE
from .views import CSS, GREEN, GREY, INK, ROWS

PALETTE = list(reversed(PuOr11))
TICKS = (1, 8, 16, 24, 32, 40, 48, 56, 64)

SNAP_CSS = CSS.replace(":host", ".kv-snap") + """
.kv-snap { display: block; max-width: 1400px; margin: 0 8px; font-family: system-ui, -apple-system, "Segoe UI",
           Roboto, sans-serif; }
.kv-snap .controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; margin: 10px 0; }
.kv-snap .btn { width: 130px; height: 31px; border-radius: 4px; font-size: 13px; display: inline-flex;
                align-items: center; justify-content: center; background: #f3f3f3; border: 1px solid #d0d0d0; }
.kv-snap .btn.primary { background: #0072b5; color: #fff; border-color: #0072b5; }
.kv-snap .switch { display: inline-flex; width: 260px; height: 31px; border-radius: 4px; overflow: hidden; }
.kv-snap .switch span { flex: 1; display: flex; align-items: center; justify-content: center; font-size: 13px;
                        color: #fff; background: #5cb85c; }
.kv-snap .switch span.on { background: #3e8e3e; }
.kv-snap .speed { font-size: 13px; width: 220px; }
.kv-snap .speed i { display: block; height: 6px; margin-top: 8px; border-radius: 3px; background: #e6e6e6; }
.kv-snap .fig { display: flex; font-size: 11px; color: #444; }
.kv-snap .ylab { width: 70px; flex: none; position: relative; }
.kv-snap .ylab span { position: absolute; right: 6px; transform: translateY(-50%); white-space: nowrap; }
.kv-snap .plot { flex: 1; position: relative; border-left: 1px solid #999; border-bottom: 1px solid #999; }
.kv-snap .xt { position: absolute; top: 100%; transform: translateX(-50%); padding-top: 3px; }
.kv-snap .xlab { text-align: center; font-style: italic; margin: 20px 0 6px 70px; font-size: 12px; color: #444; }
.kv-snap .band { position: absolute; left: 0; right: 0; display: flex; }
.kv-snap .cell { flex: 1; margin: 0 1px; box-sizing: border-box; border: 0.5px solid #9a9a9a; }
.kv-snap .cell.now { border: 2px solid INK; }
.kv-snap .future { background: repeating-linear-gradient(45deg, #eeeeee 0 4px, #cfcfcf 4px 5px);
                   border: 1px solid #cccccc; }
.kv-snap .mark { position: absolute; top: 2px; transform: translateX(-50%); font-size: 11px; color: INK; }
.kv-snap .bar { position: absolute; bottom: 0; transform: translateX(-50%); }
.kv-snap .bar.full { background: repeating-linear-gradient(45deg, GREY 0 3px, #cfcfcf 3px 6px); }
.kv-snap .bar.cached { background: GREEN; }
.kv-snap .gridline { position: absolute; left: 0; right: 0; border-top: 1px solid #eee; }
.kv-snap .legend { position: absolute; left: 10px; top: 10px; background: rgba(255,255,255,.85); padding: 6px 8px;
                   border: 1px solid #e5e5e5; font-size: 12px; line-height: 1.7; }
.kv-snap .ylab span.yaxis { position: absolute; left: 2px; right: auto; top: 0; bottom: 0; transform: rotate(180deg);
                  writing-mode: vertical-rl; text-align: center; white-space: nowrap; font-style: italic;
                  font-size: 12px; }
.kv-snap .cardhead { border: 1px solid #e0e0e0; border-radius: 4px; padding: 8px 12px; margin: 6px 0;
                     font-size: 14px; font-weight: 600; background: #f7f7f7; }
""".replace("INK", INK).replace("GREY", GREY).replace("GREEN", GREEN)


def _color(v: float) -> str:
    return PALETTE[int(np.clip((v + 1) / 2 * len(PALETTE), 0, len(PALETTE) - 1))]


def _column(values, scale: float) -> str:
    """One stored vector as a vertical strip of colours, first number at the bottom (as the live grid)."""
    step = 100 / len(values)
    stops = ",".join(f"{_color(v / scale)} {i * step:.3f}% {(i + 1) * step:.3f}%" for i, v in enumerate(values))
    return f"background:linear-gradient(to top,{stops})"


def _x(pos: float, n: int) -> str:
    return f"{(pos - 0.5) / n * 100:.3f}%"


def _grid(view) -> str:
    ex, n = view.ex, view.n
    states = ex.cell_states()
    band_h, top = 44, 20                                   # px per row, room for the ▲ marks
    height = top + band_h * len(ROWS)
    labels, bands = [], []
    for i, (block, kind) in enumerate(ROWS):
        y = top + i * band_h
        labels.append(f"<span style='top:{y + band_h / 2}px'>{html.escape(view.t('row_' + kind, l=block + 1))}</span>")
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
    ticks = "".join(f"<span class='xt' style='left:{_x(t, n)}'>{t}</span>" for t in TICKS)
    return (f"<div class='fig' style='height:{height}px'><div class='ylab'>{''.join(labels)}</div>"
            f"<div class='plot'>{marks}{''.join(bands)}{ticks}</div></div>"
            f"<div class='xlab'>{html.escape(view.t('grid_x'))}</div>")


def _bars(view) -> str:
    ex, n = view.ex, view.n
    top = float(ex.cost_full[-1]) * 1.06 / 1e6             # the live figure's y range, in millions
    lines = "".join(f"<div class='gridline' style='bottom:{v / top * 100:.2f}%'></div>" for v in range(0, 11, 2))
    yt = "".join(f"<span style='top:{100 - v / top * 100:.2f}%'>{v}</span>" for v in range(0, 11, 2))
    bars = []
    for p in range(ex.t):
        left = _x(p + 1, n)
        for cls, value in (("full", ex.cost_full[p]), ("cached", ex.cost_cached[p])):
            bars.append(f"<div class='bar {cls}' style='left:{left};width:{80 / n:.3f}%;"
                        f"height:{value / 1e6 / top * 100:.3f}%'></div>")
    legend = (f"<div class='legend'><span class='swatch cached'></span> {html.escape(view.t('bars_cached'))}<br>"
              f"<span class='swatch full'></span> {html.escape(view.t('bars_full'))}</div>")
    ticks = "".join(f"<span class='xt' style='left:{_x(t, n)}'>{t}</span>" for t in TICKS)
    return (f"<div class='fig' style='height:220px;margin-top:8px'><div class='ylab'>{yt}"
            f"<span class='yaxis'>{html.escape(view.t('bars_y'))}</span></div>"
            f"<div class='plot'>{lines}{''.join(bars)}{legend}{ticks}</div></div>"
            f"<div class='xlab'>{html.escape(view.t('grid_x'))}</div>")


def render(view) -> str:
    """The view's current state as one self-contained HTML fragment (a <style> and a <div>)."""
    t = view.t
    mode_on = view.ex.mode
    switch = "".join(f"<span class='{'on' if m == mode_on else ''}'>{html.escape(t('mode_' + m))}</span>"
                     for m in ("cache", "full"))
    controls = (f"<div class='controls'><span class='btn primary'>{html.escape(t('step'))}</span>"
                f"<span class='btn'>{html.escape(t('play'))}</span><span class='btn'>{html.escape(t('reset'))}</span>"
                f"<span class='switch'>{switch}</span><span class='speed'>{html.escape(t('speed'))}: "
                f"<b>{num(view.speed.value, view.lang)}</b><i></i></span></div>")
    cards = "".join(f"<div class='cardhead'>› {html.escape(title)}</div>" for title in
                    [t("advanced"), t("table_heading")])
    more = "".join(f"<div class='cardhead'>› {html.escape(t(s.key + '_title'))}</div>" for s in view.sections)
    body = (view.header.object + view.text.object + controls + view.grid_heading.object + _grid(view)
            + view.grid_note.object + view.bars_heading.object + _bars(view) + view.readouts.object + cards
            + view.more_heading.object + more)
    return f"<style>{SNAP_CSS}</style><div class='kv-snap' lang='{view.lang}'>{body}</div>"
