"""The browser-side text of the page's own components, kept in real files next to them.

    template("disclosure")   -> app/components/disclosure.html
    scripts("disclosure")    -> {"render": "...", "toggle": "..."} from app/components/disclosure.js
    stylesheet("widgets")    -> app/components/widgets.css

A scripts file holds one Panel ReactiveHTML script per section, each opened by a line
`// @script NAME`; the text before the first marker is a comment for the reader.
"""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent
MARKER = "// @script "


def read(name: str) -> str:
    return (HERE / name).read_text(encoding="utf-8")


def template(name: str) -> str:
    return read(f"{name}.html")


def stylesheet(name: str) -> str:
    """A component's stylesheet. It reads the palette's roles (--kv-*), which its shadow root
    inherits from the document (app/style theme_css)."""
    return read(f"{name}.css")


def scripts(name: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    current = None
    for line in read(f"{name}.js").splitlines():
        if line.startswith(MARKER):
            current = line[len(MARKER) :].strip()
            out[current] = []
        elif current is not None:
            out[current].append(line)
    return {k: "\n".join(v).strip() + "\n" for k, v in out.items()}
