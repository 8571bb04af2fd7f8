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
    symbols = {"position", "memory_formula", "top_p", "clock_plot_y", "table_token", "lab_c", "lab_tc"}
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
