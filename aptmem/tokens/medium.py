"""The ``medium`` tier: a weighted count of character classes and of their runs, fitted to a real tokenizer.

What it counts, and why: a tokenizer such as cl100k_base first cuts text into pieces (a run of
letters with the space before it, up to three digits, a run of punctuation, a run of spaces or of
newlines), then merges each piece into as few vocabulary tokens as it can. So the estimate is a
linear formula over

* how many characters of each class the text holds (letters, an upper-case one twice; digits and
  punctuation; Han characters; CJK punctuation, kana and full-width forms; Hangul; the extra
  UTF-8 bytes of every other non-ASCII character), and
* how many runs of each class it holds (a run of letters is about a word; a change from lower
  to upper case inside one marks camelCase, base64 or a key; digit runs cost a token per three
  digits, and a run of newlines is about one token too; punctuation, space and non-ASCII runs
  are pieces of their own).

Weights are fitted by :mod:`aptmem.tokens.calibration.medium_fit` on a broad corpus and shipped
in ``medium_constants.json``; classes whose weights came out equal when fitted apart share one
feature, so one pass counts them.

How it stays fast (more than 10x faster than tiktoken, measured by ``benchmarks/token_accuracy.py``):
the text is encoded once, ``bytes.translate`` maps every byte to a one-hot class bit (deleting
UTF-8 continuation bytes, so a character is one byte), and the class string is read as one big
integer. Then ``x & mask`` with a per-feature mask and ``int.bit_count`` give each class's size, and
``x ^ (x & (x << 8))`` marks where a run of each class starts, counted the same way (and, shifted by
one bit against the neighbours, where upper case follows lower case). Every step is a C
loop over machine words; no Python code runs per character. Non-ASCII text adds one more
translate for its scripts.
"""

from __future__ import annotations

import os

from aptmem.tokens.medium_constants import FEATURES, MediumConstants, load_constants

__all__ = ["FEATURES", "MediumEstimator", "features"]

# One-hot class bits of the class string (one byte per character).
_LETTER, _UPPER, _DIGIT, _PUNCT, _SPACE, _NEWLINE, _NONASCII = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40
#: texts are read in blocks of this many characters (the masks' length); a run cut by a block
#: edge counts twice: one token in 64k at most
_BLOCK = 1 << 16


def _tables() -> tuple[bytes, bytes, bytes]:
    """The one-hot class table, the script table of non-ASCII lead bytes, and the continuation bytes."""
    onehot = bytearray([_PUNCT] * 128 + [_NONASCII] * 128)
    for c in b"abcdefghijklmnopqrstuvwxyz":
        onehot[c] = _LETTER
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        onehot[c] = _LETTER | _UPPER
    for c in b"0123456789":
        onehot[c] = _DIGIT
    for c in b" \t\r\x0b\x0c":
        onehot[c] = _SPACE
    onehot[ord("\n")] = _NEWLINE
    script = bytearray(b"." * 256)
    for c in range(0x80, 0x100):  # lead bytes of other non-ASCII characters (and stray bytes)
        script[c] = ord("x")
    for c in range(0xE4, 0xEA):  # U+4000..U+9FFF: CJK unified ideographs
        script[c] = ord("h")
    for c in (0xE3, 0xEF):  # U+3000..U+3FFF (CJK punctuation, kana), U+F000..U+FFFF (full-width forms)
        script[c] = ord("f")
    for c in range(0xEA, 0xEE):  # U+A000..U+DFFF: Hangul syllables (and Yi)
        script[c] = ord("k")
    return bytes(onehot), bytes(script), bytes(range(0x80, 0xC0))


def _mask(bits: int) -> int:
    return int.from_bytes(bytes([bits]) * _BLOCK, "little")


# Built once at import: three small bytes objects and six masks of 64 KiB, no I/O.
_ONEHOT, _SCRIPT, _CONTINUATION = _tables()
_M_LETTERS = _mask(_LETTER | _UPPER)  # popcount counts an upper-case letter twice
_M_DIGIT_PUNCT = _mask(_DIGIT | _PUNCT)
_M_LETTER = _mask(_LETTER)
_M_DIGIT_NEWLINE = _mask(_DIGIT | _NEWLINE)
_M_PUNCT = _mask(_PUNCT)
_M_SPACE = _mask(_SPACE)
_M_NONASCII = _mask(_NONASCII)


