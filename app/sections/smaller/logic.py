"""Beyond the lesson (1): a smaller cache. What real models do about the lesson's last line (16 GiB of
cache for one long conversation with a 7B, more than its weights): fewer key/value heads, shared
by several queries, and fewer bits per number. Logic without Panel: the comparison of every
combination, measured on real arrays; the section that shows it is in app/sections/smaller/view.py.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from model.config import CACHE_FORMATS
from model.config import KV_HEADS_CHECKPOINTS as CHECKPOINT

FORMATS = CACHE_FORMATS  # float64 (the lesson's), then fewer bits per number
KV_HEADS = tuple(CHECKPOINT)  # the lesson's model, two shared, multi-query


@dataclass(frozen=True)
class Combination:
    kv_heads: int
    fmt: str
    window_bytes: int  # the real arrays' nbytes for the full window
    held_out_loss: float  # the checkpoint's, on the novel's last 5%
    drift: float  # largest |logits - the same model's with a float64 cache| over the window


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


def seed_spread(metrics: dict) -> tuple[float, float, int] | None:
    """(lowest, highest, runs) of the held-out loss over training seeds, if metrics.json has them
    ("held_out_loss_seeds", model/seeds.py), else None: one run is all there is."""
    losses = (metrics.get("held_out_loss_seeds") or {}).get("held_out_loss") or []
    return (min(losses), max(losses), len(losses)) if len(losses) >= 2 else None


def drift_spread(metrics: dict) -> dict:
    """The quantized cache's drift over the novel's held-out windows (metrics.json's "kv_cache_drift",
    model/drift.py), per format: {fmt: {"median", "max", "windows", "departures"}} where departures
    are the positions at which the text sampled from the lesson's prompt first departs (None: never)."""
    out = {}
    for fmt, d in (metrics.get("kv_cache_drift") or {}).items():
        out[fmt] = {
            "median": d["median"],
            "max": d["max"],
            "windows": d["windows"],
            "departures": list((d.get("first_departure") or {}).get("positions") or []),
        }
    return out


def departure_range(spreads, fmt: str) -> tuple[int, int, int, int] | None:
    """(first, last, never, runs) of where the sampled text departs with `fmt`, over every model's
    seeds (`spreads`: drift_spread's of each model); None if there are no runs."""
    positions = [p for s in spreads for p in s.get(fmt, {}).get("departures", [])]
    seen = [p for p in positions if p is not None]
    if not seen:
        return None
    return min(seen), max(seen), len(positions) - len(seen), len(positions)
