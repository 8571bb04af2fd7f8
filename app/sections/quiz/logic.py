"""Comprueba tu intuición: five questions on the lesson, answered with the page's own numbers.

Each question is an id, its options (ids too) and the right one; the texts
live in app/i18n, under the keys QUESTION_KEY, OPTION_KEY and WHY_KEY name. Every number
in a question, an option or an explanation is a field filled by `values()`:
from the lesson's model's Config and measurements, or from model/cost.py (the
lesson's 7B). Options are shown in an order drawn from the reader's seed
(`order(seed)`), so the right one is not always in the same place.

The quiz is about the lesson: its model (the one the page began with, 4 key/value heads) and
its float64 cache, whatever the reader chose in "A smaller cache" (another checkpoint, fewer
bits). Only the text and the position are the reader's; the proof is the lesson model's on
that text (`lesson_proof`), and the intro says so while the reader's choice differs
(`not_the_lessons`).
"""

from __future__ import annotations

import random

import numpy as np

from model import cost

from ...i18n import num, sci, size

QUESTIONS: list[tuple[str, tuple[str, ...], str]] = [  # (id, options, right one)
    ("fixed", ("mask", "frozen", "positions"), "mask"),
    ("ratio", ("t", "t2", "two", "depends"), "t"),
    ("total", ("r33", "r64", "r43", "r2080"), "r33"),
    ("memory", ("tokens", "vocab", "grid", "fixed"), "tokens"),
    ("pos65", ("table", "memory", "grid"), "table"),
]
# The texts' keys, each written out (no key is built at run time: tests/test_i18n.py finds every use).
QUESTION_KEY = {
    "fixed": "quiz_fixed",
    "ratio": "quiz_ratio",
    "total": "quiz_total",
    "memory": "quiz_memory",
    "pos65": "quiz_pos65",
}
OPTION_KEY = {
    "fixed": {"mask": "quiz_fixed_mask", "frozen": "quiz_fixed_frozen", "positions": "quiz_fixed_positions"},
    "ratio": {"t": "quiz_ratio_t", "t2": "quiz_ratio_t2", "two": "quiz_ratio_two", "depends": "quiz_ratio_depends"},
    "total": {"r33": "quiz_total_r33", "r64": "quiz_total_r64", "r43": "quiz_total_r43", "r2080": "quiz_total_r2080"},
    "memory": {
        "tokens": "quiz_memory_tokens",
        "vocab": "quiz_memory_vocab",
        "grid": "quiz_memory_grid",
        "fixed": "quiz_memory_fixed",
    },
    "pos65": {"table": "quiz_pos65_table", "memory": "quiz_pos65_memory", "grid": "quiz_pos65_grid"},
}
WHY_KEY = {
    "fixed": "quiz_fixed_why",
    "ratio": "quiz_ratio_why",
    "total": "quiz_total_why",
    "memory": "quiz_memory_why",
    "pos65": "quiz_pos65_why",
}
MAX_LENGTH_RATIO = 1.3  # longest option / shortest option of a question, in every language


def is_right(question: str, option: str) -> bool:
    for qid, options, right in QUESTIONS:
        if qid == question:
            if option not in options:
                raise ValueError(f"{option!r} is not an option of {question!r}")
            return option == right
    raise ValueError(f"no question {question!r}")


def order(seed: int) -> dict[str, tuple[str, ...]]:
    """The options of every question in the order shown for this seed (the same seed, the same order)."""
    shown = {}
    for qid, options, _right in QUESTIONS:
        shuffled = list(options)
        random.Random(f"{seed}:{qid}").shuffle(shuffled)
        shown[qid] = tuple(shuffled)
    return shown


FLOAT64 = "float64"  # the lesson's cache (model/config.py CACHE_FORMATS[0])
LESSON_BYTES = np.dtype(FLOAT64).itemsize  # 8 bytes a cached number
_proofs: dict[tuple, tuple] = {}  # (model, text) -> (model, proof): the lesson model's, computed once


def not_the_lessons(explorer) -> bool:
    """The reader's figure runs another model or cache format than the lesson's."""
    return explorer.gpt is not explorer.lesson_gpt or explorer.fmt != FLOAT64


