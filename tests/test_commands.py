"""A reader's clicks coalesced (app/state/commands.py): the explorer ends where running them one by one
leaves it, and a burst of any length is at most a window's worth of work. Without a browser."""

import random

import numpy as np
import pytest

from app.state.commands import BACK, PLAY, RESET, STEP, TOGGLE, Position, coalesce
from app.state.explorer import Explorer
from app.state.session import Session
from app.state.settings import CACHE, FULL, Settings


def run(ex: Explorer, commands) -> None:
    """The commands on the explorer as the page runs them (`play` is the animation's: nothing here)."""
    for command in commands:
        if command == STEP:
            ex.step()
        elif command == BACK:
            ex.back()
        elif command == RESET:
            ex.reset()
        elif command == TOGGLE:
            ex.toggle()


def where(ex: Explorer) -> Position:
    failed = ex.error is not None and ex.error.lesson and ex.full
    fewer = ex.fmt != "float64"
    return Position(ex.t, ex.cfg.n_ctx, ex.n_prompt, len(ex.past), failed, fewer or ex.mode == CACHE, fewer)


def state(ex: Explorer) -> dict:
    """Everything a later command or a view reads of the explorer (its epoch counts the texts read
    again, and is compared only with its own `past`'s)."""
    error = ex.error and (ex.error.type_name, ex.error.message, ex.error.position)
    return {
        "ids": list(ex.ids),
        "mode": ex.mode,
        "error": error,
        "rng": ex.rng.bit_generator.state,
        "next": ex.next_logits.tolist(),
        "k": [np.asarray(k).tolist() for k in ex.cache.k],
        "v": [np.asarray(v).tolist() for v in ex.cache.v],
        "past": [(p.rng_state, p.logits.tolist(), p.epoch == ex.epoch) for p in ex.past],
        "measures": {t: (m.proof, m.recomputed) for t, m in ex.measures.items()},
        "switched_at": ex.switched_at,
    }


def both(gpt, commands, start: int = 2, mode: str = CACHE):
    """The explorer after the commands one by one, and after them coalesced, from position `start`."""
    one, other = (Explorer(gpt, Settings(seed=3, top_p=0.9, mode=mode)) for _ in range(2))
    one.advance_to(start)
    other.advance_to(start)
    coalesced = coalesce(commands, where(other))
    run(one, commands)
    run(other, coalesced)
    return state(one), state(other), coalesced


def test_the_issues_message_is_one_reset_and_the_steps_after_it(gpt):
    """2,000 clicks in one message (Reiniciar, then 62 x Avanzar, repeated): one reset, and the 46 steps
    that follow the last one; 70 of them and five more steps end where the clicks one by one end."""
    message = ([RESET] + [STEP] * 62) * 32
    where_it_stands = Position(t=40, n_ctx=64, n_prompt=2, past=38)
    assert coalesce(message[:2000], where_it_stands) == [RESET] + [STEP] * 46
    assert coalesce(message[:1953], where_it_stands) == [RESET] + [STEP] * 62
    one, other, coalesced = both(gpt, message[:70] + [STEP] * 5, start=60)
    assert coalesced == [RESET] + [STEP] * 11
    assert one == other and one["ids"][:2] == other["ids"][:2] and len(one["ids"]) == 13
    one, other, coalesced = both(gpt, [STEP] * 9 + [BACK, STEP, STEP], start=60)
    assert coalesced == [STEP] * 5  # 4 to the window's end; one fails there (the lesson)
    assert one == other and one["error"][0] == "IndexError"


def test_any_burst_is_at_most_a_windows_worth(gpt):
    rng = random.Random(7)
    for _ in range(50):
        commands = rng.choices([STEP, BACK, RESET, TOGGLE, PLAY], weights=[8, 3, 1, 1, 1], k=3000)
        kept = coalesce(commands, Position(t=30, n_ctx=64, n_prompt=2, past=28))
        assert kept.count(RESET) <= 1 and kept.count(STEP) + kept.count(BACK) <= 28 + 63
        assert len(kept) <= 3 * (28 + 63 + 1) + 2  # two switches between two of them at most


