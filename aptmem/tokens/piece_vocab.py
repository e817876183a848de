"""Which letter pieces, as the reference tokenizer cuts them, are one token of its vocabulary.

cl100k_base's pre-tokenizer cuts a word as ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+``: the letters with the
character before them when that is a space (`` word``) or a punctuation character it folds
(``_store``, ``.py``, ``(self``). Its vocabulary holds ``' word'``, ``'word'`` and ``'_word'``
apart, so the entry to test is the piece as cut: ``store`` is one token, ``_cwd`` is two. A piece
found in the vocabulary costs exactly one token, whatever its length, so the medium tier counts
those pieces apart (:data:`~aptmem.tokens.medium_constants.FEATURES` ``vocab_pieces``).

The medium tier's rule for the piece (the same in the compiled kernel and the pure-Python path,
``tests/test_medium_kernel.py``): a run of ASCII letters, with the character before it when that
is a space, tab, CR, VT or FF, or a punctuation character (ASCII, not a letter, digit, space or
newline) that is not itself after punctuation or a space (the tier's folded punctuation). Pieces
of fewer than :data:`MIN_PIECE_BYTES` or more than :data:`MAX_PIECE_BYTES` bytes are never looked up.

The set is read off the reference tokenizer's vocabulary by the calibration
(:meth:`PieceVocab.from_tokens`) and shipped beside the weights (:meth:`encode`), never typed in.
The pure-Python path tests a piece in a ``frozenset``; the kernel in two open-addressing hash
tables of the pieces read as little-endian words, one word up to 8 bytes and two past
(:meth:`PieceVocab.table`): an exact test, no hash collision can count a piece that is not in the set.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Iterable

__all__ = ["MAX_PIECE_BYTES", "MIN_PIECE_BYTES", "PIECE", "PieceVocab", "piece_features"]

#: the longest piece looked up: it packs in two 64-bit words
MAX_PIECE_BYTES = 16
#: the shortest piece looked up: shorter ones (`` a``, ``the``, ``_x``) are nearly all one token and
#: the letter features price them well; not looking them up spares the kernel most of its probes
MIN_PIECE_BYTES = 4
_LEAD_SPACE = r"[ \t\r\x0b\x0c]"
_PUNCT = r"[\x00-\x08\x0e-\x1f\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]"
#: not a letter, digit, newline or non-ASCII character: what a folded punctuation character may not follow
_PUNCT_OR_SPACE = r"[\x00-\x09\x0b-\x2f\x3a-\x40\x5b-\x60\x7b-\x7f]"
#: one letter piece as the medium tier cuts it (see the module docstring)
PIECE = re.compile(f"(?:{_LEAD_SPACE}|(?<!{_PUNCT_OR_SPACE}){_PUNCT})?[A-Za-z]+")
_WHOLE_PIECE = re.compile(f"(?:{_LEAD_SPACE}|{_PUNCT})?[A-Za-z]+")
_UPPER = bytes(range(ord("A"), ord("Z") + 1))
_LETTER_BYTES = _UPPER + bytes(range(ord("a"), ord("z") + 1))
_NOT_LETTERS = bytes(b for b in range(256) if b not in _LETTER_BYTES)
_NOT_PUNCT = _LETTER_BYTES + b" \t\r\x0b\x0c" + bytes(range(128, 256))


class PieceVocab:
    """The letter pieces (as cut, with their lead character) the reference tokenizer encodes as one token."""

    def __init__(self, pieces: Iterable[str]) -> None:
        self.pieces = frozenset(pieces)
        bad = [p for p in self.pieces
               if not MIN_PIECE_BYTES <= len(p) <= MAX_PIECE_BYTES or not _WHOLE_PIECE.fullmatch(p)]
        if bad:
            raise ValueError(f"not letter pieces of {MIN_PIECE_BYTES} to {MAX_PIECE_BYTES} bytes: {sorted(bad)[:5]}")
        self._table = None  # the kernel's hash tables, made when it first needs them

    @classmethod
    def from_tokens(cls, tokens: Iterable[bytes]) -> PieceVocab:
        """The letter pieces among a tokenizer's vocabulary (its tokens as bytes)."""
        out = []
        for token in tokens:
            if MIN_PIECE_BYTES <= len(token) <= MAX_PIECE_BYTES and token.isascii():
                piece = token.decode("ascii")
                if _WHOLE_PIECE.fullmatch(piece):
                    out.append(piece)
        return cls(out)

    def encode(self) -> str:
        """The sorted pieces, one a line, compressed, as text for the constants file."""
        return base64.b64encode(zlib.compress("\n".join(sorted(self.pieces)).encode("ascii"), 9)).decode("ascii")

    @classmethod
    def decode(cls, text: str) -> PieceVocab:
        """A vocabulary from :meth:`encode`'s text; damaged text raises ValueError."""
        try:
            raw = zlib.decompress(base64.b64decode(text, validate=True)).decode("ascii")
        except (zlib.error, binascii.Error, UnicodeDecodeError) as exc:
            raise ValueError(f"damaged piece vocabulary ({exc})") from None
        return cls(raw.split("\n") if raw else [])

    def table(self):  # noqa: ANN201 (a numpy array; numpy is imported only for the kernel)
        """The kernel's hash tables of the pieces (``uint64[:]``, :func:`~aptmem.tokens.medium_kernel.build_table`)."""
        if self._table is None:
            import numpy as np

            from aptmem.tokens.medium_kernel import build_table

            pieces = sorted(self.pieces)
            packed = np.zeros((len(pieces), MAX_PIECE_BYTES), np.uint8)
            for row, piece in enumerate(pieces):
                packed[row, :len(piece)] = np.frombuffer(piece.encode("ascii"), np.uint8)
            words = packed.view("<u8").reshape(len(pieces), 2).astype(np.uint64)
            short = np.fromiter(map(len, pieces), np.int64, len(pieces)) <= 8
            self._table = build_table(np.ascontiguousarray(words[short, 0]), np.ascontiguousarray(words[~short]))
        return self._table


def piece_features(vocab: PieceVocab, text: str) -> tuple[int, int, int]:
    """The pieces of ``text`` found in ``vocab``: how many, their letters (an upper-case one twice), their letter runs.

    A piece with a folded punctuation character is two of the tier's letter runs (the folded
    character and the letters), one with a space or none is one.
    """
    hits = [p for p in PIECE.findall(text) if p in vocab.pieces]
    if not hits:
        return 0, 0, 0
    joined = "".join(hits).encode("ascii")
    n_letters = len(joined.translate(None, _NOT_LETTERS))
    upper = len(joined) - len(joined.translate(None, _UPPER))
    folded = len(joined.translate(None, _NOT_PUNCT))  # the lead characters that are punctuation
    return len(hits), n_letters + upper, len(hits) + folded
