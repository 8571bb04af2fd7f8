"""How much context fits: the wider chapter's figures, the lesson's memory numbers, the context
window, the units and the typed numbers of the calculator."""

import re
from dataclasses import replace

import pytest

from app.i18n import num
from app.main import create_view
from app.sections.context.logic import BITS, CHAPTER_TABLES, DEFAULT, OVERHEAD_GIB, PRESETS, chapter_checks, presets
from model import Config, cost
from model.cost import GiB, KiB, MiB


def test_the_chapter_statements():
    assert chapter_checks() == {"13b_4bit_8gb": 337, "7b_int8_16gb": 65_378, "13b_int8_16gb": 3_136}
    assert {gpu for _, _, gpu in CHAPTER_TABLES.values()} == {8, 16}


def test_the_assumptions_behind_them():
    assert OVERHEAD_GIB == 1.5 and BITS["4-bit"] == 4.125 and BITS["int8"] == 8
    thirteen = PRESETS["13b"].with_(bits=BITS["4-bit"], gpu_gib=8)
    assert round(thirteen.weights_bytes() / GiB, 1) == 6.2  # "6,2 GB de 8"
    extra = PRESETS["13b"].weights_bytes() - PRESETS["7b-gqa"].weights_bytes()
    assert round(extra / GiB, 1) == 5.6  # "5,6 GB de pesos adicionais"


def test_bytes_per_token():
    assert PRESETS["0.5b"].bytes_per_token() == 12_288
    assert cost.CHAPTER_05B.full_attention().kv_bytes_per_token(2) == 86_016 == 84 * KiB == 7 * 12_288
    assert PRESETS["7b-gqa"].bytes_per_token() == 128 * KiB
    assert PRESETS["13b"].bytes_per_token() == 800 * KiB
    assert PRESETS["7b-mha"].bytes_per_token() == 262_144 * 2  # the lesson's 262,144 numbers
    assert PRESETS["mini"].bytes_per_token() == 2 * 2 * 64 * 8


def test_the_chapters_other_figures():
    assert 65_536 * PRESETS["0.5b"].bytes_per_token() == 768 * MiB  # 32 x 2,048 = 64 x 1,024 = 128 x 512
    assert round(PRESETS["7b-gqa"].with_(bits=BITS["fp16"]).weights_bytes() / GiB, 1) == 13.0  # "13,0 GB em fp16"
    at_128k = 128_000 * PRESETS["7b-gqa"].bytes_per_token()
    assert round(at_128k / GiB, 1) == 15.6 and at_128k > PRESETS["7b-gqa"].with_(bits=16).weights_bytes()
    # "meio bilião de parâmetros a quatro bytes cada são 1,98 GB; a dois bytes, 0,99 GB; a um byte, 0,49 GB":
    # GB of 10^9 bytes there, unlike the chapter's tables
    half = PRESETS["0.5b"]
    assert [round(half.with_(bits=b).weights_bytes() / 1e9, 2) for b in (32, 16, 8)] == [1.98, 0.99, 0.49]


def test_lesson_memory_of_the_7b():
    p = PRESETS["7b-mha"]
    assert p.model == cost.LESSON_7B and (p.model.n_layers, p.model.d_model) == (32, 4_096)
    assert p.bytes_per_token() * 4096 == 2 * GiB
    assert p.bytes_per_token() * 32_768 == 16 * GiB
    assert p.bytes_per_token() * 32_768 > p.weights_bytes() > 13 * GiB


def test_the_lessons_7b_comes_first():
    assert DEFAULT == list(PRESETS)[0] == "7b-mha"
    assert PRESETS[DEFAULT].bits == BITS["fp16"] and PRESETS[DEFAULT].model.n_kv_heads == PRESETS[DEFAULT].model.n_heads


