"""B conversations decoded together: one tensor per block for all their caches.

    from model.batch import prefill_batch, step_batch, generate_batch
    logits, cache = prefill_batch(gpt, [ids_a, ids_b, ids_c])   # (B, V): each prompt's next token
    logits = step_batch(gpt, [x_a, x_b, x_c], cache)            # one token each, (B, V)

Every conversation keeps its own positions: a prompt of 2 tokens and one of 9
start at position 1 both. Prompts of different lengths are padded on the left,
so each conversation's newest token is always in the last column ("slot"):

    slot        0    1    2    3  |  4 (the first step)
    row 0       pad  pad  La   Nela | x      positions 1 2 | 3
    row 1       Se   puso el   sol  | x      positions 1 2 3 4 | 5

cache.k[l], cache.v[l]: (B, H_kv, S, d_k) over S slots; cache.valid (B, S)
says which slots hold the row's own tokens. A row attends to its valid slots up
to its own (the causal mask and the padding mask together), never to padding
and never to another row (each row has its own slots). The padding slots are
computed (token 0 at position 1) and never read. A row's position past n_ctx
raises the position table's IndexError, before anything is written.
"""
from __future__ import annotations

import numpy as np

from .gpt import KVCache, attend, causal_mask, no_empty_rows, position_rows, token_rows
from .sampling import sample

PAD = 0          # the token and the (0-based) position a padding slot is computed with


class BatchCache:
    """The caches of B conversations: k[l], v[l] (B, H_kv, S, d_k); valid (B, S) bool;
    lengths (B,): tokens each conversation has cached, i.e. the 0-based position of its next one."""

    def __init__(self, k, v, valid, lengths):
        self.k, self.v, self.valid, self.lengths = k, v, valid, lengths

    @classmethod
    def empty(cls, cfg, B: int) -> BatchCache:
        shape = (B, cfg.n_kv_heads, 0, cfg.d_head)
        return cls([np.zeros(shape) for _ in range(cfg.n_layers)], [np.zeros(shape) for _ in range(cfg.n_layers)],
                   np.zeros((B, 0), dtype=bool), np.zeros(B, dtype=np.int64))

    def __len__(self) -> int:
        """S, the slots (the longest prompt plus the steps since)."""
        return self.valid.shape[1]

    append = KVCache.append                  # the same: (B, H_kv, n, d_k) at the end of the slots

    def copy(self) -> BatchCache:
        """A cache that can grow without touching this one (no array is written in place)."""
        return BatchCache(list(self.k), list(self.v), self.valid, self.lengths)

    def row(self, b: int) -> KVCache:
        """Conversation b's own cache, without its padding: k[l] (H_kv, t, d_k)."""
        keep = self.valid[b]
        return KVCache([k[b][:, keep] for k in self.k], [v[b][:, keep] for v in self.v])

    @property
    def nbytes(self) -> int:
        """Bytes of the keys and values, padding slots included (what the tensor holds)."""
        return sum(a.nbytes for a in self.k) + sum(a.nbytes for a in self.v)


def pad_left(prompts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Token lists -> ids, positions (0-based) and valid, (B, n) each, padded on the left.
    ValueError for no prompt at all or an empty one (its row would be padding only)."""
    no_empty_rows(len(prompts), "the batch")
    for b, p in enumerate(prompts):
        no_empty_rows(len(p), f"prompt {b + 1} of {len(prompts)}")
    B, n = len(prompts), max(len(p) for p in prompts)
    ids = np.full((B, n), PAD, dtype=np.int64)
    positions = np.full((B, n), PAD, dtype=np.int64)
    valid = np.zeros((B, n), dtype=bool)
    for b, p in enumerate(prompts):
        ids[b, n - len(p):] = p
        positions[b, n - len(p):] = np.arange(len(p))
        valid[b, n - len(p):] = True
    return ids, positions, valid


def blocks(gpt, x, cache: BatchCache, mask):
    """Every block on rows x (B, n, d) whose keys and values go after the cache's slots. -> (B, n, d)."""
    for l in range(gpt.config.n_layers):
        q, k, v = gpt.qkv(l, x)                              # (B, H, n, d_k), (B, H_kv, n, d_k)
        K, V = cache.append(l, k, v)                         # (B, H_kv, S, d_k)
        x = gpt.rest_of_block(l, x, attend(q, K, V, mask))   # (B, n, d)
    return x


def prefill_batch(gpt, prompts) -> tuple[np.ndarray, BatchCache]:
    """Each conversation's prompt (token lists of any lengths >= 1) in one pass.
    -> the logits of each prompt's last token (B, V), and the batch's cache.
    An empty prompt is a ValueError, as in `gpt.prefill` ("prompt 2 of 3 is empty: ...")."""
    ids, positions, valid = pad_left(prompts)
    B, n = ids.shape
    x = token_rows(gpt.params["wte"], ids) + position_rows(gpt.params["wpe"], positions)   # (B, n, d)
    sees = ~causal_mask(n) & (valid[:, None, :] | np.eye(n, dtype=bool))   # (B, n, n): a pad sees itself
    cache = BatchCache.empty(gpt.config, B)
    x = blocks(gpt, x, cache, ~sees[:, None])                              # mask (B, 1, n, n)
    cache.valid, cache.lengths = valid, valid.sum(axis=1)
    return gpt.head(x[:, -1]), cache


def step_batch(gpt, tokens, cache: BatchCache) -> np.ndarray:
    """One token per conversation, each at its own next position: tokens (B,) -> logits (B, V).
    The cache grows by one slot. A conversation past n_ctx raises the position table's
    IndexError before anything is written: drop it from the batch to go on."""
    p = gpt.params
    x = position_rows(p["wpe"], cache.lengths)[:, None]                    # (B, 1, d); IndexError past n_ctx
    x = token_rows(p["wte"], tokens)[:, None] + x
    valid = np.concatenate([cache.valid, np.ones((len(tokens), 1), dtype=bool)], axis=1)   # (B, S + 1)
    x = blocks(gpt, x, cache, ~valid[:, None, None, :])                    # mask (B, 1, 1, S + 1)
    cache.valid, cache.lengths = valid, cache.lengths + 1
    return gpt.head(x[:, 0])                                               # (B, V)


def generate_batch(gpt, prompts, n_new: int, seeds, temperature: float = 1.0,
                   top_k: int | None = None, top_p: float | None = 0.9) -> list[list[int]]:
    """B conversations, each its prompt (a string) + n_new tokens sampled with its own seed:
    the same tokens `generate` gives each alone."""
    ids = [gpt.tokenizer.encode(p) for p in prompts]
    rngs = [np.random.default_rng(s) for s in seeds]
    z, cache = prefill_batch(gpt, ids)
    for i in range(n_new):
        tokens = [sample(z[b], rngs[b], temperature, top_k, top_p) for b in range(len(ids))]
        for row, tok in zip(ids, tokens):
            row.append(tok)
        if i < n_new - 1:
            z = step_batch(gpt, tokens, cache)
    return ids
