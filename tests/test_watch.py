"""Step and watch (issue 20), without a browser: the animation stops at the window's end and says so,
the step past it is the reader's own; the animation's period counts the step's own time; the
control bar's line says what each action did. In a browser: tests/test_watch_browser.py."""

from __future__ import annotations

from app.figure import parts
from app.main import create_view


def test_animation_stops_at_64_and_the_step_to_65_is_the_readers():
    v = create_view("?lang=es&t=62")
    c = v.controls
    c.do("play")
    assert c.animation.running and c.play_button.name == "Pausa"
    c.tick(3)  # a late tick's three steps due (Animation's catch_up): the window's end, not past it
    assert v.ex.t == 64 and v.ex.error is None and c.ticked == 2
    for _ in range(5):  # the timer's ticks (no event loop here)
        c.tick()
    assert v.ex.t == 64 and v.ex.error is None
    assert not c.animation.running and not c.play_button.value and c.play_button.name == "Animar"
    assert "Ventana llena: t = 64. El paso a 65 es tuyo: pulsa Avanzar." in c.a11y.message
    assert c.a11y.message.startswith("Posición 64 de 64")  # the step's own words first
    assert c.said == ("Ventana llena: t = 64. El paso a 65 es tuyo: pulsa Avanzar.", "full")  # first on the line
    assert "Ventana llena" in c.status.object
    c.do("play")  # Animar at 64: nothing to animate, it says why
    assert not c.animation.running and v.ex.t == 64 and v.ex.error is None
    assert c.a11y.message == "Ventana llena: t = 64. El paso a 65 es tuyo: pulsa Avanzar."
    c.do("step")  # the reader's own click: the lesson's IndexError
    assert v.ex.error is not None and v.ex.error.lesson
    assert c.said[1] == "err" and "IndexError" in c.status.object and v.error.layout.visible
    c.do("play")
    assert not c.animation.running
    c.do("reset")
    assert v.ex.t == 2 and c.said[1] == "" and "IndexError" not in c.status.object
    assert "t = 2 / 64" in c.where.object


def test_the_bar_speaks_every_language():
    for lang, words in (
        ("en", "Window full: t = 64. The step to 65 is yours: press Step."),
        ("pt", "Janela cheia: t = 64. O passo para 65 é seu: carregue em Avançar."),
    ):
        v = create_view(f"?lang={lang}&t=63")
        v.controls.do("play")
        v.controls.tick()
        assert v.ex.t == 64 and words in v.controls.a11y.message
        assert v.controls.tr("keys_hint") in v.controls.status.object


