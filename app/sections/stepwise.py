"""A measurement in parts (plain Python, no Panel): the measuring sections' labs are Stepwise, so the
page never freezes and the reader can cancel between parts (app/sections/base.py MeasuringSection)."""

from __future__ import annotations


class Stepwise:
    """A measurement in parts, one per `advance()` (the page never freezes and the reader can
    cancel between parts): `measure(item)` for each of `items`, kept in `results`. `samples`: the clock's
    readings taken of each part (0 for a measurement of counts, not of time)."""

    samples = 0

    def __init__(self, items):
        self.items = tuple(items)
        self.results: dict = {}
        self.cancelled = False

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def done(self) -> int:
        return len(self.results)

    @property
    def finished(self) -> bool:
        return self.done == self.total or self.cancelled

    def cancel(self) -> None:
        self.cancelled = True

    def advance(self) -> bool:
        """Measure the next part. False when there is nothing left to do."""
        if self.finished:
            return False
        item = self.items[self.done]
        self.results[item] = self.measure(item)
        return True

    def measure(self, item):
        raise NotImplementedError
