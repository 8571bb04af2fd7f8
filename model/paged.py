"""A paged key/value cache (PagedAttention): fixed-size blocks from one pool, a block table
per sequence, and blocks shared between sequences that begin alike.

    from model.paged import BlockPool, PagedKVCache, memory, run_scenario
    pool = BlockPool(gpt.config, n_blocks=32, block_size=8)
    a = PagedKVCache(pool)
    logits, a = gpt.llenar(ids, a)          # the model's own prefill and step, unchanged
    z = gpt.avanzar(token, a)
    b = a.fork()                             # shares every block: reference counts + 1
    c = a.copy()                             # its own blocks on a pool of its own: freed when dropped
    gpt.avanzar(other, b)                    # its first write into a shared block copies that block
    memory(pool, {"a": a, "b": b})           # reserved / paged / shared bytes, fragmentation
    b.free()                                 # blocks nobody holds go back to the free list
    snapshots = run_scenario(gpt, block_size=4)   # conversations entering and leaving, step by step

The pool: for every block l, K and V storage pool.k[l], pool.v[l] of shape
(n_blocks, H_kv, block_size, d_k): block b holds block_size positions of every
layer. A reference count per block, and a free list (the lowest free id is
taken first). A sequence's cache is its block table: position p lives in block
table[p // block_size], at offset p % block_size. So the blocks of one
sequence may lie anywhere in the pool (physically scattered, logically one
cache); attention reads them gathered into the (H_kv, t, d_k) it always reads.

PagedKVCache speaks the KVCache protocol of model.gpt: append(l, k, v) returns
block l's whole K and V (H_kv, t, d_k); truncate(t); copy(); len(); n_numbers;
nbytes; k[l] and v[l]. gpt.prefill and gpt.step call append once per
layer: each layer keeps its own length, and len() is the shortest (what every
layer holds), so it changes when a whole pass is stored. The first layer to
reach a new block allocates it (the table is shared by all layers), and all
the blocks a write needs are found before anything is written: if the pool
runs out, PoolExhausted is raised with the cache unchanged. A position past
n_ctx is the position table's IndexError, raised before any append.

Sharing: fork() gives a second table naming the same blocks (each count + 1).
A block is written only when its count is 1: the first write into a shared
block (the partly filled last block of a shared prompt, or any block after a
truncate) copies it to a fresh block first (copy on write). Full shared blocks
are never written again and stay shared. free() (a sequence leaving) gives its
blocks back: a count reaching 0 returns the block to the free list.

copy() keeps KVCache.copy's contract: a cache that can grow without touching this
one, and that holds nothing once dropped. It copies the blocks in its table onto
a pool of its own (room for n_ctx positions), so a throw-away copy (a timed step
on a copy, as model.timing does) takes no block of this pool and leaves its
counts as they were. fork() is the sharing one.

memory() counts bytes from the pool's arrays (block_nbytes: K and V of one
block in every layer): reserved, each sequence a contiguous cache of n_ctx
positions (what a server must set aside when it cannot know how long a
conversation will grow); paged, each sequence its own blocks; shared, the
blocks in use (a shared block counted once); exact, each sequence's positions
and nothing more; and the fragmentation, positions allocated but unused (the
tails of last blocks: less than one block per sequence).
"""
from __future__ import annotations

import heapq
import sys
from dataclasses import dataclass

import numpy as np


class PoolExhausted(RuntimeError):
    """No free block left for a write."""


class BlockPool:
    """Storage for n_blocks blocks of block_size positions, in every layer, with reference counts."""

    def __init__(self, cfg, n_blocks: int, block_size: int):
        if n_blocks < 1 or block_size < 1:
            raise ValueError(f"a pool needs at least one block of at least one position, not "
                             f"{n_blocks} blocks of {block_size}")
        self.config, self.n_blocks, self.block_size = cfg, n_blocks, block_size
        shape = (n_blocks, cfg.n_kv_heads, block_size, cfg.d_head)
        self.k = [np.zeros(shape) for _ in range(cfg.n_layers)]      # block b of layer l: (H_kv, block_size, d_k)
        self.v = [np.zeros(shape) for _ in range(cfg.n_layers)]
        self.refs = np.zeros(n_blocks, dtype=np.int64)
        self.free_list = list(range(n_blocks))                       # a heap: the lowest free id first

    @property
    def n_free(self) -> int:
        return len(self.free_list)

    @property
    def block_nbytes(self) -> int:
        """Bytes of one block: its K and V in every layer, 2 L H_kv block_size d_k 8."""
        return sum(a[0].nbytes for a in self.k) + sum(a[0].nbytes for a in self.v)

    @property
    def position_nbytes(self) -> int:
        """Bytes of one position's keys and values in every layer."""
        return self.block_nbytes // self.block_size

    def allocate(self, n: int = 1) -> list[int]:
        """n free blocks, each with count 1. PoolExhausted (nothing taken) if fewer are free."""
        if n > self.n_free:
            raise PoolExhausted(f"the pool has {self.n_free} free blocks of {self.block_size} positions, "
                                f"{n} needed ({self.n_blocks} in all): free a sequence or make the pool bigger")
        ids = [heapq.heappop(self.free_list) for _ in range(n)]
        self.refs[ids] = 1
        return ids

    def retain(self, b: int) -> None:
        self.refs[b] += 1

    def release(self, b: int) -> None:
        """One holder fewer; at 0 the block is free again."""
        if self.refs[b] <= 0:
            raise ValueError(f"block {b} is not in use")
        self.refs[b] -= 1
        if self.refs[b] == 0:
            heapq.heappush(self.free_list, b)

    def copy_block(self, b: int) -> int:
        """Copy on write: a fresh block with b's numbers (every layer); the caller's hold on b is dropped."""
        new, = self.allocate(1)
        for a in self.k + self.v:
            a[new] = a[b]
        self.release(b)
        return new