def lesson_proof(explorer) -> float:
    """Largest |cached - full| of the lesson model's logits, with its float64 cache, at the current
    position of the reader's text: the figure's own proof when it runs the lesson's model and cache
    (measured at this step), else computed here once for this text."""
    gpt = explorer.lesson_gpt
    if not not_the_lessons(explorer) and explorer.clock().proof is not None:
        return explorer.clock().proof
    key = (id(gpt), tuple(explorer.ids))
    known = _proofs.get(key)
    if known is None or known[0] is not gpt:
        if len(_proofs) >= 256:
            _proofs.clear()
        known = _proofs[key] = (gpt, explorer.proof_now(gpt))
    return known[1]


def numbers(explorer) -> dict:
    """The page's own numbers for the lesson's model and float64 cache: the current position, the
    full window, the lesson's 7B."""
    gpt = explorer.lesson_gpt
    cfg = gpt.config
    t, T = explorer.t, cfg.n_ctx
    seven, (small, large) = cost.LESSON_7B, cost.LESSON_7B_CONTEXTS
    return {
        "t": t,
        "c": cost.c_cached(cfg, t),
        "tc": cost.c_uncached(cfg, t),
        "T": T,
        "total_c": cost.total_cached(cfg, T),
        "total_tc": cost.total_uncached(cfg, T),
        "total_ratio": cost.total_ratio(cfg, T),
        "half": cost.matrices_only_ratio(T),
        "third": cost.attention_only_ratio(T),
        "equal": cost.attention_equals_matrices_at(cfg),
        "sum_t": T * (T + 1) // 2,
        "L": cfg.n_layers,
        "d": cfg.d_model,
        "numbers": cost.kv_cache_numbers(cfg, T),
        "bytes": LESSON_BYTES,
        "b7_params": seven.n_params,
        "b7_L": seven.n_layers,
        "b7_d": seven.d_model,
        "b7_numbers": cost.cache_numbers(seven.n_layers, seven.d_model, 1),
        "b7_bytes": cost.LESSON_7B_BYTES,
        "b7_ctx_small": small,
        "b7_ctx_large": large,
        "b7_weights": cost.weight_bytes(seven.n_params, 8 * cost.LESSON_7B_BYTES),
        "proof": lesson_proof(explorer),
    }


def short(x: float, lang: str) -> str:
    """One decimal, none if the number is whole: 32.5, 43, 512."""
    return num(x, lang, 0 if x == int(x) else 1)


def values(explorer, lang: str) -> dict:
    """Every field of the quiz's texts, formatted for `lang`; n, the plural texts' count (the window), a number."""
    n = numbers(explorer)
    b7 = n["b7_numbers"] * n["b7_bytes"]
    return {
        "n": n["T"],
        "t": str(n["t"]),
        "c": num(n["c"], lang),
        "tc": num(n["tc"], lang),
        "T": str(n["T"]),
        "m": str(n["T"] + 1),
        "total_c": num(n["total_c"], lang),
        "total_tc": num(n["total_tc"], lang),
        "total_ratio": num(n["total_ratio"], lang, 1),
        "about": num(round(n["total_ratio"]), lang),
        "half": short(n["half"], lang),
        "third": short(n["third"], lang),
        "third_round": num(round(n["third"]), lang),
        "equal": short(n["equal"], lang),
        "sum_t": num(n["sum_t"], lang),
        "L": str(n["L"]),
        "d": str(n["d"]),
        "numbers": num(n["numbers"], lang),
        "mini_size": size(n["numbers"] * n["bytes"], lang),
        "mini_bytes": str(n["bytes"]),
        "b7_b": num(n["b7_params"] / 1e9, lang),
        "b7_L": str(n["b7_L"]),
        "b7_d": num(n["b7_d"], lang),
        "b7_numbers": num(n["b7_numbers"], lang),
        "b7_bytes": str(n["b7_bytes"]),
        "b7_ctx_small": num(n["b7_ctx_small"], lang),
        "b7_ctx_large": num(n["b7_ctx_large"], lang),
        "b7_small": size(b7 * n["b7_ctx_small"], lang),
        "b7_large": size(b7 * n["b7_ctx_large"], lang),
        "b7_weights": size(n["b7_weights"], lang),
        "proof": sci(n["proof"], lang),
    }
