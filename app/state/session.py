"""One reader's explorable: the settings, the explorer over the model, and a revision number.

`param`, not Panel: testable without a browser. The views (app/figure/parts.py, app/figure/plots.py)
watch `revision`, which every action bumps once after the explorer has changed, and the
settings' `lang`; none of them keeps a copy of the state.
"""

from __future__ import annotations

import contextlib
import copy
import time

import param

from model.config import KV_HEADS_CHECKPOINTS

from .explorer import Explorer
from .progress import Progress
from .settings import CACHE, FULL, Settings

COSTLY = ("lang", "kv_heads", "precision")  # a switch of these redraws or rebuilds the whole page


def run_now(_seconds: float, fn) -> None:
    fn()


# When the last costly piece of work of any session on this server ended, and when the server last
# handled a message from any browser (time.monotonic)
_last_costly = -1e9
_last_message = -1e9


def _costly_done() -> None:
    global _last_costly
    _last_costly = time.monotonic()


def message_seen() -> None:
    """A browser's message was handled (app/intake.py): costly work waits for a pause in them."""
    global _last_message
    _last_message = time.monotonic()


class Session(param.Parameterized):
    revision = param.Integer(default=0, doc="Bumped after every change of what the page shows.")
    clock = param.Integer(default=0, doc="Bumped when a clock measurement is ready.")
    ramp = param.Boolean(default=False, doc="The reader has switched to no cache once: the grey ramp is shown.")
    model = param.Integer(default=0, doc="Bumped when the model or the cache's format changes (views rebuild).")

    SHARE = 0.03  # of the server's time one session's costly switches take, over time
    GAP = 0.02  # seconds of the server's loop left to other messages between two costly pieces of work
    HOLD = 1.0  # seconds a costly piece waits at most for the browsers' messages to pause for GAP
    BURST = 0.3  # seconds of costly switches a session may spend at once

    def __init__(self, gpt, settings: Settings | None = None, **params):
        super().__init__(**params)
        # When a costly switch runs: `run_now`, or the page's scheduler (in that many seconds)
        self.schedule = run_now
        # What the views' redraws run inside: the page sets Panel's `unlocked` (changes made from a
        # callback that does not hold the document's lock reach the browser together, safely).
        self.dispatch = contextlib.nullcontext
        # Where the page computes: the reader's browser, or a server all readers share (the page says so)
        self.on_server = False
        self.ex = Explorer(gpt, settings)
        self.settings = self.ex.settings
        self.progress = Progress()  # the lesson's milestones and the quiz, for the course (app/state/progress.py)
        if self.settings.t is not None:
            self.ex.advance_to(self.settings.t)
            self.ex.measure_clock()
        self.settings.param.watch(self._restart, ["seed", "top_p"])
        self.settings.param.watch(self._changed, ["mode"])
        self.settings.param.watch(self._rebuilt, ["kv_heads", "precision"])
        self.asked = self._asked_settings()
        self.wanted: dict = {}  # costly switches asked and not made yet: the last value of each
        self.credit, self.credit_at, self.switching = self.BURST, time.monotonic(), False
        self.turns: dict = {}  # work a switch left to do in turns (`in_turns`), in order, each job once
        self.held_since: float | None = None  # when the costly piece due now first waited (`_gap`)
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

    def run(self, commands, budget: float | None = None) -> tuple[list, list]:
        """Steps, steps back and resets (app/state/commands.py) on the explorer, in order: what each
        returned (step: whether it advanced; back: Session.back's answer), and the ones left once they
        have taken `budget` seconds (the first always runs). The page is redrawn once, after the last."""
        done, todo, start = [], list(commands), time.perf_counter()
        while todo and (budget is None or not done or time.perf_counter() - start < budget):
            command = todo.pop(0)
            if command == "step":
                done.append(self.ex.step())
            elif command == "reset":
                done.append(self.ex.reset())
            else:
                epoch = self.ex.epoch
                done.append(("sliced" if self.ex.epoch == epoch else "reread") if self.ex.back() else None)
            self.progress.saw(self.ex)  # each command's state counts, not only the last one's
        if not todo:
            self._changed()
        return done, todo

    def where(self):
        """The explorer's position, as app/state/commands.py reads it."""
        from .commands import Position

        ex = self.ex
        failed = ex.error is not None and ex.error.lesson and ex.full
        fewer = ex.fmt != "float64"
        appends = fewer or self.settings.mode == CACHE
        return Position(ex.t, self.n_ctx, ex.n_prompt, len(ex.past), failed, appends, fewer)

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

    def go_to(self, mode: str, t: int) -> None:
        """Straight to position t in `mode`, as a URL's t and mode give it (the text the steps there
        write): the reader's place on the static site's preview, for a document not yet on the page."""
        self.settings.mode = mode
        if t < self.ex.t or self.ex.error is not None:
            self.ex.reset()
        self.ex.advance_to(t)
        self._changed()

    def toggle(self) -> None:
        self.settings.mode = FULL if self.settings.mode == CACHE else CACHE

    def _asked_settings(self) -> param.Parameterized:
        """What the reader asked of the costly settings: the widgets' side (app/figure/parts.py's
        `linked`), made the settings' by `switch`; the settings' changes made elsewhere show there."""
        params = {name: copy.copy(self.settings.param[name]) for name in COSTLY}
        asked = type("Asked", (param.Parameterized,), params)(**{n: getattr(self.settings, n) for n in COSTLY})
        asked.param.watch(self._ask, list(COSTLY))
        self.settings.param.watch(lambda *events: [setattr(asked, e.name, e.new) for e in events], list(COSTLY))
        return asked

    def _ask(self, *events) -> None:
        """Param watchers of several names get every change of one update at once."""
        for event in events:
            if event.name not in self.wanted and event.new == getattr(self.settings, event.name):
                continue  # the settings' own value, shown
            self.wanted[event.name] = event.new
        if self.wanted and not self.switching:
            self.switching = True
            self.schedule(self._wait(), self.switch)

    def _wait(self) -> float:
        """Seconds until the session may spend on a costly switch again: it has BURST seconds at once,
        and earns SHARE of a second each second."""
        now = time.monotonic()
        self.credit, self.credit_at = min(self.BURST, self.credit + (now - self.credit_at) * self.SHARE), now
        return max(0.0, -self.credit / self.SHARE)

    def switch(self) -> None:
        """The costly switches asked since the last one (each setting to the last value asked), once the
        session has the credit: a flood of switches takes SHARE of the server, at most. On the reader's
        own machine all at once; on a shared server one setting a turn, GAP after any session's last
        costly work (the language and the K/V heads asked together are two pieces, not one twice as
        long)."""
        wait = max(self._wait(), self._gap())
        if wait > 0 and self.schedule is not run_now:  # run_now: the reader's own machine, or a test
            self.schedule(wait, self.switch)
            return
        changes = {n: v for n, v in self.wanted.items() if getattr(self.settings, n) != v}
        if self.schedule is not run_now and len(changes) > 1:
            first = next(n for n in COSTLY if n in changes)
            changes = {first: changes[first]}
            del self.wanted[first]
            self.schedule(self.GAP, self.switch)  # the others at their own turn
        else:
            self.wanted, self.switching = {}, False
        start = time.perf_counter()
        try:
            self.settings.param.update(**changes)
        finally:
            self.credit -= time.perf_counter() - start
            _costly_done()

    def _gap(self) -> float:
        """Seconds until this session's costly piece due now may run on this server: GAP after any
        session's last one ended (the messages that came meanwhile are handled first), and GAP after
        the last message any browser sent, unless it has waited HOLD for that already (a reader
        stepping is answered before the floods' pieces; a flood of messages delays them, not stops
        them). 0: it runs now, and the next piece waits afresh."""
        now = time.monotonic()
        if self.held_since is None:
            self.held_since = now
        due = _last_costly + self.GAP
        if now - self.held_since < self.HOLD:
            due = max(due, _last_message + self.GAP)
        if due <= now:
            self.held_since = None
        return max(0.0, due - now)

    def in_turns(self, job) -> None:
        """Run `job` after the switch that asked for it: at once on the reader's own machine (run_now);
        on a shared server at a tick of its own, after the jobs asked before it and GAP after any
        session's last costly work, so that every other reader's message is handled between two. A
        job asked again before its turn runs once; its time is charged to the session's credit like
        the switch's."""
        if self.schedule is run_now:
            job()
            return
        self.turns[job] = None
        if len(self.turns) == 1:
            self.schedule(0, self._turn)

    def _turn(self) -> None:
        wait = self._gap()
        if wait > 0:
            self.schedule(wait, self._turn)
            return
        job = next(iter(self.turns))
        start = time.perf_counter()
        try:
            job()
        finally:
            del self.turns[job]
            self.credit -= time.perf_counter() - start
            _costly_done()
            if self.turns:
                self.schedule(self.GAP, self._turn)

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
        self.progress.saw(self.ex)
        with param.discard_events(self.settings):
            self.settings.t = self.ex.t  # the share link and a reload keep the position
        with self.dispatch():
            if self.settings.mode == FULL:
                self.ramp = True  # the first switch to no cache shows the grey ramp, for good
            self.revision += 1
