"""The browser's half of the code sandbox, played in CPython for tests of the app's views.

In the page, app/sandbox/host.js runs each request in a Pyodide worker with app/sandbox/runner.py
and hands back its JSON answer with the printed lines. Here the same runner answers in-process,
so the views' whole flow (submit -> answer -> check -> render) runs without a browser; the
browser half itself is tested in tests/test_sandbox_browser.py.
"""

from __future__ import annotations

import contextlib
import io

from app.sandbox.runner import run_json


def answer_here(sandbox) -> None:
    def on_request(event):
        request = event.new
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            answer = run_json(request["payload"])
        lines = printed.getvalue().splitlines()
        sandbox.response = {
            "id": request["id"],
            "status": "done",
            "answer": answer,
            "output": lines[:200],
            "more": max(0, len(lines) - 200),
        }

    sandbox.param.watch(on_request, "request")
