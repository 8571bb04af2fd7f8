"""How much context fits: the wider chapter's statements and the lesson's memory numbers."""

from app.calculator import BITS, OVERHEAD_GIB, PRESETS, chapter_checks
from model.cost import GiB, KiB


def test_the_chapter_statements():
    assert chapter_checks() == {"13b_4bit_8gb": 337, "7b_int8_16gb": 65_378, "13b_int8_16gb": 3_136}


def test_the_assumptions_behind_them():
    assert OVERHEAD_GIB == 1.5 and BITS["4-bit"] == 4.125 and BITS["int8"] == 8
    thirteen = PRESETS["13b"].with_(bits=BITS["4-bit"], gpu_gib=8)
    assert round(thirteen.weights_bytes() / GiB, 1) == 6.2          # "6,2 GB de 8"
    extra = PRESETS["13b"].weights_bytes() - PRESETS["7b-gqa"].weights_bytes()
    assert round(extra / GiB, 1) == 5.6                              # "5,6 GB de pesos adicionais"


def test_bytes_per_token():
    assert PRESETS["0.5b"].bytes_per_token() == 12_288
    assert PRESETS["7b-gqa"].bytes_per_token() == 128 * KiB
    assert PRESETS["13b"].bytes_per_token() == 800 * KiB
    assert PRESETS["7b-mha"].bytes_per_token() == 262_144 * 2          # the lesson's 262,144 numbers
    assert PRESETS["mini"].bytes_per_token() == 2 * 2 * 64 * 8


def test_lesson_memory_of_the_7b():
    p = PRESETS["7b-mha"]
    assert p.bytes_per_token() * 4096 == 2 * GiB
    assert p.bytes_per_token() * 32_768 == 16 * GiB
    assert p.bytes_per_token() * 32_768 > p.weights_bytes() > 13 * GiB


def test_users_share_the_memory():
    p = PRESETS["7b-gqa"]
    assert p.tokens_per_user() == int(p.free_bytes() // p.bytes_per_token())
    assert p.with_(users=4).tokens_per_user() == int(p.free_bytes() // (4 * p.bytes_per_token()))
    assert p.with_(users=10 ** 9).tokens_per_user() == 0


def test_nothing_left_is_zero_not_negative():
    assert PRESETS["70b"].with_(gpu_gib=8).tokens_per_user() == 0


def test_mini_gpt_fits_its_window():
    assert PRESETS["mini"].tokens_per_user() >= 64
