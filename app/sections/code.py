"""What the sections that run the reader's code share (the lesson's cell, the challenge): the editor,
the code to run (what is on the screen), and the run's answer in words: what it printed, how it
ended if it did not end normally, and the wait (running, or in line behind another run)."""

from __future__ import annotations

import panel as pn

from ..figure.parts import esc
from ..i18n import num


def code_editor(value: str, height: int):
    return pn.widgets.TextAreaInput(
        value=value,
        height=height,
        sizing_mode="stretch_width",
        stylesheets=[
            # code keeps its lines (a long one scrolls sideways): wrapped, its indentation would read as broken
            "textarea { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 14px; line-height: 1.4;"
            " white-space: pre; overflow-wrap: normal; overflow-x: auto; }"
        ],
    )


class LatestCode:
    """The code to run: the latest of what was typed (value_input, sent while typing) and what the
    page set (value), so a click right after typing runs what is on the screen."""

    def __init__(self, editor):
        self.editor = editor
        self.code = editor.value
        editor.param.watch(self._typed, ["value", "value_input"])

    def _typed(self, *events):
        self.code = events[-1].new  # both may change in one update, with the same text


def output_html(tr, answer) -> str:
    """What the code printed (capped by the sandbox), as a block of text."""
    if not answer.output and not answer.more:
        return ""
    more = f"\n{tr('code_more', n=answer.more)}" if answer.more else ""
    return (
        f"<p class='explain'>{esc(tr('code_output'))}</p>"
        f"<pre class='code' tabindex='0' data-testid='code-output'>{esc(chr(10).join(answer.output) + more)}</pre>"
    )


def failure_html(tr, lang, answer, limit_s) -> str | None:
    """The sentence for a run that did not finish normally (stopped, crashed, ...); None if it did."""
    key = {
        "timeout": "code_stopped",
        "crashed": "code_crashed",
        "unavailable": "code_unavailable",
        "garbled": "code_garbled",
        "busy": "code_busy",
    }.get(answer.status)
    if key is None:
        return None
    text = tr(key, limit=num(answer.limit_s or limit_s, lang), message=answer.message or answer.url)
    return f"<div class='feedback wrong' role='status' data-testid='code-stopped'>{esc(text)}</div>"


def waiting_html(view, testid: str, pane, run: int, queued: bool = False) -> None:
    """A run's result while it has none: running, or waiting in line for another run to end (at the
    latest at that run's time limit)."""
    tr = view.tr
    state, text = (
        ("queued", tr("code_queued", limit=num(view.sandbox.limit_in_flight, view.lang)))
        if queued
        else ("running", tr("code_running"))
    )
    pane.object = (
        f"<div data-testid='{testid}' data-state='{state}' data-run='{run}'><p role='status'>{esc(text)}</p></div>"
    )
