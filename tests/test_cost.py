"""Every number of LESSON.md's cost and memory section."""
import pytest

from model import Config, cost
from model.cost import GiB, KiB

CFG = Config()


def test_row_cost():
    assert cost.c_row(CFG) == 2 * (4 * 64 ** 2 + 2 * 64 * 256) + 64 * 512 == 131_072


def test_with_and_without_cache_per_token():
    assert cost.c_cached(CFG, 1) == 131_072 + 256
    assert cost.c_cached(CFG, 64) == 131_072 + 2 * 2 * 64 * 64 == 147_456
    for t in (1, 8, 16, 32, 48, 64):
        assert cost.c_uncached(CFG, t) == t * cost.c_cached(CFG, t)
        assert cost.ratio_at(CFG, t) == t                       # exactly t times more


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
    assert cost.cache_bytes(32, 4096, 32_768, 2) > 13 * GiB   # more than its weights


def test_grouped_heads_formula():
    # full multi-head attention is the lesson's formula
    assert cost.kv_bytes_per_token(32, 32, 128, 2) == cost.cache_bytes(32, 4096, 1, 2)
    assert cost.kv_bytes_per_token(24, 2, 64, 2) == 12_288      # the 0.5B of the wider chapter
    assert cost.kv_bytes_per_token(32, 8, 128, 2) == 128 * KiB
    assert cost.kv_bytes_per_token(40, 40, 128, 2) == 800 * KiB


@pytest.mark.parametrize("T", [1, 2, 10, 64, 513])
def test_closed_forms_match_sums(T):
    assert cost.total_cached(CFG, T) == sum(cost.c_cached(CFG, t) for t in range(1, T + 1))
    assert cost.total_uncached(CFG, T) == sum(cost.c_uncached(CFG, t) for t in range(1, T + 1))
