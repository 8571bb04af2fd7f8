import numpy as np
import pytest

from model import Config, KVCache, MiniGPT, generate
from model.gpt import param_shapes


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
    assert "lm_head" not in shapes                  # tied: logits = h @ E.T
    assert sum(int(np.prod(s)) for s in shapes.values()) == 136_448


def cached_vs_full(gpt, ids, n_prompt=2):
    """Largest |cached - full| over every position, and the final cache."""
    full = gpt.forward(ids)                                         # (T, V)
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


@pytest.mark.parametrize("name,ids", [
    ("one token repeated", [7] * 64),
    ("unknown symbol everywhere", [0] * 64),
    ("largest id", [511] * 64),
    ("alternating extremes", [0, 511] * 32),
    ("uniform random", list(np.random.default_rng(3).integers(0, 512, 64))),
    ("descending", list(range(511, 447, -1))),
])
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
    assert type(err.value) is IndexError                  # NumPy's own, not a subclass
    assert "64" in str(err.value)                         # index 64 of a 64-row table
    assert len(cache) == 64
    assert [id(k) for k in cache.k + cache.v] == before_ids
    assert all(np.array_equal(a, b) for a, b in zip(cache.k, before_k))
    # and it still works for a position that exists
    with pytest.raises(IndexError):
        gpt.forward(ids + [ids[-1]])                      # the full pass fails the same way


def test_lesson_names_are_the_english_ones(gpt):
    ids = gpt.tokenizer.encode("La Nela")
    a, ca = gpt.llenar(ids)
    b, cb = gpt.prefill(ids)
    assert np.array_equal(a, b)
    assert np.array_equal(gpt.avanzar(9, ca), gpt.step(9, cb))
    assert MiniGPT.llenar.__doc__ and MiniGPT.avanzar.__doc__


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
    from model.checkpoint import load_weights, WEIGHTS
    stored, _ = load_weights(WEIGHTS)
    for name, a in gpt.params.items():
        assert np.array_equal(a, stored[name])                     # the same numbers
        if a.ndim == 2 and name not in ("wte", "wpe"):
            assert a.flags.f_contiguous, name                      # columns contiguous: faster without BLAS
    assert gpt.params["wte"].flags.c_contiguous and gpt.params["wpe"].flags.c_contiguous