@pytest.mark.parametrize("seed", range(4))
def test_coalesced_ends_where_one_by_one_ends(gpt, seed):
    """Random bursts near the window's end (steps past it, backs to the prompt, resets, the mode switch),
    from either mode: without the cache a step keeps the full pass's K and V, which a back keeps too."""
    rng = random.Random(seed)
    start = rng.choice([2, 50, 62, 64])
    commands = rng.choices([STEP, BACK, RESET, TOGGLE, PLAY], weights=[10, 5, 1, 1, 1], k=40)
    one, other, coalesced = both(gpt, commands, start, mode=(CACHE, FULL)[seed % 2])
    assert one == other, (start, commands, coalesced)
    assert len(coalesced) <= len(commands)


def test_a_step_and_its_back_cancel_and_a_back_at_the_prompt_is_nothing(gpt):
    at_prompt = Position(t=2, n_ctx=64, n_prompt=2, past=0)
    assert coalesce([STEP, BACK] * 500, at_prompt) == []
    assert coalesce([BACK] * 10, at_prompt) == []
    assert coalesce([TOGGLE, TOGGLE, PLAY], at_prompt) == [PLAY]
    full = Position(t=64, n_ctx=64, n_prompt=2, past=62)
    assert coalesce([STEP] * 100 + [BACK], full) == [BACK]
    assert coalesce([STEP] * 100, full) == [STEP]
    assert coalesce([STEP] * 100, Position(t=64, n_ctx=64, n_prompt=2, past=62, failed=True)) == []
    one, other, _ = both(gpt, [STEP, BACK] * 3 + [BACK] * 70 + [STEP] * 3, start=5)
    assert one == other
    without = Position(t=5, n_ctx=64, n_prompt=2, past=3, appends=False)
    assert coalesce([STEP, BACK] * 500, without) == [STEP, BACK]
    one, other, _ = both(gpt, [STEP, BACK] * 4 + [STEP, STEP, BACK, BACK] * 2 + [STEP, BACK] * 2, start=5, mode=FULL)
    assert one == other


def test_costly_switches_make_the_last_value_asked_within_a_share(gpt):
    """The language, the K/V heads, the cache's format: what a reader asks waits for the session's
    scheduler, pending values collapse to the last, and once a session has spent its credit the next
    switch waits for its share of the server (app/state/session.py)."""
    session = Session(gpt, Settings(lang="es"))
    session.GAP = 0  # the gap between any sessions' costly work: the turns' test
    calls = []
    session.schedule = lambda seconds, fn: calls.append((seconds, fn))
    for lang in ("en", "pt", "en", "pt"):
        session.asked.lang = lang
    assert [s for s, _fn in calls] == [0.0] and session.settings.lang == "es"  # one switch, pending
    calls.pop()[1]()
    assert session.settings.lang == "pt" and session.asked.lang == "pt"
    session.credit = -0.3  # the last switch cost more than the session had
    session.asked.kv_heads = 2
    wait, switch = calls.pop()
    assert wait == pytest.approx(0.3 / Session.SHARE, rel=0.05)
    switch()  # too early: it waits again
    assert session.settings.kv_heads == 4 and len(calls) == 1
    session.credit_at -= calls.pop()[0]  # the time has passed
    session.switch()
    assert session.settings.kv_heads == 2 and session.ex.cfg.n_kv_heads == 2
    session.settings.lang = "en"  # a change made elsewhere (a reload's URL) shows on the widgets' side
    assert session.asked.lang == "en" and calls == []


def test_costly_work_waits_for_a_pause_in_the_browsers_messages(gpt):
    """On a shared server a costly switch runs GAP after the last message any browser sent (a reader
    stepping is answered first), unless it has waited HOLD for such a pause: a flood of messages
    delays it, never stops it."""
    from app.state import session as server

    session = Session(gpt, Settings(lang="es"))
    calls = []
    session.schedule = lambda seconds, fn: calls.append((seconds, fn))
    server._last_costly = -1e9
    try:
        session.asked.lang = "en"
        server.message_seen()  # another reader's message, just handled
        calls.pop()[1]()
        assert session.settings.lang == "es"
        wait, switch = calls.pop()
        assert 0 < wait <= Session.GAP
        session.held_since -= Session.HOLD  # it has waited that long, the messages never pausing
        server.message_seen()
        switch()
        assert session.settings.lang == "en" and session.held_since is None and calls == []
    finally:
        server._last_message = -1e9


