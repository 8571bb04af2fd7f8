"""The two ways the explorable is served in browser tests: Panel's server (`build.py dev`, the
README's development mode, with the reader's code sandbox served from local files) and the
static site (build.py's output, served by build.py's own server)."""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.browser import ROOT, free_port, serve

# What each running `build.py dev` has printed since it started, by its URL (read by unordered_changes),
# and its process id (tests read its memory).
SERVER_OUTPUT: dict[str, queue.Queue] = {}
SERVER_PID: dict[str, int] = {}


def unordered_changes(url: str) -> list[str]:
    """The lines printed since the last call where the served app says it changed the page outside
    its session's dispatch (app/main.py's watch_the_order): such a change can reach the browser
    before the models it names."""
    from app.main import UNORDERED

    lines, found = SERVER_OUTPUT.get(url), []
    while lines is not None:
        try:
            line = lines.get_nowait()
        except queue.Empty:
            break
        if line and UNORDERED in line:
            found.append(line.strip())
    return found


def server_lines(url: str) -> list[str]:
    """Every line the server printed since the last call (and since unordered_changes' last call)."""
    lines, found = SERVER_OUTPUT.get(url), []
    while lines is not None:
        try:
            line = lines.get_nowait()
        except queue.Empty:
            break
        if line:
            found.append(line.rstrip("\n"))
    return found


def server_memory_mb(url: str) -> float:
    """The server process's resident memory (Linux), in MB."""
    status = Path(f"/proc/{SERVER_PID[url]}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS:"))) / 1024


def output_lines(proc) -> queue.Queue:
    """The process's output lines as they come (None at its end), read by a thread of their own:
    the pipe never fills up, and a reader can wait for a line with a timeout."""
    lines: queue.Queue = queue.Queue()

    def read():
        for line in proc.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


@contextlib.contextmanager
def panel_dev():
    """`python build.py dev` on a free port; yields the app's URL. Skips without the compiled wheels
    (the sandbox's NumPy)."""
    from tests.site_fixtures import require_compiled_wheels, tools_missing
    from tests.tiers import require

    require("browser", "starts Panel's server")
    if tools_missing():
        pytest.skip(tools_missing())
    wheels = require_compiled_wheels()
    port = free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}  # its lines reach the pipe as they are printed
    proc = subprocess.Popen(
        [sys.executable, "build.py", "dev", "--no-open", "--port", str(port), "--pyodide-wheels", str(wheels)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    url = f"http://127.0.0.1:{port}/explorable"
    lines = output_lines(proc)
    said: list[str] = []
    try:
        # Panel prints "Launching server at ..." once its socket listens
        while not (said and said[-1].startswith("Launching server at")):
            try:
                line = lines.get(timeout=120)
            except queue.Empty:
                line = None
            if line is None:
                proc.kill()
                pytest.fail("build.py dev did not start:\n" + "".join(said))
            said.append(line)
        SERVER_OUTPUT[url], SERVER_PID[url] = lines, proc.pid
        yield url
    finally:
        SERVER_OUTPUT.pop(url, None)
        SERVER_PID.pop(url, None)
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@contextlib.contextmanager
def static_site():
    """The self-contained static site, served on a free port; yields its index.html URL."""
    from tests.site_fixtures import site_self_contained

    with serve(site_self_contained()) as base:
        yield base + "index.html"


@contextlib.contextmanager
def app_server(kind: str):
    with panel_dev() if kind == "served" else static_site() as url:
        yield url
