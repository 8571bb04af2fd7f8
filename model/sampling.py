"""Choosing the next token: temperature, top-k, top-p, with a seeded generator.

One uniform draw per token, turned into a token by the inverse of the
cumulative distribution: with the same seed the same tokens come out on any
machine (NumPy's PCG64 stream is the same everywhere).
"""
from __future__ import annotations

from dataclasses import dataclass

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
    p = softmax(z, temperature)
    p = np.where(kept_by(p, top_k, top_p), p, 0.0)
    return p / p.sum()


def softmax(logits, temperature: float = 1.0) -> np.ndarray:
    """logits (V,) -> the model's distribution at a temperature > 0 (V,), before any cut."""
    z = finite_logits(logits) / temperature
    p = np.exp(z - z.max())
    return p / p.sum()


def kept_by(p, top_k: int | None = None, top_p: float | None = None) -> np.ndarray:
    """(V,) bool: the tokens of the distribution p that top-k and top-p keep, most likely first
    (ties by token id)."""
    order = np.argsort(-p, kind="stable")
    keep = np.ones(len(p), dtype=bool)
    if top_k is not None and top_k > 0:
        keep[order[top_k:]] = False
    if top_p is not None and top_p < 1.0:
        cum = np.cumsum(p[order])
        n_keep = int(np.searchsorted(cum, top_p) + 1)  # smallest head with mass >= top_p
        keep[order[n_keep:]] = False
    return keep


@dataclass
class Candidates:
    """What the sampler weighed for one token: the likeliest tokens, most likely first, as
    (token, p, kept) with p the softmax probability at the temperature (before top-p) and kept
    whether top-p keeps the token; and how many tokens top-p keeps, with their probability's sum
    (the draw is among those, each p scaled by 1 / kept_mass)."""
    top: list[tuple[int, float, bool]]
    n_kept: int
    kept_mass: float


def candidates(logits, temperature: float = 1.0, top_p: float | None = None, n: int | None = 8) -> Candidates:
    """The n likeliest tokens of logits (V,) (all of them if n is None) and top-p's cut, as `sample`
    would see them."""
    if temperature <= 0:
        p = probabilities(logits, temperature)      # (V,) the favourite alone
        kept = p > 0
    else:
        p = softmax(logits, temperature)            # (V,) before top-p
        kept = kept_by(p, None, top_p)
    order = np.argsort(-p, kind="stable")[:n]          # the same order top-p cuts in
    return Candidates([(int(i), float(p[i]), bool(kept[i])) for i in order],
                      int(kept.sum()), float(p[kept].sum()))


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
