"""Shared fixtures. The corpus lives outside the repo (../shared/corpus/); tests
that need it skip with the reason where it is absent."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORPUS = Path(os.environ.get("MARIANELA", ROOT.parent / "shared" / "corpus" / "marianela.txt"))


@pytest.fixture(scope="session")
def corpus_text() -> str:
    if not CORPUS.is_file():
        pytest.skip(f"corpus not found at {CORPUS} (set MARIANELA=path/to/marianela.txt)")
    return CORPUS.read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def gpt():
    from model import MiniGPT
    return MiniGPT.load()
