"""The challenge's checker: right code passes, every kind of wrong code gets its real error."""
import numpy as np
import pytest

from app.challenge import SOLUTION, TEMPLATE, run


@pytest.fixture(scope="module")
def case(gpt):
    ids = gpt.tokenizer.encode("La Nela dijo que no quería ver el sol")
    return gpt.attention_at(ids, 1, 2)             # q, K, V, the model's output


def test_the_solution_matches_to_rounding(case):
    r = run(SOLUTION, *case)
    assert r.ok and r.diff < 1e-15


def test_templates_run_and_are_wrong(case):
    for lang, code in TEMPLATE.items():
        r = run(code, *case)
        assert not r.ok and r.diff > 0.0 and r.error_type is None, lang


def test_forgetting_the_square_root_is_caught(case):
    r = run(SOLUTION.replace("/ np.sqrt(q.shape[0])", ""), *case)
    assert not r.ok and r.diff > 1e-6


def test_syntax_error_with_its_line(case):
    r = run("def atencion(q, K, V)\n    return q\n", *case)
    assert r.error_type == "SyntaxError" and r.line == 1


def test_runtime_error_with_its_line(case):
    r = run("import numpy as np\n\ndef atencion(q, K, V):\n    return K @ V\n", *case)
    assert r.error_type == "ValueError" and r.line == 4 and "matmul" in r.error_message


def test_name_error_and_exit(case):
    assert run("def atencion(q, K, V):\n    return softmax(q)\n", *case).error_type == "NameError"
    assert run("exit()", *case).error_type == "SystemExit"


def test_endless_loop_is_stopped(case):
    r = run("def atencion(q, K, V):\n    while True:\n        try:\n            pass\n        except Exception:\n"
            "            pass\n", *case, line_budget=10_000)
    assert r.error_type == "TooLong" and not r.ok


def test_wrong_shape_and_no_function(case):
    assert run("def atencion(q, K, V):\n    return K\n", *case).problem == "wrong_shape"
    assert run("x = 1", *case).problem == "no_function"
    assert run("def attention(q, K, V):\n    return None\n", *case).problem == "wrong_shape"
    assert run("def atencion(q, K, V):\n    return 'hola'\n", *case).problem == "not_numbers"


def test_the_cache_cannot_be_changed(case):
    q, K, V, out = case
    before = K.copy()
    run("def atencion(q, K, V):\n    K[:] = 0\n    return K[0]\n", q, K, V, out)
    assert np.array_equal(K, before)
