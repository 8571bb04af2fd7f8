"""How far a quantized cache moves the logits over many texts: a distribution, not a bound.

    MARIANELA=path/to/marianela.txt python -m model.drift            # measure, print, write
    python -m model.drift --corpus path/to/marianela.txt --no-write   # measure and print only

For each checkpoint (the lesson's 4 heads, kv2, kv1) and each cache format
(float16, int8, int4):

- the texts: the novel's held-out part (model/train.py's split_corpus, the last 5%
  from a paragraph boundary, which no model saw), tokenized and cut into
  non-overlapping windows of n_ctx = 64 tokens from its start (98 windows; the
  last 28 of its 6,300 tokens are left out);
- per window, the largest |logit drift| over its 64 positions and the 512 logits
  (model.quantize.logit_drift: 2 tokens prefilled, then one step per token, each
  later block computed from what the quantized cache gives back);
- over the windows: median, 90th percentile, max (model.quantize.drift_summary);
- and where the text sampled from "La Nela" (62 tokens, top-p 0.9, seeds 0..9)
  first departs from the float64 cache's text (model.quantize.first_departure:
  the 1-based position of the first different token, None if none does).

Written into each checkpoint's metrics.json under "kv_cache_drift", one entry a
format; every other key is kept as it was.
"""
from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from .checkpoint import load_metrics, metrics_path, update_metrics
from .gpt import MiniGPT
from .quantize import drift_over_windows, drift_summary, first_departure
from .threads import one_blas_thread
from .train import PROMPT, corpus_argument, read_corpus, split_corpus

CHECKPOINTS = {"lesson": None, "kv2": "kv2", "kv1": "kv1"}     # name -> MiniGPT.load's argument
FORMATS = ("float16", "int8", "int4")
SEEDS = tuple(range(10))
KEY = "kv_cache_drift"


def held_out_windows(text: str, tokenizer, n: int, held_out: float = 0.05) -> np.ndarray:
    """The held-out part of the novel as non-overlapping windows of n tokens: (N, n) ids;
    the tokens after the last whole window are left out."""
    _, held = split_corpus(text, held_out)
    ids = np.array(tokenizer.encode(held), dtype=np.int64)
    N = len(ids) // n
    return ids[:N * n].reshape(N, n)


def windows_text(windows: np.ndarray, n_tokens: int, held_out: float) -> str:
    """What metrics.json says the texts were."""
    N, n = windows.shape
    return (f"held-out windows of the novel (last {held_out:.0%}): {N} non-overlapping windows of {n} tokens, "
            f"the first {N * n:,} of its {n_tokens:,} tokens; 2 tokens prefilled, then one step per token")


def departures(gpt, fmt: str, seeds=SEEDS, prompt: str = PROMPT) -> dict:
    """Where the text sampled with a `fmt` cache first departs from the float64 one, per seed:
    the window after `prompt`, top-p 0.9 (the sample metrics.json pins, seed 0)."""
    n_new = gpt.config.n_ctx - len(gpt.tokenizer.encode(prompt))
    return {"prompt": prompt, "top_p": 0.9, "seeds": list(seeds),
            "positions": [first_departure(gpt, prompt, n_new, fmt, seed=s, top_p=0.9) for s in seeds]}


def measure_format(gpt, windows: np.ndarray, fmt: str, text: str, seeds=SEEDS) -> dict:
    """One checkpoint, one format: the summary of its per-window drift and the departures."""
    summary = drift_summary(drift_over_windows(gpt, windows, fmt))
    return {**summary, "positions": int(windows.shape[1]), "text": text,
            "first_departure": departures(gpt, fmt, seeds)}


def measure_checkpoint(gpt, corpus: str, held_out: float, formats=FORMATS, seeds=SEEDS) -> dict:
    """{format: its measurement} for one checkpoint, on the held-out windows of its window size."""
    windows = held_out_windows(corpus, gpt.tokenizer, gpt.config.n_ctx, held_out)
    n_tokens = len(gpt.tokenizer.encode(split_corpus(corpus, held_out)[1]))
    text = windows_text(windows, n_tokens, held_out)
    return {fmt: measure_format(gpt, windows, fmt, text, seeds) for fmt in formats}


def format_table(name: str, drift: dict) -> str:
    """A checkpoint's measurement as a Markdown table (the one docs/ shows)."""
    rows = [f"{name}: largest |logit drift| per window ({next(iter(drift.values()))['windows']} held-out windows)",
            "| format | median | 90th percentile | max | first departure, seeds 0-9 |",
            "|---|---|---|---|---|"]
    for fmt, m in drift.items():
        where = ", ".join("-" if p is None else str(p) for p in m["first_departure"]["positions"])
        rows.append(f"| {fmt} | {m['median']:.3g} | {m['p90']:.3g} | {m['max']:.3g} | {where} |")
    return "\n".join(rows)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    corpus_argument(ap)
    ap.add_argument("--no-write", action="store_true", help="print the tables, leave metrics.json as it is")
    args = ap.parse_args(argv)
    corpus = read_corpus(args.corpus)
    if corpus is None:
        return 2
    one_blas_thread()
    for name, which in CHECKPOINTS.items():
        t0 = time.perf_counter()
        held_out = load_metrics(metrics_path(which))["train_config"]["held_out"]
        drift = measure_checkpoint(MiniGPT.load(which), corpus, held_out)
        print(format_table(name, drift), f"\n({time.perf_counter() - t0:.0f} s)\n")
        if not args.no_write:
            update_metrics(metrics_path(which), KEY, drift)
            print(f"wrote {KEY} into {metrics_path(which)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
