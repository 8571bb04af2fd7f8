"""The challenge and the lesson's cell, end to end without a browser: the request the app builds,
the sandbox's runner (the very file the sandbox worker runs, here in CPython), the answer as the
page's host hands it back, its checking, and the verdict. The browser half is
tests/test_sandbox_browser.py."""

import json

import numpy as np
import pytest

from app.sandbox import read_answer
from app.sandbox.runner import run_json
from app.sections.cell import logic as cell
from app.sections.quiz import challenge


def through_sandbox(payload: dict, output=(), more=0) -> object:
    """What the app receives for `payload`: run_json's answer wrapped as the host's 'done' message."""
    answer = run_json(json.dumps(payload))
    return read_answer({"id": 1, "status": "done", "answer": answer, "output": list(output), "more": more})


@pytest.fixture(scope="module")
def case(gpt):
    ids = gpt.tokenizer.encode("La Nela dijo que no quería ver el sol")
    return gpt.attention_at(ids, 1, 2)  # q, K, V, the model's output


def check(code, case):
    q, K, V, out = case
    return challenge.judge(through_sandbox(challenge.payload(code, q, K, V)), out)


@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_the_solution_matches_to_rounding(case, lang):
    v = check(challenge.SOLUTION[lang], case)
    assert v.kind == "right" and v.diff < 1e-15


def test_templates_run_and_are_wrong(case):
    for lang in challenge.TEMPLATE:
        v = check(challenge.template(lang, 16), case)
        assert v.kind == "wrong" and v.diff > 0.0, lang


def test_forgetting_the_square_root_is_caught(case):
    v = check(challenge.SOLUTION["es"].replace("/ np.sqrt(q.shape[0])", ""), case)
    assert v.kind == "wrong" and v.diff > 1e-6


def test_errors_come_back_with_type_and_line(case):
    v = check("def atencion(q, K, V)\n    return q\n", case)
    assert v.kind == "error" and v.answer.error_type == "SyntaxError" and v.answer.line == 1
    v = check("import numpy as np\n\ndef atencion(q, K, V):\n    return K @ V\n", case)
    assert v.answer.error_type == "ValueError" and v.answer.line == 4 and "matmul" in v.answer.message
    assert check("def atencion(q, K, V):\n    return softmax(q)\n", case).answer.error_type == "NameError"


@pytest.mark.parametrize(
    "code, kind",
    [
        ("exit()", "SystemExit"),
        ("raise KeyboardInterrupt", "KeyboardInterrupt"),
        ("class Boom(BaseException):\n    pass\nraise Boom('no')", "Boom"),
        ("class Odd(Exception):\n    def __str__(self):\n        raise ValueError\nraise Odd()", "Odd"),
    ],
)
def test_every_exception_is_an_answer(case, code, kind):
    v = check(code, case)
    assert v.kind == "error" and v.answer.error_type == kind


def test_wrong_shape_no_function_not_numbers(case):
    assert check("def atencion(q, K, V):\n    return K\n", case).problem == "wrong_shape"
    assert check("x = 1", case).problem == "no_function"
    assert check("def attention(q, K, V):\n    return None\n", case).problem == "wrong_shape"
    assert check("def atencion(q, K, V):\n    return 'hola'\n", case).problem == "not_numbers"
    assert check("def atencion(q, K, V):\n    return np.zeros(10**6)\n", case).problem == "too_big"


def test_non_finite_numbers_travel_and_are_wrong(case):
    v = check("def atencion(q, K, V):\n    return np.full(16, np.nan)\n", case)
    assert v.kind == "wrong" and v.diff == float("inf")
    v = check("def atencion(q, K, V):\n    return np.full(16, -np.inf)\n", case)
    assert v.kind == "wrong" and np.isneginf(v.answer.value).all()


def test_the_readers_copies_are_theirs(case):
    q, K, V, out = case
    before = K.copy()
    check("def atencion(q, K, V):\n    K[:] = 0\n    return K[0]\n", case)
    assert np.array_equal(K, before)


# -- what the app trusts of an answer: only the shape it expects -------------------------------------


