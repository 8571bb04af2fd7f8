"""The lesson's second cell, live in the reader's browser: the timing table. No Panel here.

`TimingLab` puts counted multiplications next to measured time, with and without the
cache, at positions 8..64, then position 64 row by row, one measurement at a time so the
page never freezes and the reader can cancel. (The first cell, which the reader edits,
is app/cell.py: it runs in the code sandbox.)
"""
from __future__ import annotations

from model.timing import POSITIONS, cached_seconds, full_seconds, position_row, rows_summary


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
