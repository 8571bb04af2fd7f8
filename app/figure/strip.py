"""The cost bars in miniature, inside the control bar on a phone's screen: the lesson's first experiment
at hand. A reader who taps Avanzar sees a bar grow where the finger is, wherever the bar sticks; the
figure itself, with its axes and numbers, stays below the cache. On a wider screen it is not shown
(strip.css). The same HTML is the preview's (app/figure/snapshot.py), so the hand-over moves nothing."""

from __future__ import annotations

from pathlib import Path

from ..i18n import num
from ..state.settings import CACHE
from ..style import CSS, read_css
from .parts import Part, esc
from .plots import BarScales

STRIP_CSS = read_css(Path(__file__).with_name("strip.css"))


def strip_html(ex, mode: str, ramp: bool, tr, lang: str) -> str:
    """The strip at the explorer's position: a line of words (the figure's title, this token's
    multiplications with the cache, and without it once the reader has seen that mode: `ramp`), then
    a bar per position so far, on the figure's scales: the green c(t) alone on its own, or with the
    grey ramp t·c(t) on the ramp's (the green then barely shows, as in the figure). The current mode's
    bars solid, the other's faded."""
    scales, n, t = BarScales(ex), ex.cfg.n_ctx, ex.t
    top = scales.full if ramp else scales.cached
    cached_on = mode == CACHE
    numbers = f"<span class='swatch cached'></span> {esc(num(int(ex.cost_cached[t - 1]), lang))}"
    if ramp:
        numbers += f" <span class='swatch full'></span> {esc(num(int(ex.cost_full[t - 1]), lang))}"
    bars = []
    for p in range(1, t + 1):
        at = f"left:{(p - 1) / n * 100:.3f}%;width:{100 / n:.3f}%"
        if ramp:
            bars.append(
                f"<i class='sf{'' if not cached_on else ' off'}' style='{at};height:{_h(ex.cost_full[p - 1], top)}'></i>"
            )
        bars.append(
            f"<i class='sc{'' if cached_on else ' off'}' style='{at};height:{_h(ex.cost_cached[p - 1], top)}'></i>"
        )
    return (
        f"<div class='kv-strip' aria-hidden='true' data-testid='cost-strip'><p><span class='strip-title'>"
        f"{esc(tr('bars_title'))}</span><span class='strip-cost'>{numbers}</span></p>"
        f"<div class='strip-bars'>{''.join(bars)}</div></div>"
    )


def _h(value, top: float) -> str:
    return f"{max(float(value) / 1e6 / top * 100, 4):.2f}%"  # at least a sliver: every position shows


class CostStrip(Part):
    """The strip (strip_html) in the control bar, redrawn with every change of the session."""

    HEIGHT = 44  # px, the strip's pane (strip.css), the preview's too

    def build(self):
        import panel as pn

        self.layout = pn.pane.HTML(
            "",
            stylesheets=[CSS, STRIP_CSS],
            css_classes=["kv-strip-host"],
            margin=0,
            sizing_mode="stretch_width",
            styles={"flex": "1 1 100%"},
        )

    def redraw(self):
        ex = self.ex
        html = strip_html(ex, self.session.settings.mode, bool(self.session.ramp), self.tr, self.lang)
        if html != self.layout.object:
            self.layout.object = html