@pytest.mark.parametrize(
    "response, status",
    [
        (None, "garbled"),
        ([], "garbled"),
        ({"status": "done"}, "garbled"),
        ({"status": "done", "answer": "{"}, "garbled"),
        ({"status": "done", "answer": json.dumps({"status": "ok", "value": {"shape": [2], "data": [1]}})}, "garbled"),
        (
            {"status": "done", "answer": json.dumps({"status": "ok", "value": {"shape": [1], "data": [True]}})},
            "garbled",
        ),
        ({"status": "done", "answer": json.dumps({"status": "ok", "value": {"shape": [1], "data": ["x"]}})}, "garbled"),
        (
            {"status": "done", "answer": json.dumps({"status": "ok", "value": {"shape": [10**6], "data": []}})},
            "garbled",
        ),
        ({"status": "done", "answer": json.dumps({"status": "surprise"})}, "garbled"),
        ({"status": "done", "answer": json.dumps({"status": "problem", "problem": "<script>"})}, "garbled"),
        ({"status": "done", "answer": "[" * 100_000 + "]" * 100_000}, "garbled"),
        ({"status": "timeout", "limit_s": 5}, "timeout"),
        ({"status": "crashed", "message": "x" * 10_000}, "crashed"),
        ({"status": "evil"}, "garbled"),
    ],
)
def test_read_answer_trusts_only_the_expected_shape(response, status):
    a = read_answer(response)
    assert a.status == status
    assert len(a.message) <= 2002


def test_printed_output_is_capped_and_counted():
    lines = [f"line {i}" for i in range(500)]
    a = through_sandbox({"code": "x = 1"}, output=lines, more=7)
    assert a.status == "ok" and len(a.output) == 200 and a.more == 7 + 300


# -- the lesson's first cell --------------------------------------------------------------------------


def run_cell(code, capsys, seed=0, lang="es"):
    a = through_sandbox(cell.payload(code, seed, lang))
    return a, capsys.readouterr().out  # in CPython the prints go to stdout (the worker captures them)


@pytest.mark.parametrize("lang", ["es", "en", "pt"])
def test_the_cell_fills_the_window_and_compares(gpt, capsys, lang):
    from model import generate

    a, out = run_cell(cell.cell(lang, 64, 0.9), capsys, lang=lang)
    assert a.status == "ok", a
    lines = out.splitlines()
    assert lines[0] == gpt.tokenizer.decode(generate(gpt, "La Nela", 62, seed=0, top_p=0.9)).splitlines()[0]
    diffs = {
        int(ln.split()[0]): float(ln.split()[1])
        for ln in lines
        if ln.split() and ln.split()[0].isdigit() and len(ln.split()) == 2
    }
    assert set(diffs) == set(cell.compare_at(64)) == {8, 16, 24, 32, 40, 48, 56, 64}
    assert max(diffs.values()) < 1e-12
    assert "(4, 64, 16)" in lines[-1] and "16384" in lines[-1]


def test_changing_64_to_65_meets_the_index_error(capsys):
    code = cell.one_more(cell.cell("es", 64, 0.9), 64)
    assert "while len(ids) < 65:" in code
    a, _ = run_cell(code, capsys)
    assert a.status == "error" and a.error_type == "IndexError"
    assert cell.is_position_error(a.error_type, a.message, 64)
    assert code.splitlines()[a.line - 1].strip().startswith("z = avanzar(x, cache)")


def test_one_more_leaves_other_numbers_alone():
    assert cell.one_more("while len(ids) < 30:\n", 64) == "while len(ids) < 30:\n"
    assert cell.one_more("while len(ids)<64:\n", 64) == "while len(ids)<65:\n"


def test_runs_wait_in_line_one_per_section():
    """CodeSandbox (app/sandbox): one run at a time; a run asked for meanwhile waits in line, a
    section's newer request replaces its own older one, and the next one starts when an answer
    arrives (the browser's answers are set here by hand, as the page's host sets them)."""
    from app.sandbox import CodeSandbox

    box = CodeSandbox()
    answers, started = [], []
    first = box.submit({"code": "1"}, lambda a, run: answers.append(run), key="cell", limit_s=10)
    assert box.request["id"] == first and not box.queued(first) and box.limit_in_flight == 10
    second = box.submit({"code": "2"}, lambda a, run: answers.append(run), key="quiz", on_start=started.append)
    third = box.submit({"code": "3"}, lambda a, run: answers.append(run), key="quiz", on_start=started.append)
    assert box.queued(third) and not box.queued(second)  # replaced by the newer request
    assert box.request["id"] == first  # nothing sent while one runs
    box.response = {"id": first, "status": "timeout", "limit_s": 10}
    assert answers == [first] and started == [third] and box.request["id"] == third
    assert json.loads(box.request["payload"]) == {"code": "3"}
    box.response = {"id": second, "status": "done", "answer": "{}"}  # an answer to no run in flight
    assert answers == [first]
    box.response = {"id": third, "status": "done", "answer": json.dumps({"status": "ok", "value": None})}
    assert answers == [first, third] and not box.busy
