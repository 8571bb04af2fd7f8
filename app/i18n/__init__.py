"""Every string the explorable shows: one gettext catalog per language, app/i18n/LANG.po. Spanish first.

    tr(lang, "step")                      -> "Avanzar"
    tr(lang, "position", t=3, n=64)       -> "t = 3 / 64"      ({name}: a value filled in, str.format)
    tr(lang, "code_more", n=1)            -> "… y 1 línea más." (a plural entry: n picks the form)

A language is a catalog file: LANGS are the files present (es first, the rest by name), and adding a
language is dropping `xx.po` here (docs/design.md). DEFAULT_LANG, Spanish, is the one fallback
everywhere: a language not in LANGS reads Spanish, and so does a key missing (or untranslated,
or fuzzy) in a language's catalog; tests/test_i18n.py checks that none is missing. The page's shell
(static/index.html, the loader: static/loader/) takes its texts from the same catalogs at build time: the keys
that start with `shell_` (`shell_text()`, buildsupport/site.py).

Catalogs: msgid is the key the code names (always a literal in the code, so a grep finds every use),
msgstr the text. messages.pot is their template (the keys, empty texts), written by
`python -m app.i18n pot` from es.po; a test checks it is up to date.

Plurals: an entry with msgid_plural (its msgid again) has one msgstr[i] per plural form of the
language, and its count is always the placeholder {n}: `tr(lang, key, n=count, ...)` picks the form
by the header's Plural-Forms rule and writes n the language's way (`num`). n must be a whole number
(an int, or a float with no fraction). Every integer count of a noun the page shows is such an entry
(lines, heads, tokens, positions, rows, measurements, conversations...); only one count per entry,
so where a text has two, {n} is the one that can be small and a note (#.) says the other is always
many. Not counts: multipliers ("{x} veces", "{x}×"), averages and sizes, and the multiplication
counts and cache sizes, which are always in the thousands.

Why our own parser (app/i18n/po.py) and not the standard library's gettext with .mo files: .mo
files are compiled, so either they would live in git beside their sources or every way of running
the app (`python build.py dev`, the tests, the static build, the wheel) would need a compile step
first; the .po files are small, and parsing them at start-up takes a few milliseconds. gettext's own
`c2py` still evaluates the Plural-Forms rule.

`KV_EXPLORABLE_CATALOGS` (folders, separated by os.pathsep) adds catalogs, or replaces ours, for a
run: to try a translation under `python build.py dev`, and for tests. The static site ships only the
catalogs in app/i18n/.
"""

from __future__ import annotations

import numbers
import os
import re
from collections.abc import Mapping
from pathlib import Path

from . import po

DEFAULT_LANG = "es"
NARROW_NBSP = "\u202f"
HERE = Path(__file__).resolve().parent
CATALOGS_ENV = "KV_EXPLORABLE_CATALOGS"
SHELL_PREFIX = "shell_"  # the page's shell's keys (static/index.html, static/loader/)
COUNT = "n"  # a plural entry's count
LANG_FILE = re.compile(r"^[a-z]{2,3}\.po$")  # the language's code, as ?lang= takes it: es.po


def catalog_dirs() -> list[Path]:
    """Where the catalogs are: this folder, then those in $KV_EXPLORABLE_CATALOGS (a later one wins)."""
    extra = [Path(d) for d in os.environ.get(CATALOGS_ENV, "").split(os.pathsep) if d]
    return [HERE, *extra]


