"""The quiz: right answers and explanations built from the page's numbers."""

import pytest

from app.i18n import num
from app.main import create_view
from app.sections.context import logic as calculator
from app.sections.quiz.logic import MAX_LENGTH_RATIO, QUESTIONS, is_right, numbers, order
from model import cost
from model.cost import GiB
from tests.sandbox_here import answer_here


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
    ctx = view.sections[3]
    ctx.card.collapsed = False
    default = calculator.PRESETS[calculator.DEFAULT]
    assert ctx.built and ctx.preset.value == "7b-mha" == calculator.DEFAULT == list(ctx.presets)[0]
    assert default.model == cost.LESSON_7B and default.bits == 16 and default.kv_bytes == 2
    assert f"{num(default.tokens_per_user(), 'es')} tokens" in ctx.result.object == ctx.verdict_html(default)
    assert "19\u202f377 tokens" in ctx.result.object
    view.session.settings.lang = "en"
    assert "19,377 tokens" in ctx.result.object and not view.sections[0].built


def test_nothing_is_answered_until_the_reader_answers():
    view = create_view("?lang=es")
    quiz = next(s for s in view.sections if s.key == "quiz")
    quiz.ensure_built()
    for _qid, _question, choice, feedback in quiz.items:
        assert choice.value is None and feedback.object == ""


def test_numbers_are_the_pages(gpt):
    from app.state.explorer import Explorer
    from app.state.settings import Settings

    ex = Explorer(gpt, Settings(seed=0))
    ex.advance_to(30)
    n = numbers(ex)
    assert (n["t"], n["c"], n["tc"]) == (30, 131_072 + 256 * 30, 30 * (131_072 + 256 * 30))
    assert (n["total_c"], n["total_tc"], n["numbers"], n["bytes"]) == (8_921_088, 295_526_400, 16_384, 8)
    assert (n["half"], n["third"], n["equal"], n["sum_t"]) == (32.5, 43, 512, 2_080)
    assert (n["b7_numbers"], n["b7_bytes"], n["b7_ctx_small"], n["b7_ctx_large"]) == (262_144, 2, 4_096, 32_768)
    assert (n["b7_L"], n["b7_d"]) == (32, 4_096) and round(n["b7_weights"] / GiB, 1) == 13.0
    assert n["T"] == 64 and n["proof"] < 1e-12


def shown(view) -> dict:
    """What the quiz shows: per question, its title, its options (ids, in order, and texts) and,
    for every option chosen in turn, the feedback."""
    quiz = next(s for s in view.sections if s.key == "quiz")
    quiz.ensure_built()
    out = {}
    for qid, question, choice, feedback in quiz.items:
        texts = list(choice.options)
        ids = list(choice.options.values())
        answers = {}
        for o in ids:
            choice.value = o
            answers[o] = feedback.object
        out[qid] = {"title": question.object, "ids": ids, "texts": texts, "answers": answers}
    return out


@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_answers_and_explanations_are_the_models_numbers(lang):
    """Every number of the explanations is model/cost.py's or the live Config's, in the language's
    way of writing it; the right option is right and says so."""
    view = create_view(f"?lang={lang}&t=64")
    cfg, q = view.ex.cfg, shown(view)
    T, seven = cfg.n_ctx, cost.LESSON_7B
    for qid, _options, right in QUESTIONS:
        assert "feedback right" in q[qid]["answers"][right]
        assert all("feedback wrong" in a for o, a in q[qid]["answers"].items() if o != right)
    ratio = q["ratio"]["answers"]["t"]
    assert num(cost.c_uncached(cfg, 64), lang) in ratio and num(cost.c_cached(cfg, 64), lang) in ratio
    total = q["total"]["answers"]["r33"]
    for x, digits in (
        (cost.total_uncached(cfg, T), 0),
        (cost.total_cached(cfg, T), 0),
        (cost.total_ratio(cfg, T), 1),
        (cost.matrices_only_ratio(T), 1),
        (cost.attention_equals_matrices_at(cfg), 0),
        (cost.attention_only_ratio(T), 0),
    ):
        assert num(x, lang, digits) in total, (x, total)
    assert "(T+1)/2 = " + num(32.5, lang, 1) in total and "(2T+1)/3 = 43." in total and "t = 512" in total
    assert "43" not in total.split("(2T+1)/3")[0]  # 43 is what it would be, not what it is
    memory = q["memory"]["answers"]["tokens"]
    per_token = cost.cache_numbers(seven.n_layers, seven.d_model, 1)
    assert per_token == 262_144 and num(per_token, lang) in memory
    assert f"L = {seven.n_layers}, d = {num(seven.d_model, lang)}" in memory  # the model it means
    assert cost.cache_bytes(seven.n_layers, seven.d_model, 32_768, 2) == 16 * GiB
    assert f"16\u00a0GiB {'com' if lang == 'pt' else 'with' if lang == 'en' else 'con'} {num(32_768, lang)}" in memory
    assert (
        f"2\u00a0GiB {'com' if lang == 'pt' else 'with' if lang == 'en' else 'con'} {num(4_096, lang)} tokens" in memory
    )
    assert f"({num(13.0, lang, 1)}\u00a0GiB)" in memory and num(16_384, lang) in memory and "128\u00a0KiB" in memory
    assert f"{T} " in q["pos65"]["answers"]["table"] and f" {T + 1}" in q["pos65"]["title"]


