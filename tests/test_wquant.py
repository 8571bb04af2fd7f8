"""Quantized weights: the schemes' round trips and bounds, their bytes, their errors on the real
checkpoint, and agreement and acceptance as defined (greedy acceptance is agreement)."""

import math

import numpy as np
import pytest

from model.wquant import (
    NF4,
    NF4_PUBLISHED,
    REFERENCE,
    SCHEMES,
    acceptance,
    activation_outliers,
    agreement,
    checkpoint_bytes,
    greedy_texts,
    held_out_ids,
    held_out_loss,
    matrix_errors,
    normal_cdf,
    normal_quantile,
    pack_nibbles,
    projections,
    quantize_matrix,
    quantized_model,
    territories,
    unpack_nibbles,
    weight_stats,
)

UNIFORM = [s for s in SCHEMES if s != "nf4"]


@pytest.fixture(scope="module")
def prompts(gpt):
    return [gpt.tokenizer.encode(p) for p in ("La Nela", "Pablo", "Se puso el sol.")]


@pytest.fixture(scope="module")
def texts(gpt, prompts):
    return greedy_texts(gpt, prompts, 40)


@pytest.fixture(scope="module")
def int4_tensor(gpt):
    return quantized_model(gpt, "int4-tensor")


def test_normal_quantile_without_scipy():
    known = {
        0.5: 0.0,
        0.975: 1.959963984540054,
        0.8413447460685429: 1.0,
        0.001: -3.090232306167813,
        1e-10: -6.361340902404056,
    }
    for p, x in known.items():
        assert normal_quantile(p) == pytest.approx(x, abs=1e-12)
    for p in np.linspace(1e-6, 1 - 1e-6, 301):
        assert abs(normal_cdf(normal_quantile(p)) - p) < 1e-15
        assert normal_quantile(p) == pytest.approx(-normal_quantile(1 - p), abs=1e-9)
    with pytest.raises(ValueError):
        normal_quantile(1.0)


def test_nf4_levels_are_the_published_ones():
    assert len(NF4) == 16 and NF4[0] == -1 and NF4[-1] == 1 and NF4[7] == 0 and (np.diff(NF4) > 0).all()
    assert np.abs(NF4 - np.array(NF4_PUBLISHED)).max() < 2e-7  # float32 digits published


def matrices(gpt):
    rng = np.random.default_rng(0)
    odd = rng.standard_t(3, size=(64, 64)) * 0.02
    odd[:, 5] = 0.0  # a dead unit: scale 0
    odd[3, 7] = 1.5  # one outlier weight
    return [gpt.params[n] for n in projections(gpt.config)] + [odd]


def scale_per_weight(q):
    blocks, _ = territories(np.zeros(q.shape), SCHEMES[q.scheme])
    return (blocks + q.scales.astype(np.float64)[:, None, :]).reshape(q.shape)


@pytest.mark.parametrize("scheme", UNIFORM)
def test_uniform_round_trip_is_within_half_a_step(gpt, scheme):
    bits = SCHEMES[scheme].bits
    qmax = 2 ** (bits - 1) - 1
    for W in matrices(gpt):
        q = quantize_matrix(W, scheme)
        s = scale_per_weight(q)
        err = np.abs(W - q.dequantize())
        assert (err <= s / 2 * (1 + 1e-9)).all() and (err > 0.45 * s).any()  # the bound, and it is tight
        codes = q.values()
        assert codes.min() >= -qmax - 1 and codes.max() <= qmax and np.array_equal(codes, np.round(codes))
        assert np.array_equal(q.dequantize(), codes * s)  # W_hat = code x stored scale
        assert q.scales.dtype == np.float16 and (q.scales.astype(np.float64) >= 0).all()


def test_nf4_codes_and_values_are_on_the_grid(gpt):
    for W in matrices(gpt):
        q = quantize_matrix(W, "nf4")
        u = unpack_nibbles(q.codes, W.shape)
        assert u.max() <= 15 and np.array_equal(q.values(), NF4[u])
        s = scale_per_weight(q)
        assert np.array_equal(q.dequantize(), NF4[u] * s)  # every value a level x scale
        assert (np.abs(W - q.dequantize()) <= 0.1519 * s * (1 + 1e-9)).all()  # half the widest gap
        nearest = np.abs(np.divide(W, s, out=np.zeros(W.shape), where=s > 0)[..., None] - NF4).argmin(-1)
        assert np.array_equal(u[s > 0], nearest[s > 0])  # the nearest level