class Catalogs(Mapping):
    """Language -> its Catalog: every LANG.po of the folders (a later folder's replaces an earlier's),
    each read when first asked for (the page reads two: the reader's language and the default)."""

    def __init__(self, dirs):
        self.paths: dict[str, Path] = {}
        for folder in dirs:
            for path in sorted(Path(folder).glob("*.po")):
                if not LANG_FILE.match(path.name):
                    raise po.POError(
                        "a catalog's name is its language's code, two or three letters: xx.po", source=str(path)
                    )
                self.paths[path.stem] = path
        if DEFAULT_LANG not in self.paths:
            raise po.POError(f"no catalog for the default language, {DEFAULT_LANG}.po", source=str(HERE))
        self._read: dict[str, po.Catalog] = {}

    def __getitem__(self, lang: str) -> po.Catalog:
        if lang not in self._read:
            path = self.paths[lang]
            catalog = po.parse(path.read_text(encoding="utf-8"), source=str(path))
            if catalog.language != lang:
                raise po.POError(
                    f"its header says Language: {catalog.language!r}, its name says {lang!r}", source=str(path)
                )
            self._read[lang] = catalog
        return self._read[lang]

    def __contains__(self, lang) -> bool:
        return lang in self.paths

    def __iter__(self):
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


CATALOGS = Catalogs(catalog_dirs())
LANGS = tuple(sorted(CATALOGS, key=lambda lang: (lang != DEFAULT_LANG, lang)))


def lookup(lang: str, msg_id: str) -> tuple[po.Message, po.Catalog]:
    """The message and the catalog it comes from: the language's, else the default language's."""
    for catalog in (CATALOGS[lang] if lang in CATALOGS else None, CATALOGS[DEFAULT_LANG]):
        m = catalog.messages.get(msg_id) if catalog is not None else None
        if m is not None and m.translated:
            return m, catalog
    raise KeyError(msg_id)


def tr(lang: str, msg_id: str, **values) -> str:
    """The text of `msg_id` in `lang` with its {fields} filled in; a plural entry needs n=count."""
    m, catalog = lookup(lang, msg_id)
    if m.msgid_plural is None:
        text = m.msgstr[0]
    else:
        count = values.get(COUNT)
        if isinstance(count, bool) or not (
            isinstance(count, numbers.Integral) or isinstance(count, float) and count.is_integer()
        ):
            raise TypeError(
                f"{msg_id!r} is a plural entry: tr() needs its count as a whole number, {COUNT}=..., not {count!r}"
            )
        count = int(count)
        text = m.msgstr[catalog.plural(count)]
        values = {**values, COUNT: num(count, lang if lang in CATALOGS else DEFAULT_LANG)}
    return text.format(**values) if values else text


def translator(lang: str):
    """`tr` with its language given: `tr = translator("es")`, then `tr("step")`."""
    return lambda msg_id, **values: tr(lang, msg_id, **values)


def catalog_keys(lang: str = DEFAULT_LANG) -> list[str]:
    """The keys of a language's catalog, in its order."""
    return list(CATALOGS[lang].messages)


def language_names() -> dict[str, str]:
    """Each language's own name (the language switch), in LANGS' order. The switch is keyed by name, so
    a name two catalogs share (a copy not yet translated) carries its code after it: "English (zz)"."""
    names = {lang: tr(lang, "language_name") for lang in LANGS}
    shared = {n for n in names.values() if list(names.values()).count(n) > 1}
    return {lang: f"{n} ({lang})" if n in shared else n for lang, n in names.items()}


def shell_text() -> dict[str, dict[str, str]]:
    """The page shell's texts (keys `shell_*`) in every language, missing ones in the default one:
    the build puts them in the page's configuration for the page's loader (static/loader/config.js shellTexts)."""
    keys = [k for k in catalog_keys() if k.startswith(SHELL_PREFIX)]
    return {lang: {k: tr(lang, k) for k in keys} for lang in LANGS}


def num(x, lang: str, digits: int = 0) -> str:
    """12345.6 -> '12 346' (es: narrow spaces, decimal point, as the course writes),
    '12,346' (en), '12.346' (pt: as the chapter writes, with a decimal comma). es writes no zeros
    after the point's last significant digit (8.5, 32, 0.001, not 8.500, 32.000): with a decimal
    point, three digits after it read as thousands to a reader in Spain."""
    s = f"{x:,.{digits}f}"
    if lang == "es":
        s = s.rstrip("0").rstrip(".") if digits > 0 else s
        return s.replace(",", NARROW_NBSP)
    if lang == "pt":
        return s.replace(",", "\0").replace(".", ",").replace("\0", ".")
    return s


