"""The catalogs' commands (run from the repository's root):

    python -m app.i18n pot       # write app/i18n/messages.pot from es.po (after adding or removing keys)
    python -m app.i18n format    # write every catalog (here and in $KV_EXPLORABLE_CATALOGS) back in the
                                 #   canonical form, after an editor saved it
    python -m app.i18n check     # exit 1 if messages.pot is out of date or a catalog is not canonical
    python -m app.i18n set FILE  # add or change keys in every catalog from a JSON file, then `pot`:
                                 #   {"key": {"es": "...", "en": "...", "pt": "...",
                                 #            "after": "other_key", "note": "for translators"},
                                 #    "plural_key": {"es": ["{n} línea", "{n} líneas"], ...},
                                 #    "old_key": null}                      (null removes a key)

A new language, LANG: copy es.po (or en.po) to LANG.po, set its header's Language and Plural-Forms,
translate every msgstr; or `msginit -i app/i18n/messages.pot -l LANG --no-translator -o
app/i18n/LANG.po`, translate, then `format`. After keys change: `msgmerge -U app/i18n/LANG.po
app/i18n/messages.pot`. Then `pytest tests/test_i18n.py`.
"""

from __future__ import annotations

import sys

from . import CATALOGS, DEFAULT_LANG, HERE, po

POT = HERE / "messages.pot"
POT_COMMENTS = [
    "# Template of the KV cache explorable's catalogs (app/i18n/LANG.po): every key, with an empty text.",
    "# Written from es.po by `python -m app.i18n pot`; do not edit. A new language: see app/i18n/__main__.py.",
]


def template() -> po.Catalog:
    """messages.pot: the default language's keys and notes (#.), every msgstr empty."""
    source = CATALOGS[DEFAULT_LANG]
    header = {
        "Project-Id-Version": source.header.get("Project-Id-Version", ""),
        "Language": "",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
        "Plural-Forms": po.TEMPLATE_PLURAL_FORMS,
    }
    messages = {
        k: po.Message(
            m.msgid,
            [""] * (1 if m.msgid_plural is None else 2),
            m.msgid_plural,
            m.msgctxt,
            [c for c in m.comments if c.startswith("#.")],
        )
        for k, m in source.messages.items()
    }
    return po.Catalog(header, messages, list(POT_COMMENTS), "messages.pot")


def catalog_files() -> dict:
    """Every catalog by its file: this folder's and those of $KV_EXPLORABLE_CATALOGS."""
    return {CATALOGS.paths[lang]: catalog for lang, catalog in CATALOGS.items()}


def stale() -> list[str]:
    """The files whose text is not what `pot` and `format` would write (every catalog present)."""
    want = {POT: po.write(template()), **{path: po.write(c) for path, c in catalog_files().items()}}
    return [
        path.name if path.parent == HERE else str(path)
        for path, text in want.items()
        if not path.is_file() or path.read_text(encoding="utf-8") != text
    ]


def set_texts(changes: dict) -> None:
    """Add, change or remove keys in every catalog of this folder (see the module's docstring), then
    write the template. A text given as a list is a plural entry (one string per form)."""
    for path, catalog in catalog_files().items():
        if path.parent != HERE:
            continue
        lang = catalog.language
        for key, spec in changes.items():
            if spec is None:
                catalog.messages.pop(key, None)
                continue
            text = spec.get(lang, spec.get(DEFAULT_LANG))
            if text is None:
                raise ValueError(f"{key}: no text for {lang} or {DEFAULT_LANG}")
            forms = list(text) if isinstance(text, list) else [text]
            old = catalog.messages.get(key)
            notes = [f"#. {spec['note']}"] if spec.get("note") else (old.comments if old else [])
            message = po.Message(key, forms, key if isinstance(text, list) else None, None, notes)
            items = list(catalog.messages.items())
            if old is not None:
                items = [(k, message if k == key else m) for k, m in items]
            else:
                after = spec.get("after")
                at = next((i + 1 for i, (k, _m) in enumerate(items) if k == after), len(items))
                items.insert(at, (key, message))
            catalog.messages = dict(items)
        path.write_text(po.write(catalog), encoding="utf-8")
    POT.write_text(po.write(template()), encoding="utf-8")  # CATALOGS holds the catalogs changed above


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "pot":
        POT.write_text(po.write(template()), encoding="utf-8")
    elif command == "format":
        for path, catalog in catalog_files().items():
            path.write_text(po.write(catalog), encoding="utf-8")
    elif command == "set" and len(argv) == 2:
        import json
        from pathlib import Path

        set_texts(json.loads(Path(argv[1]).read_text(encoding="utf-8")))
    elif command == "check":
        bad = stale()
        if bad:
            print(f"out of date: {', '.join(bad)} (run `python -m app.i18n pot` or `format`)", file=sys.stderr)
            return 1
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
