"""The clock, for the page's own measurements ("Tus milisegundos") and the step's timing.

What the app needs at run time to time the model; the command-line table that
prints them is model/bench.py.

A clock reading on a busy machine is noisy, and a browser's clock is coarse
(performance.now() is rounded to 0.1 ms). So the page never shows one reading:
`compare` times two ways of computing the same token in interleaved samples (the
same conditions for both), each sample a batch of calls long enough for the
clock's resolution, and reports medians, and the median of the per-sample ratios
with its spread.
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from . import cost
from .config import Config


def table_positions(cfg: Config) -> tuple[int, ...]:
    """The lesson's timing table: an eighth, a quarter, a half, three quarters and all of the window."""
    n = cfg.n_ctx
    return (n // 8, n // 4, n // 2, 3 * n // 4, n)


POSITIONS = table_positions(Config())       # (8, 16, 32, 48, 64)


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


def per_call(fn, calls: int) -> float:
    """Seconds per call of fn() over one batch of `calls` calls."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def calls_for(fn, min_seconds: float) -> int:
    """How many calls of fn() make a batch of at least min_seconds (one call to find out)."""
    once = per_call(fn, 1)
    return max(1, int(min_seconds / max(once, 1e-7)) + 1) if once < min_seconds else 1


@dataclass(frozen=True)
class Comparison:
    """Two ways of computing the same thing, timed in interleaved samples (seconds per call)."""
    a_s: float                  # median of way a (with the cache)
    b_s: float                  # median of way b (without it)
    ratio: float                # b_s / a_s, the ratio of the medians
    ratio_low: float            # their spread: lowest and highest sample
    ratio_high: float
    samples: int


def interleaved(fns, samples: int = 7, min_seconds: float = 0.002) -> list[list[float]]:
    """Time each of fns in `samples` rounds, every round one batch of each in turn (the same
    conditions for all), each batch at least min_seconds long: seconds per call, per fn, per round."""
    calls = [calls_for(f, min_seconds) for f in fns]
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(samples):
        for f, n, out in zip(fns, calls, times):
            out.append(per_call(f, n))
    return times


def compare(fa, fb, samples: int = 7, min_seconds: float = 0.002) -> Comparison:
    """Time fa and fb in `samples` interleaved batches, each at least min_seconds long."""
    return comparison(*interleaved([fa, fb], samples, min_seconds))


def comparison(a: list[float], b: list[float]) -> Comparison:
    """Interleaved samples of two ways (seconds per call) -> their medians, the ratio of the medians
    b / a, and the spread of the per-sample ratios. The ratio of the medians, not the median of the
    per-sample ratios: on a busy machine a sample of either way can be slowed many times over, and a
    pair's ratio is spoiled when either of its two samples is; a median stands as long as fewer than
    half of each way's samples are. It always lies between the lowest and the highest pair."""
    ratios = sorted(y / x for x, y in zip(a, b))
    a_s, b_s = statistics.median(a), statistics.median(b)
    return Comparison(a_s, b_s, b_s / a_s, ratios[0], ratios[-1], len(a))


def compare_over(fa, fb, args, min_seconds: float = 0.002) -> tuple[Comparison, list]:
    """Like `compare`, one interleaved sample per argument: fa(x), then fb(x), each timed (`timed`).
    Returns the comparison and fa's results."""
    a, b, results = [], [], []
    for x in args:
        result, seconds = timed(lambda x=x: fa(x), min_seconds)
        results.append(result)
        a.append(seconds)
        b.append(timed(lambda x=x: fb(x), min_seconds)[1])
    return comparison(a, b), results

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


def compare_position(gpt, ids, t: int, samples: int = 7, min_seconds: float = 0.004) -> Comparison:
    """The token at position t both ways: avanzar on a cache of t-1 positions, and the full pass."""
    _, cache = gpt.llenar(ids[:t - 1])
    return compare(lambda: gpt.avanzar(ids[t - 1], cache.copy()), lambda: gpt.forward(ids[:t]),
                   samples=samples, min_seconds=min_seconds)


def position_row(cfg, t: int, cached_s: float, full_s: float, clock: Comparison | None = None) -> dict:
    """One row of the timing table: the count both ways next to the clock both ways (with the
    clock's spread when the times come from a Comparison)."""
    row = {"t": t, "c": cost.c_cached(cfg, t), "tc": cost.c_uncached(cfg, t),
           "cached_s": cached_s, "full_s": full_s, "clock_ratio": full_s / cached_s,
           "count_ratio": cost.ratio_at(cfg, t)}
    if clock is not None:
        row.update(clock_ratio=clock.ratio, ratio_low=clock.ratio_low, ratio_high=clock.ratio_high)
    return row


def rows_summary(n_rows: int, cached_s: float, full_s: float) -> dict:
    """Position n_rows, row by row: the full pass per row against one row alone (a cached step)."""
    return {"rows": n_rows, "per_row_in_pass_s": full_s / n_rows, "one_row_s": cached_s,
            "ratio": cached_s / (full_s / n_rows)}
