"""A key/value cache that keeps its numbers in fewer bits.

    from model.quantize import QuantizedKVCache
    cache = QuantizedKVCache.empty(gpt.config, "int8")
    logits, cache = gpt.llenar(ids, cache)          # K and V stored as int8 codes and scales
    z = gpt.avanzar(token, cache)                   # attention reads them dequantized

Formats (symmetric, by the largest absolute value, as in the chapter):

    float64   the lesson's cache: 8 bytes a number, nothing lost
    float16   2 bytes a number; each rounded to 11 significant bits:
              |x - x^| <= 2^-11 |x| (2^-25 below float16's normal range)
    int8      one integer in -127..127 a number, one float32 scale s = max|x| / 127
              per vector of d_k numbers (one head, one position): |x - x^| <= s / 2
              = max|x| / 254; 1 + 4 / d_k bytes a number (1.25 at d_k = 16)
    int4      the same with -7..7 (s = max|x| / 7, |x - x^| <= max|x| / 14), two codes
              packed in a byte: 0.5 + 4 / d_k bytes a number (0.75 at d_k = 16)

The granularity, one scale per head and position, is the finest that keeps a
position's vector whole: a key written once is never re-scaled when later ones
arrive, and cutting the cache (speculative decoding) is slicing. Attention
always reads the dequantized numbers, the new row's included (what a real
quantized cache does: it keeps nothing else).

`nbytes` counts the arrays the cache really holds: codes and scales; it equals
model.cost.quantized_cache_bytes(cfg, t, *SIZES[fmt]).

What the cache changes, measured: `logit_drift` (one text, every position),
`drift_over_windows` and `drift_summary` (many texts: a distribution, not a bound;
`python -m model.drift` writes it into each checkpoint's metrics.json) and
`first_departure` (where the sampled text first differs).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .config import CACHE_FORMATS

FORMATS = CACHE_FORMATS
SIZES = {"float64": (64, 0), "float16": (16, 0), "int8": (8, 4), "int4": (4, 4)}   # bits a number, bytes a scale
QMAX = {"int8": 127, "int4": 7}          # symmetric: -qmax .. qmax
INT4_OFFSET = 8                          # a code c in -7..7 is kept as the nibble c + 8


@dataclass(frozen=True)
class Stored:
    """One block's keys or values in a format: codes (H_kv, t, d_k) (int4: (H_kv, t, d_k / 2)
    bytes, two codes each) and, for the integer formats, scales (H_kv, t) float32."""
    codes: np.ndarray
    scales: np.ndarray | None = None

    def __add__(self, other: Stored) -> Stored:
        """Positions of `other` after these."""
        cat = lambda a, b: None if a is None else np.concatenate([a, b], axis=1)
        return Stored(cat(self.codes, other.codes), cat(self.scales, other.scales))

    def first(self, t: int) -> Stored:
        return Stored(self.codes[:, :t], None if self.scales is None else self.scales[:, :t])

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes + (0 if self.scales is None else self.scales.nbytes)


# -- the formats, one function each way --------------------------------------------------

def symmetric_scale(x, qmax: int) -> np.ndarray:
    """(H, t, d_k) -> (H, t) float32: the largest |x| of each vector over qmax."""
    return (np.abs(x).max(axis=-1) / qmax).astype(np.float32)


def pack_int4(q) -> np.ndarray:
    """Codes -7..7 (..., 2m) -> bytes (..., m): the even-numbered code in the low nibble."""
    u = (q + INT4_OFFSET).astype(np.uint8)
    return u[..., 0::2] | (u[..., 1::2] << 4)


def unpack_int4(b) -> np.ndarray:
    """Bytes (..., m) -> codes -7..7 (..., 2m), int8."""
    q = np.empty(b.shape[:-1] + (2 * b.shape[-1],), dtype=np.int8)
    q[..., 0::2] = b & 0x0F
    q[..., 1::2] = b >> 4
    return q - INT4_OFFSET


def quantize(x, fmt: str) -> Stored:
    """Keys or values (H, t, d_k) float64 -> what a cache of format `fmt` keeps of them."""
    if fmt == "float64":
        return Stored(np.asarray(x, dtype=np.float64))
    if fmt == "float16":
        return Stored(np.asarray(x, dtype=np.float16))
    qmax = QMAX[fmt]
    s = symmetric_scale(x, qmax)                                     # (H, t)
    divisor = np.where(s > 0, s, 1).astype(np.float64)[..., None]    # an all-zero vector: codes 0
    q = np.clip(np.rint(x / divisor), -qmax, qmax).astype(np.int8)   # (H, t, d_k)
    return Stored(pack_int4(q) if fmt == "int4" else q, s)


def dequantize(stored: Stored, fmt: str) -> np.ndarray:
    """What attention reads: (H, t, d_k) float64."""
    if stored.scales is None:
        return stored.codes.astype(np.float64)
    q = unpack_int4(stored.codes) if fmt == "int4" else stored.codes
    return q.astype(np.float64) * stored.scales.astype(np.float64)[..., None]


def round_trip(x, fmt: str) -> np.ndarray:
    """x as a cache of format `fmt` gives it back."""
    return dequantize(quantize(x, fmt), fmt)


# -- the cache ---------------------------------------------------------------------------

class QuantizedKVCache:
    """The KVCache of model.gpt, stored in `fmt`: the same methods (append, truncate, copy,
    len, n_numbers, nbytes), and k[l], v[l] give the dequantized (H_kv, t, d_k)."""

    def __init__(self, fmt: str, keys: list[Stored], values: list[Stored]):
        self.fmt, self._k, self._v = fmt, keys, values

    @classmethod
    def empty(cls, cfg, fmt: str) -> QuantizedKVCache:
        if fmt not in FORMATS:
            raise ValueError(f"unknown cache format {fmt!r}: one of {FORMATS}")
        if fmt == "int4" and cfg.d_head % 2:
            raise ValueError(f"int4 packs two numbers a byte: d_k = {cfg.d_head} must be even")
        nothing = np.zeros((cfg.n_kv_heads, 0, cfg.d_head))
        return cls(fmt, [quantize(nothing, fmt) for _ in range(cfg.n_layers)],
                   [quantize(nothing, fmt) for _ in range(cfg.n_layers)])

    def __len__(self) -> int:
        return self._k[0].codes.shape[1]

    def append(self, l: int, k, v):
        """k, v of the new rows (H_kv, n, d_k) quantized at the end of block l's cache.
        Returns what attention reads: block l's K and V, dequantized (H_kv, t, d_k)."""
        self._k[l] = self._k[l] + quantize(k, self.fmt)
        self._v[l] = self._v[l] + quantize(v, self.fmt)
        return dequantize(self._k[l], self.fmt), dequantize(self._v[l], self.fmt)

    @property
    def k(self) -> list[np.ndarray]:
        return [dequantize(s, self.fmt) for s in self._k]

    @property
    def v(self) -> list[np.ndarray]:
        return [dequantize(s, self.fmt) for s in self._v]

    def truncate(self, t: int) -> None:
        self._k = [s.first(t) for s in self._k]
        self._v = [s.first(t) for s in self._v]

    def copy(self) -> QuantizedKVCache:
        return QuantizedKVCache(self.fmt, list(self._k), list(self._v))

    @property
    def n_numbers(self) -> int:
        """Numbers it stands for: 2 L t H_kv d_k, as the float64 cache."""
        per_byte = 2 if self.fmt == "int4" else 1
        return 2 * sum(s.codes.size for s in self._k) * per_byte

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays it holds, codes and scales."""
        return sum(s.nbytes for s in self._k) + sum(s.nbytes for s in self._v)


# -- what it changes -----------------------------------------------------------------------

def logit_drift(gpt, ids, fmt: str, n_prompt: int = 2) -> np.ndarray:
    """Largest |logits with a `fmt` cache - logits with the float64 one| at each position of
    the text (prefill of n_prompt tokens, then one step per token): (len(ids),)."""
    exact, cache = gpt.llenar(ids[:n_prompt])
    quant, qcache = gpt.llenar(ids[:n_prompt], QuantizedKVCache.empty(gpt.config, fmt))
    drift = list(np.abs(quant - exact).max(axis=-1))
    for token in ids[n_prompt:]:
        drift.append(np.abs(gpt.step(token, qcache) - gpt.step(token, cache)).max())
    return np.array(drift)


def first_departure(gpt, prompt: str, n_new: int, fmt: str, seed: int = 0, top_p: float | None = 0.9,
                    temperature: float = 1.0) -> int | None:
    """Where the text sampled with a `fmt` cache first differs from the float64 run with the
    same seed: the 1-based position of the first different token, or None if none differs."""
    from .sampling import generate
    exact = generate(gpt, prompt, n_new, seed, temperature, top_p=top_p)
    quant = generate(gpt, prompt, n_new, seed, temperature, top_p=top_p,
                     cache=QuantizedKVCache.empty(gpt.config, fmt))
    return next((i + 1 for i, (a, b) in enumerate(zip(exact, quant)) if a != b), None)


def drift_over_windows(gpt, windows, fmt: str, n_prompt: int = 2) -> np.ndarray:
    """The largest |logit drift| of each text, over all its positions (`logit_drift`: the
    quantized cache is read by every later step and block): windows (N, T) token ids -> (N,).

        worst = drift_over_windows(gpt, held_out_windows, "int8")   # one number per window
    """
    return np.array([logit_drift(gpt, list(w), fmt, n_prompt).max() for w in windows])


def drift_summary(worst, digits: int = 4) -> dict:
    """Per-window largest drifts (N,) -> their distribution: median, 90th percentile (linear
    interpolation between windows), max, the window where the max is (0-based) and N.
    Rounded to `digits` significant digits."""
    worst = np.asarray(worst, dtype=np.float64)
    sig = lambda x: float(f"{x:.{digits}g}")
    return {"median": sig(np.median(worst)), "p90": sig(np.percentile(worst, 90)), "max": sig(worst.max()),
            "max_window": int(np.argmax(worst)), "windows": int(len(worst))}