def test_a_language_switch_relabels_the_page_in_turns(gpt):
    """On a shared server a language switch relabels the page's own labels at once, and each part of the
    figure and each built section at a turn of its own (another reader's message is handled between
    two turns), the sections in their order; a part asked twice before its turn is relabelled once;
    every turn's time is charged to the session's credit."""
    from app.main import create_view

    view = create_view("?lang=es", gpt)
    session = view.session
    for s in view.sections:
        s.ensure_built()
    calls = []
    session.schedule = lambda seconds, fn: calls.append((seconds, fn))
    session.settings.lang = "en"
    session.settings.lang = "pt"  # again, before the first turn
    from app.i18n import tr

    assert tr("pt", "more_heading") in view.more_heading.object  # the page's own labels: at once
    assert tr("es", "legend_prompt") in view.text.layout.object  # the figure's text: at its turn
    titles = lambda: [s.card.title for s in view.sections]  # noqa: E731
    where = {"where": tr("es", "where_browser"), "where_mine": "", "where_start": ""}
    es = [tr("es", s.title_key, **where) for s in view.sections]
    where = {"where": tr("pt", "where_browser"), "where_mine": "", "where_start": ""}
    pt = [tr("pt", s.title_key, **where) for s in view.sections]
    assert titles() == es
    jobs = len(session.turns)
    assert jobs - len(view.sections) >= 5  # the figure's parts, each a turn
    from app.state import session as server

    credit, turns, waited, done = session.credit, 0, 0, 0
    while calls:
        seconds, turn = calls.pop(0)
        assert seconds == (0 if turns == 0 else Session.GAP) and calls == []  # one turn at a time, GAP apart
        left = len(session.turns)
        turn()
        if len(session.turns) == left:  # too early: GAP after any session's costly work
            assert calls == [(pytest.approx(Session.GAP, abs=0.005), turn)]
            calls.pop()
            server._last_costly -= Session.GAP  # the time has passed
            turn()
            waited += 1
        turns += 1
        now = titles()
        k = sum(a == b for a, b in zip(now, pt))
        assert now[:k] == pt[:k] and now[k:] == es[k:] and done <= k <= done + 1  # one section at most
        done = k
    assert turns == jobs and done == len(pt) and session.turns == {} and waited == turns - 1
    assert tr("pt", "legend_prompt") in view.text.layout.object
    assert session.credit < credit


def test_two_costly_switches_asked_together_are_made_one_a_turn(gpt):
    """The language and the K/V heads asked before the switch runs: on a shared server each at a turn
    of its own (another reader's message is handled between two: the longest piece is one switch's,
    not the sum), the language first; the widgets' side shows both. A reload's URL makes both in
    one update (param gives a watcher of several names every change of one update at once)."""
    session = Session(gpt, Settings(lang="es"))
    session.GAP = 0  # the gap between any sessions' costly work: the turns' test
    calls = []
    session.schedule = lambda seconds, fn: calls.append((seconds, fn))
    session.asked.lang, session.asked.kv_heads = "en", 2
    assert len(calls) == 1
    calls.pop()[1]()
    assert (session.settings.lang, session.settings.kv_heads) == ("en", 4)
    assert [s for s, _fn in calls] == [session.GAP]  # the K/V heads at the next turn
    calls.pop()[1]()
    assert (session.settings.lang, session.settings.kv_heads) == ("en", 2) and session.ex.cfg.n_kv_heads == 2
    assert (session.asked.lang, session.asked.kv_heads) == ("en", 2) and calls == []
    session.settings.param.update(lang="pt", kv_heads=1)  # a reload's URL: both at once
    assert (session.asked.lang, session.asked.kv_heads) == ("pt", 1) and calls == []
