"""The figure's controls: step, animate, reset, the mode switch and the speed (with the keyboard and
the live region), and the advanced settings (language, seed, top-p, the link to this state)."""

from __future__ import annotations

import functools
import time

import panel as pn

from .. import intake
from ..components.widgets import Disclosure, RangeInput
from ..i18n import language_names, num, number_style
from ..state.commands import BACK, COMMANDS, RESET, STEP, SWITCHES, TOGGLE, coalesce
from ..state.settings import CACHE, FULL
from ..style import BAR_CSS, CSS, MODE_SWITCH_CSS, PHONE_MEDIA, show_token
from .parts import Animation, Part, defer, esc, html_pane, later, linked
from .strip import CostStrip


class Controls(Part):
    """The figure's controls, in two rows. The bar (`layout`): Avanzar, Animar, the position, a step back
    (the cache sliced: Session.back), Reset, the mode switch, a line saying what the last action did (with
    the keys' hint beside it on a wide screen, or while a keyboard reader is in the bar) and, on a phone's
    screen, the cost bars in miniature (CostStrip); it sticks to the top of the screen while the figure is
    in view (app/style/bar.css), so a thumb reaches every action wherever the eyes are, and sees what a
    step costs. Below it (`more`): the speed and what the machine really did at that speed. The keyboard
    comes through A11y; the polite live region says what each action did."""

    SHORT = 0.9  # a measured rate below this share of the setting is said
    NARROW_BUTTON = 94  # px, the step back and Reset on a phone's screen
    CATCH_UP = 3  # steps an animation's late tick may make at once (Animation), drawn as one

    def __init__(self, session, a11y, **params):
        self.a11y = a11y
        self.animation = Animation(self.tick, self.period, after=self.when_shown, catch_up=self.CATCH_UP)
        self.ticked = 1  # the steps the animation's last tick made
        self.said = ("", "")  # what the status line says, and its kind
        self.waiting = None  # (beat, fn): the animation waits for the page to draw a step
        self.clock_cost = 0.0  # seconds the last clock measurement took (the next one's estimate)
        self.pending, self.draining = [], False  # the reader's commands not run yet (do)
        self.last_run = (None, None)  # the last command run, and what it returned (Session.run)
        super().__init__(session, **params)

    def build(self):
        settings = self.session.settings
        button = {"width": 100, "margin": (4, 4)}
        self.step_button = pn.widgets.Button(color="primary", **button)
        self.play_button = pn.widgets.Toggle(color="default", **button)
        # on a phone's screen the two share the position's line (app/figure/snapshot.css: the preview's)
        narrow = [f"@media {PHONE_MEDIA} {{ :host {{ width: {self.NARROW_BUTTON}px !important; }} }}"]
        self.reset_button = pn.widgets.Button(color="default", stylesheets=narrow, **button)
        self.back_button = pn.widgets.Button(color="default", stylesheets=narrow, **{**button, "width": 110})
        self.mode_switch = linked(
            pn.widgets.RadioButtonGroup, settings.param.mode, width=260, margin=(4, 4), stylesheets=[MODE_SWITCH_CSS]
        )
        self.speed = RangeInput.linked(settings.param.speed, width=200, margin=(4, 8))
        self.where = pn.pane.HTML("", stylesheets=[CSS, BAR_CSS], width=104, margin=(4, 4))
        self.status = pn.pane.HTML(
            "",
            stylesheets=[CSS, BAR_CSS],
            css_classes=["kv-status-host"],
            margin=(2, 4),
            styles={"flex": "1 1 240px", "min-width": "0"},
        )
        self.speed_note = pn.pane.HTML(
            "",
            stylesheets=[CSS, BAR_CSS],
            margin=(4, 4),
            styles={"flex": "1 1 220px", "min-width": "0", "min-height": "1.5em"},
        )
        for button, command in ((self.step_button, STEP), (self.reset_button, RESET), (self.back_button, BACK)):
            button.on_click(lambda _e, c=command: self.do(c))
            button._command = functools.partial(self.do, command)  # a browser's click, straight (app/intake.py)
        self.play_button.param.watch(lambda e: self.set_playing(e.new), "value")
        settings.param.watch(self._mode_said, "mode")
        settings.param.watch(lambda _e: self.retime(), "speed")
        self.a11y.param.watch(lambda e: self.do(e.new.split(":")[0]), "command")
        self.a11y.param.watch(self._page_drew, "shown")
        self.strip = CostStrip(self.session)
        self.layout = pn.FlexBox(
            self.step_button,
            self.play_button,
            self.where,
            self.back_button,
            self.reset_button,
            self.mode_switch,
            self.status,
            self.strip.layout,
            align_items="center",
            gap="0px",
            sizing_mode="stretch_width",
            margin=0,
            stylesheets=[BAR_CSS],
            css_classes=["kv-bar"],
        )
        self.more = pn.FlexBox(
            self.speed,
            self.speed_note,
            align_items="center",
            gap="0px",
            sizing_mode="stretch_width",
            margin=(2, 0),
        )

    def relabel(self):
        tr = self.tr
        self.step_button.name, self.reset_button.name, self.back_button.name = tr("step"), tr("reset"), tr("back")
        self.play_button.name = tr("pause") if self.play_button.value else tr("play")
        self.mode_switch.options = {tr("mode_cache"): CACHE, tr("mode_full"): FULL}
        self.speed.label = tr("speed")
        self.said = ("", "")
        self.speed_note.object = ""
        self.redraw()

    def redraw(self):
        ex = self.ex
        self.where.object = f"<p class='bar-t' data-testid='bar-t'>{esc(self.tr('position', t=ex.t, n=self.n))}</p>"
        kind = self.said[1]
        if (kind == "err" and ex.error is None) or (kind == "full" and not ex.full):  # reset, a new text
            self.said = ("", "")
        self.draw_status()

    def draw_status(self):
        """The bar's line: two lines at most, whole in the title (a mouse), and whole over the figure
        while it has the focus (a tap or Tab: app/style/bar.css)."""
        text, kind = self.said if self.said[0] else self.state_said()
        self.status.object = (
            f"<div class='kv-status'><p class='said {kind}' data-testid='said' tabindex='0' title='{esc(text)}'>"
            f"{esc(text)}</p><p class='hint' data-testid='keys-hint'>{esc(self.tr('keys_hint'))}</p>"
            "</div>"
        )

    def say(self, text: str, kind: str = "", line: str | None = None) -> None:
        """What an action did: for screen readers (the live region) and on the bar's line, in view
        (`line`, if the line has room only for part of it)."""
        self.a11y.message = text
        said = (line or text, kind)
        if said != self.said:
            self.said = said
            self.draw_status()

    def state_said(self) -> tuple[str, str]:
        """The bar's line before any action (and in a new language): where the text stands."""
        ex = self.ex
        if ex.error:
            e = ex.error
            return self.tr("live_error", pos=e.position, type=e.type_name, message=e.message), "err"
        if ex.full:
            return self.window_full(), "full"
        return self.step_said(), ""

    def step_said(self) -> str:
        ex, cached = self.ex, self.session.settings.mode == CACHE
        c = ex.costs()
        return self.tr(
            "live_step",
            t=ex.t,
            n=self.n,
            tok=show_token(ex.tokens()[-1]),
            mode=self.tr("mode_cache" if cached else "mode_full"),
            c=num(c["cached" if cached else "full"], self.lang),
        )

    # -- actions: safe in any state, as often as a reader clicks ------------------------------
    BUDGET = 0.02  # seconds of one session's clicks run in one tick of the server's loop
    HELD = 256  # commands pending before they are coalesced (they are at each tick anyway), and at most

    def do(self, command: str):
        """A reader's command: on the static site at once (its one reader's clicks come a message each);
        under Panel's server at the next tick, with the others pending (`drain`)."""
        if command not in COMMANDS:
            return
        self.pending.append(command)
        if len(self.pending) > self.HELD:
            self.pending = coalesce(self.pending, self.session.where())
            if len(self.pending) > self.HELD:  # still more than a window's worth: the newest is not run
                intake.refuse(f"Controls.{self.pending.pop()}", f"more than {self.HELD} commands pending")
        if not self.draining:
            self.draining = True
            if intake.served(pn.state.curdoc):
                defer(self.drain)
            else:
                self.drain()

    def drain(self):
        """The pending commands, coalesced (app/state/commands.py: a burst of clicks is at most a
        window's worth of work), for at most BUDGET seconds (one command at least); the rest at the
        next tick, so the server answers the other readers in between. What the last one did is said."""
        last, todo = self.pending[-1], coalesce(self.pending, self.session.where())
        start, ran = time.perf_counter(), False
        while todo and (not ran or time.perf_counter() - start < self.BUDGET):
            ran = True
            if todo[0] in SWITCHES:
                self.session.toggle() if todo.pop(0) == TOGGLE else self.do_play()
                continue
            if todo[0] in (RESET, BACK):
                self.set_playing(False)
            cut = next((i for i, c in enumerate(todo) if c in SWITCHES), len(todo))
            done, rest = self.session.run(todo[:cut], self.BUDGET - (time.perf_counter() - start))
            self.last_run = (todo[len(done) - 1], done[-1])
            todo = rest + todo[cut:]
            if done[-1] is False:  # the error: the animation stops there
                self.set_playing(False)
        self.pending = todo
        if todo:  # the rest at a later tick; on a shared server GAP later, other readers' messages first
            if self.session.on_server:
                later(round(self.session.GAP * 1000), self.drain)
            else:
                defer(self.drain)
            return
        self.draining = False
        self.said_after(last)

    def said_after(self, command: str):
        if command == STEP:
            self.after_step()
        elif command == RESET:
            self.say(self.tr("live_reset", t=self.ex.t, n=self.n))
        elif command == BACK:  # what the last back did: sliced the cache, read the text again, nothing
            done = self.last_run[1] if self.last_run[0] == BACK else ("sliced" if self.ex.past else None)
            if done is None:
                self.say(self.tr("live_back_none"))
            else:
                self.say(self.tr("live_back" if done == "sliced" else "live_back_reread", t=self.ex.t))

    def do_play(self):
        self.play_button.value = not self.play_button.value

    def step(self):
        """The animation's step."""
        if not self.session.step():  # the error: the animation stops there
            self.set_playing(False)
        self.after_step()

    def after_step(self):
        defer(self.clock_after_step)  # the clock, once the step is on the page
        ex = self.ex
        if ex.error:
            self.say(*self.state_said())
        elif ex.full:  # the window is full: the next step is the reader's
            self.say(f"{self.step_said()} {self.window_full()}", "full", line=self.window_full())
        else:
            self.say(self.step_said())

    def clock_after_step(self):
        """The step's clock (interleaved samples of both ways: at t = 64 about as long as five full
        passes), unless an animation has no time left for it in this step's period (it takes about as
        long as the last one did): then the position waits, its card says so, and it is timed when the
        animation stops. So Animar keeps the speed its slider says, as far as the steps themselves
        allow (and says when they do not: note_rate)."""
        if not self.animation.time_left(self.clock_cost):
            self.session.clock_waits()
            return
        start = time.perf_counter()
        if self.session.measure_clock():
            self.clock_cost = time.perf_counter() - start

    def window_full(self) -> str:
        return self.tr("window_full", n=self.n, next=self.n + 1)

    def _mode_said(self, event):
        self.say(self.tr("live_mode", mode=self.tr("mode_cache" if event.new == CACHE else "mode_full")))

    # -- animation (Animation) ------------------------------------------------------------------
    def tick(self, steps: int = 1):
        """The animation's steps due (one, or a few at once when the page is slower than the speed:
        Animation's catch_up), drawn once. It never takes the step past the window: at n_ctx it stops,
        and the step to n_ctx + 1 (the lesson's IndexError) is the reader's own click."""
        if self.ex.full:
            self.set_playing(False)
            return
        self.ticked = steps = max(1, min(steps, self.n - self.ex.t))
        if steps == 1:
            self.step()
        else:
            done, _ = self.session.run([STEP] * steps)
            if done[-1] is False:
                self.set_playing(False)
            self.after_step()
        if self.ex.full or self.ex.error:
            self.set_playing(False)
        self.note_rate()

    PATIENCE = 2000  # ms the animation waits for the page to say it drew a step, at most
    AHEAD = 1  # steps Python may be ahead of what the page has drawn

    def when_shown(self, fn):
        """fn() once the page has drawn the animation's step before the last (A11y's beat, answered
        with shown): Python computes one step while the page draws the one before, never more, so
        on a slow screen the rate is what the reader sees and Pausa stops what they see. Without an
        answer, after PATIENCE."""
        with self.session.dispatch():
            self.a11y.beat += self.ticked  # a beat a step: what the page says it drew counts steps
        beat = self.a11y.beat - self.AHEAD - (self.ticked - 1)  # the tick before this one
        self.waiting = (beat, fn)
        if self.a11y.shown >= beat:
            self.shown(self.a11y.shown)
        else:
            later(self.PATIENCE, lambda: self.shown(beat))

    def _page_drew(self, event):
        self.animation.drawn(event.new)  # what the reader sees: the rate note_rate says
        self.shown(event.new)

    def shown(self, beat: int):
        if self.waiting is not None and beat >= self.waiting[0]:
            fn, self.waiting = self.waiting[1], None
            fn()

    def note_rate(self):
        """Beside the speed: the rate this machine reached, when it falls short of the setting."""
        rate, speed = self.animation.rate(), self.session.settings.speed
        if rate is None:
            return
        text = self.tr("speed_short", rate=num(rate, self.lang, 1), speed=speed) if rate < self.SHORT * speed else ""
        note = f"<p class='speed-note' data-testid='speed-note'>{esc(text)}</p>" if text else ""
        if note != self.speed_note.object:
            self.speed_note.object = note

    def retime(self):
        self.animation.retime()
        self.speed_note.object = ""

    def set_playing(self, playing: bool):
        if self.play_button.value != playing:
            self.play_button.value = playing  # the watcher calls back here
            return
        if playing and (self.ex.error or self.ex.full):  # nothing to animate: Reset, or the reader's step
            self.play_button.value = False
            if self.ex.full and not self.ex.error:
                self.say(self.window_full(), "full")
            return
        self.play_button.name = self.tr("pause") if playing else self.tr("play")
        if self.animation.run(playing):
            if playing:
                self.speed_note.object = ""
                self.say(self.tr("live_play"))
                return
            defer(self.session.measure_clock)  # a position the animation had no time to time
            if not (self.ex.full and not self.ex.error):  # at the window's end the step said why
                self.say(self.tr("live_pause"))

    def period(self) -> int:
        speed = self.session.settings.speed
        if self.a11y.reduced_motion:
            speed = min(speed, 2)
        return int(1000 / speed)


