"""One measuring thread for every reader of a server, shared fairly: jobs run one at a time (a
measurement's part never shares the thread, so its spread is its own), taken in turn from each reader
that has one waiting (round robin), so no reader's part waits behind another reader's whole batch.

Plain Python: app/figure/parts.py's off_the_loop submits to it under Panel's server.
"""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import Future


class FairQueue:
    """`submit(key, fn)` -> a Future of fn(); one worker thread, one job at a time, the keys in turn;
    `before()`, if given, runs before each job (the server waits there for its loop: `loop_idle`)."""

    def __init__(self, name: str = "kv-measure", before=None):
        self.queues: dict[object, deque] = {}  # key -> its jobs waiting, in the order the keys' turns come
        self.ready = threading.Condition()
        self.name = name
        self.before = before  # called before each job, in the worker thread (None: nothing)
        self.worker: threading.Thread | None = None
        self.running = 0  # jobs running now: never more than one

    def submit(self, key, fn) -> Future:
        future: Future = Future()
        with self.ready:
            self.queues.setdefault(key, deque()).append((fn, future))
            if self.worker is None:
                self.worker = threading.Thread(target=self._work, name=self.name, daemon=True)
                self.worker.start()
            self.ready.notify()
        return future

    def _next(self):
        """The job of the key whose turn it is; that key then waits behind the others."""
        with self.ready:
            while not self.queues:
                self.ready.wait()
            key = next(iter(self.queues))
            jobs = self.queues.pop(key)
            job = jobs.popleft()
            if jobs:
                self.queues[key] = jobs  # to the back of the round
            return job

    def _work(self) -> None:
        while True:
            fn, future = self._next()
            if self.before is not None:
                self.before()
            if not future.set_running_or_notify_cancel():
                continue
            self.running += 1
            try:
                result = fn()
            except BaseException as e:  # the job's own error, for whoever awaits it
                future.set_exception(e)
            else:
                future.set_result(result)
            finally:
                self.running -= 1


def loop_idle(loop, timeout: float = 1.0) -> None:
    """Wait, in another thread, until `loop` has run every callback it had ready (at most `timeout`
    seconds): a job started then does not share the interpreter with a reader's message being handled."""
    done = threading.Event()
    loop.call_soon_threadsafe(done.set)
    done.wait(timeout)
