"""docs/terms.md, the course's words for each concept: every form it lists is in that language's
catalog, and no variant it forbids is."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.i18n import CATALOGS, LANGS

TERMS = Path(__file__).resolve().parents[1] / "docs" / "terms.md"


def table() -> list[dict]:
    """The table's rows: {"concept", "es", "en", "pt": [forms], "not": [(lang, form)]}."""
    lines = [line.strip() for line in TERMS.read_text(encoding="utf-8").splitlines() if line.strip().startswith("|")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    assert head == ["concept", *LANGS, "not"], head
    assert set(lines[1].replace("|", "").strip()) <= {"-", " "}  # the separator row
    rows = []
    for line in lines[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        assert len(cells) == len(head), line
        row = {"concept": cells[0]}
        for lang, cell in zip(LANGS, cells[1:]):
            row[lang] = [form.strip() for form in cell.split(";") if form.strip()]
        row["not"] = [
            tuple(part.strip() for part in item.split(":", 1)) for item in cells[-1].split(";") if item.strip()
        ]
        rows.append(row)
    return rows


def catalog_text(lang: str) -> str:
    return "\n".join(s for m in CATALOGS[lang].messages.values() for s in m.msgstr)


def found(form: str, text: str) -> bool:
    """`form` as whole words (any case) in `text`."""
    return re.search(r"(?<!\w)" + re.escape(form) + r"(?!\w)", text, re.IGNORECASE) is not None


ROWS = table()


def test_the_table_is_read():
    assert len(ROWS) >= 20
    concepts = {r["concept"].split(" (")[0] for r in ROWS}
    assert {"KV cache", "query head", "K/V head", "padding", "slot", "draft", "acceptance", "held-out loss"} <= concepts
    for row in ROWS:
        assert all(row[lang] for lang in LANGS), row["concept"]  # a word in every language
        assert all(lang in LANGS and form for lang, form in row["not"]), row["concept"]


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r["concept"])
def test_each_term_is_the_one_the_texts_use(row):
    for lang in LANGS:
        text = catalog_text(lang)
        missing = [form for form in row[lang] if not found(form, text)]
        assert not missing, (lang, row["concept"], missing)
    used = [(lang, form) for lang, form in row["not"] if found(form, catalog_text(lang))]
    assert not used, (row["concept"], used)


def test_the_checks_see_words_not_parts_of_words():
    assert found("casa", "uma casa.") and not found("casa", "casamento") and not found("casa", "a casas")
    assert found("K/V head", "each K/V head is") and found("Δ logits", "max |Δ logits|")
