"""The first paint asks for every font the previews will need (app/figure/font_samples.py): each kind of
text the states show, with the characters the first state does not show there, hidden and inert."""

from __future__ import annotations

import json
from html.parser import HTMLParser

from app.figure.font_samples import samples, texts

FIRST = (
    "<div class='kv-snap' lang='es'><div class='text'><span class='tok prompt current'>Nela</span></div>"
    "<span class='bar-t'>t = 2 / 64</span></div>"
)
LATER = (
    "<div class='kv-snap' lang='es'><div class='text'><span class='tok prompt'>Nela</span>"
    "<span class='tok current'>se<br>▶</span></div><span class='bar-t'>t = 3 / 64</span>"
    "<div class='controls topbar' data-says=\"{}\"></div></div>"
)


class Tree(HTMLParser):
    """Each text of a sample with the chain of (tag, class) it sits in."""

    def __init__(self):
        super().__init__()
        self.chain, self.found, self.attrs, self.texts = [], {}, {}, []

    def handle_starttag(self, tag, attrs):
        self.attrs.setdefault(tag, []).append(dict(attrs))
        self.chain.append((tag, dict(attrs).get("class")))

    def handle_endtag(self, tag):
        assert self.chain.pop()[0] == tag

    def handle_data(self, data):
        self.found[tuple(self.chain[1:])] = data
        self.texts.append((self.chain[-1], data))  # in document order: the order the loader lays them out


def parse(html: str) -> Tree:
    tree = Tree()
    tree.feed(html)
    assert tree.chain == []  # every element closed
    return tree


def test_each_kind_of_text_once_with_the_characters_the_first_state_lacks_there():
    says = {"step": "Posición 3: « se»", "mode": {"cache": "Con caché", "full": "Sin caché"}}
    later = LATER.replace('"{}"', '"' + json.dumps(says, ensure_ascii=False).replace('"', "&quot;") + '"')
    tree = parse(samples([FIRST, later], FIRST))
    assert tree.found == {
        # a sampled token, upright and bold: every character new there; a ▶ in it
        (("div", "kv-snap"), ("div", "text"), ("span", "tok current")): "es▶",
        # the prompt's token, no longer the current one: a kind of text of its own, its letters new there
        (("div", "kv-snap"), ("div", "text"), ("span", "tok prompt")): "Nael",
        # the counter's new digit only (the others, the letters and the spaces are in the first paint)
        (("div", "kv-snap"), ("span", "bar-t")): "3",
        # what the live region will say (empty at the first paint), in its own element
        (("p", "kv-sr"),): "".join(sorted(set("Posición 3: « se»Con cachéSin caché") - {" "})),
    }
    root = tree.attrs["div"][0]
    assert root == {"class": "kv-fonts", "aria-hidden": "true", "inert": None}
    assert all("lang" not in a and "data-says" not in a for attrs in tree.attrs.values() for a in attrs)


def test_nothing_when_every_state_shows_what_the_first_does():
    assert samples([FIRST, FIRST], FIRST) == ""
    # a state with fewer characters adds none
    assert samples([FIRST.replace("Nela", "Ne")], FIRST) == ""


def test_texts_follow_the_elements_they_sit_in():
    found = texts("<div class='a'><p>x<br>y<img src=z>w</p><p class='b'>  </p><style>.a{}</style></div>")
    assert found == {(("div", "a"), ("p", None)): {"x", "y", "w"}}


def test_the_page_lays_the_samples_out_without_showing_them():
    """snapshot.css: the samples take no room and are never drawn; the page reads them as nothing."""
    from app.figure.snapshot import SNAP_CSS

    rule = SNAP_CSS.split(".kv-fonts {", 1)[1].split("}", 1)[0]
    for decl in ("position: absolute", "width: 0", "height: 0", "overflow: hidden", "visibility: hidden"):
        assert decl in rule, decl


def test_the_texts_come_in_the_order_the_page_shows_them():
    """static/loader/fonts.js lays out one text of the samples a task, in their order: the live region's first
    (it speaks at the first click), then as the states show them."""
    says = json.dumps({"step": "Posición 3"}).replace('"', "&quot;")
    tree = parse(samples([LATER.replace('"{}"', f'"{says}"')], FIRST))
    assert [chain[-1] for chain in tree.found] == [
        ("p", "kv-sr"),
        ("span", "tok prompt"),
        ("span", "tok current"),
        ("span", "bar-t"),
    ]


def test_what_the_first_click_shows_comes_first():
    """A click made at once (Avanzar: the next step, one of the `soon` states) finds its fonts asked for:
    its texts come first, even where the page shows them below others; the rest after them, without what
    was asked for already."""
    nxt = FIRST.replace("t = 2", "t = 3")
    other = LATER.replace("t = 3", "t = 39")
    tree = parse(samples([other, nxt], FIRST, soon=[nxt]))
    assert tree.texts == [
        (("span", "bar-t"), "3"),  # the next step's digit, first
        (("span", "tok prompt"), "Nael"),
        (("span", "tok current"), "es▶"),
        (("span", "bar-t"), "9"),  # the 3 not again
    ]
    # without `soon`, as the page shows them
    assert [t[0] for t in parse(samples([other, nxt], FIRST)).texts] == [
        ("span", "tok prompt"),
        ("span", "tok current"),
        ("span", "bar-t"),
    ]