class AdvancedSettings(Part):
    """Language, seed and top-p; a link to the current state; the keyboard's help."""

    LANGUAGES = {name: lang for lang, name in language_names().items()}  # a catalog each (app/i18n)

    def build(self):
        settings = self.session.settings
        self.lang_select = linked(
            pn.widgets.RadioButtonGroup, self.session.asked.param.lang, options=self.LANGUAGES, width=270
        )
        self.seed = linked(pn.widgets.IntInput, settings.param.seed, width=140)
        self.top_p = RangeInput.linked(settings.param.top_p, digits=2, width=220)
        self.share, self.keys = html_pane(), html_pane()
        self.layout = Disclosure(pn.FlexBox(self.lang_select, self.seed, self.top_p, gap="12px"), self.share, self.keys)
        self.layout.param.watch(lambda _e: self.redraw(), "collapsed")

    def relabel(self):
        self.layout.title = self.tr("advanced")
        self.lang_select.name, self.seed.name, self.top_p.label = self.tr("language"), self.tr("seed"), self.tr("top_p")
        self.top_p.param.update(**number_style(self.lang))
        self.keys.object = f"<p class='explain'>{esc(self.tr('keyboard'))}</p>"
        self.redraw()

    def redraw(self):
        """A link that opens the page in this state (language, mode, t, seed, top-p, speed)."""
        if self.layout.collapsed:
            return
        query = esc(self.session.settings.query())
        self.share.object = (
            f"<p>{esc(self.tr('share'))}: <a href='{query}' target='_blank' rel='noopener' "
            f"data-testid='share'>{query}</a></p>"
        )
