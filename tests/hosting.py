"""A course page of another origin embedding the static site with the documented snippet
(docs/embedding.md), the documented sandbox and Content-Security-Policy; shared by
tests/test_embedding_browser.py and tests/shoot_docs.py.

    with course_page(dist, "?lang=es&embed=1") as url:   # http://localhost:PORT/course.html
        ...
"""

from __future__ import annotations

import contextlib
import re
import shutil
import tempfile
from pathlib import Path

import build
from tests.browser import ROOT, serve

SRC_BASE = "https://EXAMPLE.ORG/kv-cache/"  # the snippet's address in the docs


def snippet(text: str) -> str:
    """The documented embedding snippet in a file: from its <iframe> to the end of its <script>."""
    found = re.search(r'<iframe class="kv-explorable".*?</script>', text, flags=re.S)
    assert found, "no embedding snippet"
    return found.group(0)


def progress_recipe(text: str) -> str:
    """The documented MkDocs Material recipe that keeps the progress events (docs/embedding.md)."""
    found = re.search(r"<script>\n  // kv-explorable progress:.*?</script>", text, flags=re.S)
    assert found, "no progress recipe"
    return found.group(0)


@contextlib.contextmanager
def course_page(site: Path, query: str, script: bool = True, mkdocs: bool = False):
    """A host page on http://localhost:PORT embedding the explorable served from 127.0.0.1 with the
    documented CSP (and frame-ancestors for the host), and the progress recipe; yields the host page's
    URL. `script=False`: the snippet without its <script> (and no recipe), as an LMS that strips scripts
    stores it. `mkdocs=True`: the page is a site built with MkDocs Material's default theme (its sticky
    header), the snippet alone in it."""
    folder = Path(tempfile.mkdtemp(prefix="kv-host-"))
    host = build.serve_in_thread(folder, 0)
    host_origin = host.url.replace("127.0.0.1", "localhost").rstrip("/")
    try:
        with serve(site, csp=f"{build.CSP}; frame-ancestors {host_origin}") as url:
            docs = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")
            code = snippet(docs).replace(f"{SRC_BASE}index.html?lang=es&embed=1", f"{url}index.html{query}")
            if mkdocs:  # the snippet alone, as a course author pastes it
                mkdocs_site(folder, code if script else code[: code.index("<script>")])
                yield f"{host_origin}/course/"
                return
            code = code + "\n" + progress_recipe(docs) if script else code[: code.index("<script>")]
            page = (ROOT / "tests" / "embed_host.html").read_text(encoding="utf-8").replace("{{SNIPPET}}", code)
            (folder / "course.html").write_text(page, encoding="utf-8")
            yield f"{host_origin}/course.html"
    finally:
        host.shutdown()
        host.server_close()
        shutil.rmtree(folder, ignore_errors=True)


MKDOCS_YML = """site_name: Curso de prueba
theme:
  name: material
  language: es
  font: false
"""
# font: false: Material's default loads its fonts from Google's servers, which a test never reaches; the
# header, its height and its stickiness are the default theme's


def mkdocs_site(folder: Path, code: str) -> None:
    """A course site built with MkDocs Material's default theme into folder/course/: one lesson, the
    embedding code (`code`) in it as raw HTML, as a course author pastes it, and no CSS of the author's."""
    import subprocess
    import sys

    source = folder / "mkdocs"
    (source / "docs").mkdir(parents=True)
    (source / "mkdocs.yml").write_text(MKDOCS_YML, encoding="utf-8")
    lesson = (
        "# Lección 7: cuánto cuesta cada token\n\n"
        "Antes de seguir, prueba el modelo: avanza token a token y mira cómo crece la caché.\n\n"
        f"{code}\n\n"
        "Después de la figura, la lección sigue con la caché cuantizada.\n"
    )
    (source / "docs" / "index.md").write_text(lesson, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "-q", "-f", str(source / "mkdocs.yml"), "-d", str(folder / "course")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def tell_theme(page, theme: str) -> None:
    """What a course page whose palette is a toggle posts to the frame (docs/embedding.md, "Light and dark")."""
    page.evaluate(
        "(theme) => document.querySelector('iframe.kv-explorable').contentWindow"
        ".postMessage({type: 'kv-explorable:theme', theme}, '*')",
        theme,
    )


def explorable(page):
    """The frame of the explorable (cross-origin: Playwright reaches into it)."""
    return page.wait_for_selector("iframe.kv-explorable").content_frame()
