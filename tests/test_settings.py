"""The reader's settings, from a URL: one param object whose bounds the parser reads."""

import pytest

from app.i18n import LANGS
from app.state.settings import Settings
from tests.languages import absent_language

ABSENT = absent_language(LANGS)  # a language the app does not have (no catalog present names it)


def parse(query, **kw):
    return Settings.from_query(query, **kw)


def values(s) -> dict:
    return {k: getattr(s, k) for k in Settings.URL_KEYS}


def test_defaults():
    s = parse("")
    assert (s.lang, s.mode, s.t, s.seed, s.speed, s.embed, s.notices) == ("es", "cache", None, 0, 4, False, [])


def test_good_values():
    s = parse("?lang=en&mode=full&t=40&seed=3&speed=8&top_p=0.8&embed=1")
    assert (s.lang, s.mode, s.t, s.seed, s.speed, s.top_p, s.embed) == ("en", "full", 40, 3, 8, 0.8, True)
    assert s.notices == []
    assert values(parse(s.query())) == values(s)


def test_session_args_from_panel():
    s = parse({"lang": [b"en"], "t": [b"12"]})
    assert s.lang == "en" and s.t == 12


@pytest.mark.parametrize(
    "query,key,why",
    [
        (f"lang={ABSENT}", "lang", "why_choice"),
        ("mode=turbo", "mode", "why_choice"),
        ("t=100", "t", "why_range"),
        ("t=1", "t", "why_range"),
        ("t=abc", "t", "why_int"),
        ("t=", "t", "why_int"),
        ("seed=-1", "seed", "why_range"),
        ("seed=1e3", "seed", "why_int"),
        ("speed=0", "speed", "why_range"),
        ("top_p=nan", "top_p", "why_float"),
        ("top_p=2", "top_p", "why_range"),
        ("embed=maybe", "embed", "why_bool"),
        ("utm_source=x", "utm_source", "why_unknown"),
        ("t=%FF%FE", "t", "why_int"),
    ],
)
def test_bad_values_are_ignored_with_a_notice(query, key, why):
    s = parse("?" + query)
    default = parse("")
    assert [n[0] for n in s.notices] == [key] and s.notices[0][2] == why
    assert getattr(s, key, None) == getattr(default, key, None)


def test_aliases_and_mixed():
    s = parse(f"?mode=sin&t=64&lang={absent_language(LANGS, preferred=('xx',))}&speed=20")
    assert s.mode == "full" and s.t == 64 and s.speed == 20 and s.lang == "es"
    assert len(s.notices) == 1


def test_bounds_come_from_the_model():
    s = parse("?t=40", n_ctx=32, n_prompt=3)
    assert s.param.t.bounds == (3, 32) and s.t is None and s.notices[0][2:] == ("why_range", {"lo": 3, "hi": 32})
    assert parse("?t=64").param.t.bounds == (2, 64)  # per instance: the other page keeps its own


@pytest.mark.parametrize("query", ["?seed=" + "9" * 100_000, "?t=" + "1" * 5000, "?top_p=" + "0" * 10_000 + "1"])
def test_huge_numbers_are_refused_not_raised(query):
    s = parse(query)
    assert len(s.notices) == 1 and s.notices[0][2] in ("why_int", "why_float")


def test_a_repeated_key_counts_once_its_last_value():
    s = parse("?lang=en&lang=pt&t=5&t=9")
    assert s.lang == "pt" and s.t == 9 and s.notices == []


def test_many_unknown_keys_are_notices_the_page_caps():
    s = parse("?" + "&".join(f"k{i}=v" for i in range(5000)))
    assert len(s.notices) == 5000 and s.lang == "es"
