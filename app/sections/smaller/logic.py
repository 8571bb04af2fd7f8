"""Beyond the lesson (1): a smaller cache. What real models do about the lesson's last line (16 GiB of
cache for one long conversation with a 7B, more than its weights): fewer key/value heads, shared
by several queries, and fewer bits per number. Logic without Panel: the comparison of every
combination, measured on real arrays; the section that shows it is in app/sections/smaller/view.py.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.config import CACHE_FORMATS as FORMATS
from model.config import KV_HEADS_CHECKPOINTS as CHECKPOINT

KV_HEADS = tuple(CHECKPOINT)                           # the lesson's model, two shared, multi-query


@dataclass(frozen=True)
class Combination:
    kv_heads: int
    fmt: str
    window_bytes: int          # the real arrays' nbytes for the full window
    held_out_loss: float       # the checkpoint's, on the novel's last 5%
    drift: float               # largest |logits - the same model's with a float64 cache| over the window


def window_cache(gpt, ids, fmt: str):
    """The cache of the whole text in `fmt`, filled in one pass."""
    from model.gpt import KVCache
    from model.quantize import QuantizedKVCache
    empty = KVCache.empty(gpt.config) if fmt == "float64" else QuantizedKVCache.empty(gpt.config, fmt)
    return gpt.prefill(ids, cache=empty)[1]


def combination(gpt, ids, kv_heads: int, fmt: str, loss: float, n_prompt: int) -> Combination:
    """One model and one format, measured on the text `ids` (that model's own window)."""
    from model.quantize import logit_drift
    drift = 0.0 if fmt == "float64" else float(np.max(logit_drift(gpt, ids, fmt, n_prompt)))
    return Combination(kv_heads, fmt, window_cache(gpt, ids, fmt).nbytes, loss, drift)


def per_token_bytes(cache) -> float:
    """Bytes a position adds to a cache (codes and scales): its nbytes over its length."""
    return cache.nbytes / max(len(cache), 1)
