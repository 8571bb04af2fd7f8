"""Byte-pair encoding over Unicode characters (not bytes).

Every token is a whole string of characters, so any single token decodes to
valid text with its accents ("ñ", "ó" are one base symbol each, never two
UTF-8 halves). The vocabulary is

    id 0                the unknown symbol, decoded as "\ufffd"
    ids 1 .. A          the alphabet, one character each
    ids A+1 .. V-1      one token per learned merge, in the order learned

Text is first split GPT-2 style into pieces (a word with the space before it,
a run of digits, a run of punctuation, whitespace); merges never cross a piece.

Characters outside the alphabet (the fallback, in this order):
1. the text is put in NFC form, so "n" + combining tilde is "ñ";
2. a few typographic signs get their plain form: curly quotes, the dashes
   "—" and "–", the ellipsis "…", tabs and non-breaking spaces;
3. a letter with a diacritic the alphabet lacks loses it ("à" -> "a");
4. anything still unknown becomes token 0, shown as "\ufffd".
Text made only of alphabet characters round-trips exactly.
"""
from __future__ import annotations

import json
import re
import string
import unicodedata
from collections import Counter
from pathlib import Path

UNKNOWN = "\ufffd"
NO_MERGE = 1 << 30

# One piece: optional space + letters | optional space + digits |
# optional space + other non-space signs | whitespace not followed by a
# non-space | any other whitespace. `re` (no third-party `regex`), so it runs
# unchanged under Pyodide.
PIECE = re.compile(r" ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+")

# Always in the alphabet, even if the training text lacks some of them, so a
# reader's own Spanish sentence never falls back.
BASE_ALPHABET = (
    string.ascii_letters + string.digits + " \n" + ".,;:-?!¿¡«»()'\"" + "ÁÉÍÓÚÜÑáéíóúüñ"
)

TYPOGRAPHIC = {
    "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2018": "'", "\u2019": "'",
    "\u2014": "-", "\u2013": "-", "\u2026": "...", "\t": " ", "\u00a0": " ",
    "\r": "",
}


def split_pieces(text: str) -> list[str]:
    """The pieces BPE works inside: 'La Nela, dijo' -> ['La', ' Nela', ',', ' dijo']."""
    return PIECE.findall(text)


