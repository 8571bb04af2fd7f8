"""One reader's explorable: the settings, the explorer over the model, and a revision number.

`param`, not Panel: testable without a browser. The views (app/figure/parts.py, app/figure/plots.py)
watch `revision`, which every action bumps once after the explorer has changed, and the
settings' `lang`; none of them keeps a copy of the state.
"""

from __future__ import annotations

import contextlib

import param

from model.config import KV_HEADS_CHECKPOINTS

from .explorer import Explorer
from .settings import CACHE, FULL, Settings


class Session(param.Parameterized):
    revision = param.Integer(default=0, doc="Bumped after every change of what the page shows.")
    clock = param.Integer(default=0, doc="Bumped when a clock measurement is ready.")
    ramp = param.Boolean(default=False, doc="The reader has switched to no cache once: the grey ramp is shown.")
    model = param.Integer(default=0, doc="Bumped when the model or the cache's format changes (views rebuild).")

    def __init__(self, gpt, settings: Settings | None = None, **params):
        super().__init__(**params)
        # What the views' redraws run inside: the page sets Panel's `unlocked` (changes made from a
        # callback that does not hold the document's lock reach the browser together, safely).
        self.dispatch = contextlib.nullcontext
        self.ex = Explorer(gpt, settings)
        self.settings = self.ex.settings
        if self.settings.t is not None:
            self.ex.advance_to(self.settings.t)
            self.ex.measure_clock()
        self.settings.param.watch(self._restart, ["seed", "top_p"])
        self.settings.param.watch(self._changed, ["mode"])
        self.settings.param.watch(self._rebuilt, ["kv_heads", "precision"])
        if self.settings.kv_heads != 4 or self.settings.precision != "float64":
            self._rebuilt()
        self._changed()

    @property
    def n_ctx(self) -> int:
        return self.ex.cfg.n_ctx

    def step(self) -> bool:
        """One token; False if the step failed (the error is kept for the page to show)."""
        ok = self.ex.step()
        self._changed()
        return ok

    def back(self) -> str | None:
        """One token back: "sliced" (the cache cut, the generator rewound), "reread" (another model
        or format wrote the text since: it reads the shorter text again), None at the prompt."""
        epoch = self.ex.epoch
        if not self.ex.back():
            return None
        self._changed()
        return "sliced" if self.ex.epoch == epoch else "reread"

    def measure_clock(self) -> bool:
        """Time the current position (the page calls this once it has shown the step); whether it did."""
        if self.ex.measure_clock():
            with self.dispatch():
                self.clock += 1
            return True
        return False

    def clock_waits(self) -> None:
        """An animation has no time to time the current position: its card says so, and the position is
        timed when the animation stops (measure_clock)."""
        m = self.ex.measures.get(self.ex.t)
        if m is not None and m.clock is None and not m.waited:
            m.waited = True
            with self.dispatch():
                self.clock += 1

    def reset(self) -> None:
        self.ex.reset()
        self._changed()

    def toggle(self) -> None:
        self.settings.mode = FULL if self.settings.mode == CACHE else CACHE

    def _rebuilt(self, *_):
        """Another checkpoint (shared K/V heads) or another cache format: the text so far stays, read
        again by the model (llenar) into a cache of the new kind."""
        from . import checkpoints  # the other checkpoints load only when chosen

        name = KV_HEADS_CHECKPOINTS[self.settings.kv_heads]
        gpt = checkpoints.load(name)
        if gpt is not self.ex.gpt:
            self.ex.switch_model(gpt, self.settings.precision)  # one pass fills the new cache
        elif self.settings.precision != self.ex.fmt:
            self.ex.set_format(self.settings.precision)
        with self.dispatch():
            self.model += 1
        self._changed()

    def _restart(self, *_):
        """A new seed or top-p is a new text: start over."""
        self.ex.reset()
        self._changed()

    def _changed(self, *_):
        with param.discard_events(self.settings):
            self.settings.t = self.ex.t  # the share link and a reload keep the position
        with self.dispatch():
            if self.settings.mode == FULL:
                self.ramp = True  # the first switch to no cache shows the grey ramp, for good
            self.revision += 1
