"""The measuring thread's queue (app/state/fair.py): one job at a time, the readers in turn."""

import threading

import pytest

from app.state.fair import FairQueue


def test_a_reader_waits_for_one_part_of_each_other_reader_not_their_batch():
    queue, started, gate, order, overlaps = FairQueue(), threading.Event(), threading.Event(), [], []

    def job(name):
        def run():
            overlaps.append(queue.running)  # jobs running, this one included
            if name == "z":
                started.set()
                gate.wait(30)  # the worker is busy with z while the others queue
            order.append(name)
            return name

        return run

    first = queue.submit("Z", job("z"))
    assert started.wait(30)
    futures = [queue.submit("A", job(f"a{i}")) for i in range(8)]
    futures += [queue.submit("C", job(f"c{i}")) for i in range(3)]
    mine = queue.submit("B", job("b0"))
    gate.set()
    assert mine.result(30) == "b0" and first.result(30) == "z"
    for f in futures:
        f.result(30)
    # A had its whole batch queued first; B's one part runs after one part of A and one of C
    assert order[:6] == ["z", "a0", "c0", "b0", "a1", "c1"]
    assert order[-1] == "a7" and len(order) == 13
    assert overlaps == [1] * 13  # each part ran alone


def test_an_error_reaches_whoever_waits_and_the_queue_goes_on():
    queue = FairQueue()
    failing = queue.submit("A", lambda: 1 / 0)
    with pytest.raises(ZeroDivisionError):
        failing.result(30)
    assert queue.submit("A", lambda: 2).result(30) == 2


def test_a_part_starts_once_the_loop_has_run_what_it_had_ready():
    """Under the server each part waits for the server's loop (`loop_idle`): a reader's message being
    handled (here a callback held until the part is due) finishes before a part starts beside it."""
    import asyncio

    from app.state.fair import loop_idle

    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    try:
        busy, handled, due = threading.Event(), threading.Event(), threading.Event()

        def handling():
            busy.set()
            due.wait(30)  # held until the part is due, so that it would start now without the wait
            handled.set()

        queue = FairQueue(before=lambda: (due.set(), loop_idle(loop)))
        loop.call_soon_threadsafe(handling)
        assert busy.wait(30)
        assert queue.submit("A", handled.is_set).result(30)  # it started once the message was handled
        # a loop that does not get to it holds a part `timeout` seconds at most: back while it is busy
        gate, released = threading.Event(), threading.Event()
        loop.call_soon_threadsafe(lambda: (gate.wait(30), released.set()))
        loop_idle(loop, timeout=0.2)
        assert not released.is_set()
        gate.set()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
