"""Quantized weights: the mini-GPT's projection matrices in 8 and 4 bits, measured by agreement.

    from model.wquant import SCHEMES, quantize_matrix, quantized_model, greedy_texts, agreement, acceptance
    q = quantize_matrix(gpt.params["h0.mlp.w1"], "int4-group32")   # codes and float16 scales
    W_hat = q.dequantize()                                          # (64, 256) float64
    small = quantized_model(gpt, "nf4")          # a MiniGPT whose projections are the W_hat: all its code runs
    texts = greedy_texts(gpt, prompts, 56)       # the full model's greedy text after each prompt
    agreement(small, texts, [len(p) for p in prompts])       # where the quantized argmax is the same
    acceptance(gpt, small, prompts, 56, k=4)     # the quantized model as the speculative draft: alpha
    python -m model.wquant                       # the chapter's table, measured here

The chapter's three lines, symmetric by the largest absolute value:

    qmax  = 2 ** (bits - 1) - 1
    scale = max|W| / qmax                          over a territory (below)
    Wq    = round(W / scale).clip(-qmax - 1, qmax)
    W_hat = Wq * scale

Since the largest |W| maps to qmax, the codes stay in -qmax..qmax: 255 codes at
8 bits and 15 at 4 (-7..7); the clip's -qmax - 1 (-128, -8) is never reached.
Symmetric absmax spends one of int4's 16 codes on nothing; NF4 uses all 16.

Convention: a matrix is stored (d_in, d_out) and used as y = x @ W, so output
unit j is COLUMN j of W (PyTorch stores the transpose, (out, in), where it is a
row: the chapter's "por linha de saída"). The territories:

    tensor     one scale for the whole matrix
    row        one scale per output unit: per column here, scales (1, d_out)
    group32    one per 32 consecutive weights along the input dimension (32 of
               one column): scales (d_in / 32, d_out). 32 divides both input
               widths, 64 (Wq Wk Wv Wo W1) and 256 (W2); the chapter's 128
               would not fit a 64-wide input.
    nf4        4 bits at 16 fixed levels, the quantiles of a standard normal as
               QLoRA builds them (nf4_levels: 8 positive, 7 negative and 0,
               scaled to [-1, 1]), one absmax scale per block of 64 consecutive
               weights along the input dimension (QLoRA's block): a weight gets
               the nearest level of W / scale. A block of 64 is a whole column
               of a 64-input matrix, so there NF4 and int4-row share their
               scales and differ twice: in how many levels (16 against 15) and
               in where they sit (docs/chapter.md separates the two).

Scales are stored as float16 (the chapter's 16-bit scales), rounded up where
rounding to nearest would lower them (stored_scale), and the codes are computed
against the stored scale: W_hat = code x stored scale exactly, nothing is
clipped, and |W - W_hat| <= scale / 2 for the uniform schemes (half NF4's
widest gap, 0.152 scale, for NF4). Bits per weight count the codes and
the scales: 8 + 16 / d_in per row, 4 + 16 / 32 = 4.5 per group of 32, 4 + 16 / 64
= 4.25 for NF4. The 4.25 is this module's convention (float16 scales): QLoRA
keeps one float32 absmax per block of 64, 4 + 32 / 64 = 4.5 bits a weight, and
4 + 8 / 64 + 32 / (64 x 256) = 4.127 with its double quantization (the absmaxes
in 8 bits, one float32 per 256 of them). At 4 bits two codes share a byte (the even-numbered one, in C
order, in the low nibble); int4 codes -8..7 are kept as code + 8.

Which weights: the projection matrices of every block (attn.wq, wk, wv, wo,
mlp.w1, w2: 98,304 of the 136,448 parameters), as the chapter quantized "the
projection matrices". The tied embedding E (input rows and output layer), the
position table, LayerNorms and biases stay as the checkpoint keeps them
(float32); checkpoint_bytes counts them at 4 bytes each.

Three measurements, as the chapter's:
- held-out loss: model.train.evaluate (mean cross-entropy over the
  non-overlapping 65-token windows of the novel's last 5%), the very number
  metrics.json records (3.5405 for the float32 checkpoint); n_windows limits it.
- agreement: the full model writes greedily after each prompt; the quantized
  one is asked, at each position, which token it would choose given the same
  prefix (one teacher-forced pass); k of n positions agree. Two positions in
  448 are within the noise: float64 scales instead of float16 move the int8
  schemes' counts and NF4's by up to two (docs/chapter.md).
- acceptance: each quantized model as the draft of speculative decoding with
  temperature 0 (model.speculative). A greedy draft token is accepted exactly
  when the two argmaxes agree at its position (q and p are one-hot), so alpha
  is the agreement on the positions the rounds tested (acceptance() returns
  them). A dequantized float64 copy costs what the model does, so this measures
  alpha, not a speed-up.
"""
from __future__ import annotations

