"""Train the mini-GPT on Marianela in NumPy: manual backward pass, AdamW,
learning rate warmed up then decayed, random windows of n_ctx + 1 = 65 tokens.

    python -m model.train --corpus ../shared/corpus/marianela.txt

writes model/weights/{tokenizer.json, minigpt.npz, metrics.json}. The last 5% of
the novel (from a paragraph boundary) is held out: the tokenizer and the model
never see it, and metrics.json records the loss on it. Same seed, same result.
"""
from __future__ import annotations

import argparse
import hashlib
import math
import os
import platform
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from .checkpoint import (
    METRICS,
    TOKENIZER,
    WEIGHTS,
    CheckpointError,
    load_tokenizer,
    save_metrics,
    save_weights,
    stored_precision,
)
from .config import Config
from .gpt import MiniGPT, init_params
from .threads import one_blas_thread
from .tokenizer import Tokenizer

DEFAULT_CORPUS = Path(__file__).resolve().parents[1].parent / "shared" / "corpus" / "marianela.txt"


@dataclass(frozen=True)
class TrainConfig:
    steps: int = 2000
    batch: int = 32          # windows per step
    window: int | None = None   # tokens per window; None: n_ctx + 1 (64 inputs, 64 targets)
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
    """(B, T, H d_k) -> (B, H, T, d_k)."""
    B, T, d = x.shape
    return x.reshape(B, T, H, d // H).transpose(0, 2, 1, 3)


def unheads(x):
    """(B, H, T, d_k) -> (B, T, H d_k)."""
    B, H, T, dk = x.shape
    return x.transpose(0, 2, 1, 3).reshape(B, T, H * dk)


def share(kv, group: int):
    """(B, H_kv, T, d_k) -> (B, H, T, d_k): each key/value head serves `group` query heads."""
    return kv if group == 1 else np.repeat(kv, group, axis=1)


def unshare(dkv, group: int):
    """The gradient of `share`: (B, H, T, d_k) -> (B, H_kv, T, d_k), summed over each group."""
    if group == 1:
        return dkv
    B, H, T, dk = dkv.shape
    return dkv.reshape(B, H // group, group, T, dk).sum(axis=2)


def dropout_mask(rng, shape, p: float):
    """Inverted dropout: zeros with probability p, the rest scaled by 1/(1-p); None when off."""
    if rng is None or p <= 0:
        return None
    return (rng.random(shape) >= p) / (1.0 - p)


def drop(x, mask):
    return x if mask is None else x * mask


def attention_forward(h1, p, l: int, cfg: Config):
    """LN1's rows (B, T, d) -> what attention adds (B, T, d), and its tape."""
    q = heads(h1 @ p[f"h{l}.attn.wq"], cfg.n_heads)                   # (B, H, T, d_k)
    k = share(heads(h1 @ p[f"h{l}.attn.wk"], cfg.n_kv_heads), cfg.group)   # (B, H, T, d_k)
    v = share(heads(h1 @ p[f"h{l}.attn.wv"], cfg.n_kv_heads), cfg.group)
    T = h1.shape[1]
    mask = np.triu(np.ones((T, T), dtype=bool), k=1)
    s = np.where(mask, -np.inf, q @ k.transpose(0, 1, 3, 2) * (1.0 / math.sqrt(cfg.d_head)))  # (B, H, T, T)
    P = np.exp(s - s.max(-1, keepdims=True))
    P /= P.sum(-1, keepdims=True)
    a = unheads(P @ v)                                                 # (B, T, d)
    return a @ p[f"h{l}.attn.wo"], (h1, q, k, v, P, a)


def attention_backward(do, tape, p, l: int, cfg: Config, g: dict):
    """d(what attention added) (B, T, d) -> d(LN1's rows) (B, T, d); fills g's attention entries."""
    h1, q, k, v, P, a = tape
    B, T, d = h1.shape
    N, scale = B * T, 1.0 / math.sqrt(cfg.d_head)
    g[f"h{l}.attn.wo"] = a.reshape(N, d).T @ do.reshape(N, d)
    da = heads(do @ p[f"h{l}.attn.wo"].T, cfg.n_heads)                 # (B, H, T, d_k)
    dP = da @ v.transpose(0, 1, 3, 2)                                  # (B, H, T, T)
    dv = P.transpose(0, 1, 3, 2) @ da
    ds = P * (dP - (dP * P).sum(-1, keepdims=True)) * scale
    dq = ds @ k
    dk = ds.transpose(0, 1, 3, 2) @ q
    dk, dv = unshare(dk, cfg.group), unshare(dv, cfg.group)            # (B, H_kv, T, d_k)
    dq, dk, dv = unheads(dq), unheads(dk), unheads(dv)                 # (B, T, d), (B, T, H_kv d_k)
    h1f = h1.reshape(N, d).T
    g[f"h{l}.attn.wq"] = h1f @ dq.reshape(N, -1)
    g[f"h{l}.attn.wk"] = h1f @ dk.reshape(N, -1)
    g[f"h{l}.attn.wv"] = h1f @ dv.reshape(N, -1)
    return dq @ p[f"h{l}.attn.wq"].T + dk @ p[f"h{l}.attn.wk"].T + dv @ p[f"h{l}.attn.wv"].T


def mlp_forward(h2, p, l: int):
    """LN2's rows (B, T, d) -> what the MLP adds (B, T, d), and its tape."""
    u = h2 @ p[f"h{l}.mlp.w1"] + p[f"h{l}.mlp.b1"]                    # (B, T, d_ff)
    r = np.maximum(u, 0.0)
    return r @ p[f"h{l}.mlp.w2"] + p[f"h{l}.mlp.b2"], (h2, u, r)


def mlp_backward(dm, tape, p, l: int, g: dict):
    """d(what the MLP added) -> d(LN2's rows); fills g's MLP entries."""
    h2, u, r = tape
    N, d = h2.shape[0] * h2.shape[1], h2.shape[2]
    g[f"h{l}.mlp.w2"] = r.reshape(N, -1).T @ dm.reshape(N, d)
    g[f"h{l}.mlp.b2"] = dm.reshape(N, d).sum(0)
    du = (dm @ p[f"h{l}.mlp.w2"].T) * (u > 0)
    g[f"h{l}.mlp.w1"] = h2.reshape(N, d).T @ du.reshape(N, -1)
    g[f"h{l}.mlp.b1"] = du.reshape(N, -1).sum(0)
    return du @ p[f"h{l}.mlp.w1"].T


def block_forward(x, p, l: int, cfg: Config, dropout: float, rng):
    """Block l on the residual stream (B, T, d), pre-norm, with its tape."""
    B, T, d = x.shape
    h1, ln1 = ln_forward(x, p[f"h{l}.ln1.g"], p[f"h{l}.ln1.b"])
    added, attn = attention_forward(h1, p, l, cfg)
    m_attn = dropout_mask(rng, (B, T, d), dropout)
    x = x + drop(added, m_attn)
    h2, ln2 = ln_forward(x, p[f"h{l}.ln2.g"], p[f"h{l}.ln2.b"])
    added, mlp = mlp_forward(h2, p, l)
    m_mlp = dropout_mask(rng, (B, T, d), dropout)
    x = x + drop(added, m_mlp)
    return x, (ln1, attn, m_attn, ln2, mlp, m_mlp)


def block_backward(dx, tape, p, l: int, cfg: Config, g: dict):
    """d(block l's output) -> d(its input); fills g's entries of block l."""
    ln1, attn, m_attn, ln2, mlp, m_mlp = tape
    dh2, g[f"h{l}.ln2.g"], g[f"h{l}.ln2.b"] = ln_backward(mlp_backward(drop(dx, m_mlp), mlp, p, l, g), ln2)
    dx = dx + dh2
    dh1 = attention_backward(drop(dx, m_attn), attn, p, l, cfg, g)
    dh1, g[f"h{l}.ln1.g"], g[f"h{l}.ln1.b"] = ln_backward(dh1, ln1)
    return dx + dh1


def loss_and_grads(params, cfg: Config, batch: np.ndarray, need_grads: bool = True,
                   dropout: float = 0.0, rng=None):
    """Mean cross-entropy of predicting batch[:, 1:] from batch[:, :-1], and its gradient.

    With `dropout` and a generator, the embeddings and what each attention and
    MLP adds to the residual stream are dropped out (training only)."""
    X, Y = batch[:, :-1], batch[:, 1:]                          # (B, T)
    B, T = X.shape
    d, p = cfg.d_model, params
    m0 = dropout_mask(rng, (B, T, d), dropout)
    x = drop(p["wte"][X] + p["wpe"][:T], m0)                    # (B, T, d)
    tapes = []
    for l in range(cfg.n_layers):
        x, tape = block_forward(x, p, l, cfg, dropout, rng)
        tapes.append(tape)
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
        dx = block_backward(dx, tapes[l], p, l, cfg, g)
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

EVAL_CHUNK = 64          # windows per evaluation pass (memory only: the loss does not depend on it)


def evaluate(params, cfg: Config, tokens: np.ndarray, window: int | None = None,
             chunk: int = EVAL_CHUNK) -> float:
    """Mean loss per token over every non-overlapping window of the text
    (windows of n_ctx + 1 tokens unless told otherwise)."""
    windows = all_windows(tokens, window or cfg.n_ctx + 1)
    total, count = 0.0, 0
    for i in range(0, len(windows), chunk):
        b = windows[i:i + chunk]
        loss, _ = loss_and_grads(params, cfg, b, need_grads=False)
        n = b.shape[0] * (b.shape[1] - 1)                       # predictions in this chunk
        total += loss * n
        count += n
    return total / count


# -- the whole run ------------------------------------------------------------------------

PROMPT = "La Nela"


def optimise(params, cfg: Config, tc: TrainConfig, train_ids: np.ndarray, log) -> list[float]:
    """tc.steps AdamW steps on random windows, in place; the loss of every step."""
    rng = np.random.default_rng(tc.seed)
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
    return history


def sample_text(params, cfg: Config, tok: Tokenizer) -> str:
    """The prompt and a window's worth of tokens, seed 0, top-p 0.9: the text metrics.json pins."""
    from .sampling import generate
    gpt = MiniGPT(params, cfg, tok)
    return tok.decode(generate(gpt, PROMPT, cfg.n_ctx - len(tok.encode(PROMPT)), seed=0, top_p=0.9))


def measure(params, cfg, tc, tok, text, held_text, train_ids, held_ids, history, seconds) -> dict:
    """metrics.json: the losses of the stored (float32) numbers and how they were made."""
    metrics = {
        "held_out_loss": round(evaluate(params, cfg, held_ids), 4),
        "train_loss": round(evaluate(params, cfg, train_ids), 4),
        "train_loss_last_100_steps": round(float(np.mean(history[-100:])), 4),
        "lesson_reported_loss": 3.2,
        "held_out": f"last {tc.held_out:.0%} of the novel from a paragraph boundary: "
                    f"{len(held_text):,} characters, {len(held_ids):,} tokens",
        "train_tokens": int(len(train_ids)),
        "n_params": int(sum(p.size for p in params.values())),
        "config": cfg.to_dict(),
        "train_config": asdict(tc),
        "train_seconds": round(seconds, 1),
        "corpus_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "numpy": np.__version__,
        "python": platform.python_version(),
        "sample_seed0_top_p0.9": sample_text(params, cfg, tok),
    }
    return metrics



def corpus_argument(ap) -> None:
    """--corpus for the commands that measure on the novel (model.drift, model.seeds, model.wquant)."""
    ap.add_argument("--corpus", type=Path, default=Path(os.environ.get("MARIANELA", DEFAULT_CORPUS)),
                    help="the novel, UTF-8 text (default: $MARIANELA, else ../shared/corpus/marianela.txt)")


def read_corpus(path: Path) -> str | None:
    """The novel's text, or None after one line on stderr saying how to give it."""
    if not path.is_file():
        print(f"corpus not found: {path}. Pass --corpus PATH or set MARIANELA.", file=sys.stderr)
        return None
    return path.read_text(encoding="utf-8")

def write_checkpoint(out_dir: Path, params, cfg: Config, tok: Tokenizer, metrics: dict,
                     with_tokenizer: bool, log) -> None:
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    if with_tokenizer:
        tok.save(out_dir / TOKENIZER.name)
    save_weights(out_dir / WEIGHTS.name, params, cfg)
    save_metrics(out_dir / METRICS.name, metrics)
    log(f"wrote {', '.join(str(p) for p in sorted(out_dir.iterdir()) if p.is_file())}")


def train(text: str, out_dir: Path | None = None, tc: TrainConfig = TrainConfig(),
          cfg: Config = Config(), log=print, tokenizer: Tokenizer | None = None) -> dict:
    """Train on all but the held-out end of `text`. A tokenizer is learned from the training
    part unless one is given (then it is reused, and not written to out_dir)."""
    tc = replace(tc, window=tc.window or cfg.n_ctx + 1)
    train_text, held_text = split_corpus(text, tc.held_out)
    t0 = time.perf_counter()
    tok = tokenizer or Tokenizer.train(train_text, cfg.vocab_size)
    if tok.vocab_size != cfg.vocab_size:
        raise ValueError(f"the tokenizer has {tok.vocab_size} tokens, the model {cfg.vocab_size}")
    train_ids = np.array(tok.encode(train_text), dtype=np.int64)
    held_ids = np.array(tok.encode(held_text), dtype=np.int64)
    log(f"tokenizer: {tok.vocab_size} tokens, {len(tok.alphabet)} characters; "
        f"train {len(train_ids):,} tokens, held out {len(held_ids):,} ({time.perf_counter() - t0:.1f} s)")
    params = init_params(cfg, seed=tc.seed)
    t0 = time.perf_counter()
    history = optimise(params, cfg, tc, train_ids, log)
    seconds = time.perf_counter() - t0
    params = stored_precision(params)            # what the checkpoint keeps; the losses are of these
    metrics = measure(params, cfg, tc, tok, text, held_text, train_ids, held_ids, history, seconds)
    if tokenizer is not None:
        metrics["tokenizer_sha256"] = hashlib.sha256(tok.to_json().encode("utf-8")).hexdigest()
    log(f"held-out loss {metrics['held_out_loss']:.4f}  train loss {metrics['train_loss']:.4f}  ({seconds:.0f} s)")
    log(f"sample: {metrics['sample_seed0_top_p0.9']!r}")
    if out_dir is not None:
        write_checkpoint(out_dir, params, cfg, tok, metrics, tokenizer is None, log)
    return {"params": params, "tokenizer": tok, "metrics": metrics, "history": history}


def model_config(args) -> Config:
    """The architecture from the command line; every number not given is the lesson's."""
    given = {"n_layers": args.layers, "d_model": args.d_model, "n_heads": args.heads,
             "d_ff": args.d_ff, "n_kv_heads": args.kv_heads}
    return Config(**{k: v for k, v in given.items() if v is not None})


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="the novel, UTF-8 text")
    ap.add_argument("--out", type=Path, default=WEIGHTS.parent, help="where to write the checkpoint")
    ap.add_argument("--tokenizer", type=Path, help="reuse this tokenizer file instead of learning one")
    ap.add_argument("--steps", type=int, default=TrainConfig.steps)
    ap.add_argument("--batch", type=int, default=TrainConfig.batch)
    ap.add_argument("--lr", type=float, default=TrainConfig.lr)
    ap.add_argument("--seed", type=int, default=TrainConfig.seed)
    for flag, what in [("--layers", "blocks"), ("--d-model", "width"), ("--heads", "query heads"),
                       ("--d-ff", "MLP width"), ("--kv-heads", "key/value heads (shared by the query heads)")]:
        ap.add_argument(flag, type=int, help=f"{what} (default: the lesson's model)")
    args = ap.parse_args(argv)
    if not args.corpus.is_file():
        print(f"corpus not found: {args.corpus}. Pass --corpus PATH (the course's shared/corpus/marianela.txt).",
              file=sys.stderr)
        return 2
    try:
        cfg = model_config(args)
        tok = load_tokenizer(args.tokenizer) if args.tokenizer else None
    except (ValueError, CheckpointError) as e:
        print(e, file=sys.stderr)
        return 2
    one_blas_thread()            # same bits on any machine with this NumPy; the matrices are small
    tc = TrainConfig(steps=args.steps, batch=args.batch, lr=args.lr, min_lr=args.lr / 10, seed=args.seed)
    train(args.corpus.read_text(encoding="utf-8"), args.out, tc, cfg, tokenizer=tok)
    return 0


if __name__ == "__main__":
    sys.exit(main())
