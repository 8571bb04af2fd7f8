"""app/lazyimport.py in plain CPython: the page's finder for modules left out of the start-up
download, with its fetch function given (the page's is a synchronous XMLHttpRequest)."""

from __future__ import annotations

import hashlib
import io
import json
import sys
import zipfile

import pytest

from app.lazyimport import LazyFinder, install

BASE = "http://127.0.0.1/site/"


def archive(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return buf.getvalue()


@pytest.fixture
def lazy(tmp_path):
    """An index of two modules in one archive served at BASE + packages/kvlazydemo-lazy.zip."""
    data = archive(
        {"kvlazydemo/__init__.py": "ANSWER = 42\n", "kvlazydemo/extra.py": "from . import ANSWER\nTWICE = 2 * ANSWER\n"}
    )
    index = {
        "archives": [
            {
                "url": "packages/kvlazydemo-lazy.zip",
                "sha256": hashlib.sha256(data).hexdigest(),
                "root": str(tmp_path / "site-packages"),
            }
        ],
        "modules": {
            "kvlazydemo": [0, "kvlazydemo/__init__.py", True],
            "kvlazydemo.extra": [0, "kvlazydemo/extra.py", False],
        },
    }
    served = {BASE + "packages/kvlazydemo-lazy.zip": data}
    fetched, loaded = [], []

    def fetch(url: str) -> bytes:
        fetched.append(url)
        if url not in served:
            raise OSError(f"{url}: HTTP 404")
        return served[url]

    finders = []

    def make(**changes) -> LazyFinder:
        finder = install(json.dumps({**index, **changes}), BASE, fetch, lambda *a: loaded.append(a))
        finders.append(finder)
        return finder

    yield make, served, fetched, loaded
    for finder in finders:
        sys.meta_path.remove(finder)
    for name in ("kvlazydemo.extra", "kvlazydemo"):
        sys.modules.pop(name, None)


def test_module_is_imported_from_the_fetched_archive_fetched_once(lazy, tmp_path):
    make, served, fetched, loaded = lazy
    make()
    import kvlazydemo.extra

    assert kvlazydemo.extra.TWICE == 84
    assert kvlazydemo.__file__ == str(tmp_path / "site-packages" / "kvlazydemo" / "__init__.py")
    assert fetched == [BASE + "packages/kvlazydemo-lazy.zip"]  # two modules, one download
    ((url, ms, name),) = loaded
    assert url == fetched[0] and name == "kvlazydemo" and ms >= 0


def test_hash_mismatch_is_an_import_error(lazy, tmp_path):
    make, served, fetched, loaded = lazy
    served[BASE + "packages/kvlazydemo-lazy.zip"] = archive({"kvlazydemo/__init__.py": "ANSWER = 'tampered'\n"})
    make()
    with pytest.raises(ImportError, match="does not match its sha256"):
        import kvlazydemo  # noqa: F401
    assert not (tmp_path / "site-packages").exists() and loaded == []


def test_http_error_is_an_import_error_naming_the_url(lazy):
    make, served, fetched, loaded = lazy
    served.clear()
    make()
    with pytest.raises(ImportError, match=r"kvlazydemo-lazy\.zip: HTTP 404") as e:
        import kvlazydemo  # noqa: F401
    assert e.value.name == "kvlazydemo"


def test_modules_not_in_the_index_are_left_to_other_finders(lazy):
    make, served, fetched, loaded = lazy
    finder = make()
    assert finder.find_spec("json") is None and finder.find_spec("kvlazydemo_absent") is None
    assert fetched == []
