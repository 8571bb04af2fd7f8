"""The mini-GPT of the lesson, in plain NumPy, with its key/value cache.

    x_t   = E[token_t] + P[t]                      one row per position
    block = x + attention(LN1(x)) ; x + MLP(LN2(x))   (pre-norm, twice)
    z     = LN_f(x) @ E.T                          tied output layer

Three ways to run it:

    forward(ids)            the whole text, no cache: the full t x t score
                            grid of every head, masked (what the lesson counts)
    llenar / prefill(ids)   the same pass, keeping K and V of every block
    avanzar / step(x, c)    one token: its own row only, attention of q_t over
                            the whole cache (no mask needed), K and V appended

Shapes: T positions, d = d_model, H heads of d_k = d / H, V vocabulary.
All numbers are float64.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

import numpy as np


@dataclass(frozen=True)
class Config:
    n_layers: int = 2      # L, blocks ("capas")
    d_model: int = 64      # d
    n_heads: int = 4       # H
    d_ff: int = 256        # hidden width of the MLP
    vocab_size: int = 512  # V
    n_ctx: int = 64        # T_ctx, rows of the position table P

    @property
    def d_head(self) -> int:
        return self.d_model // self.n_heads

    def to_dict(self) -> dict:
        return asdict(self)


def param_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every parameter. Matrices are stored (in, out): y = x @ W."""
    d, f = cfg.d_model, cfg.d_ff
    shapes = {"wte": (cfg.vocab_size, d), "wpe": (cfg.n_ctx, d)}
    for l in range(cfg.n_layers):
        shapes.update({
            f"h{l}.ln1.g": (d,), f"h{l}.ln1.b": (d,),
            f"h{l}.attn.wq": (d, d), f"h{l}.attn.wk": (d, d),
            f"h{l}.attn.wv": (d, d), f"h{l}.attn.wo": (d, d),
            f"h{l}.ln2.g": (d,), f"h{l}.ln2.b": (d,),
            f"h{l}.mlp.w1": (d, f), f"h{l}.mlp.b1": (f,),
            f"h{l}.mlp.w2": (f, d), f"h{l}.mlp.b2": (d,),
        })
    shapes.update({"lnf.g": (d,), "lnf.b": (d,)})
    return shapes


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
    multiplies about 3x faster when W's columns are contiguous (Fortran order);
    measured under Pyodide, the 64-token pass goes from 6.9 to 5.0 ms. The
    embedding E and the position table P stay row-major: rows are looked up
    (and E.T, used by the output layer, is then column-contiguous already)."""
    return {name: np.asfortranarray(a) if a.ndim == 2 and name not in ("wte", "wpe") else a
            for name, a in params.items()}


# -- the pieces, one small function per idea ---------------------------------

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
    """(T, d) -> (H, T, d_k)."""
    T, d = x.shape
    return x.reshape(T, n_heads, d // n_heads).transpose(1, 0, 2)


def merge_heads(x):
    """(H, T, d_k) -> (T, d)."""
    H, T, dk = x.shape
    return x.transpose(1, 0, 2).reshape(T, H * dk)


def causal_mask(T):
    """(T, T) boolean, True above the diagonal: the positions a row must not see."""
    return np.triu(np.ones((T, T), dtype=bool), k=1)


def attend(q, k, v, mask=None):
    """Scaled dot-product attention. q (H, n, d_k), k and v (H, t, d_k) -> (H, n, d_k)."""
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(q.shape[-1])   # (H, n, t)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)                # the full grid, masked
    return softmax(scores) @ v                                  # (H, n, d_k)


def mlp(x, w1, b1, w2, b2):
    """(n, d) -> (n, d): position-wise, ReLU."""
    return np.maximum(x @ w1 + b1, 0.0) @ w2 + b2


class KVCache:
    """Keys and values of every position seen, per block.

    k[l], v[l]: (H, t, d_k) for block l. `len(cache)` is t, the positions kept.
    """

    def __init__(self, k: list[np.ndarray], v: list[np.ndarray]):
        self.k = k
        self.v = v

    @classmethod
    def empty(cls, cfg: Config) -> "KVCache":
        shape = (cfg.n_heads, 0, cfg.d_head)
        return cls([np.zeros(shape) for _ in range(cfg.n_layers)],
                   [np.zeros(shape) for _ in range(cfg.n_layers)])

    def __len__(self) -> int:
        return self.k[0].shape[1]

    def copy(self) -> "KVCache":
        """A cache that can grow without touching this one (arrays are never written in place)."""
        return KVCache(list(self.k), list(self.v))

    @property
    def n_numbers(self) -> int:
        """How many numbers are stored: 2 L t d."""
        return sum(a.size for a in self.k) + sum(a.size for a in self.v)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.k) + sum(a.nbytes for a in self.v)


@dataclass
class MiniGPT:
    params: dict[str, np.ndarray]
    config: Config = field(default_factory=Config)
    tokenizer: object = None

    def __post_init__(self):
        self.params = fast_layout(self.params)

    # -- construction ----------------------------------------------------------
    @classmethod
    def load(cls, weights=None, tokenizer=None) -> "MiniGPT":
        """The committed checkpoint (or the files given). Raises CheckpointError, with
        the path and what is wrong, if a file is missing or corrupt."""
        from .checkpoint import load_model
        return load_model(weights, tokenizer)

    @classmethod
    def random(cls, config: Config | None = None, seed: int = 0, tokenizer=None) -> "MiniGPT":
        config = config or Config()
        return cls(init_params(config, seed), config, tokenizer)

    def n_params(self) -> int:
        return sum(p.size for p in self.params.values())

    # -- the three ways to run it ------------------------------------------------
    def embed(self, ids, start: int = 0):
        """Token ids (T,) at positions start..start+T-1 -> rows (T, d).

        P[position] is a plain table lookup: position 64 of a 64-row table raises
        NumPy's own IndexError. That is the lesson's point, not a bug to hide.
        """
        p = self.params
        ids = np.asarray(ids, dtype=np.int64)
        return p["wte"][ids] + p["wpe"][np.arange(start, start + len(ids))]

    def qkv(self, l: int, x):
        """Rows x (n, d) entering block l -> its queries, keys and values, (H, n, d_k) each."""
        p, H = self.params, self.config.n_heads
        h = layer_norm(x, p[f"h{l}.ln1.g"], p[f"h{l}.ln1.b"])           # (n, d)
        return (split_heads(h @ p[f"h{l}.attn.wq"], H),
                split_heads(h @ p[f"h{l}.attn.wk"], H),
                split_heads(h @ p[f"h{l}.attn.wv"], H))

    def block(self, l: int, x, cache: KVCache | None = None):
        """Block l on rows x (n, d) -> (n, d), with K, V of these rows.

        Without a cache the rows are the whole text and attention is the masked
        t x t grid; with a cache the rows are appended to it and attend to all
        of it (the new rows are the last ones, so nothing to mask for one row).
        """
        p = self.params
        q, k, v = self.qkv(l, x)                                         # (H, n, d_k) each
        if cache is None:
            a = attend(q, k, v, causal_mask(x.shape[0]))                 # (H, n, d_k)
        else:
            k = np.concatenate([cache.k[l], k], axis=1)                  # (H, t, d_k)
            v = np.concatenate([cache.v[l], v], axis=1)                  # (H, t, d_k)
            a = attend(q, k, v)                                          # (H, n, d_k)
        x = x + merge_heads(a) @ p[f"h{l}.attn.wo"]                      # (n, d)
        h = layer_norm(x, p[f"h{l}.ln2.g"], p[f"h{l}.ln2.b"])
        x = x + mlp(h, p[f"h{l}.mlp.w1"], p[f"h{l}.mlp.b1"],
                    p[f"h{l}.mlp.w2"], p[f"h{l}.mlp.b2"])                # (n, d)
        return x, k, v

    def head(self, x):
        """Rows (n, d) -> logits (n, V), through the tied embedding."""
        p = self.params
        return layer_norm(x, p["lnf.g"], p["lnf.b"]) @ p["wte"].T

    def forward(self, ids):
        """No cache: the whole text in one pass. ids (T,) -> logits (T, V)."""
        logits, _ = self.prefill(ids)
        return logits

    def prefill(self, ids):
        """The prompt in one pass, keeping K and V. ids (T,) -> logits (T, V), cache of T."""
        x = self.embed(ids)                                              # (T, d)
        ks, vs = [], []
        for l in range(self.config.n_layers):
            x, k, v = self.block(l, x)
            ks.append(k)                                                 # (H, T, d_k)
            vs.append(v)
        return self.head(x), KVCache(ks, vs)

    def step(self, token: int, cache: KVCache):
        """One token at position t = len(cache) + 1 -> logits (V,); the cache grows by one.

        If the position does not exist (t > n_ctx) the IndexError of the table
        lookup is raised before anything is written: the cache is untouched.
        """
        x = self.embed([token], start=len(cache))                        # (1, d)
        new_k, new_v = [], []
        for l in range(self.config.n_layers):
            x, k, v = self.block(l, x, cache)                            # k, v: (H, t, d_k)
            new_k.append(k)
            new_v.append(v)
        cache.k[:], cache.v[:] = new_k, new_v
        return self.head(x)[0]                                           # (V,)

    def attention_at(self, ids, l: int, head: int):
        """The last token's attention in block l, one head, against the cache of the text:
        (q_t (d_k,), K (t, d_k), V (t, d_k), output (d_k,)), all from the model's own pass."""
        x = self.embed(ids)                                              # (T, d)
        for j in range(l):
            x, _, _ = self.block(j, x)
        q, k, v = self.qkv(l, x)                                         # (H, T, d_k)
        out = attend(q[:, -1:], k, v)                                    # (H, 1, d_k), no mask needed
        return q[head, -1], k[head], v[head], out[head, 0]

    # the lesson's names
    def llenar(self, ids):
        """`llenar(ids)`, the lesson's name for prefill."""
        return self.prefill(ids)

    def avanzar(self, token: int, cache: KVCache):
        """`avanzar(x, cache)`, the lesson's name for one step."""
        return self.step(token, cache)