def test_per_row_scales_belong_to_output_units(gpt):
    """y = x @ W: output unit j is column j. Scaling it changes its scale alone, and its codes not."""
    W = gpt.params["h0.mlp.w1"].copy()  # (64, 256)
    q = quantize_matrix(W, "int8-row")
    assert q.scales.shape == (1, 256)
    assert np.allclose(q.scales[0].astype(float), np.abs(W).max(axis=0) / 127, rtol=2**-10)
    W[:, 9] *= 8
    q2 = quantize_matrix(W, "int8-row")
    changed = np.flatnonzero(q2.scales[0] != q.scales[0])
    assert changed.tolist() == [9] and np.array_equal(q2.codes, q.codes)


def test_group_and_block_sizes(gpt):
    p = gpt.params
    assert quantize_matrix(p["h0.mlp.w1"], "int4-group32").scales.shape == (2, 256)
    assert quantize_matrix(p["h0.mlp.w2"], "int8-group32").scales.shape == (8, 64)
    assert quantize_matrix(p["h0.mlp.w2"], "nf4").scales.shape == (4, 64)
    assert quantize_matrix(p["h0.attn.wq"], "nf4").scales.shape == (1, 64)
    assert quantize_matrix(p["h0.attn.wq"], "int4-tensor").scales.shape == (1, 1)
    W = p["h0.mlp.w2"].copy()
    W[32:64, 3] *= 5  # the second group of column 3
    a, b = quantize_matrix(p["h0.mlp.w2"], "int8-group32"), quantize_matrix(W, "int8-group32")
    assert np.argwhere(a.scales != b.scales).tolist() == [[1, 3]]
    with pytest.raises(ValueError, match="do not divide the input width 48"):
        quantize_matrix(np.ones((48, 4)), "nf4")


def test_four_bits_pack_two_codes_a_byte():
    u = np.arange(16, dtype=np.uint8)[::-1].repeat(3).reshape(6, 8)
    b = pack_nibbles(u)
    assert b.dtype == np.uint8 and b.shape == (24,) and b[0] == 15 | (15 << 4)
    assert np.array_equal(unpack_nibbles(b, (6, 8)), u)
    q = quantize_matrix(np.random.default_rng(1).normal(size=(64, 10)), "int4-row")
    assert q.codes.shape == (320,) and q.nbytes == 320 + 10 * 2


def test_bytes_and_bits_per_weight(gpt):
    n = 98_304  # the 12 projection matrices
    rest = (136_448 - n) * 4
    assert checkpoint_bytes(gpt, REFERENCE) == {
        "projections": 4 * n,
        "rest": rest,
        "total": 545_792,
        "bits_per_weight": 32.0,
    }
    scales = {
        "int8-tensor": 12,
        "int8-row": 2 * (4 * 64 + 256 + 64),
        "int8-group32": 2 * (4 * 2 * 64 + 2 * 256 + 8 * 64),
        "nf4": 2 * (4 * 64 + 256 + 4 * 64),
    }
    for scheme, n_scales in scales.items():
        code_bytes = n if SCHEMES[scheme].bits == 8 else n // 2
        b = checkpoint_bytes(gpt, scheme)
        assert b["projections"] == code_bytes + 2 * n_scales and b["total"] == b["projections"] + rest
    assert checkpoint_bytes(gpt, "nf4")["bits_per_weight"] == 4.25
    assert checkpoint_bytes(gpt, "int4-group32")["bits_per_weight"] == 4.5


def test_errors_on_the_checkpoint_order_as_the_chapter_says(gpt):
    worst = {s: max(matrix_errors(gpt, s).values()) for s in SCHEMES}
    median = {s: float(np.median(list(matrix_errors(gpt, s).values()))) for s in SCHEMES}
    assert worst["int8-row"] < 0.01 and worst["int8-group32"] <= worst["int8-row"] < worst["int8-tensor"]
    assert worst["int4-tensor"] > worst["int4-row"] > worst["int4-group32"] > 0.05
    assert median["int4-tensor"] > median["int4-row"] > median["int4-group32"]
    assert worst["int4-tensor"] > 10 * worst["int8-tensor"]


