import inspect

import numpy as np
import pytest

from model import Config, KVCache, MiniGPT, generate
from model.gpt import kv_difference, param_shapes


def test_config_and_parameter_count(gpt):
    c = gpt.config
    assert (c.n_layers, c.d_model, c.n_heads, c.d_ff, c.vocab_size, c.n_ctx) == (2, 64, 4, 256, 512, 64)
    assert c.d_head == 16
    assert gpt.n_params() == 136_448
    assert all(p.dtype == np.float64 for p in gpt.params.values())


def test_parameter_layout():
    shapes = param_shapes(Config())
    count = lambda names: sum(int(np.prod(shapes[n])) for n in names)
    assert shapes["wte"] == (512, 64) and shapes["wpe"] == (64, 64)
    assert count(["wte"]) == 32_768 and count(["wpe"]) == 4_096
    for l in range(2):
        block = [n for n in shapes if n.startswith(f"h{l}.")]
        assert count(block) == 49_728
        assert shapes[f"h{l}.attn.wq"] == (64, 64) and shapes[f"h{l}.mlp.w1"] == (64, 256)
        assert shapes[f"h{l}.mlp.b1"] == (256,) and shapes[f"h{l}.mlp.w2"] == (256, 64)
    assert count(["lnf.g", "lnf.b"]) == 128
    assert "lm_head" not in shapes  # tied: logits = h @ E.T
    assert sum(int(np.prod(s)) for s in shapes.values()) == 136_448


def cached_vs_full(gpt, ids, n_prompt=2):
    """Largest |cached - full| over every position, and the final cache."""
    full = gpt.forward(ids)  # (T, V)
    logits, cache = gpt.llenar(ids[:n_prompt])
    diffs = [np.abs(logits - full[:n_prompt]).max()]
    for t in range(n_prompt, len(ids)):
        diffs.append(np.abs(gpt.avanzar(ids[t], cache) - full[t]).max())
    return np.array(diffs), cache


def test_cache_gives_the_same_logits_as_the_full_pass(gpt):
    ids = generate(gpt, "La Nela", 62, seed=0, top_p=0.9)
    assert len(ids) == 64
    diffs, cache = cached_vs_full(gpt, ids)
    assert len(diffs) == 63 and diffs.max() < 1e-12
    assert len(cache) == 64


@pytest.mark.parametrize(
    "name,ids",
    [
        ("one token repeated", [7] * 64),
        ("unknown symbol everywhere", [0] * 64),
        ("largest id", [511] * 64),
        ("alternating extremes", [0, 511] * 32),
        ("uniform random", list(np.random.default_rng(3).integers(0, 512, 64))),
        ("descending", list(range(511, 447, -1))),
    ],
)
def test_cache_is_exact_on_adversarial_sequences(gpt, name, ids):
    diffs, _ = cached_vs_full(gpt, ids, n_prompt=1)
    assert diffs.max() < 1e-12, name


def test_prefill_of_every_length_matches(gpt):
    ids = gpt.tokenizer.encode("Marianela y Pablo bajaban por el sendero de la mina, despacio.")[:20]
    full = gpt.forward(ids)
    for n in range(1, len(ids) + 1):
        logits, cache = gpt.llenar(ids[:n])
        assert np.abs(logits - full[:n]).max() < 1e-12
        assert len(cache) == n


def test_cache_shapes_and_size(gpt):
    ids = gpt.tokenizer.encode("La Nela")
    _, cache = gpt.llenar(ids)
    assert [k.shape for k in cache.k] == [(4, 2, 16)] * 2
    assert [v.shape for v in cache.v] == [(4, 2, 16)] * 2
    for t in range(3, 65):
        gpt.avanzar(5, cache)
        assert cache.k[0].shape == cache.v[1].shape == (4, t, 16)
    assert cache.n_numbers == 16_384
    assert cache.nbytes == 128 * 1024


def test_position_65_raises_the_genuine_index_error_and_keeps_the_cache(gpt):
    ids = generate(gpt, "La Nela", 62, seed=1, top_p=0.9)
    _, cache = gpt.llenar(ids)
    before_k = [k.copy() for k in cache.k]
    before_ids = [id(k) for k in cache.k + cache.v]
    with pytest.raises(IndexError) as err:
        gpt.avanzar(ids[-1], cache)
    assert type(err.value) is IndexError  # NumPy's own, not a subclass
    assert "64" in str(err.value)  # index 64 of a 64-row table
    assert len(cache) == 64
    assert [id(k) for k in cache.k + cache.v] == before_ids
    assert all(np.array_equal(a, b) for a, b in zip(cache.k, before_k))
    # and it still works for a position that exists
    with pytest.raises(IndexError):
        gpt.forward(ids + [ids[-1]])  # the full pass fails the same way


def test_lesson_names_are_the_english_ones(gpt):
    ids = gpt.tokenizer.encode("La Nela")
    a, ca = gpt.llenar(ids)
    b, cb = gpt.prefill(ids)
    assert np.array_equal(a, b)
    assert np.array_equal(gpt.avanzar(9, ca), gpt.step(9, cb))
    assert "`avanzar(token, cache)`" in MiniGPT.avanzar.__doc__
    assert "`llenar(ids)`" in MiniGPT.llenar.__doc__


