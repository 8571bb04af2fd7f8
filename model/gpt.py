"""The mini-GPT of the lesson, in plain NumPy, with its key/value cache.

    x_t   = E[token_t] + P[t]                      one row per position
    block = x + attention(LN1(x)) ; x + MLP(LN2(x))   (pre-norm, twice)
    z     = LN_f(x) @ E.T                          tied output layer

Three ways to run it:

    forward(ids)            the whole text, no cache: the full t x t score
                            grid of every head, masked (what the lesson counts)
    llenar / prefill(ids)   the same pass, keeping K and V of every block
                            (given a cache, the rows go after it: masked n x t)
    avanzar / step(x, c)    one token: its own row only, attention of q_t over
                            the whole cache (no mask needed), K and V appended

Shapes: T positions, d = d_model, H query heads of d_k = d / H, H_kv key/value
heads (H_kv = H in the lesson's model; otherwise each serves H / H_kv query
heads), V vocabulary. All numbers are float64.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .checkpoint import load_checkpoint
from .config import Config, param_shapes

__all__ = ["Config", "param_shapes", "init_params", "MiniGPT", "KVCache", "attend",
           "is_position_error", "kv_difference"]


def init_params(cfg: Config, seed: int = 0) -> dict[str, np.ndarray]:
    """GPT-2 style: N(0, 0.02), projections into the residual scaled by 1/sqrt(2L)."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in param_shapes(cfg).items():
        if name.endswith(".g"):
            params[name] = np.ones(shape)
        elif name.endswith((".b", ".b1", ".b2")):
            params[name] = np.zeros(shape)
        else:
            std = 0.02 / np.sqrt(2 * cfg.n_layers) if name.endswith(("wo", "w2")) else 0.02
            params[name] = rng.normal(0.0, std, size=shape)
    return params


