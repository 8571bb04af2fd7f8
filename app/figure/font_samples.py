"""Every font the previews will ask for, asked for once the first paint is on the screen.

A browser fetches a font, at each size and weight, the first time a text needs it; Chromium asks
its browser process for it, synchronously, on the page's main thread. The first step of the
preview (app/figure/snapshot.py, static/loader/) shows texts the first paint does not: the first
sampled token (upright and bold, where the prompt's are italic), a ▲ and a ▶ that fall back to
another font, the live region's first words; that step's layout waits for those fonts, the longer
when the browser process is busy (docs/performance.md). `samples` writes one element per kind of
text the states show, in every language (the chain of elements it sits in, by tag and class), with
every character it shows there that the first state does not; never drawn (hidden, inert, of no
size). Laid out with the first paint they would delay it, and a group at a time they would make long
frames: so index.html carries them inert, in a <template>, and the loader lays them out after the
first paint one text at a time, each in a task of its own that takes its turn with the page's others:
first what a click on the first paint brings (the next step's, the other mode's: a click made at once
finds its fonts asked for), then the rest, each in the order the page shows them (the live region's
first), and a click waits for one of them at most.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from html.parser import HTMLParser

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
LIVE_REGION = (("p", "kv-sr"),)  # the page's live region (static/index.html #kv-say): what it says


class _Texts(HTMLParser):
    """The characters of a document's texts by the chain of elements they sit in; the words of its
    data-says (the live region's, static/loader/preview.js announce) under LIVE_REGION."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.chain: list[tuple[str, str | None]] = []  # (tag, class) from the top
        self.chars: dict[tuple, set[str]] = {}

    def add(self, chain: tuple, text: str) -> None:
        if text.strip():
            self.chars.setdefault(chain, set()).update(" " if c.isspace() else c for c in text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if "data-says" in a:
            for words in json.loads(a["data-says"]).values():
                for said in words.values() if isinstance(words, dict) else [words]:
                    self.add(LIVE_REGION, said)
        if tag not in VOID:
            self.chain.append((tag, a.get("class")))

    def handle_endtag(self, tag: str) -> None:
        while tag not in VOID and self.chain and self.chain.pop()[0] != tag:
            pass

    def handle_data(self, data: str) -> None:
        if self.chain and self.chain[-1][0] not in ("style", "script"):
            self.add(tuple(self.chain), data)


def texts(doc: str) -> dict[tuple, set[str]]:
    """{chain of (tag, class) from the document's top: the characters shown there}."""
    parser = _Texts()
    parser.feed(doc)
    parser.close()
    return parser.chars


def _element(tag: str, cls: str | None, inner: str) -> str:
    attrs = f" class='{html.escape(cls)}'" if cls else ""
    return f"<{tag}{attrs}>{inner}</{tag}>"


def _wanted(docs: Iterable[str], shown: dict[tuple, set[str]]) -> dict[tuple, set[str]]:
    """{chain: the characters `docs` show there that `shown` does not}, in the order they come (the
    live region's first: it speaks at the first click)."""
    wanted: dict[tuple, set[str]] = {LIVE_REGION: set()}
    for doc in docs:
        for chain, chars in texts(doc).items():
            new = chars - shown.get(chain, set())
            if new - {" "}:
                wanted.setdefault(chain, set()).update(new)
    return {chain: chars for chain, chars in wanted.items() if chars}


def _tree(wanted: dict[tuple, set[str]]) -> str:
    """The chains as nested elements, each with its characters, in their order."""
    tree: dict = {}  # {(tag, class): [characters, {children}]}
    for chain, chars in wanted.items():
        level = tree
        for i, node in enumerate(chain):
            level.setdefault(node, [set(), {}])
            if i == len(chain) - 1:
                level[node][0].update(chars)
            level = level[node][1]

    def write(level: dict) -> str:
        return "".join(
            _element(*node, html.escape("".join(sorted(chars)).strip()) + write(children))
            for node, (chars, children) in level.items()
        )

    return write(tree)


def samples(states: Iterable[str], first: str, soon: Iterable[str] = ()) -> str:
    """The hidden element (`.kv-fonts`, styled in snapshot.css) that lays out every kind of text of
    `states` with the characters it shows that `first` does not show there, in the order the page shows
    them (the live region's first: it speaks at the first click); '' when there is nothing new. What the
    `soon` states (one click from `first`) show comes before the rest: a click made at once finds its
    fonts asked for (the loader lays the samples out in document order, a text at a time)."""
    shown = texts(first)
    shown.pop(LIVE_REGION, None)  # the live region is empty at the first paint
    early = _wanted(soon, shown)
    for chain, chars in early.items():
        shown.setdefault(chain, set()).update(chars)  # asked for already: not again below
    inner = _tree(early) + _tree(_wanted(states, shown))
    return f"<div class='kv-fonts' aria-hidden='true' inert>{inner}</div>" if inner else ""
