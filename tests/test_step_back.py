"""A step back (the chapter's rollback: slicing the cache) and the newest token's candidates,
without a browser."""

import numpy as np
import pytest

from app.state.explorer import Explorer
from app.state.settings import CACHE, FULL, Settings
from model.gpt import kv_difference
from model.sampling import candidates, probabilities


@pytest.fixture
def ex(gpt):
    return Explorer(gpt, Settings(seed=3, top_p=0.9))


def state(ex) -> tuple:
    """Everything a step changes, as bytes: the text, both caches, the next logits, the generator."""
    caches = {id(ex.cache): ex.cache, id(ex.cache64): ex.cache64}.values()
    return (
        tuple(ex.ids),
        tuple(np.ascontiguousarray(a).tobytes() for c in caches for a in [*c.k, *c.v]),
        ex.next_logits.tobytes(),
        str(ex.rng.bit_generator.state),
    )


@pytest.mark.parametrize("mode, fmt", [(CACHE, "float64"), (FULL, "float64"), (CACHE, "int8"), (FULL, "int4")])
def test_back_then_forward_is_the_same_to_the_bit(ex, mode, fmt):
    if fmt != "float64":
        ex.set_format(fmt)
    ex.set_mode(mode)
    for _ in range(10):
        assert ex.step()
    at_12 = state(ex)
    for _ in range(5):
        assert ex.step()
    at_17 = state(ex)
    for _ in range(5):
        assert ex.back()
    back = state(ex)
    assert ex.t == 12 and back[0] == at_12[0] and back[2:] == at_12[2:]  # the logits restored, the generator rewound
    if (mode, fmt) == (FULL, "float64"):
        # without the cache the kept K and V are the last full pass's (over 17 positions): its first 12
        # columns, rounded as a pass over 17 rounds them, within 1e-15 of a pass over 12
        assert kv_difference(ex.cache, fresh_cache(ex)) < 1e-14
    else:
        assert back[1] == at_12[1]  # the cache sliced: what it held at 12, to the bit
    for _ in range(5):
        assert ex.step()
    assert state(ex) == at_17  # the same tokens drawn, the same numbers computed


def fresh_cache(ex):
    return ex.gpt.prefill(ex.ids)[1]


def test_rolling_back_is_slicing(ex):
    for _ in range(6):
        ex.step()
    before = [a.copy() for a in ex.cache.k]
    reads = ex.past[-1].reads
    assert ex.back()
    assert all(np.array_equal(k, b[:, :7, :]) for k, b in zip(ex.cache.k, before))
    assert len(ex.cache) == ex.t == 7 and ex.reads is reads  # what the query read then, as it was
    c = ex.costs()  # the counts follow the position
    assert c["t"] == 7 and c["cache_numbers"] == 2 * 2 * 7 * 64
    assert 8 not in ex.measures and ex.measures[7].proof < 1e-12  # position 7's proof, as measured


def test_at_the_prompt_there_is_nothing_to_undo(ex):
    before = state(ex)
    assert not ex.back() and state(ex) == before and ex.t == 2


def test_back_from_the_error_at_65(ex):
    while ex.t < 64:
        ex.step()
    assert not ex.step() and ex.error is not None
    assert ex.back() and ex.error is None and ex.t == 63
    assert ex.step() and ex.t == 64


def test_back_after_another_format_reads_the_shorter_text_again(gpt, ex):
    for _ in range(5):
        ex.step()
    ex.set_format("int8")
    assert ex.back() and ex.t == 6
    fresh = Explorer(gpt, Settings(seed=3, top_p=0.9))
    fresh.ids = list(ex.ids)
    fresh.fmt = "int8"
    fresh.refill()
    assert np.array_equal(ex.next_logits, fresh.next_logits)
    assert len(ex.cache) == 6 and ex.cache.nbytes == fresh.cache.nbytes


def test_the_candidates_are_the_samplers(ex):
    top, drawn = ex.newest_candidates()
    assert drawn is None  # at the prompt: what the first draw weighs
    assert ex.step()
    c, drawn = ex.newest_candidates()
    logits = ex.past[-1].logits
    kept = probabilities(logits, 1.0, None, 0.9) > 0
    assert drawn == ex.ids[-1] and kept[drawn]
    assert c.n_kept == kept.sum() and c.kept_mass >= 0.9 - 1e-12
    ps = [p for _tok, p, _k in c.top]
    assert ps == sorted(ps, reverse=True) and len(c.top) == 8
    assert [k for _tok, _p, k in c.top] == sorted((k for _t, _p, k in c.top), reverse=True)  # kept first


def test_candidates_cut_where_top_p_does():
    logits = np.log(np.array([0.5, 0.3, 0.15, 0.05]))
    c = candidates(logits, top_p=0.75, n=4)  # the smallest head holding 0.75: 0.5 + 0.3
    assert [t for t, _p, _k in c.top] == [0, 1, 2, 3]
    assert [k for _t, _p, k in c.top] == [True, True, False, False]
    assert c.n_kept == 2 and c.kept_mass == pytest.approx(0.8)
    assert candidates(logits, top_p=None, n=2).n_kept == 4


def test_the_page_steps_back_and_shows_the_candidates():
    from app.main import create_view

    v = create_view("?t=2&lang=es")
    card = lambda: v.readouts.layout.object[v.readouts.layout.object.index("data-testid='candidates-card'") :]
    assert "Los candidatos para la posición 3" in card() and "candidate-drawn" not in card()
    v.controls.do("back")  # at the prompt
    assert v.ex.t == 2 and "no hay nada que deshacer" in v.a11y.message
    for _ in range(4):
        v.controls.do("step")
    drawn = v.ex.tokens()[-1]
    assert "Los candidatos del token 6" in card() and "data-testid='candidate-drawn'" in card()
    assert f"data-kept='{v.ex.newest_candidates()[0].n_kept}'" in card()
    assert card().count("<tr class=") == 8  # always eight rows: the card keeps its height
    assert ("top-p corta aquí" in card()) == (v.ex.newest_candidates()[0].n_kept < 8)
    v.controls.do("back")
    assert v.ex.t == 5 and "t = 5" in v.a11y.message and "truncate" in v.a11y.message
    assert "t = 5 / 64" in v.controls.where.object and "Los candidatos del token 5" in card()
    v.controls.do("step")
    assert v.ex.tokens()[-1] == drawn  # the same token drawn again
    v.session.settings.precision = "int8"
    v.controls.do("back")
    assert v.ex.t == 5 and "vuelve a leer" in v.a11y.message
    v.session.settings.lang = "pt"
    assert v.controls.back_button.name == "Passo atrás" and "Os candidatos do token 5" in card()