def test_the_cached_step_reads_as_the_lessons_steps():
    """The reader finds the lesson's list in `step`, numbered and in order, each on the
    line that does it: the row, q/k/v, appended to the cache, scores, softmax, the mix."""
    lines = inspect.getsource(MiniGPT.step).splitlines()
    where = {n: next(i for i, line in enumerate(lines) if f"# ({n})" in line) for n in range(1, 7)}
    assert list(where.values()) == sorted(where.values())
    code = {n: lines[i].split("#")[0] for n, i in where.items()}
    assert "embed" in code[1] and "qkv" in code[2] and "cache.append" in code[3]
    assert "scores" in code[4] and "softmax" in code[5] and "mix" in code[6]


def test_forward_shape(gpt):
    ids = gpt.tokenizer.encode("La Nela")
    assert gpt.forward(ids).shape == (2, 512)
    _, cache = gpt.llenar(ids)
    assert gpt.avanzar(3, cache).shape == (512,)


def test_empty_cache_then_steps_equals_full_pass():
    gpt = MiniGPT.random(seed=4)
    ids = [3, 1, 4, 1, 5, 9, 2, 6]
    cache = KVCache.empty(gpt.config)
    steps = np.stack([gpt.avanzar(i, cache) for i in ids])
    assert np.abs(steps - gpt.forward(ids)).max() < 1e-12


def test_attention_of_one_token_against_the_cache(gpt):
    ids = gpt.tokenizer.encode("La Nela dijo que no quería ver")
    _, cache = gpt.llenar(ids)
    for l in range(2):
        for head in range(4):
            q, K, V, out = gpt.attention_at(ids, l, head)
            assert np.array_equal(K, cache.k[l][head]) and np.array_equal(V, cache.v[l][head])
            s = K @ q / np.sqrt(16)
            w = np.exp(s - s.max())
            assert np.abs((w / w.sum()) @ V - out).max() < 1e-15


def test_weights_are_laid_out_for_x_at_w(gpt):
    from model.checkpoint import WEIGHTS, load_weights

    stored, _ = load_weights(WEIGHTS)
    for name, a in gpt.params.items():
        assert np.array_equal(a, stored[name])  # the same numbers
        if a.ndim == 2 and name not in ("wte", "wpe"):
            assert a.flags.f_contiguous, name  # columns contiguous: faster without BLAS
    assert gpt.params["wte"].flags.c_contiguous and gpt.params["wpe"].flags.c_contiguous


# -- the position error, told apart ------------------------------------------------------


def test_only_the_position_tables_index_error_counts_as_the_lessons(gpt):
    from model import is_position_error

    ids = gpt.tokenizer.encode("La Nela")
    _, cache = gpt.llenar(ids)
    full = [3] * gpt.config.n_ctx
    errors = []
    for call in (
        lambda: gpt.forward(full + [3]),  # the full pass over 65 tokens
        lambda: gpt.llenar([3] * 63, cache),  # prefill past the window
        lambda: gpt.avanzar(3, gpt.llenar(full)[1]),
    ):  # the step to 65
        with pytest.raises(IndexError) as e:
            call()
        errors.append(e.value)
    assert all(is_position_error(e) for e in errors)
    assert all(str(e) == "index 64 is out of bounds for axis 0 with size 64" for e in errors)
    assert len(cache) == 2  # untouched by the failed prefill
    with pytest.raises(IndexError) as other:
        [][1]
    assert not is_position_error(other.value)
    assert not is_position_error(IndexError("index 64 is out of bounds for axis 0 with size 64"))
    assert not is_position_error(ValueError("index 64"))


@pytest.mark.parametrize("token", [512, -1, 10_000])
def test_a_token_outside_the_vocabulary_is_not_an_index_error(gpt, token):
    _, cache = gpt.llenar([1, 2])
    with pytest.raises(ValueError, match=f"token id {token} is outside the vocabulary 0..511"):
        gpt.avanzar(token, cache)
    assert len(cache) == 2


# -- the configuration ------------------------------------------------------------------------


def test_config_checks_its_numbers_and_records_shared_heads_only_when_shared():
    assert Config().n_kv_heads == 4 and Config().group == 1
    assert "n_kv_heads" not in Config().to_dict()  # the lesson's checkpoint: no new key
    assert Config(n_kv_heads=2).to_dict()["n_kv_heads"] == 2
    assert Config(**Config(n_kv_heads=1).to_dict()) == Config(n_kv_heads=1)
    for bad in ({"n_kv_heads": 3}, {"n_heads": 5}, {"d_model": 0}, {"n_ctx": 64.0}, {"vocab_size": True}):
        with pytest.raises(ValueError):
            Config(**bad)


SMALL = Config(n_layers=3, d_model=24, n_heads=6, d_ff=40, vocab_size=37, n_ctx=12, n_kv_heads=2)