def test_options_are_numbers_from_the_window(gpt):
    """A model with another window: the options, the titles and the explanations follow its Config."""
    from dataclasses import replace

    from model import MiniGPT

    small = MiniGPT.random(replace(gpt.config, n_ctx=32), seed=1, tokenizer=gpt.tokenizer)
    q = shown(create_view("?lang=es", gpt=small))
    texts = " | ".join(q["total"]["texts"])
    assert "32 veces" in texts and "528 veces" in texts and "de 1 a 32" in texts  # 528 = 32·33/2
    assert "64" not in texts and "2\u202f080" not in texts
    assert "Unas 22 veces" in texts  # (2·32+1)/3 = 21.7
    assert f"Unas {round(cost.total_ratio(small.config, 32))} veces" in texts
    assert "posición 33" in q["pos65"]["title"] and "32 filas" in " ".join(q["pos65"]["texts"])


def test_option_order_follows_the_seed():
    """Options are shuffled by the reader's seed: the same seed, the same order; over seeds the right
    one moves."""
    for seed in range(30):
        shown_order = order(seed)
        assert shown_order == order(seed)
        for qid, options, _right in QUESTIONS:
            assert sorted(shown_order[qid]) == sorted(options)
    for qid, options, right in QUESTIONS:
        places = {order(seed)[qid].index(right) for seed in range(30)}
        assert places == set(range(len(options))), (qid, places)  # every place, somewhere
    view = create_view("?lang=en&seed=7")
    q = shown(view)
    assert all(q[qid]["ids"] == list(order(7)[qid]) for qid in q)
    view.session.settings.seed = 8  # a new seed, a new order
    quiz = next(s for s in view.sections if s.key == "quiz")
    assert [list(c.options.values()) for _, _, c, _ in quiz.items] == [list(o) for o in order(8).values()]
    assert order(7) != order(8)


@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_option_lengths_give_nothing_away(lang):
    """Options of a question are within MAX_LENGTH_RATIO of each other (1.3: the longest at most 30%
    longer than the shortest), and the right one is not the longest most of the time."""
    q = shown(create_view(f"?lang={lang}&t=64"))
    longest_right = 0
    for qid, _options, right in QUESTIONS:
        lengths = {o: len(text) for o, text in zip(q[qid]["ids"], q[qid]["texts"])}
        assert max(lengths.values()) <= MAX_LENGTH_RATIO * min(lengths.values()), (qid, lengths)
        longest_right += lengths[right] == max(lengths.values())
    assert MAX_LENGTH_RATIO == 1.3 and longest_right <= 2


