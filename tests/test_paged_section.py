"""The paged cache's section without a browser (app/sections/paged): the scenario stepped as
model.paged runs it, what each step did read from the block tables, the memory three ways as
model.paged.memory counts it on the real arrays, the logits equal to a contiguous cache's, the block
sizes a browser may send (one declaration), and the section built only when opened."""

from pathlib import Path

import numpy as np
import pytest
from bokeh.document import Document

from app import intake
from app.sections.paged.logic import (
    BLOCK_SIZES,
    POOL_POSITIONS,
    PagedChoice,
    PagedRun,
    changes_between,
    memory_row,
    shared_blocks,
    total_steps,
)
from model.paged import SCRIPT, PagedKVCache, memory, run_scenario
from tests.fresh import imported_as_it_opens

ROOT = Path(__file__).resolve().parents[1]


def stepped(gpt, bs):
    """Every step of a run: (snapshot, changes, memory recounted from the live caches, proof now)."""
    run, out = PagedRun(gpt, bs), []
    while run.advance():
        caches = {n: c.cache for n, c in run.live.items()}
        out.append((run.snap, run.changes, memory(run.scenario.pool, caches), run.proof_now))
    return run, out


@pytest.fixture(scope="module")
def runs(gpt):
    return {bs: stepped(gpt, bs) for bs in BLOCK_SIZES}


