"""What a token costs, counted, and what the cache costs, stored.

Multiplications only: one per matrix cell for a matrix times a vector; norms,
softmax and ReLU are left out, as in the lesson. `cfg` is anything with
n_layers, d_model, d_ff and vocab_size (the mini-GPT's Config, for instance).

    c_row      = L (4 d^2 + 2 d d_ff) + d V      one row through every matrix
    c(t)       = c_row + 2 L t d                 with the cache, token at position t
    t c(t)                                        without it: t rows, the t x t grid
    cache      = 2 L t d numbers                 K and V, every block, every position
"""
from __future__ import annotations


def c_row(cfg) -> int:
    """One row through Wq, Wk, Wv, Wo and the MLP of every block, and the output layer."""
    L, d = cfg.n_layers, cfg.d_model
    return L * (4 * d * d + 2 * d * cfg.d_ff) + d * cfg.vocab_size


def attention_cached(cfg, t: int) -> int:
    """q_t against t keys (t d_k per head) and the mix of t values (t d_k): 2 t d per block."""
    return 2 * cfg.n_layers * t * cfg.d_model


def c_cached(cfg, t: int) -> int:
    """c(t): the token at position t (1-based) with the cache."""
    return c_row(cfg) + attention_cached(cfg, t)


def c_uncached(cfg, t: int) -> int:
    """t c(t): the token at position t without the cache (the full pass over t rows)."""
    return t * c_cached(cfg, t)


def ratio_at(cfg, t: int) -> float:
    """Without / with the cache for one token: exactly t."""
    return c_uncached(cfg, t) / c_cached(cfg, t)


def total_cached(cfg, T: int) -> int:
    """Sum of c(t) for t = 1..T:  T c_row + 2 L d T(T+1)/2."""
    return T * c_row(cfg) + 2 * cfg.n_layers * cfg.d_model * T * (T + 1) // 2


def total_uncached(cfg, T: int) -> int:
    """Sum of t c(t) for t = 1..T:  c_row T(T+1)/2 + 2 L d T(T+1)(2T+1)/6."""
    return (c_row(cfg) * T * (T + 1) // 2
            + 2 * cfg.n_layers * cfg.d_model * T * (T + 1) * (2 * T + 1) // 6)


def total_ratio(cfg, T: int) -> float:
    return total_uncached(cfg, T) / total_cached(cfg, T)


def attention_equals_matrices_at(cfg) -> float:
    """The position t where 2 L t d = c_row: from there on attention costs more."""
    return c_row(cfg) / (2 * cfg.n_layers * cfg.d_model)


def cache_numbers(n_layers: int, d_model: int, t: int) -> int:
    """Numbers the cache holds after t positions: 2 L t d (a key and a value per block)."""
    return 2 * n_layers * t * d_model


def cache_bytes(n_layers: int, d_model: int, t: int, bytes_per_number: float = 8) -> float:
    return cache_numbers(n_layers, d_model, t) * bytes_per_number


def kv_bytes_per_token(n_layers: int, n_kv_heads: int, d_head: int, bytes_per_number: float) -> float:
    """General form, for models whose heads share keys and values: 2 L H_kv d_head bytes."""
    return 2 * n_layers * n_kv_heads * d_head * bytes_per_number


KiB, MiB, GiB = 1024, 1024 ** 2, 1024 ** 3


def weight_bytes(n_params: float, bits_per_weight: float) -> float:
    """Bytes the weights occupy: parameters x bits / 8."""
    return n_params * bits_per_weight / 8


def context_tokens(gpu_bytes: float, n_params: float, bits_per_weight: float, overhead_bytes: float,
                   n_layers: int, n_kv_heads: int, d_head: int, kv_bytes_per_number: float,
                   users: int = 1) -> int:
    """Tokens of context each of `users` conversations can keep: what the weights and a fixed
    overhead leave of the GPU's memory, divided by the cache of one token. 0 if nothing is left."""
    free = gpu_bytes - weight_bytes(n_params, bits_per_weight) - overhead_bytes
    per_token = kv_bytes_per_token(n_layers, n_kv_heads, d_head, kv_bytes_per_number)
    return max(0, int(free // (per_token * max(1, users))))
