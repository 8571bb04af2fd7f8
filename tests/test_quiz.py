"""The quiz: right answers and explanations built from the page's numbers."""
import pytest

from app.main import create_view
from tests.sandbox_here import answer_here
from app.quiz import QUESTIONS, is_right, numbers


def test_five_questions_one_right_answer_each():
    assert len(QUESTIONS) == 5
    for qid, options, right in QUESTIONS:
        assert right in options
        assert [is_right(qid, o) for o in options].count(True) == 1
    with pytest.raises(ValueError):
        is_right("fixed", "nonsense")


def test_sections_are_built_when_first_opened():
    view = create_view("?lang=es")
    assert not any(s.built for s in view.sections) and all(s.card.objects == [] for s in view.sections)
    view.sections[3].card.collapsed = False
    assert view.sections[3].built and "65\u202f378 tokens" in view.sections[3].result.object
    view.session.settings.lang = "en"
    assert "65,378 tokens" in view.sections[3].result.object and not view.sections[0].built


def test_nothing_is_answered_until_the_reader_answers():
    view = create_view("?lang=es")
    quiz = next(s for s in view.sections if s.key == "quiz")
    quiz.ensure_built()
    for qid, question, choice, feedback in quiz.items:
        assert choice.value is None and feedback.object == ""
    assert [opts.index(right) for _, opts, right in QUESTIONS] != [0] * 5   # the right one is not always first


def test_numbers_are_the_pages(gpt):
    from app.state import Explorer
    from app.settings import Settings
    ex = Explorer(gpt, Settings(seed=0))
    ex.advance_to(30)
    n = numbers(ex)
    assert (n["t"], n["c"], n["tc"]) == (30, 131_072 + 256 * 30, 30 * (131_072 + 256 * 30))
    assert (n["total_c"], n["total_tc"], n["numbers"], n["kib"]) == (8_921_088, 295_526_400, 16_384, 128)
    assert n["seven_b"] == 16 and n["rows"] == 64 and n["proof"] < 1e-12


@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_feedback_in_every_language(lang):
    view = create_view(f"?lang={lang}&t=12")
    quiz = next(s for s in view.sections if s.key == "quiz")
    quiz.ensure_built()
    for qid, question, choice, feedback in quiz.items:
        right = next(r for q, _, r in QUESTIONS if q == qid)
        choice.value = right
        assert "data-testid" in feedback.object and "right" in feedback.object
        wrong = next(o for q, opts, r in QUESTIONS if q == qid for o in opts if o != r)
        choice.value = wrong
        assert "wrong" in feedback.object
    ratio = quiz.items[1][3].object
    assert "12" in ratio                                    # explained at the page's own position


def built(query: str, key: str):
    """A view whose code sandbox answers in-process (tests/sandbox_here.py), and one section built."""
    view = create_view(query)
    answer_here(view.sandbox)
    section = next(s for s in view.sections if s.key == key)
    section.ensure_built()
    return view, section


def test_challenge_through_the_view():
    view = create_view("?lang=en&t=20")
    answer_here(view.sandbox)
    quiz = next(s for s in view.sections if s.key == "quiz")
    quiz.ensure_built()
    quiz.check()
    assert "wrong" in quiz.result.object                    # the template returns zeros
    quiz.show_solution()
    quiz.head.value = 3
    quiz.block.value = 1
    quiz.check()
    assert "right" in quiz.result.object and "position 20, block 2, head 4" in quiz.result.object
    quiz.editor.value = "def attention(q, K, V):\n    return K @ V\n"
    quiz.check()
    assert "ValueError" in quiz.result.object and "Line 2" in quiz.result.object


def test_context_calculator_view():
    view = create_view("?lang=pt")
    ctx = next(s for s in view.sections if s.key == "ctx")
    ctx.ensure_built()
    ctx.preset.value = "13b"
    ctx.bits.value, ctx.gpu.value = 4.125, 8.0
    assert ">337 tokens" in ctx.result.object
    ctx.bits.value, ctx.gpu.value = 8.0, 16.0
    assert "3.136 tokens" in ctx.result.object
    ctx.preset.value = "7b-gqa"
    assert "65.378 tokens" in ctx.result.object
    ctx.users.value = 2
    assert "32.689 tokens" in ctx.result.object
    ctx.gpu.value = None
    assert "Falta" in ctx.result.object


def test_prove_view():
    view, prove = built("?lang=es", "prove")
    prove.run()
    assert "(4, 64, 16)" in prove.result.object and "16384 números" in prove.result.object
    assert "prove-ok" in prove.result.object
    prove.run(one_more=True)
    assert "IndexError" in prove.result.object and "64 filas" in prove.result.object
    assert "while len(ids) &lt; 65" in prove.result.object or "while len(ids) < 65" in prove.editor.value
    prove.restore()
    assert "while len(ids) < 64" in prove.editor.value and prove.result.object == ""


def test_challenge_checks_what_is_typed_before_the_field_loses_focus():
    view, quiz = built("?lang=en&t=10", "quiz")
    quiz.editor.value_input = "def attention(q, K, V):\n    return q @ K\n"   # typed, not yet committed
    quiz.check()
    assert "ValueError" in quiz.result.object
    quiz.show_solution()
    quiz.check()
    assert "right" in quiz.result.object


def test_challenge_code_when_value_and_value_input_change_together():
    view, quiz = built("?lang=es&t=10", "quiz")
    code = "def atencion(q, K, V):\n    return q @ K\n"
    quiz.editor.param.update(value=code, value_input=code)       # as the browser sends them on blur
    quiz.check()
    assert "ValueError" in quiz.result.object
