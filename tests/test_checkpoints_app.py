"""The checkpoints a reader picks, loaded when asked: read-only and shared, fetched and checked on
the static site (here with the fetch given: the worker's synchronous request is not in CPython)."""

import hashlib
import json

import pytest

from app.state import checkpoints
from model.checkpoint import CHECKPOINTS_DIR


def test_variants_load_once_and_read_only():
    a = checkpoints.load("kv2")
    assert checkpoints.load("kv2") is a and a.config.n_kv_heads == 2
    with pytest.raises(ValueError):
        a.params["wte"][0, 0] = 1.0
    assert checkpoints.load(None).config.n_kv_heads == 4
    assert checkpoints.metrics("kv1")["held_out_loss"] > 3.0
    with pytest.raises(KeyError):
        checkpoints.load("kv3")


def test_a_server_loads_every_checkpoint_before_its_readers():
    checkpoints.load_every()
    assert {"lesson", "kv2", "kv1", "draft"} <= set(checkpoints._loaded)
    assert checkpoints.load("kv1") is checkpoints._loaded["kv1"]


def test_missing_files_are_fetched_and_checked(tmp_path, monkeypatch):
    real = (CHECKPOINTS_DIR / "draft" / "metrics.json").read_bytes()
    manifest = tmp_path / "checkpoints.json"
    manifest.write_text(
        json.dumps({"draft": {"extra.json": {"url": "assets/x.json", "sha256": hashlib.sha256(real).hexdigest()}}})
    )
    fetched = []

    def fetch(url):
        fetched.append(url)
        return real

    checkpoints.ensure_files("draft", fetch=fetch, manifest=manifest)
    target = CHECKPOINTS_DIR / "draft" / "extra.json"
    try:
        assert fetched == ["assets/x.json"] and target.read_bytes() == real
        checkpoints.ensure_files("draft", fetch=fetch, manifest=manifest)  # there now: not again
        assert fetched == ["assets/x.json"]
    finally:
        target.unlink()
    with pytest.raises(checkpoints.FetchError, match="sha256"):
        checkpoints.ensure_files("draft", fetch=lambda url: b"something else", manifest=manifest)
    assert not target.exists()
