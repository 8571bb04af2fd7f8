"""Comprueba tu intuición: five questions, each explained with the page's own numbers (logic.py), and
the challenge: the reader's attention of one token against the cache, run in the reader's browser
and judged against the model's own output (challenge.py)."""

from __future__ import annotations

import functools

import numpy as np
import panel as pn

from ... import sandbox
from ...components.fields import WRAP_LABEL
from ...figure.parts import esc
from ...i18n import sci
from ..base import Section
from ..code import LatestCode, code_editor, failure_html, output_html, waiting_html
from . import challenge
from . import logic as quiz

CHALLENGE_PROBLEM = {
    "no_function": "challenge_no_function",
    "not_numbers": "challenge_not_numbers",
    "too_big": "challenge_too_big",
    "wrong_shape": "challenge_wrong_shape",
}  # by Verdict.problem (challenge.py)


class QuizSection(Section):
    key = "quiz"
    title_key = "quiz_title"

    def build(self):
        self.intro = self.pane()
        self.items = []
        for qid, options, _right in quiz.QUESTIONS:
            question = self.pane()
            choice = pn.widgets.RadioBoxGroup(options={o: o for o in options}, inline=False, stylesheets=[WRAP_LABEL])
            choice.value = None  # nothing chosen until the reader chooses
            feedback = self.pane()
            choice.param.watch(lambda e, q=qid: self.answered(q), "value")
            self.items.append((qid, question, choice, feedback))
        self.challenge_intro = self.pane()
        self.block = pn.widgets.Select(options={"1": 0, "2": 1}, value=0, width=110)
        self.head = pn.widgets.Select(options={str(h + 1): h for h in range(4)}, value=0, width=110)
        self.editor = code_editor(challenge.template(self.lang, self.ex.lesson_gpt.config.d_head), 230)
        self.check_button = pn.widgets.Button(color="primary", width=180)
        self.solution_button = pn.widgets.Button(color="light", width=180)
        self.result = self.pane()
        self.code = LatestCode(self.editor)
        self.check_button.on_click(lambda _e: self.check())
        self.solution_button.on_click(lambda _e: self.show_solution())
        objects = [self.intro]
        for _qid, question, choice, feedback in self.items:
            objects += [question, choice, feedback]
        objects += [
            self.challenge_intro,
            pn.FlexBox(self.block, self.head, gap="10px"),
            self.editor,
            pn.FlexBox(self.check_button, self.solution_button, gap="10px"),
            self.result,
        ]
        self.card.objects = objects
        self.session.settings.param.watch(lambda _e: self.label(), "seed")  # the options' order
        self.session.param.watch(lambda _e: self.label_intro(), "model")  # whose numbers the answers are
        self.view.sandbox.warm()

    def label(self):
        self.label_intro()
        values, shown = quiz.values(self.ex, self.lang), quiz.order(self.ex.settings.seed)
        for i, (qid, question, choice, _feedback) in enumerate(self.items):
            question.object = f"<h3>{i + 1}. {esc(self.tr(quiz.QUESTION_KEY[qid], **values))}</h3>"
            value = choice.value
            choice.options = {self.tr(quiz.OPTION_KEY[qid][o], **values): o for o in shown[qid]}
            choice.value = value
            choice.name = self.tr(quiz.QUESTION_KEY[qid], **values)
            self.answer(qid, values)
        self.challenge_intro.object = (
            f"<h3>{esc(self.tr('challenge_title'))}</h3><p>{esc(self.tr('challenge_intro', n=sandbox.LIMIT_S))}</p>"
        )
        self.block.name = self.tr("challenge_block")
        self.head.name = self.tr("challenge_head")
        self.editor.name = self.tr("challenge_code")
        dk = self.ex.lesson_gpt.config.d_head
        if self.code.code in [challenge.template(lang, dk) for lang in challenge.TEMPLATE]:
            self.editor.value = challenge.template(self.lang, dk)  # not edited: follow the language
        elif self.code.code in challenge.SOLUTION.values():
            self.editor.value = challenge.SOLUTION.get(self.lang, challenge.SOLUTION["es"])
        self.check_button.name = self.tr("challenge_check")
        self.solution_button.name = self.tr("challenge_solution")

    def label_intro(self):
        """The intro; while the figure runs another model or cache format than the lesson's, it says
        that the answers are about the lesson's."""
        intro = self.tr("quiz_intro")
        if quiz.not_the_lessons(self.ex):
            intro += " " + self.tr(
                "quiz_lesson_note",
                H=self.ex.lesson_gpt.config.n_kv_heads,
                fmt=quiz.FLOAT64,
                bytes=quiz.LESSON_BYTES,
                section=self.tr("small_title"),
            )
        self.intro.object = f"<p data-testid='quiz-intro'>{esc(intro)}</p>"

    def answered(self, qid: str):
        """The reader chose an option: its feedback, and the course hears of it (app/state/progress.py)."""
        self.answer(qid)
        choice = next(item[2] for item in self.items if item[0] == qid)
        if choice.value is not None:
            self.session.progress.answer(qid, quiz.is_right(qid, choice.value))
            self.view.publish_state()

    def answer(self, qid: str, values: dict | None = None):
        _, _, choice, feedback = next(item for item in self.items if item[0] == qid)
        if choice.value is None:
            feedback.object = ""
            return
        right = quiz.is_right(qid, choice.value)
        values = values or quiz.values(self.ex, self.lang)
        verdict = self.tr("quiz_right" if right else "quiz_wrong")
        feedback.object = (
            f"<div class='{'feedback right' if right else 'feedback wrong'}' role='status' "
            f"data-testid='quiz-{qid}'><b>{esc(verdict)}</b> "
            f"{esc(self.tr(quiz.WHY_KEY[qid], **values))}</div>"
        )

    def case(self):
        """The lesson model's own attention on the reader's text (the quiz is about the lesson: not the
        checkpoint or the cache format chosen in "A smaller cache")."""
        ex = self.ex
        return ex.lesson_gpt.attention_at(ex.ids, self.block.value, self.head.value)

    def check(self):
        q, K, V, out = self.case()
        where = self.tr("challenge_where", t=self.ex.t, block=self.block.value + 1, head=self.head.value + 1)
        waiting = functools.partial(waiting_html, self.view, "challenge-result", self.result)
        waiting(self.view.sandbox.next_run, queued=self.view.sandbox.busy)  # before: the answer may be at once
        self.view.sandbox.submit(
            challenge.payload(self.code.code, q, K, V),
            lambda answer, run: self.show_check(challenge.judge(answer, out), out, where, run),
            key=self.key,
            on_start=waiting,
        )

    def show_check(self, verdict, out, where, run):
        if verdict.kind == "right":
            self.session.progress.challenge_passed = True  # published with the state, next
        self.view.publish_state(weights=True)  # tests check the app's model is untouched
        lang, answer = self.lang, verdict.answer
        if verdict.kind == "right":
            body = f"<div class='feedback right' role='status'><b>{esc(self.tr('challenge_ok', diff=sci(verdict.diff, lang)))}</b> {esc(where)}</div>"
        elif verdict.kind == "wrong":
            body = (
                f"<div class='feedback wrong' role='status'>"
                f"{esc(self.tr('challenge_diff', diff=sci(verdict.diff, lang)))} {esc(where)}</div>"
            )
        elif verdict.kind == "error":
            line = self.tr("code_line", line=answer.line) if answer.line else ""
            body = (
                f"<div class='feedback wrong' role='status'>{esc(self.tr('code_error'))} {esc(line)}"
                f"<pre class='code' tabindex='0'>{esc(answer.error_type)}: {esc(answer.message)}</pre>"
                f"{esc(self.tr('challenge_hint_error'))}</div>"
            )
        elif verdict.kind == "problem":
            body = (
                f"<div class='feedback wrong' role='status'>"
                f"{esc(self.tr(CHALLENGE_PROBLEM[verdict.problem], shape=verdict.shape, expected=tuple(np.shape(out))))}</div>"
            )
        else:
            body = failure_html(self.tr, self.lang, answer, sandbox.LIMIT_S)
        self.result.object = (
            f"<div data-testid='challenge-result' data-state='{verdict.kind}' data-run='{run}'>{body}"
            f"{output_html(self.tr, answer)}</div>"
        )

    def show_solution(self):
        self.editor.value = challenge.SOLUTION.get(self.lang, challenge.SOLUTION["es"])