def fast_layout(params: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The same numbers, laid out for `x @ W`: NumPy without BLAS (as in Pyodide)
    multiplies about 3x faster when W's columns are contiguous (Fortran order),
    which shortens every pass under Pyodide. The embedding E and the position
    table P stay row-major: rows are looked up (and E.T, used by the output
    layer, is then column-contiguous already)."""
    return {name: np.asfortranarray(a) if a.ndim == 2 and name not in ("wte", "wpe") else a
            for name, a in params.items()}


# -- the pieces, one small function per idea ---------------------------------
# Every piece works on any leading axes: (n, d) rows of one text, or (B, n, d) of a batch.

def layer_norm(x, g, b, eps=1e-5):
    """(..., d) -> (..., d): each row to mean 0, variance 1, then gain and bias."""
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def softmax(s):
    """(..., n) -> (..., n), along the last axis."""
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def split_heads(x, n_heads):
    """(..., T, n_heads d_k) -> (..., n_heads, T, d_k)."""
    *lead, T, d = x.shape
    return x.reshape(*lead, T, n_heads, d // n_heads).swapaxes(-3, -2)


def merge_heads(x):
    """(..., H, T, d_k) -> (..., T, H d_k)."""
    *lead, H, T, dk = x.shape
    return x.swapaxes(-3, -2).reshape(*lead, T, H * dk)


def causal_mask(n, past: int = 0):
    """(n, past + n) boolean, True where a row must not look: n new rows after `past`
    cached ones; row i (position past + i) sees columns 0 .. past + i."""
    return np.triu(np.ones((n, past + n), dtype=bool), k=past + 1)


def share_kv(kv, n_heads: int):
    """(..., H_kv, t, d_k) -> (..., H, t, d_k): key/value head j serves query heads
    j g .. j g + g - 1, g = H / H_kv. Nothing to do when H_kv = H (the lesson's model)."""
    group = n_heads // kv.shape[-3]
    return kv if group == 1 else np.repeat(kv, group, axis=-3)


def scores(q, k):
    """Queries (..., H, n, d_k) against keys (..., H_kv, t, d_k) -> (..., H, n, t), over sqrt(d_k)."""
    return q @ share_kv(k, q.shape[-3]).swapaxes(-1, -2) / np.sqrt(q.shape[-1])


def mix(w, v):
    """Weights (..., H, n, t) of the values (..., H_kv, t, d_k) -> (..., H, n, d_k)."""
    return w @ share_kv(v, w.shape[-3])


def attend(q, k, v, mask=None, return_weights: bool = False):
    """Scaled dot-product attention. q (..., H, n, d_k); k, v (..., H_kv, t, d_k) -> (..., H, n, d_k),
    and with return_weights the weights (..., H, n, t) too. mask: True where not to look."""
    s = scores(q, k)                                            # (..., H, n, t)
    if mask is not None:
        s = np.where(mask, -np.inf, s)                          # the full grid, masked
    w = softmax(s)
    out = mix(w, v)                                             # (..., H, n, d_k)
    return (out, w) if return_weights else out


def mlp(x, w1, b1, w2, b2):
    """(..., n, d) -> (..., n, d): position-wise, ReLU."""
    return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2


def position_rows(wpe, positions):
    """P[positions]: the lesson's position table, looked up. A position past its n_ctx
    rows raises NumPy's own IndexError ("index 64 is out of bounds for axis 0 with
    size 64"): the lesson's point, not a bug to hide. Every path of the model (step,
    prefill, batch, speculative) looks positions up here and nowhere else."""
    return wpe[positions]


def is_position_error(exc: BaseException) -> bool:
    """True if `exc` is the lesson's error: the IndexError of the position table's
    lookup (a position past n_ctx), not any other IndexError. It is NumPy's own
    exception, raised in `position_rows`; this tells it apart by where it was raised."""
    if type(exc) is not IndexError or exc.__traceback__ is None:
        return False
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code is position_rows.__code__


def no_empty_rows(n: int, what: str = "the prompt") -> None:
    """ValueError if a pass would have no token at all: no last row, so no logits for the
    next token (NumPy would fail inside the softmax with "zero-size array to reduction
    operation maximum", and a batch would return logits read from its padding).

        no_empty_rows(0, "prompt 2 of 3")   # ValueError: prompt 2 of 3 is empty: a pass needs ...
    """
    if n == 0:
        raise ValueError(f"{what} is empty: a pass needs at least one token, whose logits predict the next")


def token_rows(wte, ids):
    """E[ids] (n, d). A token id outside the vocabulary is a ValueError (NumPy would wrap
    a negative one around silently), so that the only IndexError is the position's."""
    ids = np.asarray(ids, dtype=np.int64)
    bad = ids[(ids < 0) | (ids >= len(wte))]
    if bad.size:
        raise ValueError(f"token id {int(bad[0])} is outside the vocabulary 0..{len(wte) - 1}")
    return wte[ids]


class KVCache:
    """Keys and values of every position seen, per block.

    k[l], v[l]: (H_kv, t, d_k) for block l. `len(cache)` is t, the positions kept.
    The arrays are never written in place: appending or cutting makes new ones, so
    `copy()` is cheap and a copy never changes when the original grows.
    """

    def __init__(self, k: list[np.ndarray], v: list[np.ndarray]):
        self.k = k
        self.v = v

    @classmethod
    def empty(cls, cfg: Config) -> KVCache:
        shape = (cfg.n_kv_heads, 0, cfg.d_head)
        return cls([np.zeros(shape) for _ in range(cfg.n_layers)],
                   [np.zeros(shape) for _ in range(cfg.n_layers)])

    def __len__(self) -> int:
        return self.k[0].shape[-2]

    def append(self, l: int, k, v):
        """k, v of the new rows (H_kv, n, d_k) at the end of block l's cache.
        Returns what attention reads: the whole cache of block l, K and V (H_kv, t, d_k)."""
        self.k[l] = np.concatenate([self.k[l], k], axis=-2)
        self.v[l] = np.concatenate([self.v[l], v], axis=-2)
        return self.k[l], self.v[l]

    def truncate(self, t: int) -> None:
        """Keep the first t positions (rolling back is slicing: nothing is recomputed)."""
        self.k = [a[..., :t, :] for a in self.k]
        self.v = [a[..., :t, :] for a in self.v]

    def copy(self) -> KVCache:
        """A cache that can grow without touching this one."""
        return KVCache(list(self.k), list(self.v))

    @property
    def n_numbers(self) -> int:
        """How many numbers are stored: 2 L t H_kv d_k (2 L t d in the lesson's model)."""
        return sum(a.size for a in self.k) + sum(a.size for a in self.v)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.k) + sum(a.nbytes for a in self.v)


def kv_difference(a, b, t: int | None = None) -> float:
    """Largest |a - b| over the keys and values of the first t positions (all that both
    hold if None) of every block: 0.0 means the two caches hold the same numbers."""
    t = min(len(a), len(b)) if t is None else t
    pairs = list(zip(a.k, b.k)) + list(zip(a.v, b.v))
    return max(float(np.abs(x[..., :t, :] - y[..., :t, :]).max(initial=0.0)) for x, y in pairs)


@dataclass
class MiniGPT:
    params: dict[str, np.ndarray]
    config: Config = field(default_factory=Config)
    tokenizer: object = None

    def __post_init__(self):
        self.params = fast_layout(self.params)

    # -- construction ----------------------------------------------------------
    @classmethod
    def load(cls, weights=None, tokenizer=None) -> MiniGPT:
        """The committed checkpoint, or the weights given: a path, or the name of one of
        `model.checkpoint.VARIANTS` ("kv2", "kv1", "draft"). Raises CheckpointError, with
        the path, what is wrong and how to fix it, if a file is missing or unusable."""
        params, config, tok = load_checkpoint(weights, tokenizer)
        return cls(params, config, tok)

    @classmethod
    def random(cls, config: Config | None = None, seed: int = 0, tokenizer=None) -> MiniGPT:
        config = config or Config()
        return cls(init_params(config, seed), config, tokenizer)

    def n_params(self) -> int:
        return sum(p.size for p in self.params.values())

    # -- the parts of a pass -------------------------------------------------------
    def embed(self, ids, start: int = 0):
        """Token ids (n,) at positions start+1..start+n (1-based) -> rows E[ids] + P[positions] (n, d).
        Position n_ctx + 1 raises the position table's IndexError (see position_rows)."""
        p = self.params
        rows_of_p = position_rows(p["wpe"], np.arange(start, start + len(ids)))   # (n, d)
        return token_rows(p["wte"], ids) + rows_of_p

    def qkv(self, l: int, x):
        """Rows x (..., n, d) entering block l -> queries (..., H, n, d_k), keys and values (..., H_kv, n, d_k)."""
        p, cfg = self.params, self.config
        h = layer_norm(x, p[f"h{l}.ln1.g"], p[f"h{l}.ln1.b"])          # (..., n, d)
        return (split_heads(h @ p[f"h{l}.attn.wq"], cfg.n_heads),
                split_heads(h @ p[f"h{l}.attn.wk"], cfg.n_kv_heads),
                split_heads(h @ p[f"h{l}.attn.wv"], cfg.n_kv_heads))

    def rest_of_block(self, l: int, x, a):
        """Block l after attention: the heads' outputs a (..., H, n, d_k) joined and projected
        into the residual rows x (..., n, d), then the MLP on each row -> (..., n, d)."""
        p = self.params
        x = x + merge_heads(a) @ p[f"h{l}.attn.wo"]                     # (..., n, d)
        h = layer_norm(x, p[f"h{l}.ln2.g"], p[f"h{l}.ln2.b"])
        return x + mlp(h, p[f"h{l}.mlp.w1"], p[f"h{l}.mlp.b1"], p[f"h{l}.mlp.w2"], p[f"h{l}.mlp.b2"])

    def head(self, x):
        """Rows (..., n, d) -> logits (..., n, V), through the tied embedding."""
        p = self.params
        return layer_norm(x, p["lnf.g"], p["lnf.b"]) @ p["wte"].T

    # -- the three ways to run it ------------------------------------------------
    def forward(self, ids):
        """No cache: the whole text in one pass, the full t x t grid masked. ids (T,) -> logits (T, V)."""
        logits, _ = self.prefill(ids)
        return logits

    def prefill(self, ids, cache=None, return_weights: bool = False):
        """Rows ids (n,) in one pass, keeping K and V: -> logits (n, V) and the cache.

        Without a cache this is the prompt (llenar): a new cache of n positions.
        With one of t positions, the rows go at positions t+1..t+n and are appended
        to it; row i attends to the cache and to rows 0..i (a causal n x (t + n) mask).
        With return_weights also the last row's attention weights per block, (H, t + n) each.
        No rows at all (n = 0) is a ValueError ("the prompt is empty: ..."), before anything is written.
        """
        no_empty_rows(len(ids), "the prompt" if cache is None else "the list of rows to add")
        cache = KVCache.empty(self.config) if cache is None else cache
        x = self.embed(ids, start=len(cache))                           # (n, d); IndexError past n_ctx
        mask = causal_mask(len(ids), len(cache))                        # (n, t + n)
        weights = []
        for l in range(self.config.n_layers):
            q, k, v = self.qkv(l, x)                                    # (H, n, d_k), (H_kv, n, d_k)
            K, V = cache.append(l, k, v)                                # (H_kv, t + n, d_k)
            a, w = attend(q, K, V, mask, return_weights=True)           # (H, n, d_k), (H, n, t + n)
            x = self.rest_of_block(l, x, a)                             # (n, d)
            weights.append(w[:, -1])                                    # (H, t + n)
        logits = self.head(x)                                           # (n, V)
        return (logits, cache, weights) if return_weights else (logits, cache)

    def step(self, token: int, cache, return_weights: bool = False):
        """One token at position t = len(cache) + 1 -> logits (V,); the cache grows by one.
        With return_weights also what each query read: per block, weights (H, t).

        Position t = n_ctx + 1 does not exist: step raises the IndexError of the
        position table, NumPy's own, before anything is written (the cache is
        untouched). `is_position_error(e)` tells it apart from any other IndexError;
        equivalently, step raises it exactly when len(cache) >= config.n_ctx.
        """
        x = self.embed([token], start=len(cache))    # (1) the new row: E[token] + P[t]            (1, d)
        weights = []
        for l in range(self.config.n_layers):
            q, k, v = self.qkv(l, x)                 # (2) its q_t (H, 1, d_k), k_t and v_t (H_kv, 1, d_k)
            K, V = cache.append(l, k, v)             # (3) k_t, v_t at the end of the cache: (H_kv, t, d_k)
            s = scores(q, K)                         # (4) q_t against every cached key: (H, 1, t)
            w = softmax(s)                           # (5) softmax: how much each position is read
            a = mix(w, V)                            # (6) the mix of the values: (H, 1, d_k)
            x = self.rest_of_block(l, x, a)          # the rest of the block, on one row: (1, d)
            weights.append(w[:, 0])                  # (H, t)
        z = self.head(x)[0]                          # the logits z_t: (V,)
        return (z, weights) if return_weights else z

    def attention_at(self, ids, l: int, head: int):
        """The last token's attention in block l, one query head, against the cache of the text:
        (q_t (d_k,), K (t, d_k), V (t, d_k), output (d_k,)), all from the model's own pass.
        K and V are those of the key/value head this query head reads."""
        x = self.embed(ids)                                             # (T, d)
        for j in range(l):
            q, k, v = self.qkv(j, x)
            x = self.rest_of_block(j, x, attend(q, k, v, causal_mask(len(ids))))
        q, k, v = self.qkv(l, x)                                        # (H, T, d_k), (H_kv, T, d_k)
        out = attend(q[:, -1:], k, v)                                   # (H, 1, d_k), no mask needed
        kv_head = head // self.config.group
        return q[head, -1], k[kv_head], v[kv_head], out[head, 0]

    # the lesson's names
    def llenar(self, ids, cache=None):
        """`llenar(ids)`: the lesson's name for prefill. -> logits (T, V), cache."""
        return self.prefill(ids, cache)

    def avanzar(self, token: int, cache):
        """`avanzar(token, cache)`: the lesson's name for step. -> logits (V,)."""
        return self.step(token, cache)
