"""A paged cache, stepped: model/paged.py's scenario (conversations entering and leaving, three of them
with the same prompt) on a pool of a fixed number of positions, in blocks of the size the reader
picks. No Panel here (the view is app/sections/paged/view.py); imported only when the reader opens
its section, and model.paged with it.

`PagedRun` steps the scenario and, beside every conversation, keeps a contiguous cache of its own
(model.gpt.KVCache) fed the same tokens: the proof that the blocks change no logit. From two
consecutive snapshots it says what happened at a step: who entered (computing its prompt, or
sharing another's blocks), who left, which blocks were copied on write and which were taken from
the free list.
"""

from __future__ import annotations

import numpy as np
import param

from model.paged import SCRIPT, Scenario

BLOCK_SIZES = (4, 8, 16)  # what the reader chooses from: every one divides the pool
DEFAULT_BLOCK = 4
POOL_POSITIONS = 128  # the pool: two windows of 64, whatever the block size
OWNERS = tuple(e.name for e in SCRIPT)  # A..E: each its colour role in the view


class PagedChoice(param.Parameterized):
    """What the reader chooses in the section: its choices are the buttons', and all a browser may
    send (app/intake.py refuses the rest)."""

    block_size = param.Selector(
        default=DEFAULT_BLOCK, objects=list(BLOCK_SIZES), doc="Positions per block of the pool."
    )


def total_steps(script=SCRIPT) -> int:
    """Steps until the last conversation has left: one token a step from the step it enters, and it
    leaves the step after its last token."""
    return max(e.step + e.n_new for e in script) + 1


class PagedRun:
    """The scenario, step by step, on a pool of POOL_POSITIONS positions. After each `advance()`:
    `snap` (model.paged.Scenario.snapshot: blocks, free list, tables, lengths, memory), `changes`
    (what the step did: see `changes_between`), `proof` (the largest |logits of the paged cache -
    logits of a contiguous one| so far) and `proof_now` (this step's)."""

    def __init__(self, gpt, block_size: int = DEFAULT_BLOCK, script=SCRIPT, top_p: float = 0.9):
        if block_size not in BLOCK_SIZES:
            raise ValueError(f"a block of {block_size} positions: choose one of {BLOCK_SIZES}")
        self.gpt, self.block_size, self.script = gpt, block_size, list(script)
        self.n_blocks = POOL_POSITIONS // block_size
        self.scenario = Scenario(gpt, block_size, self.n_blocks, self.script, top_p)
        self.total = total_steps(self.script)
        self.steps = 0
        self.snap = self.scenario.snapshot([])
        self.changes: list[dict] = []
        self.contiguous: dict[str, object] = {}  # name -> its own KVCache, fed the same tokens
        self.proof, self.proof_now, self.compared = 0.0, 0.0, 0

    @property
    def done(self) -> bool:
        return self.scenario.done

    @property
    def live(self) -> dict:
        return self.scenario.live

    def advance(self) -> bool:
        """One step of the scenario; False (nothing done) once every conversation has left."""
        if self.done:
            return False
        before = self.snap
        self.snap = self.scenario.step()
        self.steps += 1
        self.changes = changes_between(before, self.snap)
        self.check()
        return True

    def check(self) -> None:
        """Every live conversation's logits of this step against a contiguous cache's."""
        for name in [n for n in self.contiguous if n not in self.live]:
            del self.contiguous[name]
        worst = 0.0
        for name, c in self.live.items():
            if name not in self.contiguous:  # it just entered: the prompt, in one pass
                z, self.contiguous[name] = self.gpt.prefill(c.ids[: c.n_prompt])
                z = z[-1]
            else:  # the token it sampled last step
                z = self.gpt.step(c.ids[-2], self.contiguous[name])
            worst = max(worst, float(np.abs(z - c.z).max()))
            self.compared += 1
        self.proof_now, self.proof = worst, max(self.proof, worst)

    def texts(self) -> dict[str, tuple[list[int], int]]:
        """Every conversation's ids so far and its prompt's length (the live ones and the gone)."""
        out = {}
        for e in self.script:
            c = self.live.get(e.name)
            if c is not None:
                out[e.name] = (c.ids, c.n_prompt)
            elif e.name in self.scenario.texts:
                ids = self.scenario.texts[e.name]
                out[e.name] = (ids, len(self.gpt.tokenizer.encode(e.prompt)))
        return out

    def status(self) -> dict:
        """Each conversation of the script: "waiting", "live" or "gone", with its entry step."""
        out = {}
        for e in self.script:
            state = "live" if e.name in self.live else ("gone" if e.name in self.scenario.texts else "waiting")
            out[e.name] = {"state": state, "enters": e.step + 1, "n_new": e.n_new}
        return out


def changes_between(before: dict, after: dict) -> list[dict]:
    """What one step did, from two snapshots' block tables, in order: {"kind": "leave", "name"},
    {"kind": "enter", "name", "blocks"} (fresh blocks: its prompt computed), {"kind": "share",
    "name", "with", "blocks"} (its prompt's blocks are another's), {"kind": "copy", "name",
    "logical", "old", "new"} (copy on write), {"kind": "grow", "name", "logical", "block"} (a block
    from the free list for its next positions)."""
    old, new = before["tables"], after["tables"]
    out = [{"kind": "leave", "name": n} for n in old if n not in new]
    names = list(new)
    for i, (name, table) in enumerate(new.items()):
        if name in old:
            continue
        earlier = [n for n in names[:i] if set(new[n]) & set(table)]  # live before it, or entered first
        if earlier:
            out.append({"kind": "share", "name": name, "with": earlier[0], "blocks": list(table)})
        else:
            out.append({"kind": "enter", "name": name, "blocks": list(table)})
    for name, table in new.items():
        was = old.get(name)
        if was is None:
            continue
        for j, (a, b) in enumerate(zip(was, table)):
            if a != b:
                out.append({"kind": "copy", "name": name, "logical": j, "old": a, "new": b})
        for j in range(len(was), len(table)):
            out.append({"kind": "grow", "name": name, "logical": j, "block": table[j]})
    return out


def shared_blocks(snap: dict) -> list[int]:
    """Blocks held by more than one table."""
    return [b["block"] for b in snap["blocks"] if b["refs"] > 1]


def memory_row(snap: dict) -> dict:
    """The three ways to count the caches now (bytes, model.paged.memory's), the positions cached, the
    positions allocated but empty, and the live conversations."""
    m = snap["memory"]
    return {
        "reserved": m["reserved"],
        "paged": m["paged"],
        "shared": m["shared"],
        "exact": m["exact"],
        "unused": m["fragmentation_positions"],
        "positions": sum(snap["lengths"].values()),
        "live": len(snap["tables"]),
        "blocks": m["blocks_in_use"],
    }
