"""Batched decoding: B conversations in one tensor per block, each exactly as if alone."""

import numpy as np
import pytest

from model import generate, is_position_error
from model.batch import BatchCache, generate_batch, prefill_batch, step_batch
from model.gpt import kv_difference

PROMPTS = ["La Nela", "Se puso el sol. Tras el breve crepúsculo vino tranquila", "Pablo", "¿Qué", "Marianela y"]


def window(gpt, prompt, seed):
    return generate(gpt, prompt, gpt.config.n_ctx - len(gpt.tokenizer.encode(prompt)), seed=seed)


def test_ragged_batch_gives_each_conversation_its_own_logits(gpt):
    """Prompts of 2 to 14 tokens; every step's logits of every row against the full pass of
    that conversation alone, to the end of the window of the longest."""
    texts = [window(gpt, p, s) for s, p in enumerate(PROMPTS)]
    lens = [len(gpt.tokenizer.encode(p)) for p in PROMPTS]
    assert len(set(lens)) >= 3
    z, cache = prefill_batch(gpt, [t[:n] for t, n in zip(texts, lens)])
    worst = max(np.abs(z[b] - gpt.forward(texts[b][:n])[-1]).max() for b, n in enumerate(lens))
    for i in range(64 - max(lens)):
        z = step_batch(gpt, [t[n + i] for t, n in zip(texts, lens)], cache)
        full = [gpt.forward(t[: n + i + 1])[-1] for t, n in zip(texts, lens)]
        worst = max(worst, max(np.abs(z[b] - full[b]).max() for b in range(len(texts))))
    assert worst < 1e-12
    for b, (t, n) in enumerate(zip(texts, lens)):  # and each row's own cache
        own = gpt.llenar(t[: n + 64 - max(lens)])[1]
        assert len(cache.row(b)) == len(own) and kv_difference(cache.row(b), own) < 1e-12


def test_no_row_reads_padding_or_another_row(gpt):
    """Changing every other conversation (and so the padding around this one) changes
    nothing of this one's logits."""
    a = gpt.tokenizer.encode("La Nela")
    za, ca = prefill_batch(gpt, [a, [5] * 9, [7, 8, 9]])
    zb, cb = prefill_batch(gpt, [a, [300] * 20])
    assert np.abs(za[0] - zb[0]).max() < 1e-12
    assert np.abs(step_batch(gpt, [11, 1, 2], ca)[0] - step_batch(gpt, [11, 3], cb)[0]).max() < 1e-12
    assert cb.valid.shape == (2, 21) and cb.valid[0].sum() == 3 and cb.lengths.tolist() == [3, 21]


@pytest.mark.parametrize("B", [1, 32])
def test_generate_batch_samples_what_each_seed_samples_alone(gpt, B):
    prompts = [PROMPTS[b % len(PROMPTS)] for b in range(B)]
    out = generate_batch(gpt, prompts, 12, seeds=range(100, 100 + B))
    assert out == [generate(gpt, p, 12, seed=100 + b) for b, p in enumerate(prompts)]


def test_a_row_past_the_window_meets_the_position_table(gpt):
    ids = [gpt.tokenizer.encode(p) for p in PROMPTS[:2]]
    z, cache = prefill_batch(gpt, ids)
    for _ in range(64 - len(ids[1])):
        step_batch(gpt, [1, 1], cache)
    assert cache.lengths.tolist() == [64 - len(ids[1]) + len(ids[0]), 64]
    k_before, slots = [k for k in cache.k], len(cache)
    with pytest.raises(IndexError) as e:
        step_batch(gpt, [1, 1], cache)  # row 1 asks for position 65
    assert is_position_error(e.value)
    assert str(e.value) == "index 64 is out of bounds for axis 0 with size 64"
    assert len(cache) == slots and all(a is b for a, b in zip(cache.k, k_before))  # untouched


def test_empty_batch_cache_shapes(gpt):
    cache = BatchCache.empty(gpt.config, 3)
    assert len(cache) == 0 and cache.k[0].shape == (3, 4, 0, 16)
    _, cache = prefill_batch(gpt, [[1, 2], [3]])
    assert cache.k[1].shape == (2, 4, 2, 16) and cache.nbytes == 2 * 2 * 2 * 4 * 2 * 16 * 8


def test_an_empty_prompt_is_refused_as_in_the_single_path(gpt):
    """No token, no last row: the single path and the batch refuse it with the same words,
    before anything is computed (a batch must not return logits read from padding)."""
    with pytest.raises(ValueError, match="^the prompt is empty: a pass needs at least one token"):
        gpt.prefill([])
    _, cache = gpt.prefill([1, 2])
    with pytest.raises(ValueError, match="^the list of rows to add is empty"):
        gpt.prefill([], cache)
    assert len(cache) == 2
    with pytest.raises(ValueError, match="^prompt 2 of 3 is empty: a pass needs at least one token"):
        prefill_batch(gpt, [[1, 2], [], [3]])
    with pytest.raises(ValueError, match="^the batch is empty"):
        prefill_batch(gpt, [])
    with pytest.raises(ValueError, match="^prompt 1 of 2 is empty"):
        generate_batch(gpt, ["", "La Nela"], 3, seeds=[0, 1])
