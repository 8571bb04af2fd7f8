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

import numpy as np

from .timing import cached_seconds, full_seconds, position_row, rows_summary, table_positions, window_ids


def measure_position(gpt, ids, t: int, **kw) -> dict:
    """One token at position t, with the cache and without it."""
    return position_row(gpt.config, t, cached_seconds(gpt, ids, t, **kw), full_seconds(gpt, ids, t, **kw))


def table(gpt, positions=None, **kw) -> tuple[list[dict], dict]:
    """The timing table, and the last position row by row (from the same measurement)."""
    ids = window_ids(gpt)
    rows = [measure_position(gpt, ids, t, **kw) for t in positions or table_positions(gpt.config)]
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


def timing_args(description: str, argv=None, min_seconds: float = 0.02, more=None):
    """The command line of a benchmark (--min-seconds, and what `more(parser)` adds), parsed;
    BLAS held to one thread for the rest of the run."""
    from .threads import one_blas_thread
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--min-seconds", type=float, default=min_seconds, help="shortest timing round")
    if more:
        more(ap)
    args = ap.parse_args(argv)
    one_blas_thread()
    return args


def platform_line() -> str:
    return f"Python {platform.python_version()}, NumPy {np.__version__}, {platform.machine()}"


def main(argv=None) -> int:
    args = timing_args("The lesson's timing table, measured here.", argv)
    from .gpt import MiniGPT
    gpt = MiniGPT.load()
    rows, by_row = table(gpt, min_seconds=args.min_seconds)
    print(f"mini-GPT, {gpt.n_params():,} parameters; {platform_line()}")
    print(format_table(rows, by_row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
