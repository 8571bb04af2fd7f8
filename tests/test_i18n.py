import string

from app.i18n import LANGS, STRINGS, num, sci, tr


def fields(s):
    return {f for _, f, _, _ in string.Formatter().parse(s) if f}


def test_every_string_in_every_language():
    keys = set(STRINGS["es"])
    for lang in LANGS:
        assert set(STRINGS[lang]) == keys, lang
        for k in keys:
            assert STRINGS[lang][k].strip(), (lang, k)
            assert fields(STRINGS[lang][k]) == fields(STRINGS["es"][k]), (lang, k)


def test_languages_really_differ():
    # only formulas and symbols may read the same in both languages
    symbols = {"position", "memory_formula", "memory_formula_kv", "small_kv_1", "top_p", "clock_plot_y",
               "table_token", "lab_c", "lab_tc", "batch_B_short", "spec_k_short", "spec_alpha_short",
               "spec_axis_target", "spec_axis_draft"}      # axis labels naming a model ("draft", as the chapter)
    for a, b in (("es", "en"), ("en", "pt")):
        same = {k for k in STRINGS[a] if STRINGS[a][k] == STRINGS[b][k]}
        assert same <= symbols, (a, b, same - symbols)
    # Spanish and Portuguese share words ("Animar", "Pausa"), but not many sentences
    same = [k for k in STRINGS["es"] if STRINGS["es"][k] == STRINGS["pt"][k]]
    assert len(same) < 0.15 * len(STRINGS["es"]), same


def test_numbers():
    assert num(8_921_088, "es") == "8\u202f921\u202f088"
    assert num(8_921_088, "en") == "8,921,088"
    assert num(33.1267, "en", 1) == "33.1"
    assert num(65_378, "pt") == "65.378" and num(33.1267, "pt", 1) == "33,1"     # as the chapter writes
    assert num(33.1267, "es", 1) == "33.1"
    assert sci(4.4e-15) == "4.4e-15" and sci(0.0) == "0" and sci(4.4e-15, "pt") == "4,4e-15"


def test_fallback_language():
    assert tr("xx", "step") == tr("es", "step") == "Avanzar"


def test_sizes_in_the_unit_that_fits():
    from app.i18n import size
    assert size(12_288, "es") == "12\u00a0KiB" and size(86_016, "en") == "84\u00a0KiB"
    assert size(768 * 2 ** 20, "pt") == "768\u00a0MiB" and size(136_448 * 8, "pt") == "1,04\u00a0MiB"
    assert size(7e9 * 2, "es") == "13.0\u00a0GiB" and size(128_000 * 131_072, "pt") == "15,6\u00a0GiB"
    assert size(512, "en") == "512\u00a0bytes" and size(0, "es") == "0\u00a0bytes"


def test_numbers_as_typed():
    from app.i18n import parse_number, plain_number
    assert plain_number(4.125, "pt") == "4,125" and plain_number(1.5, "es") == "1.5" and plain_number(24.0, "en") == "24"
    assert plain_number(7e9, "es") == "7\u202f000\u202f000\u202f000" and plain_number(7e9, "pt") == "7.000.000.000"
    for lang in ("es", "en", "pt"):
        for x in (7e9, 1.5, 4.125, 24, 136_448, 0.25):
            assert parse_number(plain_number(x, lang), lang) == x, (lang, x)
    assert parse_number("65.378", "pt") == 65_378 and parse_number("65,378", "en") == 65_378
    assert parse_number("1,5", "es") == 1.5 == parse_number("1.5", "pt") == parse_number("1,5", "en")
    assert parse_number("1.500,5", "pt") == 1500.5 == parse_number("1,500.5", "en")
    assert parse_number("7 000 000 000", "es") == parse_number("7.000.000.000", "es") == 7e9
    for bad in ("", "abc", "1,50,0", "1.2.3", "12.", "nan", "inf", "--1"):
        assert parse_number(bad, "es") is None, bad
