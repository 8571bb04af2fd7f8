"""What a token costs, counted, and what the cache costs, stored.

Multiplications only: one per matrix cell for a matrix times a vector; norms,
softmax and ReLU are left out, as in the lesson. `cfg` is anything with
n_layers, d_model, d_ff and vocab_size (the mini-GPT's Config, for instance);
with n_heads and n_kv_heads, keys and values may be shared (H_kv < H), and
d_kv = H_kv d_k is the width of one position's keys (d when H_kv = H).

    c_row      = L (2 d^2 + 2 d d_kv + 2 d d_ff) + d V   one row through every matrix
               = L (4 d^2 + 2 d d_ff) + d V               the lesson's (d_kv = d): 131,072
    c(t)       = c_row + 2 L t d                 with the cache, token at position t
    t c(t)                                        without it: t rows, the t x t grid
    cache      = 2 L t d_kv numbers              K and V, every block, every position
    quantized  = 2 L t d_kv bits / 8 + 2 L t H_kv scale_bytes   bytes, one scale per head and position

Sharing keys and values shrinks Wk, Wv and the cache, not attention's
multiplications: every query head still scores t keys and mixes t values.
"""
from __future__ import annotations

from dataclasses import dataclass, replace


def kv_width(cfg) -> int:
    """d_kv = H_kv d_k: the numbers of one position's keys (and of its values) in a block."""
    H = getattr(cfg, "n_heads", 1)
    return cfg.d_model * getattr(cfg, "n_kv_heads", H) // H


def head_width(cfg) -> int:
    """d_k = d / H: the numbers of one head's key (or value) at one position."""
    return cfg.d_model // getattr(cfg, "n_heads", 1)


def c_row(cfg) -> int:
    """One row through Wq, Wk, Wv, Wo and the MLP of every block, and the output layer."""
    L, d = cfg.n_layers, cfg.d_model
    return L * (2 * d * d + 2 * d * kv_width(cfg) + 2 * d * cfg.d_ff) + d * cfg.vocab_size


def n_params(cfg) -> int:
    """Every parameter: E (V d) and P (T_ctx d); per block Wq, Wo (d^2 each), Wk, Wv (d d_kv each),
    the MLP (2 d d_ff + d_ff + d) and two LayerNorms (4 d); the final LayerNorm (2 d)."""
    L, d, f = cfg.n_layers, cfg.d_model, cfg.d_ff
    block = 2 * d * d + 2 * d * kv_width(cfg) + 2 * d * f + f + d + 4 * d
    return (cfg.vocab_size + cfg.n_ctx) * d + L * block + 2 * d


def attention_cached(cfg, t: int) -> int:
    """q_t against t keys (t d_k per head) and the mix of t values (t d_k): 2 t d per block,
    whether or not heads share their keys and values."""
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


def matrices_only_ratio(T: int) -> float:
    """The total ratio if only the matrices counted: sum t c_row / sum c_row = (T+1)/2."""
    return (T + 1) / 2


def attention_only_ratio(T: int) -> float:
    """The total ratio if only attention counted: sum t^2 / sum t = (2T+1)/3."""
    return (2 * T + 1) / 3


def attention_equals_matrices_at(cfg) -> float:
    """The position t where 2 L t d = c_row: from there on attention costs more."""
    return c_row(cfg) / (2 * cfg.n_layers * cfg.d_model)


def cache_numbers(n_layers: int, d_model: int, t: int) -> int:
    """Numbers the cache holds after t positions: 2 L t d (a key and a value per block)."""
    return 2 * n_layers * t * d_model


def cache_bytes(n_layers: int, d_model: int, t: int, bytes_per_number: float = 8) -> float:
    return cache_numbers(n_layers, d_model, t) * bytes_per_number


def kv_cache_numbers(cfg, t: int) -> int:
    """Numbers a model's cache holds after t positions: 2 L t H_kv d_k
    (the mini-GPT's full window: 16,384 with 4 key/value heads, 8,192 with 2, 4,096 with 1)."""
    return 2 * cfg.n_layers * t * kv_width(cfg)


def quantized_cache_bytes(cfg, t: int, bits: int, scale_bytes: int = 0, group: int | None = None) -> float:
    """Bytes of a cache that keeps each number in `bits` bits and one scale of `scale_bytes`
    per `group` numbers: 2 L t d_kv (bits / 8 + scale_bytes / group).

    The default group is d_k = cfg.d_head: one scale per head and position, the vector of
    d_k numbers model/quantize.py scales as one (QuantizedKVCache.nbytes is this, exactly).
    The lesson's model, full window (t = 64, 16,384 numbers):

        quantized_cache_bytes(cfg, 64, bits=64)                 # float64: 131,072
        quantized_cache_bytes(cfg, 64, bits=16)                 # float16:  32,768
        quantized_cache_bytes(cfg, 64, bits=8, scale_bytes=4)   # int8: 16,384 + 1,024 x 4 = 20,480
        quantized_cache_bytes(cfg, 64, bits=4, scale_bytes=4)   # int4:  8,192 + 1,024 x 4 = 12,288

    `group` must divide d_k (a scale never spans two heads or two positions)."""
    numbers = kv_cache_numbers(cfg, t)
    group = head_width(cfg) if group is None else group
    return numbers * bits / 8 + numbers // group * scale_bytes


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