def test_the_checkpoints_weights_and_activations_have_no_outliers(gpt, texts):
    """What this small model measures, said either way: its largest weight is 5 sigma, none beyond 6,
    and no residual dimension reaches 6x the median dimension's largest value."""
    stats = weight_stats(gpt)
    assert len(stats) == 12 and max(s["max_sigmas"] for s in stats) < 6
    assert sum(s["beyond_6_sigma"] for s in stats) == 0
    rows = activation_outliers(gpt, np.array([t[:40] for t in texts]))
    assert [r["layer"] for r in rows] == [0, 1, 2] and rows[0]["max_per_dim"].shape == (64,)
    for r in rows:
        assert r["outliers"] == [] and r["top_over_median"] < 6
        assert r["top_max"] == r["max_per_dim"].max() and r["median_dim_int8_levels"] > 20


def test_quantized_model_runs_the_models_code_unchanged(gpt, int4_tensor, prompts):
    names = projections(gpt.config)
    assert all(int4_tensor.params[n] is gpt.params[n] for n in gpt.params if n not in names)
    assert not np.array_equal(int4_tensor.params["h0.attn.wq"], gpt.params["h0.attn.wq"])
    ids = greedy_texts(int4_tensor, prompts[:1], 20)[0]
    full = int4_tensor.forward(ids)
    logits, cache = int4_tensor.llenar(ids[:3])
    steps = [int4_tensor.avanzar(t, cache) for t in ids[3:]]
    assert np.abs(np.array(steps) - full[3:]).max() < 1e-12
    assert quantized_model(gpt, REFERENCE) is gpt


def test_agreement_as_defined(gpt, int4_tensor, prompts, texts):
    own = agreement(gpt, texts, [len(p) for p in prompts])
    assert own["agree"] == own["total"] == 3 * 40 and own["rate"] == 1.0
    a = agreement(int4_tensor, texts, [len(p) for p in prompts])
    for text, P, mask in zip(texts, prompts, a["masks"]):  # position by position, with the cache
        _, cache = int4_tensor.llenar(text[: len(P) - 1])
        choices = [int(np.argmax(int4_tensor.avanzar(t, cache))) for t in text[len(P) - 1 : -1]]
        assert mask.tolist() == [c == t for c, t in zip(choices, text[len(P) :])]
    assert 0.5 < a["rate"] < 1.0 and a["agree"] == sum(int(m.sum()) for m in a["masks"])


@pytest.mark.parametrize("k", [1, 4])
def test_greedy_acceptance_is_agreement_where_tested(gpt, int4_tensor, prompts, texts, k):
    agree = agreement(int4_tensor, texts, [len(p) for p in prompts])
    acc = acceptance(gpt, int4_tensor, prompts, 40, k=k)
    assert acc["texts"] == texts  # the full model's greedy text
    for i, position, accepted in acc["tests"]:
        assert accepted == agree["masks"][i][position - len(prompts[i])]
    assert 0 < acc["accepted"] < acc["tested"] and acc["alpha"] == acc["accepted"] / acc["tested"]
    if k == 1:  # one draft a round (none in a prompt's last round, maybe)
        assert acc["rounds"] - len(prompts) <= acc["tested"] <= acc["rounds"]
    itself = acceptance(gpt, gpt, prompts, 40, k=k)
    assert itself["alpha"] == 1.0


def test_held_out_loss_is_what_metrics_json_records(gpt, corpus_text, int4_tensor):
    from model.checkpoint import load_metrics
    from model.train import all_windows, loss_and_grads

    held = held_out_ids(gpt.tokenizer, corpus_text)
    assert len(held) == 6300
    assert held_out_loss(gpt, held) == pytest.approx(load_metrics()["held_out_loss"], abs=1e-4)  # 3.5405
    two = held_out_loss(gpt, held, n_windows=2)
    assert two == pytest.approx(loss_and_grads(gpt.params, gpt.config, all_windows(held, 65)[:2], False)[0])
    assert held_out_loss(int4_tensor, held, n_windows=8) > held_out_loss(gpt, held, n_windows=8) + 0.02
    assert not math.isnan(two)
