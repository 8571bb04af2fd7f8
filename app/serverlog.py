"""The server's log kept readable under Panel's server, whatever browsers send.

- A session's refusals (app/intake.py `refuse`) take at most LINES_PER_SECOND lines a second; one line
  says how many more there were (`LogQuota`, one per session: `quota_for`).
- Bokeh's lines about a message it cannot read: one line each, without the message or a traceback, at
  most LINES_PER_SECOND a second for all sessions together (`OneLine`).
- The server's request lines (Tornado's access log): at most LINES_PER_SECOND a second from one
  address, the rest counted in one line (`RequestLines`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import re
import sys
import time
import weakref

log = logging.getLogger("app.intake")

REFUSED = "refused from the browser"
LINES_PER_SECOND = 10  # a session's refusals, or an address' requests, in the log under Panel's server
ADDRESSES = 1024  # addresses whose request lines are counted at once (the oldest forgotten first)


def served(doc) -> bool:
    """The document is a session of Panel's server (the static site's worker is not, though Panel
    gives its document a session context of its own)."""
    return sys.platform != "emscripten" and doc is not None and doc.session_context is not None


class LogQuota:
    """At most LINES_PER_SECOND lines in any second: what is over is counted, and the first line of
    the next second (said then, if a loop runs, or with the next line) says how many there were."""

    def __init__(self, say=None, clock=time.monotonic, what: str = REFUSED + ": %d more refusals"):
        self.say = say or log.warning
        self.what = what
        self.clock = clock
        self.start, self.lines, self.dropped, self.waiting = -math.inf, 0, 0, False

    def _next_second(self) -> None:
        now = self.clock()
        if now - self.start < 1:
            return
        self.start, self.lines = now, 0
        if self.dropped:
            self.lines, dropped, self.dropped = 1, self.dropped, 0
            self.say(self.what + " in the last second, not logged", dropped)

    def admit(self) -> bool:
        """Whether one more line goes in the log now (if not, it is counted)."""
        self._next_second()
        if self.lines < LINES_PER_SECOND:
            self.lines += 1
            return True
        self.dropped += 1
        self._later()
        return False

    def __call__(self, *args) -> None:
        if self.admit():
            self.say(*args)

    def _later(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # no loop (a test's document): said with the next line
            return
        if not self.waiting:
            self.waiting = True
            loop.call_later(max(0.0, self.start + 1 - self.clock()) + 0.001, self._flush)

    def _flush(self) -> None:
        self.waiting = False
        self._next_second()
        if self.dropped:
            self._later()


_quotas: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def quota_for(doc) -> LogQuota | None:
    """The log's quota of a session of Panel's server (None: the static site's worker, whose only
    reader is the page's own)."""
    if not served(doc):
        return None
    if doc not in _quotas:
        _quotas[doc] = LogQuota()
    return _quotas[doc]


class OneLine(logging.Filter):
    """Bokeh's server logs a message it cannot read with the whole message and a traceback: one line is
    enough, the message is the browser's fault; such lines of all sessions together take at most
    LINES_PER_SECOND a second (Bokeh's line does not say whose message it was)."""

    quota = LogQuota()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info:
            if not self.quota.admit():
                return False
            record.msg = f"{REFUSED}: {record.getMessage().splitlines()[0][:200]}"
            record.args, record.exc_info, record.exc_text = None, None, None
        return True


class RequestLines(logging.Filter):
    """Tornado logs every request the server answers, one line each: from one address at most
    LINES_PER_SECOND lines a second; what is over is counted and said in one line."""

    def __init__(self, clock=time.monotonic):
        super().__init__()
        self.clock = clock
        self.quotas: dict[str, LogQuota] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args if isinstance(record.args, tuple) else ()
        found = re.search(r"\(([^()]*)\)$", str(args[1])) if len(args) > 1 else None
        address = found.group(1) if found else "?"
        if address not in self.quotas:
            if len(self.quotas) >= ADDRESSES:
                del self.quotas[next(iter(self.quotas))]
            self.quotas[address] = LogQuota(clock=self.clock, what=f"%d more requests from {address[:64]}")
        return self.quotas[address].admit()


def install() -> None:
    """The filters on Bokeh's and Tornado's loggers, once per process."""
    for name, kind in (
        ("bokeh.server.views.ws", OneLine),
        ("bokeh.server.protocol_handler", OneLine),
        ("tornado.access", RequestLines),
    ):
        logger = logging.getLogger(name)
        if not any(isinstance(f, kind) for f in logger.filters):
            logger.addFilter(kind())
