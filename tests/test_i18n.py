"""The catalogs (app/i18n/LANG.po): complete in every language, every key used and every use a key,
no key built at run time, plurals that work, a parser that reads what gettext's tools write, and
another language that is one file dropped in. The languages are the catalogs present (app/i18n/ and
$KV_EXPLORABLE_CATALOGS): no test names the list, so a catalog added passes these tests as they are."""

import ast
import json
import os
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path

import pytest

from app.i18n import (
    CATALOGS,
    COUNT,
    DEFAULT_LANG,
    LANGS,
    SHELL_PREFIX,
    catalog_dirs,
    catalog_keys,
    language_names,
    num,
    po,
    sci,
    shell_text,
    tr,
)
from app.i18n.__main__ import stale, template
from app.sections.quiz import logic as quiz
from buildsupport.loader import CLASSIC, MODULES
from tests.languages import absent_language

ROOT = Path(__file__).resolve().parents[1]
I18N = ROOT / "app" / "i18n"
SOURCES = sorted(
    p
    for folder in ("app", "static", "buildsupport")
    for p in (ROOT / folder).rglob("*")
    if p.suffix in (".py", ".js", ".html") and "__pycache__" not in p.parts
)
PY_SOURCES = [p for p in SOURCES if p.suffix == ".py"]


def fields(s):
    return {f for _, f, _, _ in string.Formatter().parse(s) if f}


def texts(lang: str) -> dict[str, str]:
    """Every text of a catalog, the forms of a plural entry joined (to compare languages)."""
    return {k: " | ".join(m.msgstr) for k, m in CATALOGS[lang].messages.items()}


# -- complete, consistent catalogs --------------------------------------------------------------------


def test_languages_are_the_catalog_files():
    files = {p.stem for folder in catalog_dirs() for p in Path(folder).glob("*.po")}
    assert sorted(LANGS) == sorted(files) and LANGS[0] == DEFAULT_LANG == "es"
    assert list(LANGS[1:]) == sorted(LANGS[1:])  # the default first, the others by code
    names = language_names()  # each its own, told apart where two catalogs give the same
    assert list(names) == list(LANGS) and len(set(names.values())) == len(LANGS), names
    assert all(names[lang].startswith(tr(lang, "language_name")) for lang in LANGS)
    assert names[DEFAULT_LANG] == "Español"


def test_every_string_in_every_language():
    source = CATALOGS[DEFAULT_LANG].messages
    for lang in LANGS:
        catalog = CATALOGS[lang]
        assert list(catalog.messages) == list(source), lang  # the same keys, in the same order
        for key, m in catalog.messages.items():
            assert m.translated and all(s.strip() for s in m.msgstr), (lang, key)
            assert (m.msgid_plural is None) == (source[key].msgid_plural is None), (lang, key)
            assert {frozenset(fields(s)) for s in m.msgstr} == {frozenset(fields(source[key].msgstr[0]))}, (lang, key)
            if m.msgid_plural is not None:
                assert m.msgid_plural == key and len(m.msgstr) == catalog.nplurals, (lang, key)
                assert COUNT in fields(m.msgstr[0]), (lang, key)  # {n}, the count, in every form


def test_languages_really_differ():
    # every translation differs from the default language in most of its texts (Spanish and Portuguese
    # share words, "Animar", "Pausa", but not many sentences)
    es = texts(DEFAULT_LANG)
    for lang in LANGS[1:]:
        other = texts(lang)
        same = [k for k in es if es[k] == other[k]]
        assert len(same) < 0.15 * len(es), (lang, same)
    # between English and the others, only formulas and symbols may read the same
    symbols = {
        "position",
        "memory_formula",
        "memory_formula_kv",
        "small_kv_1",
        "top_p",
        "clock_plot_y",
        "table_token",
        "lab_c",
        "lab_tc",
        "batch_B_short",
        "spec_k_short",
        "spec_alpha_short",
        "spec_axis_target",
        "spec_axis_draft",  # axis labels naming a model ("draft", as the chapter)
        "batch_pad",
    }  # "padding": the Portuguese chapter's own word
    for a, b in (("es", "en"), ("en", "pt")):
        if a not in CATALOGS or b not in CATALOGS:
            continue
        ta, tb = texts(a), texts(b)
        same = {k for k in ta if ta[k] == tb[k]}
        assert same <= symbols, (a, b, same - symbols)


