"""The WordLlama embedder's piece-memo tokenizing gives WordLlama's own token ids and vectors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

wordllama = pytest.importorskip("wordllama")
np = pytest.importorskip("numpy")

from aptmem.recall.engines.embed import EMBED_CHARS, WordLlamaEmbedder  # noqa: E402

REAL = Path(__file__).parent / "fixtures" / "real"


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture(scope="module")
def reference():
    """WordLlama's own tokenizer, as its embed() uses it (no padding, no special tokens)."""
    model = wordllama.WordLlama.load(cache_dir=os.path.dirname(wordllama.__file__), disable_download=True, dim=256)
    model.tokenizer.no_padding()
    return model


def _real_texts() -> list[str]:
    """Pieces of the real transcripts: code, logs, JSON, prose, Chinese, runs of spaces and newlines."""
    texts: list[str] = []
    for path in sorted(REAL.glob("*.jsonl")):
        raw = path.read_text(encoding="utf-8")
        texts.extend(raw[i : i + EMBED_CHARS] for i in range(0, min(len(raw), 400 * EMBED_CHARS), 997))
    return texts


def _reference_ids(reference, texts: list[str]) -> list[list[int]]:
    return [e.ids for e in reference.tokenizer.encode_batch([t[:EMBED_CHARS] for t in texts], add_special_tokens=False)]


def test_token_ids_equal_wordllamas_on_real_transcripts(embedder: WordLlamaEmbedder, reference) -> None:
    texts = _real_texts()
    assert len(texts) > 200
    assert embedder.token_ids(texts) == _reference_ids(reference, texts)
    # Asked again (every piece now remembered) the answer is the same.
    assert embedder.token_ids(texts[::-1]) == _reference_ids(reference, texts[::-1])


# Besides letters, spaces and CJK: the shapes where a piece is cut before it is tokenized (digits,
# a quote or a mark against a letter, as in minified JSON, timestamps, paths and contractions),
# and a literal byte-fallback name.
_ALPHABET = st.sampled_from(list("ab Z9 _-.\n\t  ") + ["\u2581", "数据", "迁移", "é", "🙂", "{\"k\": 1}", "    ",
                                                        '{"key":"v4l",', '"}]', "2024-01-02T10:00:00Z", "it's",
                                                        "x.com/a_b", "(f)", "<0x0A>", "=>", "'", "\\", "::", "~/", "٣", "²", "_x",
                                                        "\x00", "\x0b", "\x0c", "\r", "\r\n"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(_ALPHABET, max_size=40).map("".join), min_size=1, max_size=8))
def test_token_ids_equal_wordllamas_on_any_text(embedder: WordLlamaEmbedder, reference, texts: list[str]) -> None:
    assert embedder.token_ids(texts) == _reference_ids(reference, texts)


def test_vectors_equal_wordllamas_embed(embedder: WordLlamaEmbedder) -> None:
    texts = _real_texts()[:300] + ["", "   ", "数据库迁移方案"]
    ours = embedder.embed(texts)
    model = wordllama.WordLlama.load(cache_dir=os.path.dirname(wordllama.__file__), disable_download=True, dim=256)
    theirs = model.embed([t[:EMBED_CHARS] for t in texts], norm=True)
    nonempty = [i for i, t in enumerate(texts) if t.strip()]
    np.testing.assert_allclose(ours[nonempty], np.asarray(theirs)[nonempty], atol=2e-5)


