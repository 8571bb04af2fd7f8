"""Every number of LESSON.md's cost and memory section."""

import pytest

from model import Config, MiniGPT, cost
from model.cost import GiB, KiB

CFG = Config()


def test_row_cost():
    assert cost.c_row(CFG) == 2 * (4 * 64**2 + 2 * 64 * 256) + 64 * 512 == 131_072


def test_with_and_without_cache_per_token():
    assert cost.c_cached(CFG, 1) == 131_072 + 256
    assert cost.c_cached(CFG, 64) == 131_072 + 2 * 2 * 64 * 64 == 147_456
    for t in (1, 8, 16, 32, 48, 64):
        assert cost.c_uncached(CFG, t) == t * cost.c_cached(CFG, t)
        assert cost.ratio_at(CFG, t) == t  # exactly t times more


def test_totals_over_the_window():
    assert cost.total_cached(CFG, 64) == 8_921_088
    assert cost.total_uncached(CFG, 64) == 295_526_400
    assert round(cost.total_ratio(CFG, 64), 1) == 33.1
    assert cost.total_cached(CFG, 64) == sum(cost.c_cached(CFG, t) for t in range(1, 65))
    assert cost.total_uncached(CFG, 64) == sum(cost.c_uncached(CFG, t) for t in range(1, 65))


def test_attention_against_matrices():
    assert cost.attention_equals_matrices_at(CFG) == 512 == 8 * CFG.n_ctx
    assert round(cost.c_cached(CFG, 64) / cost.c_cached(CFG, 1) - 1, 2) == 0.12


def test_mini_gpt_cache_memory():
    assert cost.cache_numbers(2, 64, 64) == 2 * 2 * 64 * 64 == 16_384
    assert cost.cache_bytes(2, 64, 64, 8) == 128 * KiB


def test_seven_billion_example():
    assert cost.cache_numbers(32, 4096, 1) == 262_144
    assert cost.cache_bytes(32, 4096, 4096, 2) == 2 * GiB
    assert cost.cache_bytes(32, 4096, 32_768, 2) == 16 * GiB
    assert cost.cache_bytes(32, 4096, 32_768, 2) > 13 * GiB  # more than its weights


def test_grouped_heads_formula():
    # full multi-head attention is the lesson's formula
    assert cost.kv_bytes_per_token(32, 32, 128, 2) == cost.cache_bytes(32, 4096, 1, 2)
    assert cost.kv_bytes_per_token(24, 2, 64, 2) == 12_288  # the 0.5B of the wider chapter
    assert cost.kv_bytes_per_token(32, 8, 128, 2) == 128 * KiB
    assert cost.kv_bytes_per_token(40, 40, 128, 2) == 800 * KiB


@pytest.mark.parametrize("T", [1, 2, 10, 64, 513])
def test_closed_forms_match_sums(T):
    assert cost.total_cached(CFG, T) == sum(cost.c_cached(CFG, t) for t in range(1, T + 1))
    assert cost.total_uncached(CFG, T) == sum(cost.c_uncached(CFG, t) for t in range(1, T + 1))


# -- shared key/value heads -----------------------------------------------------------------

DRAFT = Config(n_layers=1, d_model=32, n_heads=2, d_ff=128)


@pytest.mark.parametrize(
    "n_kv,c_row,params,cache",
    [
        (4, 131_072, 136_448, 16_384),
        (2, 122_880, 128_256, 8_192),
        (1, 118_784, 124_160, 4_096),
    ],
)
def test_shared_heads_shrink_wk_wv_and_the_cache(n_kv, c_row, params, cache):
    cfg = Config(n_kv_heads=n_kv)
    L, d, dk, f, V = 2, 64, 16, 256, 512
    assert cost.c_row(cfg) == L * (2 * d * d + 2 * d * n_kv * dk + 2 * d * f) + d * V == c_row
    assert cost.n_params(cfg) == params == MiniGPT.random(cfg).n_params()
    assert params == 136_448 - 2 * 2 * 64 * (64 - n_kv * 16)  # Wk, Wv: d x d -> d x H_kv d_k
    assert cost.kv_cache_numbers(cfg, 64) == 2 * L * 64 * n_kv * dk == cache
    # attention's multiplications do not shrink: every query head still reads t keys
    assert cost.c_cached(cfg, 64) - cost.c_row(cfg) == 2 * L * 64 * d
    assert cost.c_uncached(cfg, 64) == 64 * cost.c_cached(cfg, 64)


@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_cache_numbers_are_what_the_model_stores(n_kv):
    cfg = Config(n_kv_heads=n_kv)
    _, cache = MiniGPT.random(cfg).llenar(list(range(64)))
    assert cache.n_numbers == cost.kv_cache_numbers(cfg, 64)
    assert cache.nbytes == cost.quantized_cache_bytes(cfg, 64, bits=64)


def test_draft_model_counts():
    assert cost.n_params(DRAFT) == 512 * 32 + 64 * 32 + (4 * 32 * 32 + 2 * 32 * 128 + 128 + 32 + 4 * 32) + 64 == 31_072
    assert cost.n_params(DRAFT) == MiniGPT.random(DRAFT).n_params()
    assert cost.c_row(DRAFT) == 4 * 32 * 32 + 2 * 32 * 128 + 32 * 512 == 28_672
    assert round(cost.c_row(DRAFT) / cost.c_row(CFG), 3) == 0.219


