"""docs/terms.md, the course's words for each concept: every form it lists is in that language's
catalog, and no variant it forbids is. The table's columns name its languages: each is a catalog, the
default one first; a catalog without a column (a language just added) is not checked here until the
course's words for it are in the table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.i18n import CATALOGS, DEFAULT_LANG, LANGS

TERMS = Path(__file__).resolve().parents[1] / "docs" / "terms.md"


def table() -> tuple[list[str], list[dict]]:
    """The table's languages, and its rows: {"concept", "es", "en", "pt": [forms], "not": [(lang, form)]}."""
    lines = [line.strip() for line in TERMS.read_text(encoding="utf-8").splitlines() if line.strip().startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    langs = head[1:-1]
    assert head[0] == "concept" and head[-1] == "not" and langs[:1] == [DEFAULT_LANG], head
    assert set(langs) <= set(LANGS), head  # a column per catalog, for those the table has words for
    assert set(lines[1].replace("|", "").strip()) <= {"-", " "}  # the separator row
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == len(head), line
        row = {"concept": cells[0]}
        for lang, cell in zip(langs, cells[1:]):
            row[lang] = [form.strip() for form in cell.split(";") if form.strip()]
        row["not"] = [
            tuple(part.strip() for part in item.split(":", 1)) for item in cells[-1].split(";") if item.strip()
        ]
        rows.append(row)
    return langs, rows


def catalog_text(lang: str) -> str:
    return "\n".join(s for m in CATALOGS[lang].messages.values() for s in m.msgstr)


def found(form: str, text: str) -> bool:
    """`form` as whole words (any case) in `text`."""
    return re.search(r"(?<!\w)" + re.escape(form) + r"(?!\w)", text, re.IGNORECASE) is not None


TERM_LANGS, ROWS = table()


def test_the_table_is_read():
    assert len(ROWS) >= 20
    concepts = {r["concept"].split(" (")[0] for r in ROWS}
    assert {"KV cache", "query head", "K/V head", "padding", "slot", "draft", "acceptance", "held-out loss"} <= concepts
    for row in ROWS:
        assert all(row[lang] for lang in TERM_LANGS), row["concept"]  # a word in every language of the table
        assert all(lang in TERM_LANGS and form for lang, form in row["not"]), row["concept"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["concept"])
def test_each_term_is_the_one_the_texts_use(row):
    for lang in TERM_LANGS:
        text = catalog_text(lang)
        missing = [form for form in row[lang] if not found(form, text)]
        assert not missing, (lang, row["concept"], missing)
    used = [(lang, form) for lang, form in row["not"] if found(form, catalog_text(lang))]
    assert not used, (row["concept"], used)


def test_the_checks_see_words_not_parts_of_words():
    assert found("casa", "uma casa.") and not found("casa", "casamento") and not found("casa", "a casas")
    assert found("K/V head", "each K/V head is") and found("Δ logits", "max |Δ logits|")
