"""A palette PNG from rows of colour indices, with the standard library only (the build's
preview of the cache grid, app/figure/snapshot.py)."""

from __future__ import annotations

import struct
import zlib


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def indexed_png(rows: list[bytes], palette: list[str]) -> bytes:
    """rows: one bytes object per pixel row, each byte an index into `palette` ('#rrggbb')."""
    width, height = len(rows[0]), len(rows)
    plte = b"".join(bytes.fromhex(c.lstrip("#")) for c in palette)
    raw = b"".join(b"\0" + row for row in rows)  # filter type 0 on every row
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 3, 0, 0, 0))
        + _chunk(b"PLTE", plte)
        + _chunk(b"IDAT", zlib.compress(raw, 9))
        + _chunk(b"IEND", b"")
    )
