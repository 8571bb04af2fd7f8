"""The page's two looks (app/style): one palette of roles, light and dark, declared once for the
document; every text colour readable on the surfaces it is written on (WCAG AA, 4.5:1) in both;
every figure transparent and shown through the theme's filter; theme= read from the URL like any
other parameter. The browser half is tests/test_theme_browser.py."""

from __future__ import annotations

import re

import pytest

from app.components.files import stylesheet
from app.state.settings import Settings
from app.style import BAR_CSS, CANVAS_CSS, CSS, DARK, MODE_SWITCH_CSS, PALETTE, theme_css

# (text role, background roles it is written on), as the stylesheets pair them
TEXT_ON = {
    "ink": (
        "surface",
        "surface-2",
        "button",
        "button-hover",
        "highlight",
        "highlight-soft",
        "cache-soft",
        "target-soft",
        "draft-soft",
        "cut-soft",
        "warn-soft",
        "error-soft",
        "notice-soft",
        "focus-soft",
    ),
    "text": ("surface", "surface-2", "highlight", "highlight-soft"),
    "text-soft": ("surface", "surface-2", "highlight", "highlight-soft"),
    "muted": ("surface", "surface-2"),
    "cache-text": ("surface", "surface-2", "cache-soft", "highlight"),
    "cache-deep": ("surface", "cache-soft"),
    "full-text": ("surface", "surface-2", "highlight", "highlight-soft"),
    "target": ("surface", "surface-2"),
    "target-deep": ("surface", "target-soft"),
    "draft-deep": ("surface", "draft-soft"),
    "focus": ("surface", "focus-soft"),
    "error": ("surface", "error-soft"),
    "warn": ("surface", "warn-soft"),
    # a button's text is the surface's colour, on its role
    "surface": ("cache-text", "cache-deep", "full-text", "warn", "warn-deep", "danger", "danger-deep", "target"),
}


# marks that are not text (a rejected token's ✗, a focus ring, a field's border: WCAG 1.4.11, 3:1)
MARKS_ON = {"cut": ("surface", "cut-soft"), "focus": ("surface", "surface-2")}


def luminance(colour: str) -> float:
    rgb = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def test_both_palettes_have_the_same_roles_each_a_colour():
    assert set(DARK) == set(PALETTE)
    for colour in [*PALETTE.values(), *DARK.values()]:
        assert re.fullmatch(r"#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?", colour), colour


@pytest.mark.parametrize("name, palette", [("light", PALETTE), ("dark", DARK)])
def test_every_text_is_readable_on_what_it_is_written_on(name, palette):
    low = {
        f"{text} on {back}": round(contrast(palette[text], palette[back]), 2)
        for pairs, least in ((TEXT_ON, 4.5), (MARKS_ON, 3.0))
        for text, backs in pairs.items()
        for back in backs
        if contrast(palette[text], palette[back]) < least
    }
    assert low == {}, (name, low)


def test_the_dark_look_turns_the_surfaces_over():
    assert luminance(DARK["surface"]) < 0.02 < 0.8 < luminance(DARK["ink"])
    assert luminance(PALETTE["surface"]) > 0.9 > 0.02 > luminance(PALETTE["ink"])


def test_the_palette_is_declared_once_for_the_document():
    css = theme_css()
    light, dark_by_system, dark_by_url = (
        re.search(pattern, css).group(1)
        for pattern in (
            r"^:root \{([^}]*)\}",
            r"@media \(prefers-color-scheme: dark\) \{ :root:not\(\[data-kv-theme=light\]\) \{([^}]*)\}",
            r":root\[data-kv-theme=dark\] \{([^}]*)\}",
        )
    )
    for role in PALETTE:
        assert f"--kv-{role}: {PALETTE[role]};" in light
        assert f"--kv-{role}: {DARK[role]};" in dark_by_system and f"--kv-{role}: {DARK[role]};" in dark_by_url
    assert "--kv-canvas-filter: none" in light and "invert(1)" in dark_by_url and "color-scheme: dark" in dark_by_system
    # the components' stylesheets declare no palette of their own: their shadow roots inherit the document's
    for sheet in (CSS, BAR_CSS, MODE_SWITCH_CSS, stylesheet("a11y"), stylesheet("widgets")):
        assert not re.search(r"(:host|:root)[^{}]*\{[^}]*--kv-ink:", sheet), sheet[:300]


@pytest.mark.parametrize(
    "query, theme, noticed",
    [
        ("", "auto", False),
        ("?theme=dark", "dark", False),
        ("?theme=Light", "light", False),
        ("?theme=slate", "auto", True),
    ],
)
def test_the_url_says_the_theme(query, theme, noticed):
    s = Settings.from_query(query)
    assert s.theme == theme
    assert any(key == "theme" for key, *_ in s.notices) == noticed
    assert ("theme=" in s.query()) == (theme != "auto")
    assert Settings.from_query(s.query()).theme == theme


def test_every_figure_is_transparent_and_filtered():
    """Every Bokeh plot of the page, with every section built: no background of its own (the page's
    surface shows through) and the theme's filter in its stylesheets."""
    from bokeh.models import Plot

    from app.main import create_view

    view = create_view("?t=12")
    for section in view.sections:
        section.ensure_built()
    view.clock.make_figure()
    plots = [m for m in view.layout.get_root().references() if isinstance(m, Plot)]
    assert len(plots) >= 8
    for plot in plots:
        assert plot.background_fill_color is None and plot.border_fill_color is None, plot
        assert CANVAS_CSS in plot.stylesheets, plot