import hashlib
import json
import math
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .gpt import MiniGPT, attend, causal_mask

BLOCK_MATRICES = ("attn.wq", "attn.wk", "attn.wv", "attn.wo", "mlp.w1", "mlp.w2")
SCALE_DTYPE = np.float16                  # 16-bit scales
REFERENCE = "float32"                     # the checkpoint as stored: every parameter a float32
MEASURED = Path(__file__).resolve().parent / "weights" / "wquant.json"   # python -m model.wquant --write


@dataclass(frozen=True)
class Scheme:
    name: str
    bits: int
    territory: str            # "tensor", "row", "group" or "nf4"
    group: int | None = None  # weights per scale along the input dimension (group, nf4)


SCHEMES = {s.name: s for s in (
    Scheme("int8-tensor", 8, "tensor"), Scheme("int8-row", 8, "row"), Scheme("int8-group32", 8, "group", 32),
    Scheme("int4-tensor", 4, "tensor"), Scheme("int4-row", 4, "row"), Scheme("int4-group32", 4, "group", 32),
    Scheme("nf4", 4, "nf4", 64))}


# -- NF4's levels: the normal's quantiles, without scipy ------------------------------------

def normal_cdf(x: float) -> float:
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


ACKLAM_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
            1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
ACKLAM_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
            6.680131188771972e+01, -1.328068155288572e+01)
ACKLAM_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
            -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
ACKLAM_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00)


def polynomial(coeffs, x: float) -> float:
    out = 0.0
    for c in coeffs:
        out = out * x + c
    return out