def test_every_number_comes_from_the_config():
    """A model of other sizes runs every path, and its window ends where its n_ctx says."""
    from model.batch import prefill_batch, step_batch
    from model.quantize import QuantizedKVCache

    gpt = MiniGPT.random(SMALL, seed=2)
    ids = list(np.random.default_rng(0).integers(0, 37, 12))
    full = gpt.forward(ids)
    diffs, cache = cached_vs_full(gpt, ids, n_prompt=3)
    assert full.shape == (12, 37) and diffs.max() < 1e-12
    assert cache.k[2].shape == (2, 12, 4) and cache.n_numbers == 2 * 3 * 12 * 2 * 4
    with pytest.raises(IndexError, match="index 12 is out of bounds for axis 0 with size 12"):
        gpt.step(1, cache)
    z, batch = prefill_batch(gpt, [ids[:2], ids[:5]])
    assert np.abs(z[1] - full[4]).max() < 1e-12 and step_batch(gpt, [ids[2], ids[5]], batch).shape == (2, 37)
    _, q = gpt.llenar(ids, QuantizedKVCache.empty(SMALL, "int4"))
    assert len(q) == 12


# -- shared key/value heads ---------------------------------------------------------------


@pytest.mark.parametrize("n_kv", [4, 2, 1])
def test_shared_heads_cache_is_exact_at_every_position(n_kv):
    gpt = MiniGPT.random(Config(n_kv_heads=n_kv), seed=5)
    ids = list(np.random.default_rng(n_kv).integers(0, 512, 64))
    diffs, cache = cached_vs_full(gpt, ids, n_prompt=1)
    assert len(diffs) == 64 and diffs.max() < 1e-12
    assert [k.shape for k in cache.k + cache.v] == [(n_kv, 64, 16)] * 4
    assert cache.n_numbers == 2 * 2 * 64 * n_kv * 16  # 16,384 / 8,192 / 4,096


def test_shared_heads_are_read_by_their_group():
    """Query head h reads key/value head h // (H / H_kv): the same as giving every query
    head its own copy of that key/value head."""
    gpt = MiniGPT.random(Config(n_kv_heads=2), seed=6)
    p = dict(gpt.params)
    for l in range(2):
        for w in ("wk", "wv"):  # (64, 32) -> (64, 64): heads 0 0 1 1
            a = p[f"h{l}.attn.{w}"].reshape(64, 2, 16)
            p[f"h{l}.attn.{w}"] = np.repeat(a, 2, axis=1).reshape(64, 64)
    copied = MiniGPT(p, Config())
    ids = [5, 9, 200, 31, 7, 7, 400]
    assert np.abs(gpt.forward(ids) - copied.forward(ids)).max() < 1e-12
    q, K, V, out = gpt.attention_at(ids, 1, 3)
    _, cache = gpt.llenar(ids)
    assert np.array_equal(K, cache.k[1][1]) and np.array_equal(V, cache.v[1][1])


# -- what the query reads ---------------------------------------------------------------------


def test_step_reports_what_each_query_read(gpt):
    ids = generate(gpt, "La Nela", 30, seed=2, top_p=0.9)
    _, cache = gpt.llenar(ids[:-1])
    z, weights = gpt.step(ids[-1], cache, return_weights=True)
    assert np.array_equal(z, gpt.step(ids[-1], gpt.llenar(ids[:-1])[1]))
    assert [w.shape for w in weights] == [(4, 32)] * 2
    assert all(np.allclose(w.sum(axis=-1), 1.0, atol=1e-12) and (w > 0).all() for w in weights)
    for l in range(2):
        for head in range(4):
            q, K, V, out = gpt.attention_at(ids, l, head)
            assert np.abs(weights[l][head] @ V - out).max() < 1e-12  # the weights make the output


def test_the_full_pass_recomputes_exactly_what_the_cache_holds(gpt):
    """No-cache mode: the full pass over t tokens computes every column again. Its keys and
    values of positions 1..t-1 are those the cached step read, and its last row's attention
    weights are the cached step's."""
    ids = generate(gpt, "La Nela", 62, seed=4, top_p=0.9)
    _, cache = gpt.llenar(ids[:2])
    for t in range(3, 65):
        _, read = gpt.step(ids[t - 1], cache, return_weights=True)
        _, recomputed, full_weights = gpt.prefill(ids[:t], return_weights=True)
        assert kv_difference(recomputed, cache, t - 1) < 1e-12  # the columns read, recomputed
        assert kv_difference(recomputed, cache) < 1e-12  # and the new one
        assert max(np.abs(a - b).max() for a, b in zip(read, full_weights)) < 1e-12
    other = gpt.llenar(ids[:10])[1]
    assert kv_difference(other, gpt.llenar(ids[1:11])[1]) > 0.01  # a shifted text differs


def test_cache_rolls_back_by_slicing(gpt):
    ids = gpt.tokenizer.encode("La Nela dijo que no quería ver")
    _, cache = gpt.llenar(ids)
    before = cache.copy()
    gpt.llenar([4, 5, 6], cache)
    assert len(before) == len(ids) and len(cache) == len(ids) + 3
    cache.truncate(len(ids))
    assert kv_difference(cache, before) == 0.0 and len(cache) == len(ids)