# -- speculative decoding (the wider chapter's formulas) ----------------------------------

def expected_tokens_per_pass(alpha: float, k: int) -> float:
    """Tokens one check of k drafted tokens yields, if each is accepted with probability alpha
    independently: 1 + alpha + ... + alpha^k = (1 - alpha^(k+1)) / (1 - alpha)."""
    return k + 1.0 if alpha >= 1 else (1 - alpha ** (k + 1)) / (1 - alpha)


def speculative_speedup(alpha: float, k: int, c: float) -> float:
    """The chapter's speed-up: tokens per check over its cost, one target pass plus k draft
    tokens at c target passes each, if a pass on k + 1 rows costs what a pass on one does."""
    return expected_tokens_per_pass(alpha, k) / (1 + k * c)


def speculative_count_ratio(alpha: float, k: int, c_target: int, c_draft: int) -> float:
    """The same by the count (multiplications): a check of k + 1 rows costs k + 1 rows, so
    multiplications per token go from c_target to ((k + 1) c_target + k c_draft) / tokens."""
    return expected_tokens_per_pass(alpha, k) * c_target / ((k + 1) * c_target + k * c_draft)


# -- the real models the texts name ---------------------------------------------------------

@dataclass(frozen=True)
class Architecture:
    """What a model's cache and weights need: parameters, layers, heads (H query, H_kv key/value,
    d_head wide) and its context window, the most positions it can read at once."""
    n_params: float
    n_layers: int
    n_heads: int
    n_kv_heads: int
    d_head: int
    n_ctx: int

    @property
    def d_model(self) -> int:
        return self.n_heads * self.d_head

    def kv_bytes_per_token(self, bytes_per_number: float) -> float:
        return kv_bytes_per_token(self.n_layers, self.n_kv_heads, self.d_head, bytes_per_number)

    def full_attention(self) -> Architecture:
        """The same model with one key/value head per query head."""
        return replace(self, n_kv_heads=self.n_heads)

    @classmethod
    def of(cls, cfg) -> Architecture:
        """A mini-GPT's, from its Config: its parameters counted, its window the rows of P."""
        return cls(n_params(cfg), cfg.n_layers, cfg.n_heads, cfg.n_kv_heads, cfg.d_head, cfg.n_ctx)


# The lesson's "modelo abierto de unos 7 000 millones de parámetros, con L = 32 y d_model = 4 096",
# no shared heads (split as 32 heads of 128). Its window: the lesson puts 32,768 tokens in its cache
# ("con 32 768, 16 GiB"), the longest text it gives it.
LESSON_7B = Architecture(7.0e9, 32, 32, 32, 128, 32_768)
LESSON_7B_CONTEXTS = (4_096, 32_768)      # the lesson's two texts: 2 GiB and 16 GiB at 2 bytes
LESSON_7B_BYTES = 2                       # fp16, cache and weights: "a 2 bytes por número", ~13 GiB of weights

# The wider chapter's models. The 0.5B: "24 camadas, 14 query heads, 2 key-value heads, dimensão
# de head 64" (d 896, MLP 4,864), which is Qwen2.5-0.5B's architecture; the chapter states no
# window, that model's published configuration has 32,768 positions. Its parameters: "meio bilião",
# 494 million, what the chapter's "1,98 GB a quatro bytes" implies (GB of 10^9 bytes there).
CHAPTER_05B = Architecture(494e6, 24, 14, 2, 64, 32_768)
# "um modelo da classe 7B com 32 camadas e 8 key-value heads de dimensão 128", given "um contexto
# de 128.000 tokens": that is its window. 32 query heads of 128 (d 4,096, not stated).
CHAPTER_7B = Architecture(7.0e9, 32, 32, 8, 128, 128_000)
# "a linha 13B, multi-head attention completa com 40 heads" of 128 in 40 layers: Llama 2 13B's
# architecture, whose window is 4,096 (the chapter states none).
CHAPTER_13B = Architecture(13.0e9, 40, 40, 40, 128, 4_096)
# "as linhas 7B e 70B assumem 8 key-value heads de dimensão 128", 80 layers, 64 query heads; the
# chapter states no window and puts it with its 7B: the same 128,000.
CHAPTER_70B = Architecture(70.0e9, 80, 64, 8, 128, 128_000)
