"""The lesson's timing table, measured in one run on this machine.

    python -m model.bench

For positions 8, 16, 32, 48, 64: the multiplications of one token with the
cache, c(t), and without it, t c(t); the measured time of that token both ways
(avanzar on a cache of t-1 positions; the full forward pass over t tokens);
the clock's ratio next to the count's. Then position 64 row by row: 64 rows in
one pass against one row alone. Each time is the best of several rounds, each
round long enough for the clock's resolution not to matter.
"""
from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

from . import cost

POSITIONS = (8, 16, 32, 48, 64)


def time_per_call(fn, min_seconds: float = 0.01, rounds: int = 5) -> float:
    """Best seconds per call of fn() over `rounds` rounds of at least min_seconds each."""
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_seconds:
            break
        n = n * 2 if dt <= 0 else max(n + 1, int(n * min_seconds / dt * 1.2))
    best = dt / n
    for _ in range(rounds - 1):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def timed(fn, min_seconds: float = 0.002, max_calls: int = 50):
    """(result of fn(), seconds per call). fn runs once; if that took less than
    min_seconds it runs again in one batch long enough for a coarse clock
    (browsers round performance.now() to 0.1 ms) and the batch's mean is used."""
    t0 = time.perf_counter()
    result = fn()
    first = time.perf_counter() - t0
    if first >= min_seconds:
        return result, first
    n = max(2, min(max_calls, int(min_seconds / max(first, 1e-6)) + 1))
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return result, (time.perf_counter() - t0) / n


def window_ids(gpt, prompt: str = "La Nela", seed: int = 0, top_p: float = 0.9) -> list[int]:
    """The explorable's text: the prompt and sampled tokens up to a full window."""
    from .sampling import generate
    n_prompt = len(gpt.tokenizer.encode(prompt))
    return generate(gpt, prompt, gpt.config.n_ctx - n_prompt, seed=seed, top_p=top_p)


def cached_seconds(gpt, ids, t: int, **kw) -> float:
    """One token at position t (1-based) with the cache: avanzar on a cache of t-1 positions."""
    _, cache = gpt.llenar(ids[:t - 1])
    return time_per_call(lambda: gpt.avanzar(ids[t - 1], cache.copy()), **kw)


def full_seconds(gpt, ids, t: int, **kw) -> float:
    """The same token without the cache: the full pass over t tokens."""
    return time_per_call(lambda: gpt.forward(ids[:t]), **kw)


def position_row(cfg, t: int, cached_s: float, full_s: float) -> dict:
    return {"t": t, "c": cost.c_cached(cfg, t), "tc": cost.c_uncached(cfg, t),
            "cached_s": cached_s, "full_s": full_s, "clock_ratio": full_s / cached_s,
            "count_ratio": cost.ratio_at(cfg, t)}


def measure_position(gpt, ids, t: int, **kw) -> dict:
    """One token at position t, with the cache and without it."""
    return position_row(gpt.config, t, cached_seconds(gpt, ids, t, **kw), full_seconds(gpt, ids, t, **kw))


def rows_summary(n_rows: int, cached_s: float, full_s: float) -> dict:
    """Position n_rows, row by row: the full pass per row against one row alone (a cached step)."""
    return {"rows": n_rows, "per_row_in_pass_s": full_s / n_rows, "one_row_s": cached_s,
            "ratio": cached_s / (full_s / n_rows)}


def table(gpt, positions=POSITIONS, **kw) -> tuple[list[dict], dict]:
    """The timing table, and the last position row by row (from the same measurement)."""
    ids = window_ids(gpt)
    rows = [measure_position(gpt, ids, t, **kw) for t in positions]
    last = rows[-1]
    return rows, rows_summary(last["t"], last["cached_s"], last["full_s"])


def format_table(rows: list[dict], by_row: dict) -> str:
    out = [f"{'t':>3} {'c(t)':>10} {'t c(t)':>12} {'with cache':>11} {'without':>10} "
           f"{'clock ratio':>12} {'count ratio':>12}"]
    for r in rows:
        out.append(f"{r['t']:>3} {r['c']:>10,} {r['tc']:>12,} {r['cached_s'] * 1e3:>8.3f} ms "
                   f"{r['full_s'] * 1e3:>7.3f} ms {r['clock_ratio']:>11.1f}x {r['count_ratio']:>11.0f}x")
    out.append(f"position {by_row['rows']}, row by row: {by_row['rows']} rows in one pass "
               f"{by_row['per_row_in_pass_s'] * 1e3:.3f} ms per row; one row alone "
               f"{by_row['one_row_s'] * 1e3:.3f} ms ({by_row['ratio']:.1f}x more per row)")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="The lesson's timing table, measured here.")
    ap.add_argument("--min-seconds", type=float, default=0.02, help="shortest timing round")
    args = ap.parse_args(argv)
    from .gpt import MiniGPT
    from .threads import one_blas_thread
    one_blas_thread()
    gpt = MiniGPT.load()
    rows, by_row = table(gpt, min_seconds=args.min_seconds)
    print(f"mini-GPT, {gpt.n_params():,} parameters; Python {platform.python_version()}, "
          f"NumPy {np.__version__}, {platform.machine()}")
    print(format_table(rows, by_row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
