"""How much context fits: tokens of context per user for real models, on the
same cost module as the mini-GPT.

    tokens per user = min(window, (GPU memory - weights - overhead) / (users x cache bytes per token))
    cache bytes per token = 2 L H_kv d_head b

The models are the texts' (model/cost.py says where each number, the context
windows among them, comes from) and the mini-GPT, from the live model's Config.
The wider chapter's tables follow from these assumptions, worked out from its
own numbers (337; 65,378; 3,136) and stated on the page:
- memory in GiB (an "8 GB" card has 8 x 2^30 bytes), 1.5 GiB of it for the
  runtime and activations;
- 7B and 13B models with exactly 7.0e9 and 13.0e9 parameters;
- int8 is 8 bits per weight; "4-bit" is 4.125 (4 bits plus one fp16 scale
  per group of 128 weights);
- the cache in fp16, 2 bytes per number.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from model import cost
from model.config import Config
from model.cost import Architecture, GiB

OVERHEAD_GIB = 1.5
GROUP = 128  # weights per fp16 scale in "4-bit"
BITS = {"fp16": 16.0, "int8": 8.0, "4-bit": 4 + 16 / GROUP, "fp32": 32.0, "float64": 64.0}
KV_BYTES = {"fp16": 2.0, "fp32": 4.0, "int8": 1.0, "int4": 0.5, "float64": 8.0}  # scales not counted
MINI_GIB = 1.0  # a browser tab's memory, nominally: the window is the mini-GPT's limit


@dataclass(frozen=True)
class Preset:
    key: str
    model: Architecture
    bits: float = 16.0  # bits per weight
    kv_bytes: float = 2.0  # bytes per cached number
    gpu_gib: float = 24.0
    overhead_gib: float = OVERHEAD_GIB
    users: int = 1

    @property
    def window(self) -> int:
        return self.model.n_ctx

    def bytes_per_token(self) -> float:
        return self.model.kv_bytes_per_token(self.kv_bytes)

    def weights_bytes(self) -> float:
        return cost.weight_bytes(self.model.n_params, self.bits)

    def free_bytes(self) -> float:
        return self.gpu_gib * GiB - self.weights_bytes() - self.overhead_gib * GiB

    def tokens_by_memory(self) -> int:
        """What the memory alone allows each user (0 if the weights and the reserve do not fit)."""
        m = self.model
        return cost.context_tokens(
            self.gpu_gib * GiB,
            m.n_params,
            self.bits,
            self.overhead_gib * GiB,
            m.n_layers,
            m.n_kv_heads,
            m.d_head,
            self.kv_bytes,
            self.users,
        )

    def tokens_per_user(self) -> int:
        """The memory's tokens, capped at the model's context window."""
        return min(self.tokens_by_memory(), self.window)

    def capped(self) -> bool:
        """True when the window, not the memory, is the limit."""
        return self.tokens_by_memory() > self.window

    def cache_bytes(self) -> float:
        """What the cache of every user holds, each at tokens_per_user()."""
        return self.users * self.tokens_per_user() * self.bytes_per_token()

    def with_(self, **kw) -> Preset:
        return replace(self, **kw)


def presets(cfg: Config, bytes_per_number: float = 8.0) -> dict[str, Preset]:
    """The calculator's starting points, the lesson's 7B first (the default). The mini-GPT's from
    its Config; it keeps weights and cache in `bytes_per_number` (float64: 8)."""
    bytes_per_number = float(bytes_per_number)
    mini_bits = 8 * bytes_per_number
    return {
        "7b-mha": Preset("7b-mha", cost.LESSON_7B, bits=BITS["fp16"], gpu_gib=24),
        "mini": Preset(
            "mini", Architecture.of(cfg), bits=mini_bits, kv_bytes=bytes_per_number, gpu_gib=MINI_GIB, overhead_gib=0.0
        ),
        "0.5b": Preset("0.5b", cost.CHAPTER_05B, bits=BITS["fp16"], gpu_gib=8),
        "7b-gqa": Preset("7b-gqa", cost.CHAPTER_7B, bits=BITS["int8"], gpu_gib=16),
        "13b": Preset("13b", cost.CHAPTER_13B, bits=BITS["int8"], gpu_gib=16),
        "70b": Preset("70b", cost.CHAPTER_70B, bits=BITS["4-bit"], gpu_gib=48),
    }


PRESETS = presets(Config())
DEFAULT = next(iter(PRESETS))


# The wider chapter's statements: (preset, weights, GPU GiB) -> the tokens its tables give.
CHAPTER_TABLES = {
    "13b_4bit_8gb": ("13b", "4-bit", 8),
    "7b_int8_16gb": ("7b-gqa", "int8", 16),
    "13b_int8_16gb": ("13b", "int8", 16),
}


def chapter_checks() -> dict[str, int]:
    """The wider chapter's three statements, recomputed."""
    return {
        key: PRESETS[preset].with_(bits=BITS[bits], gpu_gib=gpu).tokens_per_user()
        for key, (preset, bits, gpu) in CHAPTER_TABLES.items()
    }
