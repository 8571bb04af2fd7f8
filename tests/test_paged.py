"""The paged cache: the model runs on it unchanged with the contiguous cache's logits, forks share
blocks and copy only on write, and the pool's counts and free list stay consistent."""

import numpy as np
import pytest

from model import generate, is_position_error
from model.gpt import kv_difference
from model.paged import SCRIPT, BlockPool, PagedKVCache, PoolExhausted, memory, ownership, run_scenario

BLOCK_SIZES = [1, 3, 4, 8, 16, 64]


@pytest.fixture(scope="module")
def text(gpt):
    return generate(gpt, "La Nela", 62, seed=0)


def worst(a, b):
    return float(np.abs(a - b).max())


@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_every_path_gives_the_contiguous_caches_logits(gpt, text, bs):
    """prefill, step, prefill after a cache, truncate then step, to the end of the window."""
    paged = PagedKVCache(BlockPool(gpt.config, 64 // bs + 2, bs))
    diffs = [worst(gpt.prefill(text[:10], paged)[0], gpt.prefill(text[:10])[0])]
    _, flat = gpt.prefill(text[:10])
    diffs += [worst(gpt.step(t, paged), gpt.step(t, flat)) for t in text[10:30]]
    diffs.append(worst(gpt.prefill(text[30:41], paged)[0], gpt.prefill(text[30:41], flat)[0]))
    paged.truncate(33)
    flat.truncate(33)
    assert len(paged) == 33 and len(paged.table) == -(-33 // bs)
    diffs += [worst(gpt.step(t, paged), gpt.step(t, flat)) for t in text[33:64]]
    assert max(diffs) < 1e-12 and kv_difference(paged, flat) < 1e-12 and len(paged) == 64
    assert paged.k[1].shape == (4, 64, 16) and paged.n_numbers == flat.n_numbers == 16_384
    table = list(paged.table)
    with pytest.raises(IndexError) as e:
        gpt.step(text[-1], paged)  # position 65
    assert is_position_error(e.value) and len(paged) == 64 and paged.table == table


@pytest.mark.parametrize("bs", [4, 16])
def test_generate_samples_the_same_text_on_it(gpt, text, bs):
    assert generate(gpt, "La Nela", 62, seed=0, cache=PagedKVCache(BlockPool(gpt.config, 64, bs))) == text


@pytest.mark.parametrize("bs", [3, 4, 8])
def test_a_fork_shares_full_blocks_and_copies_the_partial_one_on_write(gpt, text, bs):
    pool = BlockPool(gpt.config, 40, bs)
    a = PagedKVCache(pool)
    gpt.prefill(text[:10], a)
    b = a.fork()
    full, last = 10 // bs, len(a.table) - 1  # 10 % bs != 0: a partial last block
    assert b.table == a.table and (pool.refs[a.table] == 2).all()
    before = [x.copy() for x in a.k + a.v]
    zb = gpt.step(text[10], b)  # b writes position 11: copies the last block
    assert b.table[:full] == a.table[:full] and (pool.refs[a.table[:full]] == 2).all()  # full blocks: still shared
    assert b.table[last] != a.table[last] and pool.refs[a.table[last]] == pool.refs[b.table[last]] == 1
    assert all(np.array_equal(x, y) for x, y in zip(a.k + a.v, before))  # a's numbers untouched
    own = list(a.table)
    za = gpt.step(200, a)  # a diverges: its block is its own now
    assert (
        a.table == own and pool.refs[a.table[last]] == 1
    )  # written in place, no copy and pool.n_free == 40 - len(set(a.table) | set(b.table))
    _, fa = gpt.prefill(text[:10])
    fb = fa.copy()
    assert worst(za, gpt.step(200, fa)) < 1e-12 and worst(zb, gpt.step(text[10], fb)) < 1e-12
    assert kv_difference(a, fa) < 1e-12 and kv_difference(b, fb) < 1e-12
    assert worst(gpt.step(text[11], b), gpt.step(text[11], fb)) < 1e-12


def test_throw_away_copies_take_nothing_from_the_pool(gpt, text):
    """copy() keeps KVCache.copy's contract: independent, and holding nothing once dropped."""
    pool = BlockPool(gpt.config, 20, 4)
    a = PagedKVCache(pool)
    gpt.prefill(text[:28], a)  # 7 full blocks
    own, refs = list(a.table), pool.refs.copy()
    _, flat = gpt.prefill(text[:28])
    for _ in range(14):  # as forks, 14 would hold a's 7 blocks and a new block each: 7 + 14 > 20
        z = gpt.step(text[28], a.copy())
        assert worst(z, gpt.step(text[28], flat.copy())) < 1e-12
    assert a.table == own and np.array_equal(pool.refs, refs) and pool.n_free == 13
    b = a.copy()
    for t in text[28:64]:
        gpt.step(t, b)  # a copy grows to the end of the window on its own pool
    assert len(b) == 64 and len(a) == 28 and kv_difference(a, flat) == 0.0 and pool.n_free == 13
    a.free()
    assert pool.n_free == 20 and pool.refs.sum() == 0


def test_writing_after_a_truncate_copies_a_full_shared_block(gpt, text):
    pool = BlockPool(gpt.config, 20, 4)
    a = PagedKVCache(pool)
    gpt.prefill(text[:12], a)  # three full blocks
    b = a.fork()
    b.truncate(6)  # b keeps blocks 0, 1 (1 half used)
    assert pool.refs[a.table].tolist() == [2, 2, 1]
    keys = a.k[0].copy()
    z = gpt.step(text[6], b)  # position 7 is in shared block 1
    assert b.table[0] == a.table[0] and b.table[1] != a.table[1]
    assert np.array_equal(a.k[0], keys) and pool.refs[a.table].tolist() == [2, 1, 1]
    _, flat = gpt.prefill(text[:6])
    assert worst(z, gpt.step(text[6], flat)) < 1e-12


def test_free_list_and_counts_after_sequences_leave(gpt):
    pool = BlockPool(gpt.config, 12, 4)
    caches = {"a": PagedKVCache(pool)}
    gpt.prefill(gpt.tokenizer.encode("Se puso el sol. Tras el breve crepúsculo"), caches["a"])  # 21: 6 blocks
    caches["b"] = caches["a"].fork()
    caches["c"] = caches["a"].fork()
    gpt.step(5, caches["b"])
    gpt.step(6, caches["c"])
    assert pool.refs.sum() == 6 + 6 + 6 and pool.n_free == 12 - 8
    for gone in ("a", "b"):
        caches.pop(gone).free()
        counts = np.zeros(12, dtype=int)
        for c in caches.values():
            np.add.at(counts, c.table, 1)
        assert np.array_equal(pool.refs, counts)  # every count is its holders
        assert sorted(pool.free_list) == np.flatnonzero(counts == 0).tolist()
    assert [blk["owners"] for blk in ownership(pool, caches) if blk["refs"]] == [["c"]] * 6
    caches["c"].free()
    assert pool.n_free == 12 and pool.refs.sum() == 0 and len(caches["c"]) == 0
    with pytest.raises(ValueError, match="not in use"):
        pool.release(0)


def test_running_out_of_blocks_is_a_clear_error_that_changes_nothing(gpt, text):
    pool = BlockPool(gpt.config, 3, 4)
    a = PagedKVCache(pool)
    gpt.prefill(text[:12], a)
    with pytest.raises(PoolExhausted, match="0 free blocks of 4 positions, 1 needed"):
        gpt.step(text[12], a)
    assert len(a) == 12 and pool.n_free == 0
    b = a.fork()
    b.truncate(10)
    with pytest.raises(PoolExhausted):
        gpt.step(text[10], b)  # a copy on write needs a block too
    assert len(b) == 10 and b.table == a.table[:3] and pool.refs.tolist() == [2, 2, 2]


def test_memory_is_counted_from_the_arrays(gpt, text):
    pool = BlockPool(gpt.config, 30, 8)
    assert pool.block_nbytes == 8 * pool.position_nbytes == sum(a.nbytes for a in pool.k + pool.v) // 30
    a = PagedKVCache(pool)
    gpt.prefill(text[:21], a)
    b = a.fork()
    gpt.step(text[21], a)
    gpt.step(7, b)
    m = memory(pool, {"a": a, "b": b})
    flat = gpt.prefill(text[:22])[1]
    full = gpt.prefill(text[:64])[1]
    assert m["exact"] == 2 * flat.nbytes and m["reserved"] == 2 * full.nbytes == 2 * 128 * 1024
    assert m["paged"] == 6 * pool.block_nbytes and m["blocks_in_use"] == 4  # 2 shared + 2 own last blocks
    assert m["shared"] == 4 * pool.block_nbytes < m["paged"] < m["reserved"]
    assert m["fragmentation_positions"] == 2 * 2 and m["fragmentation_bytes"] == 4 * pool.position_nbytes
    assert a.nbytes == 3 * pool.block_nbytes


@pytest.mark.parametrize("bs", [4, 16])
def test_the_scenario_step_by_step(gpt, bs):
    snaps, texts = run_scenario(gpt, block_size=bs)
    for e in SCRIPT:  # sharing changes no text
        assert texts[e.name] == generate(gpt, e.prompt, e.n_new, seed=e.seed)
    for s in snaps:
        holders = {}
        for table in s["tables"].values():
            for b in table:
                holders[b] = holders.get(b, 0) + 1
        assert all(blk["refs"] == holders.get(blk["block"], 0) for blk in s["blocks"])
        assert s["free"] == [blk["block"] for blk in s["blocks"] if blk["refs"] == 0]
        m = s["memory"]
        assert m["shared"] <= m["paged"] and m["exact"] <= m["paged"] <= m["reserved"]
    first = snaps[0]
    assert first["events"] == ["A enters: prefill", "B enters: shares A's prompt"]
    assert first["tables"]["A"] == first["tables"]["B"] and first["memory"]["shared"] * 2 == first["memory"]["paged"]
    d = next(s for s in snaps if "D enters: shares A's prompt" in s["events"])
    assert d["tables"]["D"][: 21 // bs] == d["tables"]["A"][: 21 // bs]
    assert snaps[-1]["events"][-1].endswith("leaves") and snaps[-1]["tables"] == {}
    assert len(snaps[-1]["free"]) == 64
