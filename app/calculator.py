"""How much context fits: tokens of context per user for real models, on the
same cost module as the mini-GPT.

    tokens per user = (GPU memory - weights - overhead) / (users x cache bytes per token)
    cache bytes per token = 2 L H_kv d_head b

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
from model.cost import GiB

OVERHEAD_GIB = 1.5
BITS = {"fp32": 32.0, "fp16": 16.0, "int8": 8.0, "4-bit": 4.125}


@dataclass(frozen=True)
class Preset:
    key: str
    n_params: float
    n_layers: int
    n_kv_heads: int
    d_head: int
    kv_bytes: float = 2.0          # bytes per cached number
    bits: float = 16.0             # bits per weight
    gpu_gib: float = 24.0
    overhead_gib: float = OVERHEAD_GIB
    users: int = 1

    def bytes_per_token(self) -> float:
        return cost.kv_bytes_per_token(self.n_layers, self.n_kv_heads, self.d_head, self.kv_bytes)

    def weights_bytes(self) -> float:
        return cost.weight_bytes(self.n_params, self.bits)

    def tokens_per_user(self) -> int:
        return cost.context_tokens(self.gpu_gib * GiB, self.n_params, self.bits, self.overhead_gib * GiB,
                                   self.n_layers, self.n_kv_heads, self.d_head, self.kv_bytes, self.users)

    def free_bytes(self) -> float:
        return self.gpu_gib * GiB - self.weights_bytes() - self.overhead_gib * GiB

    def with_(self, **kw) -> "Preset":
        return replace(self, **kw)


PRESETS = {
    # the lesson's model, float64 everywhere, in 1.25 MiB: weights (1.04 MiB) and a few windows
    "mini": Preset("mini", 136_448, 2, 4, 16, kv_bytes=8, bits=64, gpu_gib=1.25 / 1024, overhead_gib=0.0),
    # the lesson's 7B with full multi-head attention: 32 heads of 128 = d_model 4,096
    "7b-mha": Preset("7b-mha", 7.0e9, 32, 32, 128, bits=16, gpu_gib=24),
    "7b-gqa": Preset("7b-gqa", 7.0e9, 32, 8, 128, bits=8, gpu_gib=16),
    "13b": Preset("13b", 13.0e9, 40, 40, 128, bits=8, gpu_gib=16),
    "70b": Preset("70b", 70.0e9, 80, 8, 128, bits=4.125, gpu_gib=48),
    # the wider chapter's 0.5B: 24 layers, 2 KV heads of 64
    "0.5b": Preset("0.5b", 0.5e9, 24, 2, 64, bits=16, gpu_gib=8),
}


def chapter_checks() -> dict[str, int]:
    """The wider chapter's three statements, recomputed."""
    return {
        "13b_4bit_8gb": PRESETS["13b"].with_(bits=BITS["4-bit"], gpu_gib=8).tokens_per_user(),
        "7b_int8_16gb": PRESETS["7b-gqa"].with_(bits=BITS["int8"], gpu_gib=16).tokens_per_user(),
        "13b_int8_16gb": PRESETS["13b"].with_(bits=BITS["int8"], gpu_gib=16).tokens_per_user(),
    }