@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_feedback_in_every_language(lang):
    view = create_view(f"?lang={lang}&t=12")
    quiz = next(s for s in view.sections if s.key == "quiz")
    quiz.ensure_built()
    for qid, _question, choice, feedback in quiz.items:
        right = next(r for q, _, r in QUESTIONS if q == qid)
        choice.value = right
        assert "data-testid" in feedback.object and "right" in feedback.object
        wrong = next(o for q, opts, r in QUESTIONS if q == qid for o in opts if o != r)
        choice.value = wrong
        assert "wrong" in feedback.object
    ratio = quiz.items[1][3].object
    assert "12" in ratio and "mini-GPT" in ratio  # explained at the page's own position


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
    assert "wrong" in quiz.result.object  # the template returns zeros
    quiz.show_solution()
    quiz.head.value = 3
    quiz.block.value = 1
    quiz.check()
    assert "right" in quiz.result.object and "position 20, layer 2, head 4" in quiz.result.object
    quiz.editor.value = "def attention(q, K, V):\n    return K @ V\n"
    quiz.check()
    assert "ValueError" in quiz.result.object and "Line 2" in quiz.result.object


def test_prove_view():
    view, prove = built("?lang=es", "cell")
    prove.run()
    assert "(4, 64, 16)" in prove.result.object and "16384 números" in prove.result.object
    assert "cell-ok" in prove.result.object
    prove.run(one_more=True)
    assert "IndexError" in prove.result.object and "64 filas" in prove.result.object
    assert "while len(ids) &lt; 65" in prove.result.object or "while len(ids) < 65" in prove.editor.value
    prove.restore()
    assert "while len(ids) < 64" in prove.editor.value and prove.result.object == ""


def test_challenge_checks_what_is_typed_before_the_field_loses_focus():
    view, quiz = built("?lang=en&t=10", "quiz")
    quiz.editor.value_input = "def attention(q, K, V):\n    return q @ K\n"  # typed, not yet committed
    quiz.check()
    assert "ValueError" in quiz.result.object
    quiz.show_solution()
    quiz.check()
    assert "right" in quiz.result.object


def test_challenge_code_when_value_and_value_input_change_together():
    view, quiz = built("?lang=es&t=10", "quiz")
    code = "def atencion(q, K, V):\n    return q @ K\n"
    quiz.editor.param.update(value=code, value_input=code)  # as the browser sends them on blur
    quiz.check()
    assert "ValueError" in quiz.result.object


@pytest.mark.parametrize("kv, fmt", [(1, "float64"), (2, "int8"), (4, "int4"), (1, "int4")])
def test_the_quiz_is_about_the_lesson_whatever_the_smaller_cache(kv, fmt):
    """Issue 19: another checkpoint or cache format chosen in "A smaller cache" leaves the quiz on the
    lesson's model and float64 cache (4 K/V heads, 2·2·64·64 = 16,384 numbers at 8 bytes, a proof
    of rounding), its intro says so, and the challenge reads the lesson model's attention."""
    lesson_view, view = create_view("?lang=en&t=40"), create_view(f"?lang=en&t=40&kv_heads={kv}&precision={fmt}")
    assert (view.ex.cfg.n_kv_heads, view.ex.fmt) == (kv, fmt) and view.ex.ids == lesson_view.ex.ids
    n, lesson = numbers(view.ex), numbers(lesson_view.ex)
    assert n.keys() == lesson.keys() and all(n[k] == lesson[k] for k in n if k != "proof")
    assert (n["L"], n["d"], n["numbers"], n["bytes"]) == (2, 64, 16_384, 8) and n["c"] == 131_072 + 256 * 40
    assert n["proof"] < 1e-12 and n["proof"] == view.ex.proof_now(view.ex.lesson_gpt)
    q = shown(view)
    memory = q["memory"]["answers"]["tokens"]
    assert "(L = 2, d = 64)" in memory and "16,384, 128\u00a0KiB at 8 bytes per number" in memory
    assert "a single digit" in q["fixed"]["answers"]["mask"]
    quiz = next(s for s in view.sections if s.key == "quiz")
    assert "lesson&#x27;s model: its 4 K/V heads and its cache in float64, at 8 bytes" in quiz.intro.object
    got, want = quiz.case(), lesson_view.ex.gpt.attention_at(view.ex.ids, 0, 0)
    assert all((a == b).all() for a, b in zip(got, want))
    view.session.settings.kv_heads, view.session.settings.precision = 4, "float64"  # back to the lesson's
    assert "float64" not in quiz.intro.object and "mini-GPT" not in quiz.intro.object
