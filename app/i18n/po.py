"""Reading and writing gettext catalogs (.po, .pot), standard library only.

    catalog = parse(text)            # a Catalog: its header, its messages in file order
    text == write(catalog)           # for a file this module wrote (its canonical form)
    catalog.plural(3)                # which msgstr[i] a count of 3 takes (the header's Plural-Forms)

What it reads: comments (`# `, `#.`, `#:`, `#,`, `#|`), kept as they are, in order, with the message
they precede; `msgctxt`; strings split over several lines; the escapes \\n \\t \\r \\" \\\\ (and \\a \\b
\\f \\v, octal and \\x); `msgid_plural` with `msgstr[n]`; the header (the msgstr of msgid "") as
"Name: value" fields. Obsolete entries (`#~`) are skipped. A message flagged `fuzzy`, or with an
empty msgstr, is untranslated (`Message.translated`), as gettext treats it.

What it writes (the canonical form): the header's comments and fields, then each message with its
comments; every string on one line, unless it holds a newline: then `""` and one line per `\\n`.
Editors (Poedit, Lokalize, Weblate) wrap lines their own way; `parse` reads any wrapping, and
`python -m app.i18n format` writes a catalog back in this form.

The plural rule is the header's C expression (`Plural-Forms: nplurals=2; plural=(n != 1);`), turned
into a Python function by the standard library's `gettext.c2py`, which accepts only C's arithmetic,
comparison, logical and ?: operators on `n` (checked on CPython 3.11 and 3.13, the browser's).
"""

from __future__ import annotations

import gettext
import re
from dataclasses import dataclass, field

