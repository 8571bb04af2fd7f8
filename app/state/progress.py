"""What the reader has done in this visit, for the course around the page (docs/embedding.md): the
position and mode are the settings'; here, the lesson's milestones and the quiz. Each only ever turns
true (or gains an answer): stepping back from the window's end does not undo having reached it.

    reached_end        the text reached t = n_ctx (the window is full)
    saw_index_error    a step past the window met the position table's IndexError (the lesson's point)
    quiz               {question id: answered right}, the last answer to each question
    challenge_passed   the reader's own attention matched the model's (app/sections/quiz/challenge.py)

`as_dict(total)` is what the page publishes (app/figure/readouts.py PageState), in the field names of
the progress event (static/loader/course.js)."""

from __future__ import annotations


class Progress:
    def __init__(self):
        self.reached_end = False
        self.saw_index_error = False
        self.quiz: dict[str, bool] = {}
        self.challenge_passed = False

    def saw(self, ex) -> None:
        """The explorer's current state counts: its position, and the error of its last step."""
        if ex.t >= ex.cfg.n_ctx:
            self.reached_end = True
        if ex.error is not None and ex.error.lesson:
            self.saw_index_error = True

    def answer(self, question: str, right: bool | None) -> None:
        """The reader's answer to a question (None: none chosen, the earlier answer stays)."""
        if right is not None:
            self.quiz[question] = bool(right)

    def as_dict(self, total: int) -> dict:
        return {
            "reachedEnd": self.reached_end,
            "sawIndexError": self.saw_index_error,
            "quiz": {"answered": len(self.quiz), "correct": sum(self.quiz.values()), "total": total},
            "challengePassed": self.challenge_passed,
        }
