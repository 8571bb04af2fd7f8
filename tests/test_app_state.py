"""The explorable's state, without a browser."""

import numpy as np
import pytest

from app.state.explorer import COMPUTED, FUTURE, READ, Explorer
from app.state.settings import CACHE, FULL, Settings
from model import generate


@pytest.fixture
def ex(gpt):
    return Explorer(gpt, Settings(seed=0, top_p=0.9))


def test_starts_after_prefill(ex):
    assert ex.t == 2 and ex.tokens() == ["La", " Nela"]
    assert list(ex.cell_states()[:3]) == [COMPUTED, COMPUTED, FUTURE]
    assert ex.error is None and ex.clock().cached_s is None
    c = ex.costs()
    assert c["total_cached"] == 131_072 * 2 + 256 * 3 and c["cache_numbers"] == 2 * 2 * 2 * 64


def test_stepping_with_the_cache(ex):
    assert ex.step()
    assert ex.t == 3
    states = ex.cell_states()
    assert list(states[:4]) == [READ, READ, COMPUTED, FUTURE]
    m = ex.clock()
    assert m.proof < 1e-12 and m.clock is None  # the step itself: the proof; the clock comes apart
    assert ex.measure_clock() and not ex.measure_clock()  # measured once
    c = ex.clock().clock
    assert c.a_s > 0 and c.b_s > 0 and c.samples == 5 and c.ratio_low <= c.ratio <= c.ratio_high
    assert ex.cache.k[0].shape == (4, 3, 16)


def test_same_text_as_generate_and_same_seed_same_text(gpt, ex):
    while ex.t < 64:
        assert ex.step()
    assert ex.ids == generate(gpt, "La Nela", 62, seed=0, top_p=0.9)
    other = Explorer(gpt, Settings(seed=0, top_p=0.9))
    other.advance_to(64)
    assert other.ids == ex.ids


def test_totals_at_64_and_the_error_at_65(ex):
    ex.advance_to(64)
    c = ex.costs()
    assert (c["total_cached"], c["total_full"]) == (8_921_088, 295_526_400)
    assert round(c["total_ratio"], 1) == 33.1 and c["ratio"] == 64
    assert c["cache_numbers"] == 16_384 and c["cache_bytes"] == 131_072
    ids, k0 = list(ex.ids), ex.cache.k[0]
    assert not ex.step()
    assert ex.error.type_name == "IndexError" and ex.error.position == 65
    assert "index 64 is out of bounds" in ex.error.message
    assert ex.ids == ids and ex.cache.k[0] is k0 and ex.t == 64
    assert not ex.step()  # again: the same error, nothing breaks
    assert ex.error.position == 65 and ex.t == 64


def test_error_without_the_cache_is_the_same_lookup(ex):
    ex.set_mode(FULL)
    ex.advance_to(64)
    assert not ex.step()
    assert ex.error.type_name == "IndexError" and ex.error.position == 65


def test_reset_recovers(ex):
    ex.advance_to(64)
    ex.step()
    first = list(ex.ids)
    ex.reset()
    assert ex.error is None and ex.t == 2 and not ex.measures
    ex.advance_to(64)
    assert ex.ids == first


@pytest.mark.parametrize("t", [2, 3, 17, 40, 64])
def test_toggling_at_any_t(ex, t):
    ex.advance_to(t)
    assert ex.toggle() == FULL
    states = ex.cell_states()
    assert (states[:t] == COMPUTED).all() and (states[t:] == FUTURE).all()
    assert ex.toggle() == CACHE
    if t > 2:
        assert (ex.cell_states()[: t - 1] == READ).all()


def test_mixed_modes_give_the_same_text(gpt):
    a = Explorer(gpt, Settings(seed=5))
    b = Explorer(gpt, Settings(seed=5))
    while a.t < 40:
        if a.t % 3 == 0:
            a.toggle()
        a.step()
    b.advance_to(40)
    assert a.ids == b.ids


def test_no_cache_step_keeps_a_valid_cache(gpt):
    ex = Explorer(gpt, Settings(seed=2, mode=FULL))
    ex.advance_to(20)
    ex.set_mode(CACHE)
    ex.step()
    assert ex.clock().proof < 1e-12
    full = gpt.forward(ex.ids)
    assert np.abs(full[-1] - ex.next_logits).max() < 1e-12


def test_new_seed_or_top_p_starts_over(ex):
    ex.advance_to(10)
    ex.configure(seed=3)
    assert ex.t == 2 and ex.settings.seed == 3
    ex.advance_to(30)
    ex.configure(top_p=0.5)
    assert ex.t == 2 and ex.settings.top_p == 0.5


def test_vectors_are_the_cache(ex):
    ex.advance_to(10)
    v = ex.vectors(1, "v")
    assert v.shape == (10, 64)
    assert np.array_equal(v[4, 16:32], ex.cache.v[1][1, 4])  # head 2 of position 5


def test_bad_mode_is_refused(ex):
    with pytest.raises(ValueError):
        ex.set_mode("turbo")


def test_only_the_position_tables_error_is_the_lessons(gpt, ex):
    ex.advance_to(64)
    assert not ex.step() and ex.error.lesson and ex.error.type_name == "IndexError"
    from model import MiniGPT

    broken = dict(gpt.params)
    broken["lnf.g"] = np.full_like(broken["lnf.g"], np.nan)  # every logit NaN
    bad = Explorer(MiniGPT(broken, gpt.config, gpt.tokenizer), Settings(seed=0))
    assert not bad.step()
    assert bad.error is not None and not bad.error.lesson and bad.error.position == 3
    assert bad.t == 2  # nothing else changed


def test_weights_digest_follows_the_weights(gpt):
    from model import MiniGPT

    a = Explorer(gpt).weights_digest()
    changed = dict(gpt.params)
    changed["wpe"] = changed["wpe"] + 1e-12
    assert Explorer(MiniGPT(changed, gpt.config, gpt.tokenizer)).weights_digest() != a
    assert Explorer(gpt).weights_digest() == a


def test_the_worker_moves_the_app_where_the_reader_is_on_the_preview(gpt):
    """app/wasm.py move_to (the static site's hand-over): the app goes straight to the query's mode and t,
    the same text and mode as the reader's steps there; back to an earlier t, and past the lesson's
    IndexError too; a query without a place, or out of bounds, moves nothing."""
    from app import wasm
    from app.state.session import Session

    stepped = Session(gpt, Settings())
    for _ in range(30):
        stepped.step()
    session = wasm._SESSION = Session(gpt, Settings())
    try:
        revision = session.revision
        wasm.move_to("?lang=es&mode=full&t=32")
        assert (session.ex.t, session.settings.mode, session.ex.ids) == (32, FULL, stepped.ex.ids)
        assert session.revision - revision <= 3  # a redraw for the mode and one for the place, not one a step
        wasm.move_to("?mode=cache&t=64")
        session.step()  # the step past the window: the model's IndexError
        assert session.ex.error is not None
        wasm.move_to("?mode=cache&t=10")
        assert (session.ex.t, session.ex.error, session.ex.ids) == (10, None, stepped.ex.ids[:10])
        for query in ("?mode=cache", "?mode=turbo&t=20", "?mode=full&t=65", "?t=1", "?t=abc"):
            wasm.move_to(query)
            assert (session.ex.t, session.settings.mode) == (10, CACHE), query
    finally:
        wasm._SESSION = None
