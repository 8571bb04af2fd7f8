"""The lesson's two cells, live in the reader's browser. No Panel here.

- `TimingLab`: the timing table (counted multiplications next to measured
  time, with and without the cache, at positions 8..64, then position 64 row
  by row), one measurement at a time so the page never freezes and the reader
  can cancel.
- `fill_window` / `compare`: the first cell. Fill the window after "La Nela"
  with llenar/avanzar, compare eight positions with the full pass, and run
  the same loop to 65 to meet the IndexError.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from model import sample
from model.timing import POSITIONS, cached_seconds, full_seconds, position_row, rows_summary

LESSON_CODE = """ids = tokenizer.encode("La Nela")
logits, cache = llenar(ids)              # prefill: the prompt in one pass
z = logits[-1]
while len(ids) < {limit}:
    x = sample(z, rng, top_p={top_p})    # draw the next token
    ids.append(x)
    z = avanzar(x, cache)                # one row, K and V appended
"""

COMPARE_AT = (8, 16, 24, 32, 40, 48, 56, 64)


# -- the first cell ------------------------------------------------------------------------------

@dataclass
class Filled:
    ids: list[int]
    cache: object
    logits: dict[int, np.ndarray] = field(default_factory=dict)   # position -> logits computed there
    error: tuple[str, str, int] | None = None                      # (type, message, position)


def fill_window(gpt, limit: int = 64, seed: int = 0, top_p: float = 0.9, prompt: str = "La Nela") -> Filled:
    """The lesson's loop, as LESSON_CODE shows it. With limit 65 it stops at the IndexError."""
    rng = np.random.default_rng(seed)
    ids = gpt.tokenizer.encode(prompt)
    logits, cache = gpt.llenar(ids)
    out = Filled(ids, cache, {i + 1: logits[i] for i in range(len(ids))})
    z = logits[-1]
    while len(ids) < limit:
        x = sample(z, rng, top_p=top_p)
        ids.append(x)
        try:
            z = gpt.avanzar(x, cache)
        except IndexError as e:
            out.error = (type(e).__name__, str(e), len(ids))
            ids.pop()
            break
        out.logits[len(ids)] = z
    return out


def compare(gpt, filled: Filled, positions=COMPARE_AT) -> dict:
    """Largest |cached - full| at each position, the full pass over the whole text."""
    full = gpt.forward(filled.ids)                                  # (T, V)
    diffs = {t: float(np.abs(filled.logits[t] - full[t - 1]).max()) for t in positions if t in filled.logits}
    return {"diffs": diffs, "max": max(diffs.values()), "shape": tuple(filled.cache.k[0].shape),
            "numbers": filled.cache.n_numbers, "bytes": filled.cache.nbytes}


# -- the second cell ---------------------------------------------------------------------------------

class TimingLab:
    """Runs one measurement per `advance()`; `rows` and `by_row` fill in as it goes."""

    def __init__(self, gpt, ids, positions=POSITIONS, min_seconds: float = 0.02, rounds: int = 5):
        self.gpt, self.ids = gpt, list(ids)
        self.kw = {"min_seconds": min_seconds, "rounds": rounds}
        self.tasks = [(kind, t) for t in positions for kind in ("cached", "full")]
        self.seconds: dict[tuple[str, int], float] = {}
        self.cancelled = False

    @property
    def total(self) -> int:
        return len(self.tasks)

    @property
    def done(self) -> int:
        return len(self.seconds)

    @property
    def finished(self) -> bool:
        return self.done == self.total or self.cancelled

    def cancel(self) -> None:
        self.cancelled = True

    def advance(self) -> bool:
        """Make the next measurement. False when there is nothing left to do."""
        if self.finished:
            return False
        kind, t = self.tasks[self.done]
        measure = cached_seconds if kind == "cached" else full_seconds
        self.seconds[kind, t] = measure(self.gpt, self.ids, t, **self.kw)
        return True

    @property
    def rows(self) -> list[dict]:
        """The table so far: positions measured both ways."""
        return [position_row(self.gpt.config, t, self.seconds["cached", t], self.seconds["full", t])
                for _, t in self.tasks[::2] if ("full", t) in self.seconds]

    @property
    def by_row(self) -> dict | None:
        """The last position row by row, once it is measured."""
        rows = self.rows
        last = self.tasks[-1][1]
        if not rows or rows[-1]["t"] != last:
            return None
        return rows_summary(last, rows[-1]["cached_s"], rows[-1]["full_s"])
