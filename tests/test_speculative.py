"""Speculative decoding: the committed draft proposes, the mini-GPT checks in one pass, and the
text is the mini-GPT's own (exactly when greedy, in distribution when sampled)."""

import math

import numpy as np
import pytest

from model import MiniGPT, generate, is_position_error
from model.gpt import kv_difference
from model.sampling import draw, probabilities
from model.speculative import Speculative, speculative_generate, verify


@pytest.fixture(scope="module")
def draft():
    return MiniGPT.load("draft")


@pytest.mark.parametrize("k", range(1, 9))
def test_greedy_speculative_text_is_the_mini_gpts_greedy_text(gpt, draft, k):
    for prompt in ("La Nela", "Pablo"):
        n_new = gpt.config.n_ctx - len(gpt.tokenizer.encode(prompt))
        ids, counts = speculative_generate(gpt, draft, prompt, n_new, k=k, temperature=0)
        assert ids == generate(gpt, prompt, n_new, temperature=0)
        assert counts.tokens == n_new and counts.rounds < n_new  # it did write several a pass


def chi_square(counts: np.ndarray, expected: np.ndarray) -> tuple[float, int]:
    """Pearson's statistic over the cells expected at least 5 times, the rest pooled."""
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    keep = exp > 0
    return float(((obs[keep] - exp[keep]) ** 2 / exp[keep]).sum()), int(keep.sum()) - 1


