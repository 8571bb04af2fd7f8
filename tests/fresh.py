"""Fresh places to run things: a fresh interpreter (nothing imported yet, as on a new page), whose
last printed JSON is read back (what a section imports only when it opens is checked this way), and
a fresh event loop in its own thread (a session-scoped browser may already run one in this thread,
where asyncio.run would refuse)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def in_fresh_python(code: str) -> dict:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


OPENED = """
import json, sys
from app.main import create_view
v = create_view("?lang=es")
watched = {watched!r}
out = {{"before": [m for m in watched if m in sys.modules]}}
s = next(s for s in v.sections if s.key == {key!r})
out["built_before"] = s.built
s.card.collapsed = False
out["after"] = [m for m in watched if m in sys.modules]
print(json.dumps(out))
"""


def imported_as_it_opens(key: str, watched: tuple[str, ...]) -> dict:
    """In a fresh interpreter: which of `watched` the page had imported before section `key` opened,
    whether it was built then, and which after the reader opened it: {before, built_before, after}."""
    return in_fresh_python(OPENED.format(key=key, watched=watched))


def in_fresh_loop(coro):
    """Run a coroutine to its end on a new event loop in a thread of its own; return its result."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
