"""Every combination a reader can choose (issue 19): K/V heads (the checkpoints) x the cache's format x
with or without the cache, with the quiz open. Each formula the page shows is checked against its own
numbers (the product shown is the number shown, the bytes follow the format), without a browser: the
texts are the page's panes, rendered through the catalogs as the page renders them."""

from __future__ import annotations

import math
import re

import pytest

from app.i18n import num, sci, size
from app.main import create_view
from app.sections.quiz import logic as quiz
from app.state.settings import CACHE, FULL
from model import cost
from model.config import CACHE_FORMATS, KV_HEADS_CHECKPOINTS

BYTES_PER_NUMBER = {"float64": 8, "float16": 2, "int8": 1, "int4": 0.5}
SCALE_BYTES = {"float64": 0, "float16": 0, "int8": 4, "int4": 4}  # one float32 scale per head and position
LANG_SEPARATORS = {"en": (",", "."), "es": ("\u202f", "."), "pt": (".", ",")}


def number(text: str, lang: str) -> float:
    group, decimal = LANG_SEPARATORS[lang]
    return float(text.replace(group, "").replace(decimal, "."))


def numbers_in(text: str, lang: str) -> list[float]:
    group, decimal = (re.escape(s) for s in LANG_SEPARATORS[lang])
    return [number(m, lang) for m in re.findall(rf"\d+(?:{group}\d{{3}})*(?:{decimal}\d+)?", text)]


def product(formula: str, lang: str) -> tuple[list[float], float]:
    """'2 · L · t · d = 2 · 2 · 40 · 64' (or 2·L·t·d) -> the factors after '=', and their product."""
    factors = numbers_in(formula.split("=")[-1], lang)
    return factors, math.prod(factors)


def plain(html: str) -> str:
    return re.sub(r"<[^>]+>", " ", html).replace("&#x27;", "'").replace("&quot;", '"').replace("&amp;", "&")


def card(html: str, testid: str) -> str:
    """The HTML of one readout card (up to the next card)."""
    start = html.index(f"data-testid='{testid}'")
    end = html.find("<div class='card", start)
    return html[start : end if end != -1 else len(html)]


def open_quiz(view):
    quiz_section = next(s for s in view.sections if s.key == "quiz")
    quiz_section.card.collapsed = False
    return quiz_section


def answers(quiz_section) -> dict[str, str]:
    """Every question answered with its right option, as a reader clicks it now: the explanations."""
    out = {}
    for qid, _question, choice, feedback in quiz_section.items:
        choice.value = None
        choice.value = next(o for q, _options, o in quiz.QUESTIONS if q == qid)
        out[qid] = plain(feedback.object)
    return out


def check_memory_card(view, lang: str, fmt: str):
    ex, html = view.ex, card(view.readouts.layout.object, "memory")
    cfg = ex.cfg
    value = plain(html.split("data-testid='memory-numbers'>")[1].split("</div>")[0])
    formula = plain(html.split("<div class='num explain'>")[1].split("</div>")[0])
    factors, shown_numbers = product(formula, lang)
    if cfg.n_kv_heads == cfg.n_heads:
        assert factors == [2, cfg.n_layers, ex.t, cfg.d_model], formula
    else:
        assert factors == [2, cfg.n_layers, ex.t, cfg.n_kv_heads, cfg.d_head], formula
    assert numbers_in(value, lang)[0] == shown_numbers == ex.cache.n_numbers, (value, formula)
    nbytes = shown_numbers * BYTES_PER_NUMBER[fmt] + shown_numbers // cfg.d_head * SCALE_BYTES[fmt]
    assert (
        nbytes
        == ex.cache.nbytes
        == cost.quantized_cache_bytes(cfg, ex.t, int(8 * BYTES_PER_NUMBER[fmt]), SCALE_BYTES[fmt])
    )
    if fmt == "float64":
        kib = nbytes / 1024
        shown = numbers_in(value, lang)
        assert f"{num(kib, lang, 1 if kib % 1 else 0)} KiB" in value and shown[1:] == [kib, 8], value  # at 8 bytes
    else:
        assert size(nbytes, lang) in value and fmt in value, value


def check_cost_cards(view, lang: str):
    ex, html = view.ex, view.readouts.layout.object
    t, cfg = ex.t, ex.cfg
    token = card(html, "this-token")
    cached = numbers_in(token.split("data-testid='token-cached'>")[1], lang)[0]
    full = numbers_in(token.split("data-testid='token-full'>")[1], lang)[0]
    ratio = numbers_in(token.split("data-testid='token-ratio'>")[1], lang)[0]
    assert cached == cost.c_cached(cfg, t) and full == t * cached and ratio == t
    totals = card(html, "totals")
    a = numbers_in(totals.split("data-testid='total-cached'>")[1], lang)[0]
    b = numbers_in(totals.split("data-testid='total-full'>")[1], lang)[0]
    r = numbers_in(totals.split("data-testid='total-ratio'>")[1], lang)[0]
    assert (a, b) == (cost.total_cached(cfg, t), cost.total_uncached(cfg, t)) and r == round(b / a, 1)


