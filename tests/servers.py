"""The two ways the explorable is served in browser tests: Panel's server (`build.py dev`, the
README's development mode, with the reader's code sandbox served from local files) and the
static site (build.py's output, served by build.py's own server)."""
from __future__ import annotations

import contextlib
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.browser import ROOT, free_port, serve


@contextlib.contextmanager
def panel_dev():
    """`python build.py dev` on a free port; yields the app's URL. Skips without the compiled wheels
    (the sandbox's NumPy)."""
    from tests.site_fixtures import require_compiled_wheels, tools_missing
    if tools_missing():
        pytest.skip(tools_missing())
    wheels = require_compiled_wheels()
    port = free_port()
    proc = subprocess.Popen([sys.executable, "build.py", "dev", "--no-open", "--port", str(port),
                             "--pyodide-wheels", str(wheels)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = f"http://127.0.0.1:{port}/explorable"
    deadline = time.time() + 120
    try:
        while True:
            try:
                urllib.request.urlopen(url, timeout=2).read()
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    proc.kill()
                    pytest.fail("build.py dev did not start:\n" + (proc.stdout.read() if proc.stdout else ""))
                time.sleep(0.3)
        yield url
    finally:
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
    with (panel_dev() if kind == "served" else static_site()) as url:
        yield url
