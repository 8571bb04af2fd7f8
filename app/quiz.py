"""Comprueba tu intuición: five questions on the lesson, answered with the page's own numbers.

Each question is an id, its options (ids too) and the right one; the texts
live in i18n ("quiz_<q>", "quiz_<q>_<option>", "quiz_<q>_why"). The
explanation is formatted with `numbers(explorer)`: what the page shows now.
"""
from __future__ import annotations

from model import cost
from model.cost import GiB

QUESTIONS: list[tuple[str, tuple[str, ...], str]] = [      # (id, options in the order shown, right one)
    ("fixed", ("frozen", "mask", "rounded"), "mask"),
    ("ratio", ("t2", "two", "t", "depends"), "t"),
    ("total", ("r64", "r8", "r33", "r2080"), "r33"),
    ("memory", ("vocab", "tokens", "fixed"), "tokens"),
    ("pos65", ("memory", "grid", "table"), "table"),
]


def is_right(question: str, option: str) -> bool:
    for qid, options, right in QUESTIONS:
        if qid == question:
            if option not in options:
                raise ValueError(f"{option!r} is not an option of {question!r}")
            return option == right
    raise ValueError(f"no question {question!r}")


def numbers(explorer) -> dict:
    """The page's own numbers, for the explanations: the current position and the full window."""
    cfg = explorer.cfg
    t, T = explorer.t, cfg.n_ctx
    proof = explorer.clock().proof                       # measured at this step, or measured now
    return {
        "t": t, "c": cost.c_cached(cfg, t), "tc": cost.c_uncached(cfg, t),
        "T": T, "total_c": cost.total_cached(cfg, T), "total_tc": cost.total_uncached(cfg, T),
        "total_ratio": cost.total_ratio(cfg, T),
        "numbers": cost.cache_numbers(cfg.n_layers, cfg.d_model, T),
        "kib": cost.cache_bytes(cfg.n_layers, cfg.d_model, T) / 1024,
        "seven_b": cost.cache_bytes(32, 4096, 32_768, 2) / GiB,
        "proof": proof if proof is not None else explorer.proof_now(),
        "rows": cfg.n_ctx,
    }