class PagedKVCache:
    """A sequence's cache as a block table into a BlockPool (see the module's doc)."""

    def __init__(self, pool: BlockPool, table=None, lengths=None):
        self.pool = pool
        self.table: list[int] = list(table or [])
        self.lengths: list[int] = list(lengths or [0] * pool.config.n_layers)

    @classmethod
    def empty(cls, pool: BlockPool) -> PagedKVCache:
        return cls(pool)

    def __len__(self) -> int:
        return min(self.lengths)

    def blocks_for(self, t: int) -> int:
        return -(-t // self.pool.block_size)

    def writable(self, start: int, end: int) -> None:
        """Positions start..end-1 ready to write: blocks allocated up to `end`, and every shared block
        among them copied first (copy on write). All or nothing: PoolExhausted changes nothing."""
        bs, pool = self.pool.block_size, self.pool
        first, last = start // bs, (end - 1) // bs
        new = max(0, last + 1 - len(self.table))
        shared = [j for j in range(first, min(last + 1, len(self.table))) if pool.refs[self.table[j]] > 1]
        if new + len(shared) > pool.n_free:
            pool.allocate(new + len(shared))                    # raises, with what is missing
        for j in shared:
            self.table[j] = pool.copy_block(self.table[j])
        self.table += pool.allocate(new) if new else []

    def read(self, l: int, t: int) -> tuple[np.ndarray, np.ndarray]:
        """Block l's first t positions, gathered from the pool: K and V (H_kv, t, d_k)."""
        ids = self.table[:self.blocks_for(t)]
        H, dk = self.pool.config.n_kv_heads, self.pool.config.d_head
        gather = lambda a: a[ids].swapaxes(0, 1).reshape(H, len(ids) * self.pool.block_size, dk)[:, :t]
        return gather(self.pool.k[l]), gather(self.pool.v[l])   # (n_blocks, H, bs, d_k) -> (H, t, d_k)

    def append(self, l: int, k, v):
        """k, v of the new rows (H_kv, n, d_k) at block l's next positions, in their blocks.
        Returns what attention reads: block l's whole K and V (H_kv, t, d_k)."""
        start, n = self.lengths[l], k.shape[-2]
        if n:
            self.writable(start, start + n)
            p = np.arange(start, start + n)
            blocks, offsets = np.array(self.table)[p // self.pool.block_size], p % self.pool.block_size
            self.pool.k[l][blocks, :, offsets] = k.swapaxes(0, 1)    # (n, H_kv, d_k) into their slots
            self.pool.v[l][blocks, :, offsets] = v.swapaxes(0, 1)
            self.lengths[l] = start + n
        return self.read(l, self.lengths[l])

    @property
    def k(self) -> list[np.ndarray]:
        return [self.read(l, t)[0] for l, t in enumerate(self.lengths)]

    @property
    def v(self) -> list[np.ndarray]:
        return [self.read(l, t)[1] for l, t in enumerate(self.lengths)]

    def truncate(self, t: int) -> None:
        """Keep the first t positions; the blocks past them are released."""
        t = min(t, len(self))
        keep = self.blocks_for(t)
        for b in self.table[keep:]:
            self.pool.release(b)
        self.table = self.table[:keep]
        self.lengths = [t] * len(self.lengths)

    def fork(self) -> PagedKVCache:
        """A second sequence with the same positions, sharing every block (counts + 1)."""
        for b in self.table:
            self.pool.retain(b)
        return PagedKVCache(self.pool, self.table, self.lengths)

    def copy(self) -> PagedKVCache:
        """The same positions on a pool of its own, room for n_ctx: this pool and its counts untouched."""
        cfg, n = self.pool.config, len(self.table)
        own = BlockPool(cfg, max(n, self.blocks_for(cfg.n_ctx)), self.pool.block_size)
        ids = own.allocate(n)                                       # 0 .. n-1, in table order
        for mine, theirs in zip(own.k + own.v, self.pool.k + self.pool.v):
            mine[ids] = theirs[self.table]                          # (n, H_kv, block_size, d_k)
        return PagedKVCache(own, ids, self.lengths)

    def free(self) -> None:
        """The sequence leaves: every block released, the table emptied."""
        self.truncate(0)

    @property
    def n_numbers(self) -> int:
        """Numbers it stands for: 2 L t H_kv d_k, as the contiguous cache."""
        cfg = self.pool.config
        return 2 * sum(self.lengths) * cfg.n_kv_heads * cfg.d_head

    @property
    def nbytes(self) -> int:
        """Bytes of the blocks in its table, whole (shared ones too)."""
        return len(self.table) * self.pool.block_nbytes


# -- what the pool holds, for the page -----------------------------------------------------

def ownership(pool: BlockPool, caches) -> list[dict]:
    """Every block of the pool: {"block", "refs" (its count), "owners" (names whose table holds it),
    "filled" (positions in use: the most any owner uses)}. caches: {name: PagedKVCache}."""
    owners = [[] for _ in range(pool.n_blocks)]
    filled = [0] * pool.n_blocks
    for name, c in caches.items():
        for j, b in enumerate(c.table):
            owners[b].append(name)
            filled[b] = max(filled[b], min(pool.block_size, len(c) - j * pool.block_size))
    return [{"block": b, "refs": int(pool.refs[b]), "owners": owners[b], "filled": filled[b]}
            for b in range(pool.n_blocks)]


def memory(pool: BlockPool, caches, n_ctx: int | None = None) -> dict:
    """Bytes of the caches, four ways (see the module's doc), and the fragmentation:
    {"reserved", "paged", "shared", "exact", "fragmentation_positions", "fragmentation_bytes",
     "blocks_in_use"}. caches: {name: PagedKVCache}, every sequence holding blocks of the pool."""
    n_ctx = pool.config.n_ctx if n_ctx is None else n_ctx
    per_pos, per_block = pool.position_nbytes, pool.block_nbytes
    in_use = [b for b in ownership(pool, caches) if b["refs"] > 0]
    unused = sum(pool.block_size - b["filled"] for b in in_use)
    return {"reserved": len(caches) * n_ctx * per_pos,
            "paged": sum(len(c.table) for c in caches.values()) * per_block,
            "shared": len(in_use) * per_block,
            "exact": sum(len(c) for c in caches.values()) * per_pos,
            "fragmentation_positions": unused,
            "fragmentation_bytes": unused * per_pos,
            "blocks_in_use": len(in_use)}


# -- a scenario the page can step: conversations entering and leaving ------------------------

@dataclass(frozen=True)
class Entry:
    """A conversation entering at `step` with a prompt, to sample n_new tokens with its seed."""
    step: int
    name: str
    prompt: str
    n_new: int
    seed: int = 0


PROMPT = "Se puso el sol. Tras el breve crepúsculo"     # 21 tokens: a partly filled last block at 4, 8, 16
SCRIPT = (
    Entry(0, "A", PROMPT, 14, seed=0),
    Entry(0, "B", PROMPT, 6, seed=1),             # the same prompt: shares A's blocks
    Entry(2, "C", "La Nela", 9, seed=2),
    Entry(7, "D", PROMPT, 10, seed=3),            # B has left: shares A's prompt blocks
    Entry(9, "E", "Pablo", 7, seed=4),            # a new prompt: blocks from the free list
)


class Conversation:
    """One sequence of the scenario: its cache, text, generator and next token's logits."""

    def __init__(self, entry: Entry, ids, cache: PagedKVCache, z):
        self.entry, self.ids, self.cache, self.z = entry, list(ids), cache, z
        self.prompt_z = z                                 # the prompt's last logits: what a sharer starts from
        self.n_prompt = len(ids)
        self.rng = np.random.default_rng(entry.seed)

    @property
    def done(self) -> bool:
        return len(self.ids) - self.n_prompt >= self.entry.n_new


class Scenario:
    """Conversations entering (a prompt already held by a live one is shared, not computed again),
    each making one sampled token a step (as model.sampling.generate with its seed), and leaving
    when done (their blocks freed). step() -> a snapshot (see snapshot())."""

    def __init__(self, gpt, block_size: int = 4, n_blocks: int = 64, script=SCRIPT, top_p: float | None = 0.9):
        self.gpt, self.script, self.top_p = gpt, list(script), top_p
        self.pool = BlockPool(gpt.config, n_blocks, block_size)
        self.live: dict[str, Conversation] = {}
        self.texts: dict[str, list[int]] = {}
        self.t = 0

    @property
    def done(self) -> bool:
        return not self.live and all(e.step < self.t for e in self.script)

    def enter(self, e: Entry) -> str:
        ids = self.gpt.tokenizer.encode(e.prompt)
        twin = next((c for c in self.live.values() if c.ids[:c.n_prompt] == ids), None)
        if twin is not None:
            cache = twin.cache.fork()
            cache.truncate(len(ids))                    # its prompt's blocks, shared
            conv, event = Conversation(e, ids, cache, twin.prompt_z), f"{e.name} enters: shares {twin.entry.name}'s prompt"
        else:
            z, cache = self.gpt.prefill(ids, PagedKVCache(self.pool))
            conv, event = Conversation(e, ids, cache, z[-1]), f"{e.name} enters: prefill"
        self.live[e.name] = conv
        return event

    def advance(self, c: Conversation, new: bool) -> None:
        """One token: from the prompt's logits if it just entered, else one step of the model first."""
        from .sampling import sample
        if not new:
            c.z = self.gpt.step(c.ids[-1], c.cache)
        c.ids.append(sample(c.z, c.rng, top_p=self.top_p))
        self.texts[c.entry.name] = c.ids

    def step(self) -> dict:
        events = []
        for name in [n for n, c in self.live.items() if c.done]:
            self.live.pop(name).cache.free()
            events.append(f"{name} leaves")
        entering = [e for e in self.script if e.step == self.t]
        events += [self.enter(e) for e in entering]
        for name, c in self.live.items():
            self.advance(c, new=any(e.name == name for e in entering))
        snap = self.snapshot(events)
        self.t += 1
        return snap

    def snapshot(self, events) -> dict:
        """{"step", "events", "blocks" (ownership), "free" (free block ids), "tables" {name: block ids},
        "lengths" {name: positions cached}, "memory" (see memory())}: plain data to draw."""
        caches = {n: c.cache for n, c in self.live.items()}
        return {"step": self.t, "events": events, "blocks": ownership(self.pool, caches),
                "free": sorted(self.pool.free_list), "tables": {n: list(c.table) for n, c in caches.items()},
                "lengths": {n: len(c) for n, c in caches.items()}, "memory": memory(self.pool, caches)}


def run_scenario(gpt, block_size: int = 4, n_blocks: int = 64, script=SCRIPT, top_p: float | None = 0.9):
    """Every step of the scenario, until the last conversation has left -> (snapshots, texts {name: ids})."""
    s = Scenario(gpt, block_size, n_blocks, script, top_p)
    snapshots = []
    while not s.done:
        snapshots.append(s.step())
    return snapshots, s.texts


def format_scenario(snapshots) -> str:
    KiB = 1024
    out = [f"{'step':>4}  {'reserved':>8} {'paged':>6} {'shared':>6} {'exact':>6} {'unused':>6}  tables, events"]
    for s in snapshots:
        m = s["memory"]
        tables = " ".join(f"{n}:{'.'.join(map(str, t))}" for n, t in s["tables"].items())
        out.append(f"{s['step']:>4}  {m['reserved'] / KiB:>6.0f} K {m['paged'] / KiB:>4.0f} K {m['shared'] / KiB:>4.0f} K "
                   f"{m['exact'] / KiB:>4.0f} K {m['fragmentation_positions']:>6}  {tables}  {'; '.join(s['events'])}")
    return "\n".join(out)


def main(argv=None) -> int:
    """python -m model.paged: the scenario step by step (blocks of 4), then its peak for other sizes."""
    from .gpt import MiniGPT
    gpt = MiniGPT.load()
    who = [f"{e.name} at step {e.step} ({len(gpt.tokenizer.encode(e.prompt))} + {e.n_new} tokens)" for e in SCRIPT]
    print(f"scenario: {', '.join(who)}; A, B and D share their prompt")
    snaps, _ = run_scenario(gpt, block_size=4)
    print(f"blocks of 4 positions ({BlockPool(gpt.config, 1, 4).block_nbytes:,} bytes each); "
          f"KiB (K), unused = positions allocated but empty")
    print(format_scenario(snaps))
    print(f"\n{'block':>5} {'peak reserved':>13} {'peak paged':>10} {'peak shared':>11} {'peak exact':>10} "
          f"{'mean unused positions':>21}")
    for bs in (1, 4, 8, 16, 64):
        snaps, _ = run_scenario(gpt, block_size=bs, n_blocks=5 * 64 // bs + 5)
        peak = lambda key, snaps=snaps: max(s["memory"][key] for s in snaps) / 1024
        unused = np.mean([s["memory"]["fragmentation_positions"] for s in snaps])
        print(f"{bs:>5} {peak('reserved'):>11.0f} K {peak('paged'):>8.0f} K {peak('shared'):>9.0f} K "
              f"{peak('exact'):>8.0f} K {unused:>21.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
