"""Pruébalo: the lesson's first cell, run in the reader's browser (app/sandbox/: an interpreter of its
own per run), then "change the 64 to 65" and meet the IndexError. logic.py writes the cell."""

from __future__ import annotations

import functools

import panel as pn

from ...figure.parts import esc
from ..base import Section
from ..code import LatestCode, code_editor, failure_html, output_html, waiting_html
from . import logic as cell


class CellSection(Section):
    key = "cell"
    title_key = "prove_title"

    def build(self):
        self.intro = self.pane()
        self.editor = code_editor(self.template(), 380)
        self.code = LatestCode(self.editor)
        self.run_button = pn.widgets.Button(color="primary", width=160)
        self.to65_button = pn.widgets.Button(color="warning", width=240)
        self.restore_button = pn.widgets.Button(color="light", width=200)
        self.result = self.pane()
        self.run_button.on_click(lambda _e: self.run())
        self.to65_button.on_click(lambda _e: self.run(one_more=True))
        self.restore_button.on_click(lambda _e: self.restore())
        self.card.objects = [
            self.intro,
            self.editor,
            pn.FlexBox(self.run_button, self.to65_button, self.restore_button, gap="10px"),
            self.result,
        ]
        self.view.sandbox.warm(with_model=True)

    def template(self) -> str:
        ex = self.ex
        return cell.cell(self.lang, ex.cfg.n_ctx, ex.settings.top_p)

    def label(self):
        n = self.n
        self.intro.object = f"<p>{esc(self.tr('prove_intro', n=cell.LIMIT_S, window=n, m=n + 1))}</p>"
        self.run_button.name = self.tr("prove_run")
        self.to65_button.name = self.tr("prove_65", n=n, m=n + 1)
        self.restore_button.name = self.tr("prove_restore")
        self.editor.name = self.tr("prove_code")
        if self.code.code in [cell.cell(lang, n, self.ex.settings.top_p) for lang in cell.CELL]:
            self.editor.value = self.template()  # not edited: follow the language

    def restore(self):
        self.editor.value = self.template()
        self.result.object = ""

    def run(self, one_more: bool = False):
        code = self.code.code
        if one_more:
            code = cell.one_more(code, self.n)
            self.editor.value = code
        waiting = functools.partial(waiting_html, self.view, "cell-result", self.result)
        waiting(self.view.sandbox.next_run, queued=self.view.sandbox.busy)  # before: the answer may be at once
        self.view.sandbox.submit(
            cell.payload(code, self.ex.settings.seed, self.lang),
            self.show,
            limit_s=cell.LIMIT_S,
            key=self.key,
            on_start=waiting,
        )

    def show(self, answer, run):
        self.view.publish_state(weights=True)  # tests check the app's model is untouched
        tr = self.tr
        out = failure_html(tr, self.lang, answer, cell.LIMIT_S)
        if out is None and answer.status == "error":
            where = tr("code_line", line=answer.line) if answer.line else ""
            explain = (
                f"<p>{esc(tr('cell_position_error', n=self.n, pos=self.n + 1))}</p>"
                if cell.is_position_error(answer.error_type, answer.message, self.n)
                else ""
            )
            out = (
                f"<div class='error' role='alert' data-testid='cell-error'><p>{esc(tr('code_error'))} {esc(where)}</p>"
                f"<p><code>{esc(answer.error_type)}: {esc(answer.message)}</code></p>{explain}</div>"
            )
        elif out is None:
            out = f"<p role='status' data-testid='cell-ok'>{esc(tr('prove_ok'))}</p>"
        self.result.object = (
            f"<div data-testid='cell-result' data-state='{answer.status}' data-run='{run}'>"
            f"{output_html(tr, answer)}{out}</div>"
        )