ESCAPES = {"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\", "a": "\a", "b": "\b", "f": "\f", "v": "\v"}
WRITE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
KEYWORD = re.compile(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+(".*)$')
TEMPLATE_PLURAL_FORMS = "nplurals=INTEGER; plural=EXPRESSION;"
PLURAL_FORMS = re.compile(r"^\s*nplurals\s*=\s*(\d+)\s*;\s*plural\s*=\s*(.+?)\s*;?\s*$")


class POError(ValueError):
    """A catalog that is not valid gettext, with the line where it goes wrong."""

    def __init__(self, message: str, line: int | None = None, source: str = ""):
        where = f"{source or 'catalog'}{f', line {line}' if line else ''}"
        super().__init__(f"{where}: {message}")


@dataclass
class Message:
    msgid: str
    msgstr: list[str]  # one string; or one per plural form
    msgid_plural: str | None = None
    msgctxt: str | None = None
    comments: list[str] = field(default_factory=list)  # the lines before it, '#' included

    @property
    def flags(self) -> set[str]:
        return {f.strip() for c in self.comments if c.startswith("#,") for f in c[2:].split(",") if f.strip()}

    @property
    def notes(self) -> list[str]:
        """Its notes for translators (`#.` lines), without the mark."""
        return [c[2:].strip() for c in self.comments if c.startswith("#.")]

    @property
    def translated(self) -> bool:
        return "fuzzy" not in self.flags and all(self.msgstr)


@dataclass
class Catalog:
    header: dict[str, str]  # "Language" -> "es", in the file's order
    messages: dict[str, Message]  # by msgid, in the file's order
    header_comments: list[str] = field(default_factory=list)
    source: str = ""

    @property
    def language(self) -> str:
        return self.header.get("Language", "")

    @property
    def nplurals(self) -> int:
        return plural_forms(self.header.get("Plural-Forms", ""), self.source)[0]

    def plural(self, n: int) -> int:
        """The index of the plural form a count of n takes in this language."""
        return _plural_function(self.header.get("Plural-Forms", ""), self.source)(n)


def plural_forms(value: str, source: str = "") -> tuple[int, str]:
    """'nplurals=2; plural=(n != 1);' -> (2, '(n != 1)'). A template's placeholder (TEMPLATE_PLURAL_FORMS),
    or none, reads as English's rule: two forms, as xgettext writes a template's plural entries."""
    if not value.strip() or value.strip() == TEMPLATE_PLURAL_FORMS:
        return 2, "(n != 1)"
    m = PLURAL_FORMS.match(value)
    if not m or int(m.group(1)) < 1:
        raise POError(f"Plural-Forms is not 'nplurals=N; plural=EXPR;': {value!r}", source=source)
    return int(m.group(1)), m.group(2)


_RULES: dict[str, object] = {}


def _plural_function(value: str, source: str = ""):
    if value not in _RULES:
        nplurals, expr = plural_forms(value, source)
        try:
            rule = gettext.c2py(expr)
        except (ValueError, SyntaxError, RecursionError) as e:
            raise POError(
                f"Plural-Forms expression {expr!r} is not a valid C expression of n ({e})", source=source
            ) from e

        def plural(n: int, rule=rule, nplurals=nplurals) -> int:
            form = int(rule(int(n)))
            if not 0 <= form < nplurals:
                raise POError(
                    f"Plural-Forms gives form {form} for n = {n}, not one of 0..{nplurals - 1}", source=source
                )
            return form

        _RULES[value] = plural
    return _RULES[value]


def unquote(s: str, line: int, source: str) -> str:
    """The text of one C string literal ('"a\\"b"' -> 'a"b')."""
    s = s.strip()
    if len(s) < 2 or s[0] != '"' or s[-1] != '"':
        raise POError(f"expected a string in double quotes, found {s!r}", line, source)
    body = s[1:-1]
    if "\\" not in body:  # most strings: nothing to unescape
        if '"' in body:
            raise POError(f"unescaped double quote in {s!r}", line, source)
        return body
    out, i = [], 0
    while i < len(body):
        ch = body[i]
        if ch == '"':
            raise POError(f"unescaped double quote in {s!r}", line, source)
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in ESCAPES:
            out.append(ESCAPES[nxt])
            i += 2
        elif nxt in "01234567" and nxt:
            digits = re.match(r"[0-7]{1,3}", body[i + 1 :]).group()
            out.append(chr(int(digits, 8)))
            i += 1 + len(digits)
        elif nxt == "x" and re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :]):
            digits = re.match(r"[0-9a-fA-F]{1,2}", body[i + 2 :]).group()
            out.append(chr(int(digits, 16)))
            i += 2 + len(digits)
        else:
            raise POError(f"unknown escape \\{nxt} in {s!r}", line, source)
    return "".join(out)


def parse(text: str, source: str = "") -> Catalog:
    """A catalog from the text of a .po or .pot file (`source`: its name, for errors)."""
    header, header_comments, messages = {}, [], {}
    for i, (cmts, flds, line) in enumerate(EntryReader(source).read(text)):
        msgstr = entry_msgstr(flds, line, source)
        if flds["msgid"] == "" and flds.get("msgctxt") is None:
            if i != 0 or messages:
                raise POError('the header (msgid "") must come first', line, source)
            header = parse_header(msgstr[0], line, source)
            header_comments = cmts
            continue
        if flds["msgid"] in messages:
            raise POError(f"{flds['msgid']!r} is defined twice", line, source)
        messages[flds["msgid"]] = Message(flds["msgid"], msgstr, flds.get("msgid_plural"), flds.get("msgctxt"), cmts)
    catalog = Catalog(header, messages, header_comments, source)
    check_plural_counts(catalog)
    return catalog


class EntryReader:
    """A catalog's text as entries, in order: (comment lines, fields by keyword, first line). An entry
    ends at a blank line, a comment after its fields, or a new msgctxt/msgid after its msgstr; comments
    after the last message make an entry whose fields are None."""

    def __init__(self, source: str = ""):
        self.source = source
        self.entries: list[tuple[list[str], dict | None, int]] = []
        self.comments: list[str] = []
        self.fields: dict[str, str] = {}
        self.last: str | None = None  # the field a continuation line extends
        self.start = 0

    def read(self, text: str) -> list[tuple[list[str], dict | None, int]]:
        for no, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line:
                if self.fields:
                    self.close()
            elif line.startswith("#~"):
                continue  # obsolete entry
            elif line.startswith("#"):
                self.comment(no, raw)
            elif line.startswith('"'):
                self.continuation(no, line)
            else:
                self.keyword(no, line)
        self.close()
        return self.entries

    def close(self):
        if self.fields:
            self.entries.append((self.comments, self.fields, self.start))
        elif self.comments:
            self.entries.append((self.comments, None, self.start))
        self.fields, self.comments, self.last = {}, [], None

    def comment(self, no: int, raw: str):
        if self.fields:
            self.close()
        if not self.comments:
            self.start = no
        self.comments.append(raw.rstrip())

    def continuation(self, no: int, line: str):
        if self.last is None:
            raise POError("a string continues nothing", no, self.source)
        self.fields[self.last] += unquote(line, no, self.source)

    def keyword(self, no: int, line: str):
        m = KEYWORD.match(line)
        if not m:
            raise POError(f"cannot read {line[:60]!r}", no, self.source)
        keyword, index, rest = m.groups()
        if keyword in ("msgctxt", "msgid") and any(k.startswith("msgstr") for k in self.fields):
            self.close()  # a new entry with no blank line before it
        if not self.fields and not self.comments:
            self.start = no
        name = f"msgstr[{index}]" if index is not None else keyword
        if name in self.fields:
            raise POError(f"{name} given twice", no, self.source)
        self.fields[name] = unquote(rest, no, self.source)
        self.last = name


def entry_msgstr(flds: dict | None, line: int, source: str) -> list[str]:
    """An entry's msgstr: one string, or one per plural form (msgstr[0], msgstr[1]... with none
    missing) when it has a msgid_plural."""
    if flds is None:
        raise POError("comments that belong to no message", line, source)
    if "msgid" not in flds:
        raise POError("an entry without msgid", line, source)
    forms = sorted(k for k in flds if k.startswith("msgstr["))
    if "msgid_plural" not in flds:
        if forms or "msgstr" not in flds:
            raise POError(f"{flds['msgid']!r}: a message without msgid_plural takes one msgstr", line, source)
        return [flds["msgstr"]]
    if "msgstr" in flds or not forms:
        raise POError(f"{flds['msgid']!r}: a message with msgid_plural takes msgstr[0], msgstr[1]...", line, source)
    numbers = sorted(int(k[7:-1]) for k in forms)
    if numbers != list(range(len(numbers))):
        raise POError(f"{flds['msgid']!r}: plural forms {numbers} are not 0..{len(numbers) - 1}", line, source)
    return [flds[f"msgstr[{k}]"] for k in range(len(numbers))]


def check_plural_counts(catalog: Catalog) -> None:
    """Plural-Forms is valid, and every plural message has as many forms as it says."""
    nplurals = catalog.nplurals
    for m in catalog.messages.values():
        if m.msgid_plural is not None and len(m.msgstr) != nplurals:
            raise POError(
                f"{m.msgid!r} has {len(m.msgstr)} plural forms; Plural-Forms says {nplurals}", source=catalog.source
            )


def parse_header(text: str, line: int = 0, source: str = "") -> dict[str, str]:
    out = {}
    for row in text.split("\n"):
        if not row.strip():
            continue
        name, sep, value = row.partition(":")
        if not sep:
            raise POError(f"header line {row!r} is not 'Name: value'", line, source)
        out[name.strip()] = value.strip()
    return out


def quote(s: str) -> str:
    return '"' + "".join(WRITE_ESCAPES.get(ch, ch) for ch in s) + '"'


def string_lines(keyword: str, s: str) -> list[str]:
    """`keyword "text"`, or with newlines inside: `keyword ""` and one line per "\\n"."""
    if "\n" not in s[:-1]:
        return [f"{keyword} {quote(s)}"]
    return [f'{keyword} ""'] + [quote(c) for c in re.findall(r"[^\n]*\n|[^\n]+", s)]


def write(catalog: Catalog) -> str:
    """The catalog's text in the canonical form (see the module's docstring)."""
    out = list(catalog.header_comments)
    out += string_lines("msgid", "") + string_lines("msgstr", "".join(f"{k}: {v}\n" for k, v in catalog.header.items()))
    for m in catalog.messages.values():
        out.append("")
        out += m.comments
        if m.msgctxt is not None:
            out += string_lines("msgctxt", m.msgctxt)
        out += string_lines("msgid", m.msgid)
        if m.msgid_plural is None:
            out += string_lines("msgstr", m.msgstr[0])
        else:
            out += string_lines("msgid_plural", m.msgid_plural)
            for i, s in enumerate(m.msgstr):
                out += string_lines(f"msgstr[{i}]", s)
    return "\n".join(out) + "\n"