def test_users_share_the_memory():
    p = PRESETS["7b-gqa"]
    assert p.tokens_per_user() == int(p.free_bytes() // p.bytes_per_token())
    assert p.with_(users=4).tokens_per_user() == int(p.free_bytes() // (4 * p.bytes_per_token()))
    assert p.with_(users=10**9).tokens_per_user() == 0


def test_nothing_left_is_zero_not_negative():
    assert PRESETS["70b"].with_(gpu_gib=8).tokens_per_user() == 0


def test_the_window_caps_the_tokens():
    mini = PRESETS["mini"]
    assert mini.window == Config().n_ctx == 64
    assert mini.tokens_by_memory() > 64 and mini.tokens_per_user() == 64 and mini.capped()
    assert PRESETS["0.5b"].tokens_per_user() == 32_768 and PRESETS["0.5b"].capped()
    assert not PRESETS["7b-mha"].capped() and PRESETS["7b-mha"].tokens_per_user() < 32_768
    big = PRESETS["7b-gqa"].with_(bits=16, gpu_gib=48)
    assert big.tokens_per_user() == 128_000 == big.window and round(big.cache_bytes() / GiB, 1) == 15.6
    windows = {k: p.window for k, p in PRESETS.items()}
    assert windows == {"7b-mha": 32_768, "mini": 64, "0.5b": 32_768, "7b-gqa": 128_000, "13b": 4_096, "70b": 128_000}


def test_the_mini_gpt_preset_is_the_live_config():
    cfg = Config(n_ctx=32, n_kv_heads=2)
    mini = presets(cfg)["mini"]
    assert (mini.model.n_params, mini.window, mini.model.n_kv_heads) == (cost.n_params(cfg), 32, 2)
    assert mini.bytes_per_token() == 2 * cfg.n_layers * cfg.d_kv * 8


def context(query: str, gpt=None):
    view = create_view(query, gpt=gpt)
    ctx = next(s for s in view.sections if s.key == "context")
    ctx.ensure_built()
    return view, ctx


def typed(ctx, **texts):
    for key, text in texts.items():
        ctx.fields[key].widget.value = text


def test_the_chapters_figures_on_the_page():
    """What the reader sees in Portuguese, the chapter's language, for the chapter's statements."""
    view, ctx = context("?lang=pt")
    ctx.preset.value = "13b"
    assert "800\u00a0KiB por token" in ctx.result.object
    ctx.bits.value = BITS["4-bit"]
    typed(ctx, gpu="8")
    assert ">337 tokens" in ctx.result.object and "Pesos: 6,24\u00a0GiB" in ctx.result.object  # "6,2 GB de 8"
    ctx.bits.value = BITS["int8"]
    typed(ctx, gpu="16")
    assert ">3.136 tokens" in ctx.result.object
    ctx.preset.value = "7b-gqa"
    assert ">65.378 tokens" in ctx.result.object and "128\u00a0KiB por token" in ctx.result.object
    typed(ctx, users="2")
    assert ">32.689 tokens" in ctx.result.object
    ctx.bits.value = BITS["fp16"]
    typed(ctx, users="1", gpu="48")
    result = ctx.result.object
    assert "Pesos: 13,0\u00a0GiB" in result and "128.000 tokens ocupam 15,6\u00a0GiB" in result and "ctx-cap" in result
    ctx.preset.value = "0.5b"
    assert "12\u00a0KiB por token" in ctx.result.object
    typed(ctx, users="2")
    assert "65.536 tokens ocupam 768\u00a0MiB" in ctx.result.object
    typed(ctx, kv_heads="14")
    assert "84\u00a0KiB por token" in ctx.result.object  # 86,016 with full attention
    notes = ctx.assumptions.object
    assert "337 tokens" in notes and "1,98\u00a0GB" in notes and "1,84\u00a0GiB" in notes and "13,0\u00a0GB" in notes


@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_units_that_fit(lang):
    """No size shown as 0.00 GiB, no number with a string of decimals, in a field or a result."""
    view, ctx = context(f"?lang={lang}")
    for key in ctx.presets:
        ctx.preset.value = key
        texts = [ctx.result.object] + [f.widget.value for f in ctx.fields.values()] + list(ctx.bits.options)
        for text in texts:
            assert not re.search(r"\d[.,]\d{4,}", text), (key, text)
            assert not re.search(r"\b0[.,]0+ [KMG]iB", text), (key, text)
    ctx.preset.value = "mini"
    assert re.search(r"1[.,]04\u00a0MiB", ctx.result.object) and "128\u00a0KiB" in ctx.result.object


def test_the_mini_gpt_preset_on_the_page(gpt):
    view, ctx = context("?lang=es")
    ctx.preset.value = "mini"
    values = {k: f.widget.value for k, f in ctx.fields.items()}
    assert values["params"] == num(cost.n_params(gpt.config), "es") == "136\u202f448"
    assert values["window"] == "64" and values["layers"] == "2"
    assert ">64 tokens de contexto" in ctx.result.object and "ctx-cap" in ctx.result.object
    assert "ventana de contexto del modelo, 64 tokens" in ctx.result.object
    small = type(gpt).random(replace(gpt.config, n_ctx=32), seed=1, tokenizer=gpt.tokenizer)
    _view, ctx = context("?lang=es", gpt=small)
    ctx.preset.value = "mini"
    assert ctx.fields["window"].widget.value == "32" and ">32 tokens de contexto" in ctx.result.object


def test_numbers_are_typed_the_languages_way():
    view, ctx = context("?lang=pt")
    assert ctx.fields["overhead"].widget.value == "1,5" and ctx.fields["params"].widget.value == "7.000.000.000"
    before = ctx.result.object
    typed(ctx, overhead="2,5")
    assert ctx.fields["overhead"].value == 2.5 and ctx.result.object != before
    typed(ctx, overhead="1.5")  # a decimal point is read too
    assert ctx.result.object == before
    view.session.settings.lang = "es"  # the same numbers, written in Spanish
    assert ctx.fields["overhead"].widget.value == "1.5"
    assert ctx.fields["params"].widget.value == "7\u202f000\u202f000\u202f000"
    assert ">19\u202f377 tokens" in ctx.result.object
    typed(ctx, layers="2.5")
    assert (
        "ctx-invalid" in ctx.result.object
        and "Capas L" in ctx.result.object
        and "entero de 1 a 512" in ctx.result.object
    )
    typed(ctx, layers="32", gpu="abc")
    assert "Memoria de la GPU" in ctx.result.object
    typed(ctx, gpu="24")
    assert ">19\u202f377 tokens" in ctx.result.object
