"""The one zip writer of the build: wheels, the standard library, the lazy archives and the app.

Deterministic (sorted names, one fixed timestamp, fixed permissions), so the same inputs give the
same bytes, hence the same content-hashed names and a browser cache that survives rebuilds."""
from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Callable, Iterable

FIXED_TIME = (2020, 1, 1, 0, 0, 0)


def write_zip(root: Path, out: Path, files: Iterable[Path] | None = None) -> Path:
    """Zip `files` (default: every file under root) with names relative to root; atomic."""
    chosen = sorted(p for p in (files if files is not None else root.rglob("*")) if p.is_file())
    out.parent.mkdir(parents=True, exist_ok=True)
    part = out.with_name(out.name + ".part")
    with zipfile.ZipFile(part, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        for p in chosen:
            info = zipfile.ZipInfo(p.relative_to(root).as_posix(), FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            z.writestr(info, p.read_bytes())
    os.replace(part, out)
    return out


def extract(archive: Path, dest: Path, keep: Callable[[str], bool] = lambda name: True) -> None:
    """Unpack the files of an archive whose names `keep` accepts."""
    with zipfile.ZipFile(archive) as z:
        for info in z.infolist():
            if info.is_dir() or not keep(info.filename):
                continue
            target = dest / info.filename
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(z.read(info))
