"""Pure-Python stand-in for `nh3.clean` (the Rust HTML sanitizer Panel uses).

build.py ships this module in the app archive only when the compiled Pyodide
wheel of nh3 is not in the build cache (it cannot be fetched with pip or npm).
Panel calls nh3.clean() on the string parameters of ReactiveHTML components
(e.g. pn.FlexBox); this keeps ammonia's default allow-list: unknown tags are
dropped (their text kept, except script/style), unknown attributes and
non-http(s)/mailto URLs are removed, comments are stripped, text is escaped.
"""
from __future__ import annotations

from html import escape
from html.parser import HTMLParser

__version__ = "0.0.0+kv-fallback"

TAGS = {
    "a", "abbr", "acronym", "area", "article", "aside", "b", "bdi", "bdo", "blockquote", "br",
    "caption", "center", "cite", "code", "col", "colgroup", "data", "dd", "del", "details", "dfn",
    "div", "dl", "dt", "em", "figcaption", "figure", "footer", "h1", "h2", "h3", "h4", "h5", "h6",
    "header", "hgroup", "hr", "i", "img", "ins", "kbd", "li", "map", "mark", "nav", "ol", "p",
    "pre", "q", "rp", "rt", "rtc", "ruby", "s", "samp", "small", "span", "strike", "strong", "sub",
    "summary", "sup", "table", "tbody", "td", "th", "thead", "time", "tr", "tt", "u", "ul", "var", "wbr",
}
VOID = {"area", "br", "col", "hr", "img", "wbr"}
DROP_CONTENT = {"script", "style"}
GENERIC_ATTRS = {"lang", "title"}
TAG_ATTRS = {
    "a": {"href", "hreflang"}, "bdo": {"dir"}, "blockquote": {"cite"}, "col": {"align", "char", "charoff", "span"},
    "colgroup": {"align", "char", "charoff", "span"}, "del": {"cite", "datetime"}, "hr": {"align", "size", "width"},
    "img": {"align", "alt", "height", "src", "width"}, "ins": {"cite", "datetime"}, "ol": {"start"},
    "q": {"cite"}, "table": {"align", "char", "charoff", "summary"}, "tbody": {"align", "char", "charoff"},
    "td": {"align", "char", "charoff", "colspan", "headers", "rowspan"}, "thead": {"align", "char", "charoff"},
    "th": {"align", "char", "charoff", "colspan", "headers", "rowspan", "scope"}, "tr": {"align", "char", "charoff"},
}
URL_ATTRS = {"href", "src", "cite"}
URL_SCHEMES = ("http:", "https:", "mailto:")


class _Cleaner(HTMLParser):
    def __init__(self, tags, attributes):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes = tags, attributes
        self.out: list[str] = []
        self.skip = 0

    def _attrs(self, tag, attrs):
        allowed = GENERIC_ATTRS | self.attributes.get(tag, set()) | self.attributes.get("*", set())
        parts = []
        for name, value in attrs:
            if name not in allowed or value is None and name in URL_ATTRS:
                continue
            if name in URL_ATTRS:
                v = value.strip().lower()
                if ":" in v.split("/")[0] and not v.startswith(URL_SCHEMES):
                    continue
            if tag == "a" and name == "rel":
                continue
            parts.append(f' {name}="{escape(value or "", quote=True)}"')
        if tag == "a":
            parts.append(' rel="noopener noreferrer"')
        return "".join(parts)

    def handle_starttag(self, tag, attrs):
        if tag in DROP_CONTENT:
            self.skip += 1
        elif not self.skip and tag in self.tags:
            self.out.append(f"<{tag}{self._attrs(tag, attrs)}>")

    def handle_startendtag(self, tag, attrs):
        if not self.skip and tag in self.tags:
            self.out.append(f"<{tag}{self._attrs(tag, attrs)}>")

    def handle_endtag(self, tag):
        if tag in DROP_CONTENT:
            self.skip = max(0, self.skip - 1)
        elif not self.skip and tag in self.tags and tag not in VOID:
            self.out.append(f"</{tag}>")

    def handle_data(self, data):
        if not self.skip:
            self.out.append(escape(data, quote=False))


def clean(html: str, tags=None, attributes=None, **_ignored) -> str:
    cleaner = _Cleaner(set(tags) if tags is not None else TAGS,
                       {k: set(v) for k, v in (attributes or TAG_ATTRS).items()})
    cleaner.feed(html)
    cleaner.close()
    return "".join(cleaner.out)


def is_html(html: str) -> bool:
    return clean(html) != html
