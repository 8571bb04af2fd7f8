import unicodedata

import pytest

from model import Tokenizer
from model.tokenizer import UNKNOWN, split_pieces

SPANISH = (
    "-¿Y tú, Nela? -preguntó Pablo-. ¡Qué niña tan pequeña! "
    "«Sólo veo», dijo el señor Teodoro Golfín, «lo que está aquí».\n\nAcoged bien el de Marianela."
)


def test_vocabulary_is_512_whole_strings(gpt):
    tok = gpt.tokenizer
    assert tok.vocab_size == 512 == gpt.config.vocab_size
    assert tok.vocab[0] == UNKNOWN
    for i, s in enumerate(tok.vocab[1:], start=1):
        # every token alone is a valid, non-empty NFC string: no half characters
        assert s and UNKNOWN not in s, i
        assert unicodedata.normalize("NFC", s) == s
        assert tok.decode([i]) == s
    assert len(set(tok.vocab)) == 512


def test_accented_letters_are_single_symbols(gpt):
    tok = gpt.tokenizer
    for ch in "áéíóúñÁÉÍÓÚÑü¿¡«»":
        assert ch in tok.alphabet


def test_la_nela_is_two_tokens(gpt):
    ids = gpt.tokenizer.encode("La Nela")
    assert len(ids) == 2
    assert gpt.tokenizer.token_strings(ids) == ["La", " Nela"]
    assert gpt.tokenizer.decode(ids) == "La Nela"


def test_round_trip_spanish(gpt):
    ids = gpt.tokenizer.encode(SPANISH)
    assert gpt.tokenizer.decode(ids) == SPANISH
    assert len(ids) < len(SPANISH) / 1.8  # merges do compress


def test_round_trip_whole_corpus(gpt, corpus_text):
    ids = gpt.tokenizer.encode(corpus_text)
    assert gpt.tokenizer.decode(ids) == corpus_text
    assert 0 not in ids  # no character of the novel falls back


def test_fallback_is_defined(gpt):
    tok = gpt.tokenizer
    assert tok.decode(tok.encode("“Hola” — dijo… à la façon")) == '"Hola" - dijo... a la facon'
    assert tok.decode(tok.encode("n\u0303")) == "ñ"  # NFC first
    ids = tok.encode("zona 漢 ☃")
    assert tok.decode(ids) == f"zona {UNKNOWN} {UNKNOWN}"
    assert ids.count(0) == 2


def test_pieces_keep_the_space_with_the_word():
    assert split_pieces("La Nela, dijo: ¡ay!") == ["La", " Nela", ",", " dijo", ":", " ¡", "ay", "!"]


def test_training_is_deterministic_and_round_trips():
    text = SPANISH * 3
    a, b = Tokenizer.train(text, 140), Tokenizer.train(text, 140)
    assert a.merges == b.merges and a.vocab_size == 140
    assert a.decode(a.encode(text)) == text


def test_save_and_load(tmp_path, gpt):
    path = tmp_path / "tok.json"
    gpt.tokenizer.save(path)
    again = Tokenizer.load(path)
    assert again.vocab == gpt.tokenizer.vocab
    assert again.encode(SPANISH) == gpt.tokenizer.encode(SPANISH)


def test_too_small_vocabulary_is_refused():
    with pytest.raises(ValueError, match="smaller than the alphabet"):
        Tokenizer.train("abc", 10)