def _class_features(classes: bytes) -> list[int]:
    """The class-string features (all but the scripts), in :data:`FEATURES` order, the scripts as 0."""
    out = [0] * 12
    for start in range(0, len(classes), _BLOCK):
        x = int.from_bytes(classes[start : start + _BLOCK], "little")
        before = x << 8  # each character's left neighbour's bits, in its place
        r = x ^ (x & before)  # the class bits of each character whose left neighbour lacks them: run starts
        out[0] += (x & _M_LETTERS).bit_count()
        out[1] += (x & _M_DIGIT_PUNCT).bit_count()
        out[6] += (r & _M_LETTER).bit_count()
        # An upper-case run that starts right after a letter (a lower-case one, or it would not start).
        out[7] += ((r >> 1) & before & _M_LETTER).bit_count()
        out[8] += (r & _M_DIGIT_NEWLINE).bit_count()
        out[9] += (r & _M_PUNCT).bit_count()
        out[10] += (r & _M_SPACE).bit_count()
        out[11] += (r & _M_NONASCII).bit_count()
    return out


def features(text: str) -> tuple[int, ...]:
    """The feature values of ``text``, in :data:`~aptmem.tokens.medium_constants.FEATURES` order."""
    raw = text.encode("utf-8", "surrogatepass")
    out = _class_features(raw.translate(_ONEHOT, _CONTINUATION))
    if not text.isascii():
        scripts = raw.translate(_SCRIPT, _CONTINUATION)
        han, wide, hangul = scripts.count(b"h"), scripts.count(b"f"), scripts.count(b"k")
        # A Han, CJK or Hangul character is 3 UTF-8 bytes; what is left of the extra bytes belongs to the others.
        out[2:6] = han, wide, hangul, len(raw) - len(text) - 2 * (han + wide + hangul)
    return tuple(out)


class MediumEstimator:
    """Script-aware estimate: weighted character classes and runs (see the module docstring).

    ``constants`` (or a ``constants_path``) replaces the weights shipped with the package, e.g.
    to score a fresh calibration. The shipped file is read on the first :meth:`count`, not at
    import or construction.
    """

    name = "medium"
    tier = "medium"

    def __init__(self, constants: MediumConstants | None = None,
                 constants_path: str | os.PathLike[str] | None = None) -> None:
        self._constants = constants
        self._path = constants_path
        self._weights: tuple[float, ...] | None = constants.vector() if constants is not None else None

    @property
    def constants(self) -> MediumConstants:
        """The constants in use (loaded on first access)."""
        if self._constants is None:
            self._constants = load_constants(self._path)
            self._weights = self._constants.vector()
        return self._constants

    @property
    def tokenizer(self) -> str:
        """The tokenizer the weights were fitted to (e.g. ``cl100k_base``)."""
        return self.constants.reference

    def count(self, text: str) -> int:
        """Return the estimated token count of ``text`` (0 for empty text, else at least 1)."""
        w = self._weights
        if w is None:
            w = self.constants.vector()
        if len(text) > _BLOCK:
            estimate = sum(a * b for a, b in zip(w, features(text)))
        else:
            # The hot path: features() inlined for one block. The tests check that both agree on
            # every corpus text.
            if text.isascii():
                raw = text.encode("ascii")
                x = int.from_bytes(raw.translate(_ONEHOT), "little")
                estimate = 0.0
            else:
                raw = text.encode("utf-8", "surrogatepass")
                x = int.from_bytes(raw.translate(_ONEHOT, _CONTINUATION), "little")
                scripts = raw.translate(_SCRIPT, _CONTINUATION)
                han, wide, hangul = scripts.count(b"h"), scripts.count(b"f"), scripts.count(b"k")
                estimate = (w[2] * han + w[3] * wide + w[4] * hangul
                            + w[5] * (len(raw) - len(text) - 2 * (han + wide + hangul)))
            before = x << 8
            r = x ^ (x & before)  # (x & ~before without a negative number: much faster)
            estimate += (w[0] * (x & _M_LETTERS).bit_count() + w[1] * (x & _M_DIGIT_PUNCT).bit_count()
                         + w[6] * (r & _M_LETTER).bit_count() + w[7] * ((r >> 1) & before & _M_LETTER).bit_count()
                         + w[8] * (r & _M_DIGIT_NEWLINE).bit_count() + w[9] * (r & _M_PUNCT).bit_count()
                         + w[10] * (r & _M_SPACE).bit_count() + w[11] * (r & _M_NONASCII).bit_count())
        n = int(estimate + 0.5)
        return n if n or not text else 1

    def __repr__(self) -> str:
        return f"MediumEstimator(path={self._path!r})" if self._path else "MediumEstimator()"