def normal_quantile(p: float) -> float:
    """The x with P(Z <= x) = p for a standard normal Z: Acklam's rational approximation
    (relative error 1.2e-9), then one Halley step on math.erfc (to about 1e-15)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), not {p}")
    if p < 0.02425 or p > 1 - 0.02425:
        q = math.sqrt(-2 * math.log(min(p, 1 - p)))
        x = polynomial(ACKLAM_C, q) / (polynomial(ACKLAM_D, q) * q + 1)
        x = x if p < 0.5 else -x
    else:
        q = p - 0.5
        r = q * q
        x = polynomial(ACKLAM_A, r) * q / (polynomial(ACKLAM_B, r) * r + 1)
    u = (normal_cdf(x) - p) * math.sqrt(2 * math.pi) * math.exp(x * x / 2)
    return x - u / (1 + x * u / 2)


NF4_OFFSET = 0.9677083        # QLoRA's: halfway between 1 - 1/(2*15) and 1 - 1/(2*16)
# The 16 values bitsandbytes publishes (float32); nf4_levels() computes them (a test checks).
NF4_PUBLISHED = (-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
                 -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
                 0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
                 0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1.0)


def nf4_levels() -> np.ndarray:
    """(16,) NF4 as QLoRA builds it: 8 positive quantiles of the normal at probabilities spaced
    from NF4_OFFSET down to 1/2, 7 negative ones likewise, and an exact 0; divided by the
    largest, so they span [-1, 1]."""
    positive = [normal_quantile(p) for p in np.linspace(NF4_OFFSET, 0.5, 9)[:-1]]
    negative = [-normal_quantile(p) for p in np.linspace(NF4_OFFSET, 0.5, 8)[:-1]]
    v = np.sort(np.array(positive + [0.0] + negative))
    return v / v.max()


NF4 = nf4_levels()


# -- one matrix -----------------------------------------------------------------------------

def pack_nibbles(u) -> np.ndarray:
    """Codes 0..15 (any shape, an even number of them) -> bytes (n / 2,): two a byte, in C order,
    the even-numbered code in the low nibble."""
    u = np.asarray(u, dtype=np.uint8).reshape(-1)
    return u[0::2] | (u[1::2] << 4)


def unpack_nibbles(b, shape) -> np.ndarray:
    """Bytes from pack_nibbles -> the codes 0..15, uint8, in `shape`."""
    u = np.empty(2 * len(b), dtype=np.uint8)
    u[0::2], u[1::2] = b & 0x0F, b >> 4
    return u.reshape(shape)


def stored_scale(s) -> np.ndarray:
    """Scales as float16, each rounded up to the next float16 where rounding to nearest would
    lower it: the largest weight then still maps inside -qmax - 1..qmax (levels -1..1 for NF4),
    so nothing is clipped. (One hidden unit of the checkpoint's h1.mlp.w1 is nearly off, max |w|
    0.00077: its int8 scale is below float16's normal range, where rounding to nearest can lower
    a scale by more than the 0.4% that keeps 127.5 steps out of reach.)"""
    s = np.asarray(s, dtype=np.float64)
    s16 = s.astype(SCALE_DTYPE)
    return np.where(s16.astype(np.float64) < s, np.nextafter(s16, SCALE_DTYPE(np.inf)), s16)


def territories(W, scheme: Scheme) -> tuple[np.ndarray, tuple[int, ...]]:
    """W (d_in, d_out) as blocks (n, g, d_out) of g consecutive weights of one column, and the
    axes one scale covers: the whole matrix, a column (g = d_in), or a group (g = scheme.group)."""
    d_in, d_out = W.shape
    if scheme.territory == "tensor":
        return W.reshape(1, d_in, d_out), (0, 1, 2)
    g = d_in if scheme.territory == "row" else scheme.group
    if d_in % g:
        raise ValueError(f"{scheme.name}: groups of {g} do not divide the input width {d_in}")
    return W.reshape(d_in // g, g, d_out), (1,)


@dataclass(frozen=True)
class QuantizedMatrix:
    """A matrix in a scheme: codes (int8 (d_in, d_out) at 8 bits; uint8 (d_in d_out / 2,) at 4,
    two a byte) and float16 scales ((1, 1) per tensor, else (d_in / g, d_out))."""
    scheme: str
    shape: tuple[int, int]
    codes: np.ndarray
    scales: np.ndarray

    def values(self) -> np.ndarray:
        """W_hat / scale: the integer codes (uniform) or NF4's levels, (d_in, d_out)."""
        s = SCHEMES[self.scheme]
        if s.bits == 8:
            return self.codes.astype(np.float64)
        u = unpack_nibbles(self.codes, self.shape)
        return NF4[u] if s.territory == "nf4" else u.astype(np.float64) - 8

    def dequantize(self) -> np.ndarray:
        """W_hat (d_in, d_out) float64: values x their stored scale."""
        s = SCHEMES[self.scheme]
        blocks, _ = territories(self.values(), s)                         # (n, g, d_out)
        scale = self.scales.astype(np.float64)[:, None, :]                # (n, 1, d_out) or (1, 1, 1)
        return (blocks * scale).reshape(self.shape)

    @property
    def nbytes(self) -> int:
        return self.codes.nbytes + self.scales.nbytes

    @property
    def bits_per_weight(self) -> float:
        return 8 * self.nbytes / (self.shape[0] * self.shape[1])


