"""The lesson's second cell, live in the reader's browser: the timing table. No Panel here.

`TimingLab` puts counted multiplications next to measured time, with and without the
cache, at positions 8..64, then position 64 row by row, one measurement at a time so the
page never freezes and the reader can cancel. (The first cell, which the reader edits,
is app/sections/cell/logic.py: it runs in the code sandbox.)
"""

from __future__ import annotations

import time

from model.timing import POSITIONS, Comparison, compare_position, position_row, rows_summary

from ...state import clock
from ..stepwise import Stepwise


class TimingLab(Stepwise):
    """Measures one position per `advance()` (both ways, interleaved samples: model/timing.py);
    `rows`, `by_row` and `summary` fill in as it goes. `ids`: the text, or a function that writes it
    (called by the first part, where the measuring runs, not where the lab is made)."""

    def __init__(
        self, gpt, ids, positions=POSITIONS, samples: int = 7, min_seconds: float = 0.004, warm_up_s: float = 0.5
    ):
        super().__init__(positions)
        self.gpt, self.positions = gpt, tuple(positions)
        self._ids = ids if callable(ids) else list(ids)
        self.kw = {"samples": samples, "min_seconds": min_seconds}
        self.samples = samples
        self.warm_up_s = warm_up_s

    @property
    def ids(self) -> list[int]:
        if callable(self._ids):
            self._ids = list(self._ids())
        return self._ids

    @property
    def clocks(self) -> dict[int, Comparison]:
        return self.results

    def measure(self, t: int) -> Comparison:
        if not self.results:
            self.warm_up()
        return compare_position(self.gpt, self.ids, t, **self.kw)

    def warm_up(self) -> None:
        """Run both ways at the last position for `warm_up_s` seconds before the first measurement.
        On a busy machine the first part of a run could measure the full pass twice as slow as the
        rest, for the whole run (likely the worker waiting for the scheduler to move it to the free
        core, or the engine still optimizing Pyodide's hottest code): with a busy loop on one of two cores, five runs
        of the lab gave position 64's clock within 43-100 % of their median without this, 7-23 %
        with it (tests.bench_clock)."""
        t = self.positions[-1]
        _, cache = self.gpt.llenar(self.ids[: t - 1])
        end = time.perf_counter() + self.warm_up_s
        while time.perf_counter() < end:
            self.gpt.avanzar(self.ids[t - 1], cache.copy())
            self.gpt.forward(self.ids[:t])

    @property
    def rows(self) -> list[dict]:
        """The table so far."""
        return [position_row(self.gpt.config, t, c.a_s, c.b_s, c) for t, c in self.clocks.items()]

    @property
    def by_row(self) -> dict | None:
        """The last position row by row, once it is measured."""
        last = self.positions[-1]
        if last not in self.clocks:
            return None
        c = self.clocks[last]
        return rows_summary(last, c.a_s, c.b_s)

    @property
    def summary(self) -> clock.Reading | None:
        """What the measured table says, for the sentences under it (app/state/clock.py)."""
        return clock.read_table(self.rows) if self.finished and not self.cancelled and self.rows else None