def check_smaller_status(view, lang: str, fmt: str, mode: str):
    from model.quantize import logit_drift

    ex = view.ex
    small = next(s for s in view.sections if s.key == "smaller")
    status = plain(small.status.object)
    cfg = ex.cfg
    per_position = 2 * cfg.n_layers * cfg.n_kv_heads * (cfg.d_head * BYTES_PER_NUMBER[fmt] + SCALE_BYTES[fmt])
    assert per_position == ex.cache.nbytes / ex.t
    assert f" {size(per_position, lang)} " in status and f" {size(per_position * cfg.n_ctx, lang)}." in status
    assert fmt in status
    if fmt != "float64" and mode == CACHE:  # this step's drift: model.quantize's, from where the cache was filled
        drift = logit_drift(ex.gpt, ex.ids, fmt, n_prompt=ex.switched_at or ex.n_prompt)
        assert ex.drift[ex.t] == drift[ex.t - 1]
        assert f"{sci(drift[ex.t - 1], lang)} " in status, status
    else:
        assert ex.t not in ex.drift


def check_quiz(view, quiz_section, lang: str, lesson):
    """The quiz: the lesson's model and float64 cache, whatever the figure runs; each formula's product."""
    ex, cfg = view.ex, lesson.config
    texts = answers(quiz_section)
    memory = texts["memory"]
    L, d = (number(x, lang) for x in re.search(r"L = (\S+), d = ([\d\u202f.,]+)\)", memory).groups())
    T = cfg.n_ctx
    numbers = 2 * L * T * d  # 2·L·t·d at the full window
    assert (L, d) == (cfg.n_layers, cfg.d_model) == (2, 64) and numbers == 16_384
    assert num(numbers, lang) in memory and size(numbers * 8, lang) in memory and "128\u00a0KiB" in memory
    ratio = texts["ratio"]
    c, tc = cost.c_cached(cfg, ex.t), cost.c_uncached(cfg, ex.t)
    assert tc == ex.t * c and num(tc, lang) in ratio and num(c, lang) in ratio and f" {ex.t}" in ratio
    total = texts["total"]
    a, b = cost.total_cached(cfg, T), cost.total_uncached(cfg, T)
    assert num(a, lang) in total and num(b, lang) in total and num(b / a, lang, 1) in total
    proof = re.search(r"\d(?:[.,]\d)?e-\d+|\b0\b", texts["fixed"]).group(0)  # "does not change a single digit"
    assert number(proof.replace(",", "."), "en") < 1e-12, texts["fixed"]
    assert f"P[{T}]" in texts["pos65"] and f" {T + 1}" in texts["pos65"]
    intro = plain(quiz_section.intro.object)
    lessons = ex.gpt is lesson and ex.fmt == "float64"
    assert ("float64" in intro) == (not lessons), intro
    if not lessons:
        assert f" {cfg.n_kv_heads} " in intro and " 8 " in intro
    q, K, V, out = quiz_section.case()  # the challenge: the lesson's numbers too
    expected = lesson.attention_at(ex.ids, quiz_section.block.value, quiz_section.head.value)
    assert all((x == y).all() for x, y in zip((q, K, V, out), expected)) and K.shape == (ex.t, cfg.d_head)


@pytest.mark.parametrize("lang", ["en", "es", "pt"])
def test_every_combination_shows_formulas_that_add_up(lang):
    view = create_view(f"?lang={lang}&t=20")
    lesson = view.ex.gpt
    quiz_section = open_quiz(view)
    next(s for s in view.sections if s.key == "smaller").card.collapsed = False
    settings = view.session.settings
    seen = set()
    for kv in KV_HEADS_CHECKPOINTS:
        for fmt in CACHE_FORMATS:
            settings.kv_heads, settings.precision = kv, fmt
            for mode in (CACHE, FULL):
                settings.mode = mode
                assert view.controls.do("step") is None and view.ex.error is None
                assert (view.ex.cfg.n_kv_heads, view.ex.fmt, view.ex.mode) == (kv, fmt, mode)
                check_memory_card(view, lang, fmt)
                check_cost_cards(view, lang)
                check_smaller_status(view, lang, fmt, mode)
                check_quiz(view, quiz_section, lang, lesson)
                seen.add((kv, fmt, mode))
    assert len(seen) == 3 * 4 * 2 and view.ex.t == 20 + 24
