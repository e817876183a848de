"""The ``medium`` tier in pure Python: the features as big-integer popcounts (no numpy, no numba).

A process takes this path until it has counted long enough for loading the compiled kernel to
pay (:mod:`aptmem.tokens.medium`), so a short-lived one (a command line, a test's child process)
never imports numba. It counts exactly what the kernel counts and sums the weights in the same
order (``tests/test_medium_kernel.py``).

How: the text is encoded once and ``bytes.translate`` maps every byte to its class (deleting
UTF-8 continuation bytes, so a character is one byte); no Python code runs per character. The
class string, one one-hot bit per class, is read as one big integer ``x``; ``x & mask`` with a
per-feature mask and ``int.bit_count`` give each class's size, and ``x ^ (x & (x << 8))`` marks
where a run of each class starts, counted the same way (shifted against the neighbours, by one
of two shifts: where upper case follows lower case, and which runs a neighbour folds in). Seven
popcounts, and an eighth where the text has four digits in a row (one substring search tells),
each about 1 ns a character (CPython's ``bit_count`` is not one instruction). Non-ASCII text adds
one translate for its scripts and two regular-expression scans for its two- and three-token
characters (:class:`~aptmem.tokens.char_costs.CharCosts`).
"""

from __future__ import annotations

from aptmem.tokens.char_costs import CONTINUATION, CharCosts, non_ascii_features
from aptmem.tokens.piece_vocab import PieceVocab, piece_features

__all__ = ["python_estimate"]

# One-hot class bits of the class string (one byte per character). Placed so that every test of a
# neighbour needs one of two shifts: the previous character's space, punctuation and letter bits
# land on this one's punctuation, newline and upper-case bits by ``x << 9`` (folded punctuation,
# newlines after punctuation, case changes), the next character's folding and letter bits on this
# one's space and punctuation bits by ``x >> 11`` (a single space before a word, folded punctuation).
_SPACE, _PUNCT, _NEWLINE, _FOLDS_SPACE, _LETTER, _UPPER, _DIGIT = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40
#: the masks built at import cover this many characters; a longer text gets masks of its own length
_MASK_CHARS = 1 << 16


def _onehot_table() -> bytes:
    """Byte -> one-hot class bits."""
    # A piece of the tokenizer takes one space before a letter or punctuation (``_FOLDS_SPACE``), not
    # before a digit, a space or a newline. Before a non-ASCII letter it does too, but CJK text fitted
    # worse so (its characters' own costs already count the piece): non-ASCII has no class bit.
    onehot = bytearray([_PUNCT | _FOLDS_SPACE] * 128 + [0] * 128)
    for c in b"abcdefghijklmnopqrstuvwxyz":
        onehot[c] = _LETTER | _FOLDS_SPACE
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        onehot[c] = _LETTER | _UPPER | _FOLDS_SPACE
    for c in b"0123456789":
        onehot[c] = _DIGIT
    for c in b" \t\r\x0b\x0c":
        onehot[c] = _SPACE
    onehot[ord("\n")] = _NEWLINE
    return bytes(onehot)


def _masks(chars: int) -> tuple[int, ...]:
    """The seven masks over ``chars`` characters: letters (upper twice), letter, upper, digit, punctuation, newline, space."""
    return tuple(int.from_bytes(bytes([bits]) * chars, "little")
                 for bits in (_LETTER | _UPPER, _LETTER, _UPPER, _DIGIT, _PUNCT, _NEWLINE, _SPACE))


# Built once at import: one small table and seven masks of 64 KiB, no I/O.
_ONEHOT = _onehot_table()
_MASKS = _masks(_MASK_CHARS)
_FOUR_DIGITS = bytes([_DIGIT]) * 4  # four digits in a row in the one-hot class string


def python_estimate(text: str, w: tuple[float, ...], costs: CharCosts, vocab: PieceVocab) -> float:
    """The unrounded estimate of ``text`` with weights ``w`` (in ``FEATURES`` order) and the reference's ``vocab``."""
    if text.isascii():
        raw = text.encode("ascii")
        classes = raw.translate(_ONEHOT)
        estimate = 0.0
    else:
        raw = text.encode("utf-8", "surrogatepass")
        classes = raw.translate(_ONEHOT, CONTINUATION)
        han, wide, hangul, other, two, three = non_ascii_features(costs, text, raw)
        estimate = w[2] * han + w[3] * wide + w[4] * hangul + w[5] * other + w[6] * two + w[7] * three
    m_letters, m_letter, m_upper, m_digit, m_punct, m_newline, m_space = (
        _MASKS if len(classes) <= _MASK_CHARS else _masks(len(classes)))
    x = int.from_bytes(classes, "little")
    r = x ^ (x & (x << 8))  # where a run of each class starts (x & ~before without a negative number: faster)
    prev = x << 9  # the previous character's space / punctuation / letter bit on this one's punctuation / newline / upper bit
    nxt = x >> 11  # the next character's folding / letter bit on this one's space / punctuation bit
    # The runs a neighbour folds in, dropped with an AND and an XOR (one popcount where a
    # difference of two took two): newlines after punctuation, single spaces before a word or
    # punctuation. A punctuation run that starts after a non-space and is followed by a letter
    # (so one character long) is folded into the word: taken from the punctuation runs (its
    # bits are among theirs: an XOR) and counted with the letter runs (other bits: an OR).
    newlines = r & m_newline
    newlines ^= newlines & prev
    spaces = r & m_space
    spaces ^= spaces & nxt
    punct_runs = r & m_punct
    folded = punct_runs & nxt
    folded ^= folded & prev
    digit_runs = (r & m_digit).bit_count()
    if digit_runs and _FOUR_DIGITS in classes:  # (most texts have no run of four digits: one substring search)
        # digits_past_three: cl100k cuts a digit run in pieces of up to three digits, each one
        # token; a digit whose three characters before are digits too, by two shifts and ANDs
        digits = x & m_digit
        digits &= digits << 8
        estimate += w[1] * (digits & (digits << 16)).bit_count()
    # A piece of the vocabulary costs one token: its letters and letter runs are taken out of theirs.
    pieces, piece_letters, piece_runs = piece_features(vocab, text)
    return estimate + (w[0] * ((x & m_letters).bit_count() - piece_letters)
                       + w[8] * (((r & m_letter) | folded).bit_count() - piece_runs)
                       + w[9] * (r & prev & m_upper).bit_count()
                       + w[10] * digit_runs + w[11] * newlines.bit_count()
                       + w[12] * (punct_runs ^ folded).bit_count() + w[13] * spaces.bit_count() + w[14] * pieces)
