"""What the course hears of the reader (app/state/progress.py, published by app/figure/readouts.py
PageState): the lesson's milestones, met once, stay met; a step past the window inside a batch of commands
counts even when the batch ends elsewhere; the quiz keeps each question's last answer."""

from __future__ import annotations

from app.sections.quiz import logic as quiz
from app.state.progress import Progress
from app.state.session import Session
from app.state.settings import Settings


def test_the_milestones_are_met_once_and_stay(gpt):
    session = Session(gpt, Settings(seed=0, top_p=0.9, t=63))
    p = session.progress
    assert not p.reached_end and not p.saw_index_error
    assert session.step() and p.reached_end and not p.saw_index_error  # t = 64: the window is full
    assert not session.step() and p.saw_index_error  # t = 65: the position table's IndexError
    session.back()
    session.reset()
    assert p.reached_end and p.saw_index_error  # stepping away does not undo them


def test_a_step_past_the_window_inside_a_batch_counts(gpt):
    session = Session(gpt, Settings(seed=0, top_p=0.9, t=64))
    session.run(["step", "back", "back"])  # the batch ends at 62, with no error to show
    assert session.ex.t == 62 and session.ex.error is None
    assert session.progress.saw_index_error


def test_the_quiz_keeps_each_questions_last_answer():
    p = Progress()
    total = len(quiz.QUESTIONS)
    p.answer("fixed", True)
    p.answer("ratio", False)
    p.answer("ratio", True)
    p.answer("total", None)  # nothing chosen: no answer
    assert p.as_dict(total) == {
        "reachedEnd": False,
        "sawIndexError": False,
        "quiz": {"answered": 2, "correct": 2, "total": 5},
        "challengePassed": False,
    }