def test_coarse_then_exact_search_keeps_the_exact_top_10(tmp_path: Path) -> None:
    """The Matryoshka prefix picks candidates; the full vectors must still give (nearly) the exact top 10."""
    from aptmem.recall.engines import get_engine
    from aptmem.recall.engines.embed import candidates
    from aptmem.recall.index import level_filter
    from aptmem.recall.records import Doc
    from aptmem.recall.schema import connect

    texts = _real_texts()
    # Enough records that the coarse pass runs (it needs 4x its candidates), from the real transcripts.
    words = " ".join(texts).split()
    records = [" ".join(words[i : i + 40]) for i in range(0, len(words) - 40, 13)]
    assert len(records) > 4 * candidates(10)
    db = connect(tmp_path / "index.sqlite")
    engine = get_engine("wordllama")
    engine.prepare(db)
    docs = [(n + 1, Doc(session_id="s", level="l3", kind="chunk", entry_id=f"e{n}", position=n, ts=None, text=t, search=t))
            for n, t in enumerate(records)]
    db.execute("BEGIN")
    db.executemany("INSERT INTO docs(doc_id, session_id, level, kind, entry_id, position, ts, text) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                   [(i, d.session_id, d.level, d.kind, d.entry_id, d.position, d.ts, d.text) for i, d in docs])
    engine.add(db, docs)
    db.execute("COMMIT")
    where = level_filter("all", "chunks")
    stored = engine._matrix(db)  # the float16-stored vectors, as the search sees them
    agree, questions = 0, records[5::97][:60]
    for question in questions:
        found = [i for i, _ in engine.search(db, question, 10, where)]
        exact = stored.ids[np.argsort(-(stored.matrix @ engine._model().embed([question])[0]), kind="stable")[:10]]
        agree += len(set(found) & set(int(i) for i in exact))
    assert agree / (10 * len(questions)) >= 0.97, agree
    db.close()


def test_token_parts_never_cut_inside_a_vocabulary_entry() -> None:
    from aptmem.recall.engines.wordllama_tokens import token_parts

    vocab = ["ab", "a", "b", '"', '"a', "1", ".", "c", "c.", "\n"]
    cut = token_parts(vocab)
    # A letter follows '"' in an entry ('"a'), so '"' is never cut from a letter after it; none
    # precedes '"', so a letter is cut from a '"' after it. '.' follows a letter ('c.') but
    # precedes none: cut from a letter after it. A digit stands alone (no entry of two
    # characters holds one), and so does "\n" (a one-character entry only).
    assert cut.findall('"ab"b1c.b.\nab') == ['"ab', '"b', '1', 'c.', 'b.', '\n', 'ab']


def test_wordllamas_vocabulary_cuts_minified_json_into_repeating_parts(embedder: WordLlamaEmbedder) -> None:
    parts = embedder._cut.findall('[{"trace":"996ed1","timeout":"schema"}]')
    assert parts[:3] == ['[{"', "trace", '":"'] and "schema" in parts and "9" in parts


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 12), st.text(st.characters(categories=("Lu", "Ll", "Lt", "Lm", "Lo")), min_size=1, max_size=30))
def test_a_piece_of_word_marks_and_letters_is_never_cut(embedder: WordLlamaEmbedder, marks: int, letters: str) -> None:
    # token_ids skips the cutting pattern for such pieces (str.isalpha): that must change no cut
    piece = "\u2581" * marks + letters
    assert piece.lstrip("\u2581").isalpha()
    assert embedder._cut.findall(piece) == [piece], repr(piece)


def test_pieces_that_differ_only_in_lone_characters_keep_their_own_ids(embedder: WordLlamaEmbedder, reference) -> None:
    # One shape ("\t" for every digit, newline, tab, vertical tab and form feed) for all of these:
    # each piece's ids must still be its own, whether met in one call or in later ones.
    texts = ["2024-05-22T20:29:00Z id=ceaba5d8\n[3].alert:", "2024-05-12T15:55:00Z id=7e4c71d3\n[1].queue:",
             "1999-12-31T23:59:59Z id=00000000\t[0].x\x0b\x0c", "0\n1\t2\x0b3\x0c4 5\n\n6", "\x0c\x0b\t\n 9 8 7"]
    assert embedder.token_ids(texts) == _reference_ids(reference, texts)
    shuffled = [t.translate(str.maketrans("0123456789", "9876543210")) for t in texts]
    assert embedder.token_ids(shuffled) == _reference_ids(reference, shuffled)


def test_token_ids_stay_exact_when_the_memo_is_cleared(monkeypatch, reference) -> None:
    from aptmem.recall.engines import wordllama_tokens

    monkeypatch.setattr(wordllama_tokens, "MEMO_PIECES", 50)  # cleared several times below
    small = WordLlamaEmbedder()
    texts = _real_texts()[:120]
    for start in range(0, len(texts), 7):
        batch = texts[start : start + 7]
        assert small.token_ids(batch) == _reference_ids(reference, batch), start
        # bounded: at most the limit, or this batch's own pieces when they alone pass it
        distinct = {key for t in batch for key in wordllama_tokens.piece_keys(t[:EMBED_CHARS])}
        assert len(small._tokens._piece_row) <= max(50, len(distinct)), start