def test_the_period_counts_the_steps_own_time(monkeypatch):
    """Each next step is due one period after the last one started: a step of 30 ms at a period of
    100 ms waits 70 ms more; a step longer than the period is followed at once (no beat skipped),
    and rate() says what the machine did."""
    now = [0.0]
    timers = []
    monkeypatch.setattr(parts.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(parts, "later", lambda ms, fn: timers.append((ms, fn)))
    cost = [0.030]

    def tick():
        now[0] += cost[0]

    a = parts.Animation(tick, lambda: 100)
    assert a.run(True) and timers[-1][0] == 0  # the first step at once
    timers.pop()[1]()
    assert timers[-1][0] == 70
    for _ in range(4):
        now[0] += timers[-1][0] / 1000
        timers.pop()[1]()
    assert abs(a.rate() - 10) < 1e-6
    cost[0] = 0.250  # slower than the period: next at once
    for _ in range(6):
        now[0] += timers[-1][0] / 1000
        timers.pop()[1]()
        assert timers[-1][0] == 0
    assert abs(a.rate() - 4) < 1e-6
    assert a.run(False) and not a.running
    stale = timers.pop()[1]
    stale()  # a stopped run's timer does nothing
    assert timers == []


def test_a_late_tick_makes_the_steps_due_up_to_its_catch_up(monkeypatch):
    """With catch_up 3 at a period of 100 ms, steps that take 250 ms to draw: each tick makes the steps due
    by then (2 or 3), so the rate is the setting's, 10 a second; steps of 500 ms: 3 a tick at most, 6 a
    second. Fast steps: one a tick, as without catch_up."""
    now = [0.0]
    timers, made = [], []
    monkeypatch.setattr(parts.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(parts, "later", lambda ms, fn: timers.append((ms, fn)))
    cost = [0.010]

    def tick(steps):
        made.append(steps)
        now[0] += cost[0]

    a = parts.Animation(tick, lambda: 100, catch_up=3)
    a.run(True)
    for _ in range(6):
        now[0] += timers[-1][0] / 1000
        timers.pop()[1]()
    assert made == [1] * 6 and abs(a.rate() - 10) < 1e-6
    cost[0] = 0.250
    for _ in range(12):
        now[0] += timers[-1][0] / 1000
        timers.pop()[1]()
    assert set(made[-8:]) == {2, 3} and abs(a.rate() - 10) < 0.5
    cost[0] = 0.500
    for _ in range(8):
        now[0] += timers[-1][0] / 1000
        timers.pop()[1]()
    assert made[-6:] == [3] * 6 and abs(a.rate() - 6) < 1e-6


def test_the_rate_is_what_the_page_drew_where_it_answers(monkeypatch):
    """Where the page says how many steps it has drawn (A11y's shown, the beat), rate() is the rate of
    those over the last seconds, answers in bursts or not: what the reader sees, not how often Python
    stepped."""
    now = [0.0]
    timers = []
    monkeypatch.setattr(parts.time, "perf_counter", lambda: now[0])
    monkeypatch.setattr(parts, "later", lambda ms, fn: timers.append((ms, fn)))
    a = parts.Animation(lambda: None, lambda: 50)  # Python steps at 20 a second
    a.run(True)
    timers.pop()[1]()
    for _ in range(5):
        now[0] += timers[-1][0] / 1000
        timers.pop()[1]()
    assert abs(a.rate() - 20) < 1e-6  # no answer from a page yet: the ticks
    for k in range(30):  # the page draws one every 80 ms
        now[0] = 10 + 0.080 * k
        a.drawn(k + 1)
    assert abs(a.rate() - 12.5) < 1e-6
    for k in range(20):  # answers in bursts: four steps at once every 320 ms, the same rate
        now[0] = 20 + 0.320 * k
        a.drawn(100 + 4 * k)
    assert abs(a.rate() - 12.5) < 1e-6
    a.run(False)
    a.drawn(200)  # after the run: not counted
    assert a.rate() is None


def test_the_animation_waits_for_the_page(monkeypatch):
    """The next step waits until the page has drawn the step before the last one (A11y's beat,
    answered with shown), or PATIENCE at most: one step ahead of the page, never more."""
    from app.figure import controls

    timers = []
    monkeypatch.setattr(controls, "later", lambda ms, fn: timers.append((ms, fn)))
    c = create_view("?lang=es").controls
    done = []
    c.when_shown(lambda: done.append(1))  # one step ahead of the page: at once
    assert done == [1] and c.a11y.beat == 1 and timers == []
    c.when_shown(lambda: done.append(2))  # two ahead: waits for the page
    assert done == [1] and timers[-1][0] == c.PATIENCE
    c.a11y.shown = 1  # the page drew the first
    assert done == [1, 2]
    timers.pop()[1]()  # its patience ran out after the answer: nothing
    c.when_shown(lambda: done.append(3))
    timers.pop()[1]()  # no answer: on after PATIENCE
    assert done == [1, 2, 3]
    c.a11y.shown = 3  # a late answer does not run anything twice
    assert done == [1, 2, 3]


def test_a_fast_animation_times_a_position_when_it_stops():
    """The clock after a step takes about as long as five full passes: at a speed whose period leaves
    no time for it, the animation goes on without it (so it keeps the speed it says), the card says
    the position waits, and the position is timed once the animation stops. At a slow speed every
    position is timed as before."""
    import time

    v = create_view("?lang=es&t=40&speed=20")  # a period of 50 ms
    c, ex = v.controls, v.ex
    c.clock_cost = 0.120  # the last clock took 120 ms: no room in 50
    c.do("play")
    c.animation._starts = [time.perf_counter()]  # the tick that stepped started now
    c.step()  # its clock is deferred (here: at once) and waits
    assert ex.t == 41 and ex.clock().clock is None and ex.clock().waited
    card = v.readouts.card_clock()
    assert "a esta velocidad no da tiempo" in card and "… ms" in card
    c.do("play")  # Pausa: the waiting position is timed now
    assert not c.animation.running
    assert ex.clock().clock is not None and "a esta velocidad" not in v.readouts.card_clock()

    slow = create_view("?lang=es&t=40&speed=1").controls  # a period of 1 s: room for it
    slow.clock_cost = 0.120
    slow.do("play")
    slow.animation._starts = [time.perf_counter()]
    slow.step()
    assert slow.ex.clock().clock is not None and not slow.ex.clock().waited
