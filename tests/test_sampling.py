import numpy as np
import pytest

from model import generate, probabilities, sample


def test_same_seed_same_text(gpt):
    a = generate(gpt, "La Nela", 62, seed=7, top_p=0.9)
    b = generate(gpt, "La Nela", 62, seed=7, top_p=0.9)
    c = generate(gpt, "La Nela", 62, seed=8, top_p=0.9)
    assert a == b and a != c
    assert len(a) == 64


def test_known_text_for_seed_0(gpt):
    # pinned: the same seed gives the same text on any machine (PCG64 + one draw per token)
    text = gpt.tokenizer.decode(generate(gpt, "La Nela", 62, seed=0, top_p=0.9))
    from model.checkpoint import load_metrics

    assert text == load_metrics()["sample_seed0_top_p0.9"]


def test_top_k_and_top_p_cut_the_tail():
    z = np.log(np.array([0.5, 0.2, 0.15, 0.1, 0.05]))
    assert np.count_nonzero(probabilities(z, top_k=2)) == 2
    p = probabilities(z, top_p=0.8)  # 0.5 + 0.2 < 0.8 <= 0.5 + 0.2 + 0.15
    assert np.count_nonzero(p) == 3 and abs(p.sum() - 1) < 1e-12
    assert np.count_nonzero(probabilities(z, top_p=0.5)) == 1
    assert np.allclose(probabilities(z), np.exp(z))


def test_temperature():
    z = np.array([1.0, 2.0, 3.0])
    assert probabilities(z, temperature=0)[2] == 1.0
    cold, hot = probabilities(z, temperature=0.5), probabilities(z, temperature=2.0)
    assert cold[2] > probabilities(z)[2] > hot[2]


def test_never_samples_outside_the_kept_set():
    z = np.log(np.array([0.4, 0.3, 0.2, 0.1]))
    rng = np.random.default_rng(0)
    draws = {sample(z, rng, top_k=2) for _ in range(500)}
    assert draws == {0, 1}


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_non_finite_logits_are_refused_not_sampled(bad, temperature):
    """A non-finite logit is refused: sampled, NaN would give a distribution of NaNs and token V (512),
    outside the vocabulary."""
    z = np.zeros(512)
    z[17] = bad
    with pytest.raises(ValueError, match="non-finite logits: 1 of 512 .*token 17"):
        probabilities(z, temperature)
    with pytest.raises(ValueError, match="non-finite logits"):
        sample(z, np.random.default_rng(0), temperature, top_p=0.9)
    z[17] = 0.0
    assert 0 <= sample(z, np.random.default_rng(0), temperature) < 512