def check_plural_rule(catalog: po.Catalog) -> None:
    """The header's Plural-Forms, evaluated: every count 0..200 takes one of its nplurals forms (po
    refuses a form out of range), and each form is taken by some count."""
    taken = {catalog.plural(n) for n in range(201)}
    assert taken == set(range(catalog.nplurals)), (catalog.source, catalog.header["Plural-Forms"], taken)


def test_catalogs_are_valid_gettext_and_round_trip():
    for path in [*CATALOGS.paths.values(), I18N / "messages.pot"]:
        text = path.read_text(encoding="utf-8")
        catalog = po.parse(text, source=path.name)
        assert po.write(catalog) == text, path.name  # parse -> write: the same text
        h = catalog.header
        assert h["Content-Type"] == "text/plain; charset=UTF-8" and h["MIME-Version"] == "1.0", path.name
        assert h["Content-Transfer-Encoding"] == "8bit" and h["Project-Id-Version"] == "kv-cache-explorable"
        if path.suffix == ".po":
            assert h["Language"] == path.stem
            check_plural_rule(catalog)
        else:
            assert h["Language"] == "" and h["Plural-Forms"] == po.TEMPLATE_PLURAL_FORMS


@pytest.mark.skipif(not shutil.which("msgfmt"), reason="GNU gettext's msgfmt is not installed")
def test_gettext_tools_accept_the_catalogs(tmp_path):
    for path in CATALOGS.paths.values():
        r = subprocess.run(
            ["msgfmt", "--check-format", "--check-domain", "-o", str(tmp_path / "x.mo"), str(path)],
            capture_output=True,
            text=True,
        )
        assert r.returncode == 0, r.stderr