def quantize_matrix(W, scheme: str) -> QuantizedMatrix:
    """W (d_in, d_out) in a scheme of SCHEMES (see the module's doc)."""
    s = SCHEMES[scheme]
    W = np.asarray(W, dtype=np.float64)
    blocks, axes = territories(W, s)                                      # (n, g, d_out)
    absmax = np.abs(blocks).max(axis=axes, keepdims=True)                 # (n, 1, d_out) or (1, 1, 1)
    qmax = 1 if s.territory == "nf4" else 2 ** (s.bits - 1) - 1
    scale = stored_scale(absmax / qmax)                                   # what is stored
    x = blocks / np.where(scale > 0, scale, 1).astype(np.float64)         # an all-zero territory: codes 0
    if s.territory == "nf4":
        codes = np.searchsorted((NF4[1:] + NF4[:-1]) / 2, x).astype(np.uint8)   # the nearest level, 0..15
    else:
        codes = np.clip(np.round(x), -qmax - 1, qmax).astype(np.int8)
    codes = codes.reshape(W.shape)
    if s.bits == 4:
        codes = pack_nibbles(codes if s.territory == "nf4" else codes + 8)
    return QuantizedMatrix(scheme, W.shape, codes, scale.reshape(scale.shape[0], -1) if axes == (1,)
                           else scale.reshape(1, 1))


def relative_error(W, W_hat) -> float:
    """||W - W_hat|| / ||W||, Frobenius."""
    return float(np.linalg.norm(W - W_hat) / np.linalg.norm(W))


# -- the model --------------------------------------------------------------------------------

def projections(cfg) -> list[str]:
    """The names of the matrices quantized: every block's attention and MLP projections."""
    return [f"h{l}.{m}" for l in range(cfg.n_layers) for m in BLOCK_MATRICES]


def quantize_params(gpt, scheme: str) -> dict[str, QuantizedMatrix]:
    return {name: quantize_matrix(gpt.params[name], scheme) for name in projections(gpt.config)}


def quantized_model(gpt, scheme: str) -> MiniGPT:
    """A MiniGPT whose projection matrices are the dequantized ones (the rest unchanged):
    prefill, step, batch, speculative all run on it unchanged. REFERENCE gives gpt itself."""
    if scheme == REFERENCE:
        return gpt
    params = dict(gpt.params)
    params.update({name: q.dequantize() for name, q in quantize_params(gpt, scheme).items()})
    return MiniGPT(params, gpt.config, gpt.tokenizer)


def checkpoint_bytes(gpt, scheme: str) -> dict:
    """{"projections": bytes of the quantized matrices (codes + scales), "rest": every other
    parameter at 4 bytes (float32, as the checkpoint stores it), "total", "bits_per_weight" of
    the projections}. REFERENCE: every parameter float32."""
    names = projections(gpt.config)
    n_proj = sum(gpt.params[n].size for n in names)
    rest = 4 * sum(a.size for n, a in gpt.params.items() if n not in names)
    proj = 4 * n_proj if scheme == REFERENCE else sum(q.nbytes for q in quantize_params(gpt, scheme).values())
    return {"projections": proj, "rest": rest, "total": proj + rest, "bits_per_weight": 8 * proj / n_proj}


def matrix_errors(gpt, scheme: str) -> dict[str, float]:
    """{matrix name: ||W - W_hat|| / ||W||} for every projection."""
    return {n: relative_error(gpt.params[n], q.dequantize()) for n, q in quantize_params(gpt, scheme).items()}


def weight_stats(gpt) -> list[dict]:
    """Per projection: shape, mean |w|, std, max |w|, max |w| / std (its largest weight in
    sigmas) and how many weights lie beyond 6 sigma (|w| > 6 std)."""
    rows = []
    for name in projections(gpt.config):
        w = gpt.params[name]
        std = float(w.std())
        rows.append({"matrix": name, "shape": w.shape, "mean_abs": float(np.abs(w).mean()), "std": std,
                     "max_abs": float(np.abs(w).max()), "max_sigmas": float(np.abs(w).max() / std),
                     "beyond_6_sigma": int((np.abs(w) > 6 * std).sum()), "n": int(w.size)})
    return rows


# -- activations: the residual stream --------------------------------------------------------

def residual_stream(gpt, windows) -> np.ndarray:
    """windows (B, T) token ids -> the residual stream (L + 1, B, T, d): entering each block,
    and leaving the last (what the final LayerNorm reads)."""
    p = gpt.params
    windows = np.asarray(windows)
    x = p["wte"][windows] + p["wpe"][:windows.shape[1]]                      # (B, T, d)
    out = [x]
    for l in range(gpt.config.n_layers):
        q, k, v = gpt.qkv(l, x)                                              # (B, H, T, d_k)
        x = gpt.rest_of_block(l, x, attend(q, k, v, causal_mask(windows.shape[1])))
        out.append(x)
    return np.stack(out)


