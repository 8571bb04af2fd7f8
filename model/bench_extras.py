"""Batching and speculative decoding, measured (CPython, one BLAS thread). Not a test.

    python -m model.bench_extras

1. Batching: time of one decoding step of B conversations at once (step_batch),
   per conversation, against B, at a few positions: the same multiplications per
   token at any B (the count), a smaller share of the fixed cost per NumPy call.
2. Speculative decoding with the committed draft (1 block, d_model 32): for
   k = 1..8, alpha (the share of tested draft tokens accepted), the tokens
   written per pass of the mini-GPT (against the formula's (1 - a^(k+1))/(1 - a)),
   and the measured speed-up over plain decoding of the same text length, next
   to the chapter's formula E / (1 + k c) (a check of k + 1 rows costing one
   pass; c, the draft's cost per token, by the clock and by the count) and the
   count's own prediction (a check of k + 1 rows costs k + 1 rows).
Each time is the best of several rounds.
"""
from __future__ import annotations

import sys

from . import cost
from .bench import platform_line, timing_args
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
            s = time_per_call(lambda tokens=tokens, cache=cache: step_batch(gpt, tokens, cache.copy()), **kw)
            rows.append({"t": t, "B": B, "step_s": s, "per_conversation_s": s / B, "alone_s": one})
    return rows


def clock_c(gpt, draft, **kw) -> float:
    """c by the clock: a draft step's time over a mini-GPT step's, mid-window."""
    ids = window_ids(gpt)
    t = gpt.config.n_ctx // 2
    return cached_seconds(draft, ids, t, **kw) / cached_seconds(gpt, ids, t, **kw)


def speculative_row(gpt, draft, k: int, seeds, n_new: int, plain: float, c: dict, **kw) -> dict:
    """One k: what the rounds did, their time per token, and the predictions."""
    from .speculative import speculative_generate
    runs = [speculative_generate(gpt, draft, PROMPT, n_new, k=k, seed=s)[1] for s in seeds]
    tested = sum(r.accepted + r.rejected for r in runs)
    alpha = sum(r.accepted for r in runs) / tested
    spec = time_per_call(lambda: [speculative_generate(gpt, draft, PROMPT, n_new, k=k, seed=s) for s in seeds],
                         **kw) / (n_new * len(seeds))
    return {"k": k, "alpha": alpha, "per_pass": sum(r.tokens for r in runs) / sum(r.rounds for r in runs),
            "expected": cost.expected_tokens_per_pass(alpha, k), "spec_s": spec, "measured": plain / spec,
            "by_clock": cost.speculative_speedup(alpha, k, c["clock"]),
            "by_formula": cost.speculative_speedup(alpha, k, c["count"]),
            "count": cost.speculative_count_ratio(alpha, k, cost.c_row(gpt.config), cost.c_row(draft.config))}


def speculative_table(gpt, draft, ks=range(1, 9), seeds=range(20), **kw) -> tuple[float, dict, list[dict]]:
    """Plain decoding's seconds per token, c (by the count and by the clock), and one row per k."""
    from .sampling import generate
    n_new = gpt.config.n_ctx - len(gpt.tokenizer.encode(PROMPT))
    plain = time_per_call(lambda: [generate(gpt, PROMPT, n_new, seed=s) for s in seeds], **kw) / (n_new * len(seeds))
    c = {"count": cost.c_row(draft.config) / cost.c_row(gpt.config), "clock": clock_c(gpt, draft, **kw)}
    return plain, c, [speculative_row(gpt, draft, k, seeds, n_new, plain, c, **kw) for k in ks]


def format_batch(rows) -> str:
    out = [f"{'t':>3} {'B':>3} {'step':>10} {'per conversation':>17} {'vs one alone':>13}"]
    for r in rows:
        out.append(f"{r['t']:>3} {r['B']:>3} {r['step_s'] * 1e3:>7.3f} ms {r['per_conversation_s'] * 1e3:>14.4f} ms "
                   f"{r['alone_s'] / r['per_conversation_s']:>12.1f}x")
    return "\n".join(out)


def format_speculative(plain: float, c: dict, rows) -> str:
    out = [f"plain decoding: {plain * 1e3:.3f} ms per token. Draft / mini-GPT per token: "
           f"c = {c['count']:.3f} by the count, {c['clock']:.3f} by the clock",
           f"{'k':>2} {'alpha':>6} {'tokens/pass':>11} {'(1-a^(k+1))/(1-a)':>17} {'ms/token':>9} "
           f"{'measured':>9} {'formula, c clock':>16} {'c count':>8} {'count':>6}"]
    for r in rows:
        out.append(f"{r['k']:>2} {r['alpha']:>6.1%} {r['per_pass']:>11.2f} {r['expected']:>17.2f} "
                   f"{r['spec_s'] * 1e3:>9.3f} {r['measured']:>8.2f}x {r['by_clock']:>15.2f}x "
                   f"{r['by_formula']:>7.2f}x {r['count']:>5.2f}x")
    return "\n".join(out)


def main(argv=None) -> int:
    more = lambda ap: ap.add_argument("--positions", type=int, nargs="+",
                                      help="default: an eighth, half and all of the window")
    args = timing_args("Batching and speculative decoding, measured here.", argv, 0.05, more)
    from .gpt import MiniGPT
    gpt, draft = MiniGPT.load(), MiniGPT.load("draft")
    print(f"mini-GPT {gpt.n_params():,} parameters, draft {draft.n_params():,}; {platform_line()}")
    print("\nBatching: one step of B conversations, each at position t")
    n = gpt.config.n_ctx
    print(format_batch(batch_table(gpt, args.positions or (n // 8, n // 2, n), min_seconds=args.min_seconds)))
    print(f"\nSpeculative decoding: '{PROMPT}' + {n - len(gpt.tokenizer.encode(PROMPT))} tokens, top-p 0.9, 20 seeds")
    print(format_speculative(*speculative_table(gpt, draft, min_seconds=args.min_seconds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
