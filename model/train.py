"""Train the mini-GPT on Marianela in NumPy: manual backward pass, AdamW,
learning rate warmed up then decayed, random windows of 65 tokens.

    python -m model.train --corpus ../shared/corpus/marianela.txt

writes model/weights/{tokenizer.json, minigpt.npz, metrics.json}. The last 5% of
the novel (from a paragraph boundary) is held out: the tokenizer and the model
never see it, and metrics.json records the loss on it. Same seed, same result.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import math
import platform
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from .checkpoint import METRICS, TOKENIZER, WEIGHTS, save_weights, stored_precision
from .gpt import Config, MiniGPT, init_params
from .threads import one_blas_thread
from .tokenizer import Tokenizer

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "marianela.txt"


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 2000
    batch: int = 32          # windows per step
    window: int = 65         # tokens per window: 64 inputs, 64 targets
    lr: float = 3e-3         # peak learning rate
    min_lr: float = 3e-4     # after the decay
    warmup: int = 100        # steps of linear warm-up, then cosine decay
    weight_decay: float = 1.5   # strong: the novel is small (about 118k training tokens)
    dropout: float = 0.0     # on embeddings and on what attention and MLP add to the residual
    beta1: float = 0.9
    beta2: float = 0.95
    grad_clip: float = 1.0
    seed: int = 1878         # Marianela's year
    held_out: float = 0.05   # fraction of the novel kept apart, from a paragraph boundary


# -- the data -------------------------------------------------------------------

def split_corpus(text: str, held_out: float) -> tuple[str, str]:
    """(train, held-out): the held-out part starts at the first paragraph after 1 - held_out."""
    cut = text.index("\n\n", int(len(text) * (1 - held_out))) + 2
    return text[:cut], text[cut:]


def random_windows(tokens: np.ndarray, rng, batch: int, window: int) -> np.ndarray:
    """(batch, window) token ids from random starting points."""
    starts = rng.integers(0, len(tokens) - window + 1, size=batch)
    return np.stack([tokens[s:s + window] for s in starts])


def all_windows(tokens: np.ndarray, window: int) -> np.ndarray:
    """Non-overlapping windows covering the text: every token but the first is predicted once."""
    n = (len(tokens) - 1) // (window - 1)
    return np.stack([tokens[i * (window - 1): i * (window - 1) + window] for i in range(n)])


# -- forward with a tape, and its backward -----------------------------------------

def ln_forward(x, g, b, eps=1e-5):
    mu = x.mean(-1, keepdims=True)
    rstd = 1.0 / np.sqrt(x.var(-1, keepdims=True) + eps)
    xhat = (x - mu) * rstd
    return xhat * g + b, (xhat, rstd, g)


def ln_backward(dy, tape):
    xhat, rstd, g = tape
    dxhat = dy * g
    dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    return dx, (dy * xhat).reshape(-1, xhat.shape[-1]).sum(0), dy.reshape(-1, dy.shape[-1]).sum(0)


def heads(x, H):
    """(B, T, d) -> (B, H, T, d_k)."""
    B, T, d = x.shape
    return x.reshape(B, T, H, d // H).transpose(0, 2, 1, 3)


def unheads(x):
    """(B, H, T, d_k) -> (B, T, d)."""
    B, H, T, dk = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * dk)


def dropout_mask(rng, shape, p: float):
    """Inverted dropout: zeros with probability p, the rest scaled by 1/(1-p); None when off."""
    if rng is None or p <= 0:
        return None
    return (rng.random(shape) >= p) / (1.0 - p)


def drop(x, mask):
    return x if mask is None else x * mask


def loss_and_grads(params, cfg: Config, batch: np.ndarray, need_grads: bool = True,
                   dropout: float = 0.0, rng=None):
    """Mean cross-entropy of predicting batch[:, 1:] from batch[:, :-1], and its gradient.

    With `dropout` and a generator, the embeddings and what each attention and
    MLP adds to the residual stream are dropped out (training only)."""
    X, Y = batch[:, :-1], batch[:, 1:]                          # (B, T)
    B, T = X.shape
    H, d = cfg.n_heads, cfg.d_model
    scale = 1.0 / math.sqrt(cfg.d_head)
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    p = params
    m0 = dropout_mask(rng, (B, T, d), dropout)
    x = drop(p["wte"][X] + p["wpe"][:T], m0)                    # (B, T, d)
    tapes = []
    for l in range(cfg.n_layers):
        h1, ln1 = ln_forward(x, p[f"h{l}.ln1.g"], p[f"h{l}.ln1.b"])
        q = heads(h1 @ p[f"h{l}.attn.wq"], H)                   # (B, H, T, d_k)
        k = heads(h1 @ p[f"h{l}.attn.wk"], H)
        v = heads(h1 @ p[f"h{l}.attn.wv"], H)
        s = np.where(mask, -np.inf, q @ k.transpose(0, 1, 3, 2) * scale)   # (B, H, T, T)
        P = np.exp(s - s.max(-1, keepdims=True))
        P /= P.sum(-1, keepdims=True)
        a = unheads(P @ v)                                      # (B, T, d)
        m_attn = dropout_mask(rng, (B, T, d), dropout)
        x = x + drop(a @ p[f"h{l}.attn.wo"], m_attn)
        h2, ln2 = ln_forward(x, p[f"h{l}.ln2.g"], p[f"h{l}.ln2.b"])
        u = h2 @ p[f"h{l}.mlp.w1"] + p[f"h{l}.mlp.b1"]          # (B, T, d_ff)
        r = np.maximum(u, 0.0)
        m_mlp = dropout_mask(rng, (B, T, d), dropout)
        x = x + drop(r @ p[f"h{l}.mlp.w2"] + p[f"h{l}.mlp.b2"], m_mlp)
        tapes.append((h1, ln1, q, k, v, P, a, h2, ln2, u, r, m_attn, m_mlp))
    hf, lnf = ln_forward(x, p["lnf.g"], p["lnf.b"])              # (B, T, d)
    logits = hf @ p["wte"].T                                    # (B, T, V)
    logits -= logits.max(-1, keepdims=True)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    loss = -np.take_along_axis(logp, Y[..., None], -1).mean()
    if not need_grads:
        return float(loss), None

    g = {name: np.zeros_like(a) for name, a in params.items()}
    N = B * T
    dlogits = np.exp(logp)                                      # softmax
    np.put_along_axis(dlogits, Y[..., None], np.take_along_axis(dlogits, Y[..., None], -1) - 1.0, -1)
    dlogits /= N
    g["wte"] += dlogits.reshape(N, -1).T @ hf.reshape(N, d)
    dx, g["lnf.g"], g["lnf.b"] = ln_backward(dlogits @ p["wte"], lnf)
    for l in reversed(range(cfg.n_layers)):
        h1, ln1, q, k, v, P, a, h2, ln2, u, r, m_attn, m_mlp = tapes[l]
        # MLP
        dm = drop(dx, m_mlp)
        g[f"h{l}.mlp.w2"] = r.reshape(N, -1).T @ dm.reshape(N, d)
        g[f"h{l}.mlp.b2"] = dm.reshape(N, d).sum(0)
        du = (dm @ p[f"h{l}.mlp.w2"].T) * (u > 0)
        g[f"h{l}.mlp.w1"] = h2.reshape(N, d).T @ du.reshape(N, -1)
        g[f"h{l}.mlp.b1"] = du.reshape(N, -1).sum(0)
        dh2, g[f"h{l}.ln2.g"], g[f"h{l}.ln2.b"] = ln_backward(du @ p[f"h{l}.mlp.w1"].T, ln2)
        dx = dx + dh2
        # attention
        do = drop(dx, m_attn)
        g[f"h{l}.attn.wo"] = a.reshape(N, d).T @ do.reshape(N, d)
        da = heads(do @ p[f"h{l}.attn.wo"].T, H)                # (B, H, T, d_k)
        dP = da @ v.transpose(0, 1, 3, 2)                       # (B, H, T, T)
        dv = P.transpose(0, 1, 3, 2) @ da
        ds = P * (dP - (dP * P).sum(-1, keepdims=True)) * scale
        dq = ds @ k
        dk = ds.transpose(0, 1, 3, 2) @ q
        dq, dk, dv = unheads(dq), unheads(dk), unheads(dv)      # (B, T, d)
        h1f = h1.reshape(N, d).T
        g[f"h{l}.attn.wq"] = h1f @ dq.reshape(N, d)
        g[f"h{l}.attn.wk"] = h1f @ dk.reshape(N, d)
        g[f"h{l}.attn.wv"] = h1f @ dv.reshape(N, d)
        dh1 = dq @ p[f"h{l}.attn.wq"].T + dk @ p[f"h{l}.attn.wk"].T + dv @ p[f"h{l}.attn.wv"].T
        dh1, g[f"h{l}.ln1.g"], g[f"h{l}.ln1.b"] = ln_backward(dh1, ln1)
        dx = dx + dh1
    dx = drop(dx, m0)
    np.add.at(g["wte"], X.reshape(-1), dx.reshape(N, d))
    g["wpe"][:T] = dx.sum(0)
    return float(loss), g


# -- the optimizer ----------------------------------------------------------------------

def learning_rate(step: int, tc: TrainConfig) -> float:
    """Linear warm-up to tc.lr, then cosine decay to tc.min_lr at the last step."""
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    frac = (step - tc.warmup) / max(1, tc.steps - 1 - tc.warmup)
    return tc.min_lr + 0.5 * (tc.lr - tc.min_lr) * (1 + math.cos(math.pi * min(frac, 1.0)))


class AdamW:
    """Adam with decoupled weight decay, on matrices only (not gains, biases)."""

    def __init__(self, params, tc: TrainConfig):
        self.tc = tc
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def update(self, params, grads, lr: float):
        tc = self.tc
        self.t += 1
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads.values()))
        clip = min(1.0, tc.grad_clip / (norm + 1e-12))
        for k, p in params.items():
            g = grads[k] * clip
            self.m[k] = tc.beta1 * self.m[k] + (1 - tc.beta1) * g
            self.v[k] = tc.beta2 * self.v[k] + (1 - tc.beta2) * g * g
            mhat = self.m[k] / (1 - tc.beta1 ** self.t)
            vhat = self.v[k] / (1 - tc.beta2 ** self.t)
            if p.ndim == 2:
                p -= lr * tc.weight_decay * p
            p -= lr * mhat / (np.sqrt(vhat) + 1e-8)
        return norm


# -- evaluation ---------------------------------------------------------------------------

def evaluate(params, cfg: Config, tokens: np.ndarray, window: int = 65, chunk: int = 64) -> float:
    """Mean loss per token over every non-overlapping window of the text."""
    windows = all_windows(tokens, window)
    total, count = 0.0, 0
    for i in range(0, len(windows), chunk):
        b = windows[i:i + chunk]
        loss, _ = loss_and_grads(params, cfg, b, need_grads=False)
        n = b.shape[0] * (b.shape[1] - 1)                       # predictions in this chunk
        total += loss * n
        count += n
    return total / count


# -- the whole run ------------------------------------------------------------------------

def train(text: str, out_dir: Path | None = None, tc: TrainConfig = TrainConfig(),
          cfg: Config = Config(), log=print) -> dict:
    train_text, held_text = split_corpus(text, tc.held_out)
    t0 = time.perf_counter()
    tok = Tokenizer.train(train_text, cfg.vocab_size)
    train_ids = np.array(tok.encode(train_text), dtype=np.int64)
    held_ids = np.array(tok.encode(held_text), dtype=np.int64)
    log(f"tokenizer: {tok.vocab_size} tokens, {len(tok.alphabet)} characters; "
        f"train {len(train_ids):,} tokens, held out {len(held_ids):,} ({time.perf_counter() - t0:.1f} s)")

    rng = np.random.default_rng(tc.seed)
    params = init_params(cfg, seed=tc.seed)
    opt = AdamW(params, tc)
    history = []
    t0 = time.perf_counter()
    for step in range(tc.steps):
        batch = random_windows(train_ids, rng, tc.batch, tc.window)
        loss, grads = loss_and_grads(params, cfg, batch, dropout=tc.dropout, rng=rng)
        lr = learning_rate(step, tc)
        opt.update(params, grads, lr)
        history.append(loss)
        if step % 100 == 0 or step == tc.steps - 1:
            recent = float(np.mean(history[-100:]))
            log(f"step {step:5d}  loss {loss:.3f}  (mean of last 100: {recent:.3f})  lr {lr:.2e}  "
                f"{time.perf_counter() - t0:.0f} s")
    seconds = time.perf_counter() - t0

    params = stored_precision(params)            # what the checkpoint keeps; the losses are of these
    held_loss = evaluate(params, cfg, held_ids)
    train_loss = evaluate(params, cfg, train_ids)
    gpt = MiniGPT(params, cfg, tok)
    from .sampling import generate
    sample_text = tok.decode(generate(gpt, "La Nela", 62, seed=0, top_p=0.9))
    metrics = {
        "held_out_loss": round(held_loss, 4),
        "train_loss": round(train_loss, 4),
        "train_loss_last_100_steps": round(float(np.mean(history[-100:])), 4),
        "lesson_reported_loss": 3.2,
        "held_out": f"last {tc.held_out:.0%} of the novel from a paragraph boundary: "
                    f"{len(held_text):,} characters, {len(held_ids):,} tokens",
        "train_tokens": int(len(train_ids)),
        "n_params": gpt.n_params(),
        "config": cfg.to_dict(),
        "train_config": asdict(tc),
        "train_seconds": round(seconds, 1),
        "corpus_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "sample_seed0_top_p0.9": sample_text,
    }
    log(f"held-out loss {held_loss:.4f}  train loss {train_loss:.4f}  ({seconds:.0f} s)")
    log(f"sample: {sample_text!r}")
    if out_dir is not None:
        out_dir = Path(out_dir)
        out_dir.mkdir(parents=True, exist_ok=True)
        tok.save(out_dir / TOKENIZER.name)
        save_weights(out_dir / WEIGHTS.name, params, cfg)
        (out_dir / METRICS.name).write_text(json.dumps(metrics, ensure_ascii=False, indent=2) + "\n",
                                            encoding="utf-8")
        log(f"wrote {out_dir / WEIGHTS.name}, {out_dir / TOKENIZER.name}, {out_dir / METRICS.name}")
    return {"params": params, "tokenizer": tok, "metrics": metrics, "history": history}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the novel, UTF-8 text")
    ap.add_argument("--out", type=Path, default=WEIGHTS.parent, help="where to write the checkpoint")
    ap.add_argument("--steps", type=int, default=TrainConfig.steps)
    ap.add_argument("--batch", type=int, default=TrainConfig.batch)
    ap.add_argument("--lr", type=float, default=TrainConfig.lr)
    ap.add_argument("--seed", type=int, default=TrainConfig.seed)
    args = ap.parse_args(argv)
    if not args.corpus.is_file():
        print(f"corpus not found: {args.corpus}. Pass --corpus PATH (the course's shared/corpus/marianela.txt).",
              file=sys.stderr)
        return 2
    one_blas_thread()            # same bits on any machine with this NumPy; the matrices are small
    tc = TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr, min_lr=args.lr / 10, seed=args.seed)
    train(args.corpus.read_text(encoding="utf-8"), args.out, tc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
