"""The catalogs' commands (run from the repository's root):

    python -m app.i18n pot       # write app/i18n/messages.pot from es.po (after adding or removing keys)
    python -m app.i18n format    # write every catalog back in the canonical form (after an editor saved it)
    python -m app.i18n check     # exit 1 if messages.pot is out of date or a catalog is not canonical

A new language: copy es.po (or en.po) to xx.po, set its header's Language and Plural-Forms, translate
every msgstr; or `msginit -i app/i18n/messages.pot -l xx -o app/i18n/xx.po`. After keys change:
`msgmerge -U app/i18n/xx.po app/i18n/messages.pot`. Then `pytest tests/test_i18n.py`.
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
    header = {"Project-Id-Version": source.header.get("Project-Id-Version", ""), "Language": "",
              "MIME-Version": "1.0", "Content-Type": "text/plain; charset=UTF-8",
              "Content-Transfer-Encoding": "8bit", "Plural-Forms": po.TEMPLATE_PLURAL_FORMS}
    messages = {k: po.Message(m.msgid, [""] * (1 if m.msgid_plural is None else 2), m.msgid_plural, m.msgctxt,
                              [c for c in m.comments if c.startswith("#.")])
                for k, m in source.messages.items()}
    return po.Catalog(header, messages, list(POT_COMMENTS), "messages.pot")


def catalog_files() -> dict:
    return {HERE / f"{lang}.po": catalog for lang, catalog in CATALOGS.items()}


def stale() -> list[str]:
    """The files whose text is not what `pot` and `format` would write."""
    want = {POT: po.write(template()), **{path: po.write(c) for path, c in catalog_files().items()
                                          if path.parent == HERE}}
    return [path.name for path, text in want.items()
            if not path.is_file() or path.read_text(encoding="utf-8") != text]


def main(argv: list[str]) -> int:
    command = argv[0] if argv else ""
    if command == "pot":
        POT.write_text(po.write(template()), encoding="utf-8")
    elif command == "format":
        for path, catalog in catalog_files().items():
            if path.parent == HERE:
                path.write_text(po.write(catalog), encoding="utf-8")
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