@pytest.mark.parametrize(
    "fmt,bits,scale_bytes,nbytes",
    [
        ("float64", 64, 0, 131_072),
        ("float16", 16, 0, 32_768),
        ("int8", 8, 4, 16_384 + 4 * 1_024),
        ("int4", 4, 4, 8_192 + 4 * 1_024),
    ],
)
def test_quantized_cache_bytes_are_the_arrays_it_holds(fmt, bits, scale_bytes, nbytes):
    from model.quantize import QuantizedKVCache

    cache = QuantizedKVCache.empty(CFG, fmt)
    MiniGPT.random(CFG).llenar(list(range(64)), cache)
    assert cache.nbytes == cost.quantized_cache_bytes(CFG, 64, bits, scale_bytes, group=16) == nbytes
    assert cache.nbytes == cost.quantized_cache_bytes(CFG, 64, bits, scale_bytes) == nbytes  # the default group
    assert cache.n_numbers == 16_384


def test_the_default_group_is_one_scale_per_head_and_position():
    """The int8 cache of the lesson's model at t = 64: 16,384 one-byte codes and 2 x 2 x 64 x 4
    = 1,024 float32 scales, 20,480 B; one scale per number would be 81,920 B."""
    assert cost.quantized_cache_bytes(CFG, 64, bits=8, scale_bytes=4) == 16_384 + 1_024 * 4 == 20_480
    assert cost.quantized_cache_bytes(CFG, 64, bits=8, scale_bytes=4, group=1) == 81_920
    assert cost.quantized_cache_bytes(CFG, 64, bits=4, scale_bytes=4) == 12_288
    assert cost.quantized_cache_bytes(CFG, 64, bits=16) == 32_768 and cost.head_width(CFG) == CFG.d_head == 16


@pytest.mark.parametrize("n_kv", [4, 2, 1], ids=["lesson", "kv2", "kv1"])
def test_the_formula_is_the_quantized_cache_bytes_at_every_length(n_kv):
    """For every format and several lengths t, the formula (default group) equals the bytes of
    the arrays a QuantizedKVCache holds, for the lesson's model and the shared-head ones."""
    from model.quantize import FORMATS, SIZES, QuantizedKVCache

    cfg = Config(n_kv_heads=n_kv)
    gpt = MiniGPT.random(cfg, seed=n_kv)
    assert set(SIZES) == set(FORMATS)
    for fmt in FORMATS:
        cache = QuantizedKVCache.empty(cfg, fmt)
        assert cache.nbytes == cost.quantized_cache_bytes(cfg, 0, *SIZES[fmt]) == 0
        gpt.llenar(list(range(5)), cache)
        for t in (5, 6, 17, 33, 64):
            while len(cache) < t:
                gpt.avanzar(len(cache), cache)
            assert cache.nbytes == cost.quantized_cache_bytes(cfg, t, *SIZES[fmt]), (fmt, t)
            assert cache.n_numbers == cost.kv_cache_numbers(cfg, t)


# -- speculative decoding: the chapter's table ----------------------------------------------


def test_speculative_formulas():
    assert round(cost.speculative_speedup(0.9, 8, 0.1), 2) == 3.40  # the chapter's bold entries
    assert round(cost.speculative_speedup(0.3, 8, 0.1), 2) == 0.79
    assert round(cost.expected_tokens_per_pass(0.3, 8), 1) == 1.4  # "five passes for 1.4 tokens"
    for a in (0.0, 0.3, 0.9, 1.0):
        for k in range(1, 9):
            assert cost.expected_tokens_per_pass(a, k) == pytest.approx(sum(a**i for i in range(k + 1)))
    # by the count, checking k + 1 rows costs k + 1 rows: never cheaper per token
    assert cost.speculative_count_ratio(1.0, 4, 131_072, 28_672) < 1
    assert cost.speculative_count_ratio(1.0, 4, 131_072, 0) == 1.0


# -- the total ratio between its two limits, and the texts' real models ----------------------


def test_total_ratio_between_matrices_and_attention():
    """The mini-GPT's matrices dominate (attention matches them only at t = 512), so the total ratio
    is near (T+1)/2 = 32.5, and attention lifts it to 33.1; (2T+1)/3 = 43 would need attention alone."""
    T = CFG.n_ctx
    assert cost.matrices_only_ratio(T) == 32.5 and cost.attention_only_ratio(T) == 43
    assert cost.matrices_only_ratio(T) < cost.total_ratio(CFG, T) < cost.attention_only_ratio(T)
    assert round(cost.total_ratio(CFG, T), 1) == 33.1
    only_matrices = sum(t * cost.c_row(CFG) for t in range(1, T + 1)) / (T * cost.c_row(CFG))
    only_attention = sum(t * cost.attention_cached(CFG, t) for t in range(1, T + 1)) / sum(
        cost.attention_cached(CFG, t) for t in range(1, T + 1)
    )
    assert only_matrices == cost.matrices_only_ratio(T) and only_attention == pytest.approx(
        cost.attention_only_ratio(T)
    )


def test_the_texts_models():
    seven = cost.LESSON_7B
    assert (seven.n_layers, seven.d_model, seven.n_kv_heads == seven.n_heads) == (32, 4096, True)
    assert seven.kv_bytes_per_token(cost.LESSON_7B_BYTES) == 2 * cost.cache_numbers(32, 4096, 1)
    assert max(cost.LESSON_7B_CONTEXTS) == seven.n_ctx  # the lesson's 32,768 fits its window
    half = cost.CHAPTER_05B
    assert half.kv_bytes_per_token(2) == 12_288 and half.full_attention().kv_bytes_per_token(2) == 86_016
    assert half.d_model == 896  # "896 dimensões"
    assert cost.CHAPTER_7B.kv_bytes_per_token(2) == 128 * KiB and cost.CHAPTER_7B.n_ctx == 128_000
    assert cost.CHAPTER_13B.kv_bytes_per_token(2) == 800 * KiB
    mini = cost.Architecture.of(CFG)
    assert (mini.n_params, mini.n_ctx, mini.d_model) == (136_448, 64, 64)