def chi_square_critical(df: int, z: float = 3.09) -> float:
    """The 0.999 quantile of chi-square(df), Wilson-Hilferty (good to ~1% for df >= 10)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def first_tokens(p, q, n: int, seed: int = 0) -> np.ndarray:
    """How often each token comes first out of n rounds of one draft: x drawn from q, then the acceptance
    rule (x kept, else the residual's draw), as Speculative.round(1) does with its generator."""
    rng, rows, firsts = np.random.default_rng(seed), np.stack([p, p]), np.zeros(len(p))
    for _ in range(n):
        x = draw(q, rng)
        accepted, nxt = verify(rows, q[None], [x], rng)
        firsts[x if accepted else nxt] += 1
    return firsts


def test_the_acceptance_rule_samples_the_targets_distribution():
    """On fixed distributions far apart: the first token of a round is distributed as p, the target's,
    not as q, the draft's; the test can tell those apart."""
    p = np.array([0.30, 0.20, 0.15, 0.10, 0.08, 0.07, 0.05, 0.03, 0.02, 0.0])
    q = np.array([0.02, 0.05, 0.03, 0.30, 0.10, 0.05, 0.15, 0.10, 0.10, 0.10])
    N = 20000
    stat, df = chi_square(first_tokens(p, q, N), N * p)
    assert stat < chi_square_critical(max(df, 10))
    stat_q, df_q = chi_square(np.bincount([draw(q, np.random.default_rng(i)) for i in range(N)], minlength=10), N * p)
    assert stat_q > 10 * chi_square_critical(max(df_q, 10))  # the draft alone: far off
    assert first_tokens(p, q, 2000)[9] == 0  # a token the target never picks never comes first


def test_sampled_first_token_follows_the_mini_gpts_distribution(gpt, draft):
    """The mini-GPT's and the draft's own distributions after the prompt (top-p 0.9 at temperature 1): the
    rule's first token follows the mini-GPT's; and Speculative.round(1) is that rule, draw for draw."""
    prompt = gpt.tokenizer.encode("La Nela")
    p = probabilities(gpt.forward(prompt)[-1], top_p=0.9)
    q = probabilities(draft.forward(prompt)[-1], top_p=0.9)
    N = 6000
    stat, df = chi_square(first_tokens(p, q, N), N * p)
    assert df >= 10 and stat < chi_square_critical(df)
    for seed in range(12):  # the model's round: the same draws from the same generator
        assert Speculative(gpt, draft, prompt, seed=seed).round(1)[0] == np.argmax(first_tokens(p, q, 1, seed))


def rejected_round(gpt, draft, k=6):
    """A state just after a round that rejected a draft token (the first seed that does)."""
    prompt = gpt.tokenizer.encode("La Nela dijo")
    for seed in range(100):
        spec = Speculative(gpt, draft, prompt, seed=seed)
        spec.round(3)
        before = len(spec.ids)
        new = spec.round(k)
        if spec.counts.accepted < spec.counts.drafted and len(new) < k + 1:
            return spec, before
    raise AssertionError("no rejection in 100 seeds")


def test_after_a_rejection_both_caches_are_those_of_a_run_without_the_rejected_tokens(gpt, draft):
    spec, before = rejected_round(gpt, draft)
    ids = spec.ids
    assert len(spec.target_cache) == len(ids) - 1  # all but the newest token
    assert len(spec.draft_cache) <= len(ids) - 1
    clean_target = gpt.llenar(ids[: len(spec.target_cache)])[1]
    clean_draft = draft.llenar(ids[: len(spec.draft_cache)])[1]
    assert kv_difference(spec.target_cache, clean_target) < 1e-12
    assert kv_difference(spec.draft_cache, clean_draft) < 1e-12
    spec.round(4)  # and it goes on from there
    assert kv_difference(spec.target_cache, gpt.llenar(spec.ids[:-1])[1]) < 1e-12


def test_the_window_ends_at_the_position_table_in_every_path(gpt, draft):
    text = generate(gpt, "La Nela", 58, seed=3)  # 60 tokens
    spec = Speculative(gpt, draft, text, seed=0)
    while len(spec.ids) < 64:
        spec.round(8)  # k capped: never asks for 65
    assert len(spec.ids) == 64 and spec.counts.drafted <= 4 + 3 + 2 + 1
    lens = len(spec.target_cache), len(spec.draft_cache)
    with pytest.raises(IndexError) as e:
        spec.round(4)  # the next token would be 65th
    assert is_position_error(e.value) and str(e.value) == "index 64 is out of bounds for axis 0 with size 64"
    assert len(spec.ids) == 64 and (len(spec.target_cache), len(spec.draft_cache)) == lens
    with pytest.raises(IndexError) as e:
        speculative_generate(gpt, draft, "La Nela", 63, k=4)
    assert is_position_error(e.value)


def test_acceptance_rule_on_its_own():
    rng = np.random.default_rng(0)
    p = np.array([[0.5, 0.5, 0.0], [0.2, 0.3, 0.5], [0.0, 0.0, 1.0]])
    assert verify(p, p[:2], [0, 2], rng) == (2, 2)  # p = q: all accepted, bonus
    q = np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]])
    for _ in range(20):
        a, nxt = verify(p, q, [2, 0], rng)  # p(2) = 0: always rejected
        assert a == 0 and nxt in (0, 1)  # from max(0, p - q)
    assert verify(p[:2], p[:2], [0, 2], rng) == (2, None)  # no row for a bonus


def test_draft_must_share_the_vocabulary(gpt):
    from model import Config

    other = MiniGPT.random(Config(vocab_size=300, n_layers=1))
    with pytest.raises(ValueError, match="share the mini-GPT's tokenizer"):
        Speculative(gpt, other, [1, 2])


def test_a_round_in_its_three_phases_is_the_same_round(gpt, draft):
    """begin (the draft proposes), check_round (the mini-GPT's one pass), decide (the rule and the cut):
    what the page shows one at a time writes what round() writes, each phase touching its own cache."""
    whole, phased = (Speculative(gpt, draft, gpt.tokenizer.encode("La Nela"), seed=4) for _ in range(2))
    for k in (3, 5, 1, 8, 2):
        target, drafted = len(phased.target_cache), len(phased.draft_cache)
        r = phased.begin(k)
        assert len(phased.target_cache) == target and len(phased.draft_cache) > drafted and r.p is None
        phased.check_round(r)
        assert len(phased.target_cache) == len(phased.ids) + r.k and r.accepted is None
        assert phased.decide(r) == whole.round(k) == r.new
        assert phased.ids == whole.ids and phased.counts == whole.counts
        assert kv_difference(phased.target_cache, whole.target_cache) == 0.0
        assert kv_difference(phased.draft_cache, whole.draft_cache) == 0.0
