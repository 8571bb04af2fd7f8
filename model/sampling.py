"""Choosing the next token: temperature, top-k, top-p, with a seeded generator.

One uniform draw per token, turned into a token by the inverse of the
cumulative distribution: with the same seed the same tokens come out on any
machine (NumPy's PCG64 stream is the same everywhere).
"""
from __future__ import annotations

import numpy as np


def finite_logits(logits) -> np.ndarray:
    """logits (V,) as float64; ValueError if any is NaN or infinite (NumPy would otherwise
    turn them into a distribution of NaNs and `sample` into token V, outside the vocabulary)."""
    z = np.asarray(logits, dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(z))
    if bad.size:
        raise ValueError(f"non-finite logits: {bad.size} of {z.size} are NaN or infinite "
                         f"(token {int(bad[0])}: {z[bad[0]]}); nothing can be sampled from them")
    return z


def probabilities(logits, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None):
    """logits (V,) -> the distribution actually sampled from (V,), zeros outside the kept set.
    ValueError for non-finite logits."""
    z = finite_logits(logits)
    if temperature <= 0:
        p = np.zeros_like(z)
        p[int(np.argmax(z))] = 1.0           # temperature 0: the favourite, always
        return p
    z = z / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    order = np.argsort(-p, kind="stable")      # most likely first; ties by token id
    keep = np.ones(len(p), dtype=bool)
    if top_k is not None and top_k > 0:
        keep[order[top_k:]] = False
    if top_p is not None and top_p < 1.0:
        cum = np.cumsum(p[order])
        n_keep = int(np.searchsorted(cum, top_p) + 1)  # smallest head with mass >= top_p
        keep[order[n_keep:]] = False
    p = np.where(keep, p, 0.0)
    return p / p.sum()


def sample(logits, rng: np.random.Generator, temperature: float = 1.0,
           top_k: int | None = None, top_p: float | None = None) -> int:
    """One token id from logits (V,), always inside the vocabulary (ValueError for non-finite logits)."""
    return draw(probabilities(logits, temperature, top_k, top_p), rng)


def draw(p, rng: np.random.Generator) -> int:
    """One token from a distribution p (V,) (any non-negative weights), with one uniform draw:
    the first token whose cumulative mass passes it; never a zero-probability one."""
    cum = np.cumsum(p)
    return int(np.searchsorted(cum, rng.random() * cum[-1], side="right"))


def generate(gpt, prompt: str, n_new: int, seed: int = 0, temperature: float = 1.0,
             top_k: int | None = None, top_p: float | None = 0.9, cache=None) -> list[int]:
    """Prompt + n_new sampled tokens, with the cache (llenar, then avanzar). `cache`: an empty
    cache of another kind to fill (a quantized one, say); a new float64 KVCache if None."""
    rng = np.random.default_rng(seed)
    ids = gpt.tokenizer.encode(prompt)
    logits, cache = gpt.llenar(ids, cache)
    z = logits[-1]                                   # (V,) the next token's logits
    for i in range(n_new):
        tok = sample(z, rng, temperature, top_k, top_p)
        ids.append(tok)
        if i < n_new - 1:
            z = gpt.avanzar(tok, cache)
    return ids