def activation_outliers(gpt, windows, threshold: float = 6.0) -> list[dict]:
    """Per layer of the residual stream (0: the embeddings; l: after block l), over every
    position of the windows: max |h| of each dimension (d,), the median dimension's max, the
    largest and its dimension, the dimensions beyond threshold x the median one ("outliers",
    an empty list when there are none), and, quantized to int8 with one scale for the whole
    tensor, how many distinct levels the median dimension uses."""
    h = residual_stream(gpt, windows)                                        # (L + 1, B, T, d)
    rows = []
    for l, a in enumerate(h):
        per_dim = np.abs(a).reshape(-1, a.shape[-1]).max(axis=0)             # (d,)
        median = float(np.median(per_dim))
        top = int(per_dim.argmax())
        mid = int(np.argsort(per_dim)[len(per_dim) // 2])
        levels = len(np.unique(np.round(a[..., mid] / (per_dim.max() / 127))))
        rows.append({"layer": l, "max_per_dim": per_dim, "median_dim_max": median, "top_dim": top,
                     "top_max": float(per_dim[top]), "top_over_median": float(per_dim[top] / median),
                     "outliers": [int(j) for j in np.flatnonzero(per_dim > threshold * median)],
                     "median_dim_int8_levels": levels})
    return rows


# -- the three measurements -------------------------------------------------------------------

def held_out_ids(tokenizer, corpus_text: str, fraction: float = 0.05) -> np.ndarray:
    """The novel's held-out end (model.train.split_corpus), as token ids."""
    from .train import split_corpus
    return np.array(tokenizer.encode(split_corpus(corpus_text, fraction)[1]), dtype=np.int64)


def held_out_loss(gpt, ids, n_windows: int | None = None) -> float:
    """Mean cross-entropy per token over the first n_windows (all if None) non-overlapping windows
    of n_ctx + 1 tokens: model.train.evaluate, the number metrics.json records."""
    from .train import evaluate
    ids = np.asarray(ids)
    if n_windows is not None:
        ids = ids[:n_windows * gpt.config.n_ctx + 1]
    return evaluate(gpt.params, gpt.config, ids)


def held_out_prompts(ids, n: int = 8, length: int = 8) -> list[list[int]]:
    """n prompts of `length` tokens, from n evenly spaced places of the held-out ids."""
    starts = np.linspace(0, len(ids) - length, n).astype(int)
    return [[int(t) for t in ids[s:s + length]] for s in starts]


def greedy_texts(gpt, prompts, n_new: int) -> list[list[int]]:
    """Each prompt (token ids) and n_new tokens, each the model's argmax (with the cache)."""
    texts = []
    for prompt in prompts:
        ids = list(prompt)
        logits, cache = gpt.prefill(ids)
        z = logits[-1]
        for i in range(n_new):
            ids.append(int(np.argmax(z)))
            if i < n_new - 1:
                z = gpt.step(ids[-1], cache)
        texts.append(ids)
    return texts


def agreement(model, texts, n_prompts) -> dict:
    """At every generated position of the texts (after each text's n_prompt prompt tokens),
    whether `model`'s argmax given the same prefix is the token the text has there.
    -> {"agree": k, "total": n, "rate": k / n, "masks": one bool array per text}."""
    masks = []
    for text, P in zip(texts, n_prompts):
        choice = model.forward(text[:-1])[P - 1:].argmax(axis=-1)             # predicts text[P:]
        masks.append(choice == np.array(text[P:]))
    agree, total = sum(int(m.sum()) for m in masks), sum(len(m) for m in masks)
    return {"agree": agree, "total": total, "rate": agree / total, "masks": masks}


def acceptance(target, draft, prompts, n_new: int, k: int = 4) -> dict:
    """Greedy speculative decoding (temperature 0) of n_new tokens after each prompt, `draft`
    proposing up to k a round. -> {"accepted", "tested", "alpha", "rounds", "texts",
    "tests": (prompt index, token index, accepted) for every draft token the target tested}."""
    from .speculative import Speculative
    tests, texts, rounds = [], [], 0
    for i, prompt in enumerate(prompts):
        spec = Speculative(target, draft, list(prompt), temperature=0.0)
        goal = len(prompt) + n_new
        while len(spec.ids) < goal:
            r = spec.begin(min(k, goal - len(spec.ids) - 1))
            spec.check_round(r)
            spec.decide(r)
            rounds += 1
            tests += [(i, r.n + j, j < r.accepted) for j in range(min(r.accepted + 1, r.k))]
        texts.append(spec.ids)
    accepted = sum(t[2] for t in tests)
    return {"accepted": accepted, "tested": len(tests), "alpha": accepted / max(1, len(tests)),
            "rounds": rounds, "texts": texts, "tests": tests}


# -- the chapter's table ------------------------------------------------------------------------

def scheme_row(gpt, scheme: str, texts, prompts, held=None, n_windows=None, k: int = 4) -> dict:
    """One row of the table: bits per weight, bytes, worst and median relative error, held-out loss
    (None without held-out ids), agreement k of n, acceptance alpha as the draft."""
    model = quantized_model(gpt, scheme)
    size = checkpoint_bytes(gpt, scheme)
    errors = [0.0] if scheme == REFERENCE else list(matrix_errors(gpt, scheme).values())
    agree = agreement(model, texts, [len(p) for p in prompts])
    acc = acceptance(gpt, model, prompts, len(texts[0]) - len(prompts[0]), k)
    return {"scheme": scheme, "bits_per_weight": size["bits_per_weight"], "bytes": size["total"],
            "worst_error": max(errors), "median_error": float(np.median(errors)),
            "held_out_loss": None if held is None else held_out_loss(model, held, n_windows),
            "agree": agree["agree"], "total": agree["total"], "agreement": agree["rate"],
            "accepted": acc["accepted"], "tested": acc["tested"], "alpha": acc["alpha"]}


def report(gpt, held=None, prompts=None, n_new: int | None = None, n_windows: int | None = None,
           schemes=(REFERENCE, *SCHEMES), k: int = 4) -> list[dict]:
    """The table, one row per scheme (scheme_row). prompts: token lists of one length (8 from the
    held-out ids by default, held_out_prompts); n_new fills the window after them by default."""
    prompts = prompts or held_out_prompts(held)
    n_new = n_new or gpt.config.n_ctx - len(prompts[0])
    texts = greedy_texts(gpt, prompts, n_new)
    return [scheme_row(gpt, s, texts, prompts, held, n_windows, k) for s in schemes]


def format_report(rows) -> str:
    out = [f"{'scheme':<13} {'bits/w':>6} {'bytes':>8} {'worst err':>9} {'median err':>10} "
           f"{'held-out':>8} {'agreement':>15} {'acceptance':>15}"]
    for r in rows:
        loss = "" if r["held_out_loss"] is None else f"{r['held_out_loss']:.4f}"
        out.append(f"{r['scheme']:<13} {r['bits_per_weight']:>6.3f} {r['bytes']:>8,} {r['worst_error']:>9.4f} "
                   f"{r['median_error']:>10.4f} {loss:>8} {r['agree']:>4}/{r['total']:<4} {r['agreement']:>5.1%} "
                   f"{r['accepted']:>4}/{r['tested']:<4} {r['alpha']:>5.1%}")
    return "\n".join(out)


def format_stats(stats, outliers) -> str:
    out = [f"{'matrix':<13} {'shape':>9} {'mean|w|':>8} {'std':>7} {'max|w|':>7} {'max/std':>7} {'>6 sigma':>8}"]
    for s in stats:
        out.append(f"{s['matrix']:<13} {'x'.join(map(str, s['shape'])):>9} {s['mean_abs']:>8.4f} {s['std']:>7.4f} "
                   f"{s['max_abs']:>7.3f} {s['max_sigmas']:>7.1f} {s['beyond_6_sigma']:>4} of {s['n']:,}")
    out.append("\nresidual stream, max |h| per dimension over the held-out windows:")
    for o in outliers:
        where = "none" if not o["outliers"] else ", ".join(map(str, o["outliers"]))
        out.append(f"  layer {o['layer']}: largest {o['top_max']:.2f} (dim {o['top_dim']}), median dim "
                   f"{o['median_dim_max']:.2f}, ratio {o['top_over_median']:.1f}; beyond 6x the median: {where}; "
                   f"int8 with one scale: the median dim uses {o['median_dim_int8_levels']} levels")
    return "\n".join(out)


def fingerprint(gpt) -> str:
    """sha256 of the projection matrices (as float32, in projections' order): which checkpoint a
    committed table measured."""
    h = hashlib.sha256()
    for name in projections(gpt.config):
        h.update(np.ascontiguousarray(gpt.params[name], dtype=np.float32).tobytes())
    return h.hexdigest()


def measured(gpt, rows, stats, outliers, prompts, n_new: int, k: int, n_windows: int) -> dict:
    """What `--write` commits (model/weights/wquant.json, read by the page's section, which cannot
    measure the held-out loss: the held-out text is not in the browser): the table's rows, the
    weights' largest values in sigmas, the activations' outlier dimensions, the prompts (token ids)
    the agreement and acceptance columns were measured on, and where they were measured."""
    return {"command": "python -m model.wquant --write", "weights_sha256": fingerprint(gpt),
            "python": platform.python_version(), "numpy": np.__version__,
            "windows": n_windows, "n_new": n_new, "k": k, "prompts": [list(map(int, p)) for p in prompts],
            "rows": rows,
            "weights": [{**s, "shape": list(s["shape"])} for s in stats],
            "activations": [{k_: v for k_, v in o.items() if k_ != "max_per_dim"} for o in outliers]}


def dump_measured(out: dict) -> str:
    """JSON, one line per key and per item of a list (a row of the table, a prompt): diffs stay readable."""
    lines = []
    for key, value in out.items():
        if isinstance(value, list):
            items = ",\n  ".join(json.dumps(v, ensure_ascii=False) for v in value)
            lines.append(f" {json.dumps(key)}: [\n  {items}\n ]")
        else:
            lines.append(f" {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def main(argv=None) -> int:
    """python -m model.wquant [--corpus PATH] [--windows N] [--prompts N] [--k K] [--write]"""
    import argparse

    from .threads import one_blas_thread
    from .train import all_windows, corpus_argument, read_corpus
    ap = argparse.ArgumentParser(description="Quantized weights: the chapter's table, measured here.")
    corpus_argument(ap)
    ap.add_argument("--windows", type=int, help="held-out windows for the loss (default: all)")
    ap.add_argument("--prompts", type=int, default=8, help="held-out prompts of 8 tokens")
    ap.add_argument("--k", type=int, default=4, help="draft tokens a round")
    ap.add_argument("--write", action="store_true", help=f"also write the numbers to {MEASURED.name} (the page's)")
    args = ap.parse_args(argv)
    corpus = read_corpus(args.corpus)
    if corpus is None:
        return 2
    one_blas_thread()
    gpt = MiniGPT.load()
    held = held_out_ids(gpt.tokenizer, corpus)
    windows = all_windows(held, gpt.config.n_ctx + 1)
    stats, outliers = weight_stats(gpt), activation_outliers(gpt, windows[:, :-1])
    print(format_stats(stats, outliers))
    prompts = held_out_prompts(held, args.prompts)
    print(f"\n{len(prompts)} held-out prompts of 8 tokens, {gpt.config.n_ctx - 8} greedy tokens each; "
          f"acceptance with k = {args.k}; held-out loss over "
          f"{'all' if args.windows is None else args.windows} windows of 65 tokens")
    rows = report(gpt, held, prompts, n_windows=args.windows, k=args.k)
    print(format_report(rows))
    if args.write:
        n_windows = len(windows) if args.windows is None else min(args.windows, len(windows))
        out = measured(gpt, rows, stats, outliers, prompts, gpt.config.n_ctx - 8, args.k, n_windows)
        MEASURED.write_text(dump_measured(out), encoding="utf-8")
        print(f"\nwritten: {MEASURED}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
