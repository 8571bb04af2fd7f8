"""Languages for the tests that need one the app does not have: a code no catalog present takes, so a
language added as a file (app/i18n/LANG.po, or a folder of $KV_EXPLORABLE_CATALOGS) never turns such a
test against it."""

from __future__ import annotations

from itertools import product
from string import ascii_lowercase


def absent_language(present, preferred=("fr", "de", "it")) -> str:
    """The first of `preferred`, then of aa, ab, ... zz, that is not in `present`."""
    for code in (*preferred, *("".join(p) for p in product(ascii_lowercase, repeat=2))):
        if code not in present:
            return code
    raise AssertionError("every two-letter code has a catalog")