def test_template_is_up_to_date():
    """messages.pot is what `python -m app.i18n pot` writes from es.po, and each catalog is in the
    form `python -m app.i18n format` writes."""
    assert stale() == []
    pot = template()
    assert list(pot.messages) == catalog_keys()
    assert all(not any(m.msgstr) for m in pot.messages.values())
    r = subprocess.run([sys.executable, "-m", "app.i18n", "check"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


# -- every key used, every use a key, none built at run time -------------------------------------------
# No key is built at run time (test_no_key_is_built_at_run_time), so every key the code can ask for is
# a string literal in it: a call tr("key"), self.tr("key"), tr(lang, "key") (USE), or a literal handed on
# to one (a table such as quiz.OPTION_KEY, a key chosen in an if): a quoted literal that is a key
# (QUOTED). The shell's keys are TEXT.shell_x or "shell_x" in the page's loader (buildsupport/loader.py:
# its classic scripts, static/loader/*.js), {{shell_x}} in static/index.html, "shell_x" in buildsupport/.

USE = re.compile(r"""\btr\(\s*(?:[\w.]+\s*,\s*)?["']([a-z][A-Za-z0-9_]*)["']""")
QUOTED = re.compile(r"""["']([a-z][A-Za-z0-9_]*)["']|\{\{(shell_\w+)\}\}|\bTEXT\.(shell_\w+)""")


def loader_sources() -> dict[str, str]:
    """The page's loader: its classic scripts and its modules (buildsupport/loader.py)."""
    paths = [*(ROOT / "static" / name for name in CLASSIC), *sorted(MODULES.glob("*.js"))]
    return {p.relative_to(ROOT).as_posix(): p.read_text(encoding="utf-8") for p in paths}


def source_texts():
    return {p: p.read_text(encoding="utf-8") for p in SOURCES}


def test_every_key_the_code_uses_exists():
    keys = set(catalog_keys())
    used = {(p.relative_to(ROOT).as_posix(), k) for p, text in source_texts().items() for k in USE.findall(text)}
    assert len(used) > 200  # the scan sees the code's calls
    assert {(p, k) for p, k in used if k not in keys} == set()
    shell = {
        k
        for text in source_texts().values()
        for m in QUOTED.finditer(text)
        for k in m.groups()
        if k and k.startswith(SHELL_PREFIX) and k != SHELL_PREFIX
    }
    assert shell <= keys, shell - keys


def test_every_key_is_used():
    literals = {k for text in source_texts().values() for m in QUOTED.finditer(text) for k in m.groups() if k}
    unused = [k for k in catalog_keys() if k not in literals]
    assert unused == []


def calls_to_tr(tree):
    """(call, key argument) for every tr(...), x.tr(...) and tr(lang, ...) of a module."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
            if name == "tr" and node.args:  # tr(lang, key) or a translator's tr(key)
                yield node, node.args[1 if len(node.args) > 1 else 0]


def built_strings(tree, keys):
    """f-strings and + or % joins with a piece that starts a key ('row_' + kind) or ends one
    (f'{key}_title')."""
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            parts = [v.value for v in node.values if isinstance(v, ast.Constant)]
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            parts = [
                v.value for v in (node.left, node.right) if isinstance(v, ast.Constant) and isinstance(v.value, str)
            ]
        else:
            continue
        for s in parts:
            if (s.endswith("_") and any(k.startswith(s) for k in keys)) or (
                s.startswith("_") and any(k.endswith(s) for k in keys)
            ):
                yield node


def test_no_key_is_built_at_run_time():
    keys, bad = catalog_keys(), []
    for path in PY_SOURCES:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        where = path.relative_to(ROOT).as_posix()
        bad += [
            f"{where}:{arg.lineno} {ast.unparse(arg)}"
            for _call, arg in calls_to_tr(tree)
            if isinstance(arg, (ast.JoinedStr, ast.BinOp, ast.Call))
        ]
        bad += [f"{where}:{node.lineno} {ast.unparse(node)}" for node in built_strings(tree, keys)]
    for path, text in loader_sources().items():
        bad += [f"{path}: TEXT[{m}" for m in re.findall(r"\bTEXT\[(?!STAGE_TEXT\[)([^\]]*)", text)]
    assert bad == []


def test_plural_calls_pass_the_count():
    """Every call that names a plural entry passes n (or a dict of values that has it)."""
    plural = {k for k, m in CATALOGS[DEFAULT_LANG].messages.items() if m.msgid_plural is not None}
    seen, bad = set(), []
    for path in PY_SOURCES:
        for call, arg in calls_to_tr(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(arg, ast.Constant) and arg.value in plural:
                seen.add(arg.value)
                if not any(k.arg in (COUNT, None) for k in call.keywords):
                    bad.append(f"{path.name}:{call.lineno} {arg.value}")
    assert bad == [] and len(seen) > 20


def test_quiz_keys_cover_the_questions():
    for qid, options, _right in quiz.QUESTIONS:
        assert set(quiz.OPTION_KEY[qid]) == set(options)
        keys = [quiz.QUESTION_KEY[qid], quiz.WHY_KEY[qid], *quiz.OPTION_KEY[qid].values()]
        assert all(k in CATALOGS["es"].messages for k in keys), keys
    assert set(quiz.QUESTION_KEY) == set(quiz.WHY_KEY) == set(quiz.OPTION_KEY) == {q for q, _, _ in quiz.QUESTIONS}


# -- plurals -------------------------------------------------------------------------------------------

PLURALS_SEEN = {
    ("es", "code_more", 1): "… y 1 línea más.",
    ("es", "code_more", 2): "… y 2 líneas más.",
    ("es", "code_more", 0): "… y 0 líneas más.",
    ("en", "code_more", 1): "… and 1 more line.",
    ("en", "code_more", 3): "… and 3 more lines.",
    ("pt", "code_more", 1): "… e mais 1 linha.",
    ("pt", "code_more", 1000): "… e mais 1.000 linhas.",
    ("es", "ctx_tokens", 12_345): "12\u202f345 tokens de contexto por usuario (8 a la vez)",
    ("en", "ctx_tokens", 1): "1 token of context per user (8 at once)",
}


def test_plural_selection():
    for (lang, key, n), want in PLURALS_SEEN.items():
        assert tr(lang, key, n=n, users=8) == want
    assert tr("es", "small_now", n=1, fmt="int8", per="1\u00a0KiB", n_ctx=64, window="64\u00a0KiB").startswith(
        "Ahora: 1 cabeza K/V,"
    )
    assert tr("pt", "small_now", n=2, fmt="int8", per="1", n_ctx=64, window="64").startswith("Agora: 2 cabeças K/V,")
    assert tr("en", "totals", n=1) == "Total for 1 token" and tr("en", "totals", n=20) == "Total for the 20 tokens"
    assert tr("es", "code_more", n=2.0) == "… y 2 líneas más."  # a whole float counts
    for bad in ({}, {"n": "3"}, {"n": 1.5}, {"n": True}):
        with pytest.raises(TypeError):
            tr("es", "code_more", **bad)


def test_plural_rules_of_other_languages():
    """A language's own Plural-Forms, however many forms (here Polish's three), through gettext.c2py;
    anything but C arithmetic on n is refused."""
    polish = po.parse(
        'msgid ""\nmsgstr ""\n"Language: pl\\n"\n'
        '"Plural-Forms: nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\\n"\n\n'
        'msgid "lines"\nmsgid_plural "lines"\nmsgstr[0] "{n} linia"\nmsgstr[1] "{n} linie"\nmsgstr[2] "{n} linii"\n'
    )
    assert [polish.plural(n) for n in (1, 2, 4, 5, 12, 22, 25, 112)] == [0, 1, 1, 2, 2, 1, 2, 2]
    assert polish.nplurals == 3
    check_plural_rule(polish)
    with pytest.raises(AssertionError):  # a form no count takes
        check_plural_rule(po.parse('msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=3; plural=(n != 1);\\n"\n'))
    for expr in ("__import__('os').system('true')", "n.__class__", "(n != 1); import os"):
        catalog = po.parse(f'msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=2; plural={expr};\\n"\n')
        with pytest.raises(po.POError):
            catalog.plural(1)
    with pytest.raises(po.POError):  # a form the language does not have
        po.parse('msgid ""\nmsgstr ""\n"Plural-Forms: nplurals=2; plural=n;\\n"\n').plural(5)


# -- the parser ------------------------------------------------------------------------------------

SAMPLE = r"""# A translator's comment
#, fuzzy
msgid ""
msgstr ""
"Project-Id-Version: test\n"
"Language: xx\n"
"Content-Type: text/plain; charset=UTF-8\n"
"Plural-Forms: nplurals=2; plural=(n != 1);\n"

#. {n}: a note for translators
#: app/figure/parts.py:12
msgid "two_lines"
msgstr ""
"first line\n"
"second \"quoted\" line, a tab\there and a backslash \\"

#, fuzzy
msgid "fuzzy_one"
msgstr "not ready"

msgctxt "menu"
msgid "with_context"
msgstr "in a context"

msgid "empty"
msgstr ""

msgid "things"
msgid_plural "things"
msgstr[0] "{n} thing"
msgstr[1] "{n} things"
#~ msgid "old"
#~ msgstr "obsolete"
"""


def test_parser_reads_what_gettext_tools_write():
    c = po.parse(SAMPLE)
    assert c.language == "xx" and c.header["Project-Id-Version"] == "test"
    assert c.header_comments == ["# A translator's comment", "#, fuzzy"]
    m = c.messages["two_lines"]
    assert m.msgstr == ['first line\nsecond "quoted" line, a tab\there and a backslash \\']
    assert m.notes == ["{n}: a note for translators"] and m.translated
    assert not c.messages["fuzzy_one"].translated and not c.messages["empty"].translated
    assert c.messages["with_context"].msgctxt == "menu"
    things = c.messages["things"]
    assert things.msgid_plural == "things" and things.msgstr == ["{n} thing", "{n} things"]
    assert "old" not in c.messages and list(c.messages)[-1] == "things"
    again = po.parse(po.write(c))  # canonical form: the same catalog
    assert again.messages == c.messages and again.header == c.header
    assert po.write(again) == po.write(c)
    assert po.parse(r'msgid "a"' + "\n" + r'msgstr "\101\x42 \a"').messages["a"].msgstr == ["AB \a"]


@pytest.mark.parametrize(
    "text",
    [
        'msgid "a"\nmsgstr "b\\q"',  # unknown escape
        'msgid "a"\nmsgstr "b',  # unterminated
        'msgid "a"\nmsgstr "b" c',  # junk after the string
        'msgid "a"\nmsgstr "b"\n\nmsgid "a"\nmsgstr "c"',  # a key twice
        'msgid "a"\nmsgid_plural "a"\nmsgstr "b"',  # plural without msgstr[n]
        'msgid "a"\nmsgid_plural "a"\nmsgstr[0] "b"\nmsgstr[2] "c"',
        'msgid "a"\nmsgstr[0] "b"',
        'msgstr "b"',
        '"stray"',
        'msgid "a"\nmsgstr "b"\n\nmsgid ""\nmsgstr "Language: xx\\n"',  # header not first
        'msgid ""\nmsgstr "Plural-Forms: nplurals=3; plural=n;\\n"\n\nmsgid "a"\nmsgid_plural "a"\nmsgstr[0] "b"\nmsgstr[1] "c"',
    ],
)
def test_parser_refuses_broken_catalogs(text):
    with pytest.raises(po.POError):
        po.parse(text)


# -- another language: one file dropped in -------------------------------------------------------------

NEW = absent_language(CATALOGS)  # a language no catalog present has (French if it can be)

ANOTHER = r"""
import json, sys
from app.i18n import LANGS, tr, shell_text, language_names
from app.main import create_view, load_model, settings_for
from app.figure.controls import AdvancedSettings
new = sys.argv[1]
view = create_view("?lang=" + new)
print(json.dumps({
    "langs": LANGS, "step": tr(new, "step"), "play": tr(new, "play"), "one": tr(new, "code_more", n=1),
    "zero": tr(new, "code_more", n=0), "two": tr(new, "code_more", n=2), "names": language_names(),
    "setting": view.session.settings.lang, "title": view.header.layout.object,
    "picker": AdvancedSettings.LANGUAGES, "shell": sorted(shell_text()), "shell_title": shell_text()[new]["shell_title"],
    "url": settings_for(None, load_model()).url_rules()["params"]["lang"],
}))
"""


def with_catalogs(folder: Path) -> dict:
    """The environment with `folder` added to $KV_EXPLORABLE_CATALOGS (after the folders already there)."""
    folders = [d for d in os.environ.get("KV_EXPLORABLE_CATALOGS", "").split(os.pathsep) if d]
    return dict(os.environ, KV_EXPLORABLE_CATALOGS=os.pathsep.join([*folders, str(folder)]))


def test_another_language_is_one_file(tmp_path):
    """es.po copied to NEW.po, in French (French's plural rule, a few strings translated, one left
    empty), in a folder of $KV_EXPLORABLE_CATALOGS: the app has one language more, reads it, falls back
    to Spanish for what is missing, accepts ?lang=NEW, and its shell's texts include it."""
    text = (I18N / "es.po").read_text(encoding="utf-8")
    for old, new in (
        ('"Language: es\\n"', f'"Language: {NEW}\\n"'),
        ("plural=(n != 1);", "plural=(n > 1);"),
        ('msgstr "Español"', 'msgstr "Français"'),
        ('msgstr "Avanzar"', 'msgstr "Avancer"'),
        ('msgstr "Animar"', 'msgstr ""'),  # untranslated: Spanish
        ('msgstr[0] "… y {n} línea más."', 'msgstr[0] "… et {n} ligne de plus."'),
        ('msgstr[1] "… y {n} líneas más."', 'msgstr[1] "… et {n} lignes de plus."'),
        (
            'msgstr "La caché de claves y valores: cuánto cuesta cada token"',
            'msgstr "Le cache clé-valeur : ce que coûte chaque token"',
        ),
        ('msgstr "La caché de claves y valores"', 'msgstr "Le cache clé-valeur"'),
    ):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (tmp_path / f"{NEW}.po").write_text(text, encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-c", ANOTHER, NEW],
        cwd=ROOT,
        env=with_catalogs(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["langs"] == [DEFAULT_LANG, *sorted([*LANGS[1:], NEW])]
    assert out["step"] == "Avancer" and out["play"] == "Animar"
    assert (out["zero"], out["one"], out["two"]) == (
        "… et 0 ligne de plus.",
        "… et 1 ligne de plus.",
        "… et 2 lignes de plus.",
    )  # French: 0 is singular
    assert out["names"][NEW] == "Français" and out["picker"]["Français"] == NEW
    assert out["setting"] == NEW and "Le cache clé-valeur : ce que coûte chaque token" in out["title"]
    assert out["shell"] == sorted([*LANGS, NEW]) and out["shell_title"] == "Le cache clé-valeur"
    assert NEW in json.dumps(out["url"])


def test_a_copy_of_en_po_passes_the_checks(tmp_path, request):
    """docs/design.md's way to add a language, walked: en.po copied as zz.po (its header's Language set)
    into a folder of $KV_EXPLORABLE_CATALOGS; the app has it, and `python -m app.i18n check` and this
    file's tests (all but this one) pass with it."""
    code = absent_language(CATALOGS, preferred=("zz",))
    text = (I18N / "en.po").read_text(encoding="utf-8")
    assert text.count('"Language: en\\n"') == 1
    text = text.replace('"Language: en\\n"', f'"Language: {code}\\n"')
    (tmp_path / f"{code}.po").write_text(text, encoding="utf-8")
    run = lambda *args: subprocess.run(  # noqa: E731
        [sys.executable, *args], cwd=ROOT, env=with_catalogs(tmp_path), capture_output=True, text=True, timeout=600
    )
    langs = run("-c", "from app.i18n import LANGS; print(' '.join(LANGS))")
    assert code in langs.stdout.split(), langs.stdout + langs.stderr
    check = run("-m", "app.i18n", "check")
    assert check.returncode == 0, check.stderr
    tests = run("-m", "pytest", "-q", "-p", "no:cacheprovider", "--deselect", request.node.nodeid, __file__)
    assert tests.returncode == 0 and " passed" in tests.stdout, tests.stdout[-5000:] + tests.stderr[-2000:]


def test_a_catalog_is_named_by_its_language(tmp_path):
    from app.i18n import Catalogs

    ours = sorted(p.stem for p in I18N.glob("*.po"))
    code = absent_language(CATALOGS)
    header = 'msgid ""\nmsgstr ""\n"Language: {}\\n"\n'
    (tmp_path / f"{code}.po").write_text(header.format(DEFAULT_LANG), encoding="utf-8")
    catalogs = Catalogs([I18N, tmp_path])
    assert list(catalogs) == [*ours, code] and code in catalogs
    with pytest.raises(po.POError, match="Language"):  # its header names another language
        catalogs[code]
    (tmp_path / f"{code}.po").write_text(header.format(code), encoding="utf-8")
    assert Catalogs([I18N, tmp_path])[code].language == code
    (tmp_path / "pt_BR.po").write_text(header.format("pt_BR"), encoding="utf-8")
    with pytest.raises(po.POError, match="xx.po"):
        Catalogs([I18N, tmp_path])
    with pytest.raises(po.POError, match="default language"):
        Catalogs([tmp_path / "nothing"])


# -- the shell ---------------------------------------------------------------------------------------


def test_shell_texts_come_from_the_catalogs():
    shell = shell_text()
    assert list(shell) == list(LANGS)
    assert shell["es"]["shell_retry"] == "Reintentar" and shell["en"]["shell_retry"] == "Retry"
    keys = [k for k in catalog_keys() if k.startswith(SHELL_PREFIX)]
    assert all(list(texts) == keys for texts in shell.values())
    page = (ROOT / "static" / "index.html").read_text(encoding="utf-8")
    loader = "\n".join(loader_sources().values())
    # no text of the page's own in the shell's sources: their markers and keys only
    visible = re.sub(r"<[^>]+>|\{\{\w+\}\}", " ", re.sub(r"<script.*?</script>", "", page, flags=re.S))
    assert visible.split() == [], visible.split()
    assert not re.search(r"[áéíóúñãõç]|Cargando|Loading", loader)
    assert "cfg.text[cfg.defaultLang]" in loader  # the one fallback: the default language


# -- numbers -------------------------------------------------------------------------------------------


def test_numbers():
    assert num(8_921_088, "es") == "8\u202f921\u202f088"
    assert num(8_921_088, "en") == "8,921,088"
    assert num(33.1267, "en", 1) == "33.1"
    assert num(65_378, "pt") == "65.378" and num(33.1267, "pt", 1) == "33,1"  # as the chapter writes
    assert num(33.1267, "es", 1) == "33.1"
    assert sci(4.4e-15) == "4.4e-15" and sci(0.0) == "0" and sci(4.4e-15, "pt") == "4,4e-15"


def test_fallback_language():
    assert tr("xx", "step") == tr("es", "step") == "Avanzar"
    assert tr("xx", "code_more", n=1) == "… y 1 línea más."
    with pytest.raises(KeyError):
        tr("es", "no_such_key")


def test_sizes_in_the_unit_that_fits():
    from app.i18n import size

    assert size(12_288, "es") == "12\u00a0KiB" and size(86_016, "en") == "84\u00a0KiB"
    assert size(768 * 2**20, "pt") == "768\u00a0MiB" and size(136_448 * 8, "pt") == "1,04\u00a0MiB"
    assert size(7e9 * 2, "es") == "13\u00a0GiB" and size(128_000 * 131_072, "pt") == "15,6\u00a0GiB"
    assert size(512, "en") == "512\u00a0bytes" and size(0, "es") == "0\u00a0bytes"


def test_numbers_as_typed():
    from app.i18n import parse_number, plain_number

    assert (
        plain_number(4.125, "pt") == "4,125" and plain_number(1.5, "es") == "1.5" and plain_number(24.0, "en") == "24"
    )
    assert plain_number(7e9, "es") == "7\u202f000\u202f000\u202f000" and plain_number(7e9, "pt") == "7.000.000.000"
    for lang in ("es", "en", "pt"):
        for x in (7e9, 1.5, 4.125, 24, 136_448, 0.25):
            assert parse_number(plain_number(x, lang), lang) == x, (lang, x)
    assert parse_number("65.378", "pt") == 65_378 and parse_number("65,378", "en") == 65_378
    assert parse_number("1,5", "es") == 1.5 == parse_number("1.5", "pt") == parse_number("1,5", "en")
    assert parse_number("1.500,5", "pt") == 1500.5 == parse_number("1,500.5", "en")
    assert parse_number("7 000 000 000", "es") == parse_number("7.000.000.000", "es") == 7e9
    for bad in ("", "abc", "1,50,0", "1.2.3", "12.", "nan", "inf", "--1"):
        assert parse_number(bad, "es") is None, bad
