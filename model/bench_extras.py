"""Batching and speculative decoding, measured (CPython, one BLAS thread). Not a test.

    python -m model.bench_extras

1. Batching: time of one decoding step of B conversations at once (step_batch),
   per conversation, against B, at a few positions: the same multiplications per
   token at any B (the count), a smaller share of the fixed cost per NumPy call.
2. Speculative decoding with the committed draft (1 block, d_model 32): for
   k = 1..8, the acceptance rate, the tokens written per pass of the mini-GPT,
   and the measured speed-up over plain decoding of the same window, next to
   what the chapter's formula predicts from the measured acceptance (a check of
   k + 1 rows costing one pass, the draft costing c of a pass per token) and what
   the count predicts (a check of k + 1 rows costs k + 1 rows).
Each time is the best of several rounds.
"""
from __future__ import annotations

import argparse
import platform
import sys

import numpy as np

from . import cost
from .timing import cached_seconds, time_per_call, window_ids

BATCHES = (1, 2, 4, 8, 16, 32)
PROMPT = "La Nela"


def batch_table(gpt, positions, batches=BATCHES, **kw) -> list[dict]:
    """Seconds per token per conversation for a step of B conversations at position t."""
    from .batch import prefill_batch, step_batch
    texts = [window_ids(gpt, seed=s) for s in range(max(batches))]
    rows = []
    for t in positions:
        one = cached_seconds(gpt, texts[0], t, **kw)                   # avanzar, one conversation
        for B in batches:
            _, cache = prefill_batch(gpt, [x[:t - 1] for x in texts[:B]])
            tokens = [x[t - 1] for x in texts[:B]]
            s = time_per_call(lambda: step_batch(gpt, tokens, cache.copy()), **kw)
            rows.append({"t": t, "B": B, "step_s": s, "per_conversation_s": s / B, "alone_s": one})
    return rows


def speculative_table(gpt, draft, ks=range(1, 9), seeds=range(20), **kw) -> tuple[float, list[dict]]:
    """Plain decoding's seconds per token, and per k: acceptance, tokens per pass, speed-ups."""
    from .sampling import generate
    from .speculative import speculative_generate
    n_new = gpt.config.n_ctx - len(gpt.tokenizer.encode(PROMPT))
    plain = time_per_call(lambda: [generate(gpt, PROMPT, n_new, seed=s) for s in seeds], **kw) / (n_new * len(seeds))
    c = cost.c_row(draft.config) / cost.c_row(gpt.config)
    rows = []
    for k in ks:
        runs = [speculative_generate(gpt, draft, PROMPT, n_new, k=k, seed=s)[1] for s in seeds]
        alpha = sum(r.accepted for r in runs) / sum(r.drafted for r in runs)
        per_pass = sum(r.tokens for r in runs) / sum(r.rounds for r in runs)
        spec = time_per_call(lambda: [speculative_generate(gpt, draft, PROMPT, n_new, k=k, seed=s) for s in seeds],
                             **kw) / (n_new * len(seeds))
        rows.append({"k": k, "alpha": alpha, "per_pass": per_pass, "spec_s": spec, "measured": plain / spec,
                     "formula": cost.speculative_speedup(alpha, k, c),
                     "count": cost.speculative_count_ratio(alpha, k, cost.c_row(gpt.config), cost.c_row(draft.config))})
    return plain, rows


def format_batch(rows) -> str:
    out = [f"{'t':>3} {'B':>3} {'step':>10} {'per conversation':>17} {'vs one alone':>13}"]
    for r in rows:
        out.append(f"{r['t']:>3} {r['B']:>3} {r['step_s'] * 1e3:>7.3f} ms {r['per_conversation_s'] * 1e3:>14.4f} ms "
                   f"{r['alone_s'] / r['per_conversation_s']:>12.1f}x")
    return "\n".join(out)


def format_speculative(plain: float, rows, c: float) -> str:
    out = [f"plain decoding: {plain * 1e3:.3f} ms per token; draft/mini-GPT multiplications per row c = {c:.3f}",
           f"{'k':>2} {'accepted':>9} {'tokens/pass':>12} {'ms/token':>9} {'measured':>9} {'formula':>8} {'count':>6}"]
    for r in rows:
        out.append(f"{r['k']:>2} {r['alpha']:>9.1%} {r['per_pass']:>12.2f} {r['spec_s'] * 1e3:>9.3f} "
                   f"{r['measured']:>8.2f}x {r['formula']:>7.2f}x {r['count']:>5.2f}x")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Batching and speculative decoding, measured here.")
    ap.add_argument("--min-seconds", type=float, default=0.05, help="shortest timing round")
    ap.add_argument("--positions", type=int, nargs="+", help="default: an eighth, half and all of the window")
    args = ap.parse_args(argv)
    from .gpt import MiniGPT
    from .threads import one_blas_thread
    one_blas_thread()
    gpt, draft = MiniGPT.load(), MiniGPT.load("draft")
    print(f"mini-GPT {gpt.n_params():,} parameters, draft {draft.n_params():,}; Python "
          f"{platform.python_version()}, NumPy {np.__version__}, {platform.machine()}")
    print("\nBatching: one step of B conversations, each at position t")
    n = gpt.config.n_ctx
    print(format_batch(batch_table(gpt, args.positions or (n // 8, n // 2, n), min_seconds=args.min_seconds)))
    print(f"\nSpeculative decoding: '{PROMPT}' + {n - len(gpt.tokenizer.encode(PROMPT))} tokens, top-p 0.9, 20 seeds")
    plain, rows = speculative_table(gpt, draft, min_seconds=args.min_seconds)
    print(format_speculative(plain, rows, cost.c_row(draft.config) / cost.c_row(gpt.config)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
