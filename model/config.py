"""The mini-GPT's numbers, and the shape of every parameter they imply.

A module of its own so that the model (gpt.py) and its files (checkpoint.py)
can both use it without importing each other.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

# How a cache may keep its numbers (model/quantize.py), the lesson's first.
CACHE_FORMATS = ("float64", "float16", "int8", "int4")
# Key/value heads -> the checkpoint trained with them (model/checkpoint.py VARIANTS; None: the lesson's).
KV_HEADS_CHECKPOINTS = {4: None, 2: "kv2", 1: "kv1"}


@dataclass(frozen=True)
class Config:
    n_layers: int = 2      # L, blocks ("capas")
    d_model: int = 64      # d
    n_heads: int = 4       # H, query heads
    d_ff: int = 256        # hidden width of the MLP
    vocab_size: int = 512  # V
    n_ctx: int = 64        # T_ctx, rows of the position table P
    n_kv_heads: int | None = None   # H_kv, key/value heads, each shared by H / H_kv query heads;
                                    # None: one per query head (the lesson's model)

    def __post_init__(self):
        if self.n_kv_heads is None:
            object.__setattr__(self, "n_kv_heads", self.n_heads)
        for name, value in asdict(self).items():
            if type(value) is not int or value < 1:
                raise ValueError(f"Config.{name} must be a positive integer, not {value!r}")
        if self.d_model % self.n_heads:
            raise ValueError(f"d_model {self.d_model} is not a multiple of n_heads {self.n_heads}")
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_heads {self.n_heads} is not a multiple of n_kv_heads {self.n_kv_heads}")

    @property
    def d_head(self) -> int:
        """d_k, the width of one head."""
        return self.d_model // self.n_heads

    @property
    def group(self) -> int:
        """Query heads that read one key/value head: H / H_kv (1 in the lesson's model)."""
        return self.n_heads // self.n_kv_heads

    @property
    def d_kv(self) -> int:
        """Width of the keys (and of the values) of one position: H_kv d_k."""
        return self.n_kv_heads * self.d_head

    def to_dict(self) -> dict:
        """The numbers a checkpoint records. n_kv_heads only when heads share keys and values,
        so the lesson's checkpoint (written before it existed) stays byte for byte the same."""
        d = asdict(self)
        if self.n_kv_heads == self.n_heads:
            del d["n_kv_heads"]
        return d


def param_shapes(cfg: Config) -> dict[str, tuple[int, ...]]:
    """Name -> shape of every parameter. Matrices are stored (in, out): y = x @ W."""
    d, f, kv = cfg.d_model, cfg.d_ff, cfg.d_kv
    shapes = {"wte": (cfg.vocab_size, d), "wpe": (cfg.n_ctx, d)}
    for l in range(cfg.n_layers):
        shapes.update({
            f"h{l}.ln1.g": (d,), f"h{l}.ln1.b": (d,),
            f"h{l}.attn.wq": (d, d), f"h{l}.attn.wk": (d, kv),
            f"h{l}.attn.wv": (d, kv), f"h{l}.attn.wo": (d, d),
            f"h{l}.ln2.g": (d,), f"h{l}.ln2.b": (d,),
            f"h{l}.mlp.w1": (d, f), f"h{l}.mlp.b1": (f,),
            f"h{l}.mlp.w2": (f, d), f"h{l}.mlp.b2": (d,),
        })
    shapes.update({"lnf.g": (d,), "lnf.b": (d,)})
    return shapes