@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_the_run_is_model_pageds_scenario(gpt, runs, bs):
    """Step for step the tables and memory model.paged's own run gives, on a pool of 128 positions,
    for as many steps as the script says; every conversation's text that of the same run."""
    run, steps = runs[bs]
    snaps, texts = run_scenario(gpt, bs, POOL_POSITIONS // bs)
    assert run.steps == len(steps) == len(snaps) == total_steps(SCRIPT) == 18
    assert run.done and not run.advance() and run.steps == 18
    for (snap, _changes, _m, _p), theirs in zip(steps, snaps):
        assert snap["tables"] == theirs["tables"] and snap["memory"] == theirs["memory"]
        assert snap["free"] == theirs["free"]
    assert {n: ids for n, (ids, _np) in run.texts().items()} == texts
    assert run.n_blocks * bs == POOL_POSITIONS and run.scenario.pool.n_blocks == run.n_blocks


@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_the_memory_three_ways_is_model_pageds_count_on_the_arrays(gpt, runs, bs):
    run, steps = runs[bs]
    pool, cfg = run.scenario.pool, gpt.config
    per_block = sum(a[0].nbytes for a in pool.k + pool.v)  # the real arrays' bytes for one block
    assert per_block == pool.block_nbytes == 2 * cfg.n_layers * cfg.n_kv_heads * bs * cfg.d_head * 8
    for snap, _changes, recount, _p in steps:
        m = memory_row(snap)
        assert {k: m[k] for k in ("reserved", "paged", "shared", "exact")} == {
            k: recount[k] for k in ("reserved", "paged", "shared", "exact")
        }
        tables = snap["tables"]
        assert m["live"] == len(tables) and m["reserved"] == len(tables) * cfg.n_ctx * per_block // bs
        assert m["paged"] == sum(len(t) for t in tables.values()) * per_block
        assert m["shared"] == len({b for t in tables.values() for b in t}) * per_block == m["blocks"] * per_block
        assert m["shared"] <= m["paged"] <= m["reserved"] or not tables
        assert m["positions"] == sum(snap["lengths"].values()) and m["exact"] == m["positions"] * per_block // bs
        assert m["unused"] == m["blocks"] * bs - sum(b["filled"] for b in snap["blocks"] if b["refs"])
    peak = max(memory_row(s)["shared"] for s, *_ in steps)
    assert peak <= POOL_POSITIONS * per_block // bs  # the pool was enough
    assert max(memory_row(s)["reserved"] for s, *_ in steps) == 4 * cfg.n_ctx * per_block // bs


def test_blocks_of_4_step_by_step(runs):
    """The chapter's run (docs/chapter.md): A and B share A's prompt (21 tokens: 5 full blocks and one
    with one position); A's first write copies block 5 into 6; D shares again at step 8 and copies
    6 into 9; B's freed block 5 goes to A."""
    _run, steps = runs[4]
    changes = [c for _s, c, _m, _p in steps]
    assert changes[0] == [
        {"kind": "enter", "name": "A", "blocks": [0, 1, 2, 3, 4, 5]},
        {"kind": "share", "name": "B", "with": "A", "blocks": [0, 1, 2, 3, 4, 5]},
    ]
    assert changes[1] == [{"kind": "copy", "name": "A", "logical": 5, "old": 5, "new": 6}]
    assert shared_blocks(steps[1][0]) == [0, 1, 2, 3, 4]
    assert changes[6] == [{"kind": "leave", "name": "B"}]
    assert changes[7] == [{"kind": "share", "name": "D", "with": "A", "blocks": [0, 1, 2, 3, 4, 6]}]
    assert {"kind": "copy", "name": "D", "logical": 5, "old": 6, "new": 9} in changes[8]
    assert {"kind": "grow", "name": "A", "logical": 7, "block": 5} in changes[8]  # B's, freed at step 7
    assert changes[9][0] == {"kind": "enter", "name": "E", "blocks": [11]}
    assert [c for c in changes[-1]] == [{"kind": "leave", "name": "D"}]
    copies = [c for cs in changes for c in cs if c["kind"] == "copy"]
    assert [(c["name"], c["old"], c["new"]) for c in copies] == [("A", 5, 6), ("D", 6, 9)]
    m = memory_row(steps[0][0])
    assert (m["reserved"], m["paged"], m["shared"], m["exact"]) == (256 * 1024, 96 * 1024, 48 * 1024, 84 * 1024)


@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_every_block_size_copies_on_the_first_write_into_the_shared_prompt(runs, bs):
    """21 prompt tokens never fill their last block at 4, 8 or 16: A's first write copies it."""
    _run, steps = runs[bs]
    first = steps[1][1]
    last = 21 // bs
    assert {"kind": "copy", "name": "A", "logical": last, "old": last, "new": last + 1} in first
    assert shared_blocks(steps[1][0]) == list(range(last))


@pytest.mark.parametrize("bs", BLOCK_SIZES)
def test_the_paged_logits_are_the_contiguous_caches(runs, bs):
    run, steps = runs[bs]
    assert run.proof < 1e-12 and all(p < 1e-12 for *_x, p in steps)
    live_per_step = [len(s["tables"]) for s, *_ in steps]
    assert run.compared == sum(live_per_step) == 46


def test_changes_between_reads_the_tables():
    before = {"tables": {"A": [0, 1], "B": [0, 2]}}
    after = {"tables": {"A": [0, 3, 4], "C": [5]}}
    assert changes_between(before, after) == [
        {"kind": "leave", "name": "B"},
        {"kind": "enter", "name": "C", "blocks": [5]},
        {"kind": "copy", "name": "A", "logical": 1, "old": 1, "new": 3},
        {"kind": "grow", "name": "A", "logical": 2, "block": 4},
    ]


@pytest.mark.parametrize("bad", [0, 1, 2, 3, 5, 32, 64, "4", 4.5, None])
def test_only_the_declared_block_sizes(gpt, bad):
    with pytest.raises(ValueError):
        PagedChoice(block_size=bad)
    with pytest.raises(ValueError):
        PagedRun(gpt, bad)
    assert intake.refusal(PagedChoice.param.block_size, bad) is not None


def test_the_buttons_are_the_declaration_and_a_forged_choice_is_refused(caplog):
    """The radio buttons show the declared sizes; the browser sends an index, and one past them (or
    not an index) is refused at the door, nothing rebuilt; a declared one is taken."""
    import logging

    from app.main import create_view

    caplog.set_level(logging.WARNING, logger="app.intake")
    view = create_view("?lang=en")
    doc = Document()
    view.layout.server_doc(doc)
    paged = next(s for s in view.sections if s.key == "paged")
    paged.card.collapsed = False
    assert list(paged.block.options.values()) == list(BLOCK_SIZES) == PagedChoice.param.block_size.objects
    model = next(m for m, _p in paged.block._models.values() if m.document is doc)
    before = paged.current
    for forged in (3, 99, -4, "x", 1.5, None):
        intake.apply_patch(
            doc, {"events": [{"kind": "ModelChanged", "model": {"id": model.id}, "attr": "active", "new": forged}]}
        )
        assert paged.choice.block_size == 4 and paged.current is before
    assert sum(intake.REFUSED in r.getMessage() for r in caplog.records) == 6
    assert (
        intake.apply_patch(
            doc, {"events": [{"kind": "ModelChanged", "model": {"id": model.id}, "attr": "active", "new": 2}]}
        )
        == 1
    )
    assert paged.choice.block_size == 16 and paged.current.block_size == 16 and paged.current.steps == 0


def test_nothing_of_it_is_imported_before_it_opens():
    out = imported_as_it_opens("paged", ("model.paged", "app.sections.paged.logic"))
    assert out == {"before": [], "built_before": False, "after": ["model.paged", "app.sections.paged.logic"]}


def test_the_section_steps_and_speaks_every_language():
    from app.main import create_view

    v = create_view("?lang=es")
    s = next(x for x in v.sections if x.key == "paged")
    s.card.collapsed = False
    assert "data-steps='0'" in s.state.object and "data-n='0'" in s.tables.object
    for _ in range(2):
        s.stepper.step_button.clicks += 1
    r = s.current
    assert r.steps == 2 and "data-steps='2'" in s.state.object and "Paso 2 de 18" in s.state.object
    assert "data-copies='1'" in s.events.object and "copia en escritura al bloque libre 6" in s.events.object
    m = memory_row(r.snap)
    assert f"data-shared='{m['shared']}'" in s.memory.object and f"data-reserved='{m['reserved']}'" in s.memory.object
    assert "data-table='0 1 2 3 4 6'" in s.tables.object and "data-shared='0 1 2 3 4'" in s.pool.object
    assert s.pool.object.count("<li class='blk") == POOL_POSITIONS // 4
    v.session.settings.lang = "pt"
    assert s.stepper.step_button.name == "Avançar os blocos" and "Passo 2 de 18" in s.state.object
    assert "cópia na escrita" in s.events.object
    v.session.settings.lang = "en"
    assert s.stepper.reset_button.name == "Reset the blocks"
    s.stepper.reset_button.clicks += 1
    assert s.current.steps == 0 and "Nobody has entered yet" in s.events.object
    while s.step():
        pass
    assert s.current.done and "data-done='True'" in s.state.object and "data-live='0'" in s.memory.object
    assert not s.step()


def test_a_paged_cache_is_what_the_table_points_to(gpt):
    """What the grid draws is the pool's own state: every live table's blocks are held, with counts."""
    run = PagedRun(gpt, 8)
    for _ in range(9):
        run.advance()
    pool = run.scenario.pool
    held = {}
    for c in run.live.values():
        assert isinstance(c.cache, PagedKVCache)
        for b in c.cache.table:
            held[b] = held.get(b, 0) + 1
    assert {b["block"]: b["refs"] for b in run.snap["blocks"] if b["refs"]} == held
    assert np.array_equal(np.flatnonzero(pool.refs == 0), run.snap["free"])