class Tokenizer:
    """A learned BPE vocabulary: `encode(str) -> list[int]`, `decode(list[int]) -> str`."""

    def __init__(self, alphabet: list[str], merges: list[tuple[str, str]]):
        self.alphabet = list(alphabet)
        self.merges = [tuple(m) for m in merges]
        self.vocab: list[str] = [UNKNOWN] + self.alphabet + [a + b for a, b in self.merges]
        self.unknown_id = 0
        self._id = {}
        for i, tok in enumerate(self.vocab):
            self._id.setdefault(tok, i)
        self._rank = {pair: r for r, pair in enumerate(self.merges)}
        self._alphabet_set = set(self.alphabet)
        self._piece_cache: dict[str, list[int]] = {}

    @property
    def vocab_size(self) -> int:
        return len(self.vocab)

    # -- text clean-up (the fallback) ------------------------------------
    def normalize(self, text: str) -> str:
        """NFC, then the fallback for characters outside the alphabet (see module doc)."""
        text = unicodedata.normalize("NFC", text)
        if all(ch in self._alphabet_set for ch in text):
            return text
        out = []
        for ch in text:
            if ch in self._alphabet_set:
                out.append(ch)
                continue
            ch = TYPOGRAPHIC.get(ch, ch)
            if all(c in self._alphabet_set for c in ch):
                out.append(ch)
                continue
            bare = "".join(c for c in unicodedata.normalize("NFKD", ch) if not unicodedata.combining(c))
            out.append(bare if bare and all(c in self._alphabet_set for c in bare) else UNKNOWN)
        return "".join(out)

    # -- encoding ----------------------------------------------------------
    def _encode_piece(self, piece: str) -> list[int]:
        cached = self._piece_cache.get(piece)
        if cached is not None:
            return cached
        parts = list(piece)
        while len(parts) > 1:
            # the adjacent pair learned earliest is merged first, as in training
            rank = min(self._rank.get(p, NO_MERGE) for p in zip(parts, parts[1:]))
            if rank == NO_MERGE:
                break
            pair = self.merges[rank]
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and (parts[i], parts[i + 1]) == pair:
                    merged.append(parts[i] + parts[i + 1])
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        ids = [self._id.get(p, self.unknown_id) for p in parts]
        if len(self._piece_cache) < 50_000:
            self._piece_cache[piece] = ids
        return ids

    def encode(self, text: str) -> list[int]:
        """Text -> token ids (after the fallback for unknown characters)."""
        ids: list[int] = []
        for piece in split_pieces(self.normalize(text)):
            ids.extend(self._encode_piece(piece))
        return ids

    def decode(self, ids) -> str:
        """Token ids -> text. Each id alone decodes to a whole, valid string."""
        return "".join(self.vocab[int(i)] for i in ids)

    def token_strings(self, ids) -> list[str]:
        """One string per token, for showing token boundaries."""
        return [self.vocab[int(i)] for i in ids]

    # -- learning ------------------------------------------------------------
    @classmethod
    def train(cls, text: str, vocab_size: int = 512) -> Tokenizer:
        """Learn merges on `text` until the vocabulary has `vocab_size` entries.

        Deterministic: the most frequent adjacent pair is merged; ties go to
        the pair that sorts first, so the same text always gives the same
        merges on any Python.
        """
        text = unicodedata.normalize("NFC", text)
        alphabet = sorted(set(text) | set(BASE_ALPHABET))
        n_merges = vocab_size - 1 - len(alphabet)
        if n_merges < 0:
            raise ValueError(f"vocab_size {vocab_size} is smaller than the alphabet ({len(alphabet) + 1})")
        words = Counter(split_pieces(text))
        # each distinct piece as a list of symbols, with its count
        seqs = [(list(w), n) for w, n in words.items()]
        merges: list[tuple[str, str]] = []
        for _ in range(n_merges):
            pairs: Counter = Counter()
            for syms, n in seqs:
                for pair in zip(syms, syms[1:]):
                    pairs[pair] += n
            if not pairs:
                break
            top = max(pairs.values())
            best = min(p for p, c in pairs.items() if c == top)
            merges.append(best)
            a, b = best
            for syms, _n in seqs:
                i = 0
                while i < len(syms) - 1:
                    if syms[i] == a and syms[i + 1] == b:
                        syms[i:i + 2] = [a + b]
                    i += 1
        return cls(alphabet, merges)

    # -- files -------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"kind": "char-bpe", "version": 1, "unknown": UNKNOWN,
                "alphabet": self.alphabet, "merges": [list(m) for m in self.merges]}

    def to_json(self) -> str:
        """What `save` writes, byte for byte."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=0) + "\n"

    def save(self, path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")

    @classmethod
    def from_dict(cls, data) -> Tokenizer:
        """A tokenizer from what `to_dict` wrote, checked whole: ValueError saying what is wrong."""
        check_fields(data)
        return cls(check_alphabet(data["alphabet"]), check_merges(data["merges"], data["alphabet"]))

    @classmethod
    def load(cls, path) -> Tokenizer:
        return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))


# -- checking a tokenizer file ------------------------------------------------------

FIELDS = {"kind": "char-bpe", "version": 1, "unknown": UNKNOWN}


def check_fields(data) -> None:
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object with {sorted(FIELDS) + ['alphabet', 'merges']}, "
                         f"found {type(data).__name__}")
    missing = sorted((set(FIELDS) | {"alphabet", "merges"}) - set(data))
    if missing:
        raise ValueError(f"missing keys {missing}")
    for key, value in FIELDS.items():
        if data[key] != value:
            raise ValueError(f"{key} is {data[key]!r}, expected {value!r}")


def check_alphabet(alphabet) -> list[str]:
    """One character per entry, each once, never the unknown symbol."""
    if not isinstance(alphabet, list):
        raise ValueError(f"alphabet must be a list of characters, found {type(alphabet).__name__}")
    for i, ch in enumerate(alphabet):
        if not isinstance(ch, str) or len(ch) != 1 or ch == UNKNOWN:
            raise ValueError(f"alphabet entry {i} is {ch!r}, expected one character")
    seen = Counter(alphabet)
    twice = sorted(ch for ch, n in seen.items() if n > 1)
    if twice:
        raise ValueError(f"alphabet has duplicates: {twice}")
    return alphabet


def check_merges(merges, alphabet: list[str]) -> list[tuple[str, str]]:
    """Pairs of two tokens that exist when the merge is learned, each pair once."""
    if not isinstance(merges, list):
        raise ValueError(f"merges must be a list of pairs, found {type(merges).__name__}")
    known, pairs = set(alphabet), set()
    for i, m in enumerate(merges):
        if not (isinstance(m, list) and len(m) == 2 and all(isinstance(s, str) and s for s in m)):
            raise ValueError(f"merge {i} is {m!r}, expected a pair of two strings")
        if m[0] not in known or m[1] not in known:
            raise ValueError(f"merge {i} {m!r} joins a token that does not exist before it")
        if tuple(m) in pairs:
            raise ValueError(f"merge {i} {m!r} repeats an earlier merge")
        pairs.add(tuple(m))
        known.add(m[0] + m[1])
    return [tuple(m) for m in merges]