def number_style(lang: str) -> dict:
    """How num() writes a decimal in `lang`, for a number the browser writes (a slider's value): the
    decimal point, and whether the zeros after the last significant digit go."""
    return {"point": num(0.5, lang, 1)[1], "trim": num(0.5, lang, 2) == num(0.5, lang, 1)}


def sci(x: float, lang: str = "en") -> str:
    """4.44e-15 -> '4.4e-15' ('4,4e-15' in pt), 0 -> '0'; es without a zero after the point (4e-15)."""
    s = "0" if x == 0 else f"{x:.1e}".replace("e-0", "e-").replace("e+0", "e+")
    if lang == "es":
        return s.replace(".0e", "e")
    return s.replace(".", ",") if lang == "pt" else s


UNITS = ("bytes", "KiB", "MiB", "GiB", "TiB")


def size(n_bytes: float, lang: str) -> str:
    """A size in the unit that fits: 12 KiB, 768 MiB, 1.04 MiB, 15.6 GiB (three significant digits
    unless the number is whole in its unit; es drops zeros after them: 13 GiB), a no-break space before
    the unit."""
    value, unit = float(n_bytes), 0
    while abs(value) >= 1024 and unit < len(UNITS) - 1:
        value, unit = value / 1024, unit + 1
    digits = 0 if value == int(value) or abs(value) >= 100 else (1 if abs(value) >= 10 else 2)
    return f"{num(value, lang, digits)}\u00a0{UNITS[unit]}"  # never split from its number


def plain_number(x: float, lang: str, max_digits: int = 3) -> str:
    """A number as a reader would type it: the language's separators, no trailing zeros."""
    digits = next((d for d in range(max_digits + 1) if round(x, d) == round(x, max_digits)), max_digits)
    return num(x, lang, digits)


def parse_number(text: str, lang: str) -> float | None:
    """What a reader typed, in their language's way or another's: '7 000 000 000', '7,000,000,000',
    '7.000.000.000', '1.5', '1,5', '1.500,5'. A mark used twice, or before the other mark, groups
    thousands (three digits at a time); a mark used once is the decimal one, unless it is the
    language's thousands mark followed by exactly three digits ('65.378' in Portuguese). None if
    it is not a number."""
    s = "".join(ch for ch in (text or "") if not ch.isspace())
    if not s:
        return None
    group = {"en": ",", "pt": "."}.get(lang)
    marks = [m for m in ",." if m in s]
    if len(marks) == 2:  # '1.500,5' or '1,500.5': the last is the decimal
        decimal = max(marks, key=s.rindex)
        s = _ungroup(s, "," if decimal == "." else ".")
        s = s.replace(decimal, ".") if s is not None else None
    elif marks and (s.count(marks[0]) > 1 or (marks[0] == group and _grouped(s, group))):
        s = _ungroup(s, marks[0])
    elif marks:
        s = s.replace(",", ".")
    try:
        value = float(s) if s is not None and s[-1:].isdigit() else None
    except ValueError:
        return None
    return value if value is not None and value == value and abs(value) != float("inf") else None


def _grouped(s: str, mark: str) -> bool:
    whole = s.split("." if mark == "," else ",")[0].lstrip("+-")
    parts = whole.split(mark)
    return 1 <= len(parts[0]) <= 3 and parts[0].isdigit() and all(len(p) == 3 and p.isdigit() for p in parts[1:])


def _ungroup(s: str, mark: str) -> str | None:
    """s without its thousands mark, or None if the groups are not of three digits."""
    return s.replace(mark, "") if _grouped(s, mark) else None
