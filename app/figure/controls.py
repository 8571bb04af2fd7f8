"""The figure's controls: step, animate, reset, the mode switch and the speed (with the keyboard and
the live region), and the advanced settings (language, seed, top-p, the link to this state)."""

from __future__ import annotations

import panel as pn

from ..components.widgets import Disclosure, RangeInput
from ..i18n import language_names, num
from ..state.settings import CACHE, FULL
from ..style import MODE_SWITCH_CSS, show_token
from .parts import Animation, Part, defer, esc, html_pane, linked


class Controls(Part):
    """Step, animate, reset, the mode switch and the speed; the keyboard (through A11y) and the
    polite live region that says what each action did."""

    def __init__(self, session, a11y, **params):
        self.a11y = a11y
        self.animation = Animation(self.step, self.period)
        super().__init__(session, **params)

    def build(self):
        settings = self.session.settings
        self.step_button = pn.widgets.Button(color="primary", width=130)
        self.play_button = pn.widgets.Toggle(color="default", width=130)
        self.reset_button = pn.widgets.Button(color="default", width=130)
        self.mode_switch = linked(
            pn.widgets.RadioButtonGroup, settings.param.mode, width=280, stylesheets=[MODE_SWITCH_CSS]
        )
        self.speed = RangeInput.linked(settings.param.speed, width=220)
        self.step_button.on_click(lambda _e: self.do("step"))
        self.reset_button.on_click(lambda _e: self.do("reset"))
        self.play_button.param.watch(lambda e: self.set_playing(e.new), "value")
        settings.param.watch(self._mode_said, "mode")
        settings.param.watch(lambda _e: self.animation.retime(), "speed")
        self.a11y.param.watch(lambda e: self.do(e.new.split(":")[0]), "command")
        self.layout = pn.FlexBox(
            self.step_button,
            self.play_button,
            self.reset_button,
            self.mode_switch,
            self.speed,
            align_items="center",
            gap="8px",
            sizing_mode="stretch_width",
        )

    def relabel(self):
        t = self.t
        self.step_button.name, self.reset_button.name = t("step"), t("reset")
        self.play_button.name = t("pause") if self.play_button.value else t("play")
        self.mode_switch.options = {t("mode_cache"): CACHE, t("mode_full"): FULL}
        self.speed.label = t("speed")

    # -- actions: safe in any state, as often as a reader clicks ------------------------------
    def do(self, command: str):
        if command == "step":
            self.step()
        elif command == "reset":
            self.reset()
        elif command == "toggle":
            self.session.toggle()
        elif command == "play":
            self.play_button.value = not self.play_button.value

    def step(self):
        if not self.session.step():  # the error: the animation stops there
            self.set_playing(False)
        defer(self.session.measure_clock)  # the clock, once the step is on the page
        ex = self.ex
        if ex.error:
            e = ex.error
            self.a11y.message = self.t("live_error", pos=e.position, type=e.type_name, message=e.message)
        else:
            mode = self.t("mode_cache" if self.session.settings.mode == CACHE else "mode_full")
            c = ex.costs()
            self.a11y.message = self.t(
                "live_step",
                t=ex.t,
                n=self.n,
                tok=show_token(ex.tokens()[-1]),
                mode=mode,
                c=num(c["cached" if self.session.settings.mode == CACHE else "full"], self.lang),
            )

    def reset(self):
        self.set_playing(False)
        self.session.reset()
        self.a11y.message = self.t("live_reset", t=self.ex.t, n=self.n)

    def _mode_said(self, event):
        self.a11y.message = self.t("live_mode", mode=self.t("mode_cache" if event.new == CACHE else "mode_full"))

    # -- animation (Animation) ------------------------------------------------------------------
    def set_playing(self, playing: bool):
        if self.play_button.value != playing:
            self.play_button.value = playing  # the watcher calls back here
            return
        if playing and self.ex.error:  # nothing to animate until Reset
            self.play_button.value = False
            return
        self.play_button.name = self.t("pause") if playing else self.t("play")
        if self.animation.run(playing):
            self.a11y.message = self.t("live_play" if playing else "live_pause")

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
        self.lang_select = linked(pn.widgets.RadioButtonGroup, settings.param.lang, options=self.LANGUAGES, width=270)
        self.seed = linked(pn.widgets.IntInput, settings.param.seed, width=140)
        self.top_p = RangeInput.linked(settings.param.top_p, digits=2, width=220)
        self.share, self.keys = html_pane(), html_pane()
        self.layout = Disclosure(pn.FlexBox(self.lang_select, self.seed, self.top_p, gap="12px"), self.share, self.keys)
        self.layout.param.watch(lambda _e: self.redraw(), "collapsed")

    def relabel(self):
        self.layout.title = self.t("advanced")
        self.lang_select.name, self.seed.name, self.top_p.label = self.t("language"), self.t("seed"), self.t("top_p")
        self.keys.object = f"<p class='explain'>{esc(self.t('keyboard'))}</p>"
        self.redraw()

    def redraw(self):
        """A link that opens the page in this state (language, mode, t, seed, top-p, speed)."""
        if self.layout.collapsed:
            return
        query = esc(self.session.settings.query())
        self.share.object = (
            f"<p>{esc(self.t('share'))}: <a href='{query}' target='_blank' rel='noopener' "
            f"data-testid='share'>{query}</a></p>"
        )
