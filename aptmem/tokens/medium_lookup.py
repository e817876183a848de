"""The ``medium`` tier's character features as one table lookup per character, with numpy.

Every feature of :mod:`aptmem.tokens.medium` is a sum over the characters of a text of a small
integer that depends only on the character's class and on its neighbours' classes (a letter
counts once, an upper-case one twice; a letter after a non-letter starts a run; a single space
before a word is folded into it, so it depends on the next character too). So the whole
estimate is ``sum(table[code(prev, cur, next)])`` over the characters, where ``table`` holds each
neighbourhood's summed weights, and the feature values are the histogram of those codes times
:data:`TRIPLE_FEATURES`, the feature increments of each neighbourhood, derived below from the
same rules as the big-integer path in :mod:`aptmem.tokens.medium` (the tests hold the two equal
on every string of up to four characters of every class, the calibration corpus and random text).

How a neighbourhood fits one byte: a character's class is 3 bits (:data:`CLASS_CODES`), chosen so
that bit 1 says "a space before it folds into its piece" (a letter, punctuation, the underscore)
and bits 0 and 1 together say "a letter"; the next character matters only through those two
bits. So ``code = prev << 5 | cur << 2 | (next & 3)``, 256 neighbourhoods. numpy builds the codes
of a whole text in three vector operations on the class bytes (one ``bytes.translate``, no copy
into numpy) and counts them with one ``bincount``: about 7 ns a character on a loaded 2-core
machine (the bincount is most of it), against 15-20 for seven big-integer popcounts and their shifts, but several
microseconds a call, so short texts keep the big-integer path (the crossover is measured by
``benchmarks/medium_crossover.py``: about 1,000 characters).

numpy is imported with this module, which :mod:`aptmem.tokens.medium` imports on the first long
text only (``import aptmem`` stays light).
"""

from __future__ import annotations

import re

import numpy as np

from aptmem.tokens.medium_constants import FEATURES

__all__ = ["CLASS_CODES", "TRIPLE_FEATURES", "class_histogram", "code_features", "digits_past_three", "script_cost_counts",
           "script_cost_table", "weight_table"]

# The 3-bit class codes. Bit 1: folds a space before it; bits 0 and 1: a letter (code 6 is unused).
OTHER, DIGIT, SPACE, NEWLINE = 0, 1, 4, 5  # bit 1 clear: a space before them is a piece of its own
PUNCT = 2
LOWER, UPPER = 3, 7
_FOLDS, _LETTER = 2, 3  # what is kept of the next character's code: its bit 1, and both bits set for a letter
_F = {name: i for i, name in enumerate(FEATURES)}


def _class_codes() -> bytes:
    """Byte -> class code: the classes of the big-integer path's one-hot table, as codes."""
    table = bytearray([PUNCT] * 128 + [OTHER] * 128)  # ASCII control characters count as punctuation there too
    for c in b"abcdefghijklmnopqrstuvwxyz":
        table[c] = LOWER
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        table[c] = UPPER
    for c in b"0123456789":
        table[c] = DIGIT
    for c in b" \t\r\x0b\x0c":
        table[c] = SPACE
    table[ord("\n")] = NEWLINE
    return bytes(table)


def _increments(prev: int, cur: int, nxt: int) -> list[int]:
    """What the character ``cur`` between ``prev`` and ``nxt`` adds to each feature (the rules of medium.py)."""
    def letter(c: int) -> bool:
        return c in (LOWER, UPPER)

    def punct(c: int) -> bool:
        return c == PUNCT

    out = [0] * len(_F)
    out[_F["letters"]] = (cur == LOWER) + 2 * (cur == UPPER)
    # digits_past_three needs four characters of context: counted apart (digits_past_three below)
    out[_F["letter_runs"]] = letter(cur) and not letter(prev)
    out[_F["case_changes"]] = cur == UPPER and prev == LOWER
    out[_F["digit_runs"]] = cur == DIGIT and prev != DIGIT
    # newlines right after punctuation are in its piece
    out[_F["newline_runs"]] = cur == NEWLINE and prev != NEWLINE and not punct(prev)
    # a single punctuation character between a non-space and a letter is folded into the word after it
    # (cl100k's ``[^\r\n\p{L}\p{N}]?\p{L}+``: ``/src``, ``.py``, ``(self``, ``_name``): no punctuation
    # run, but counted with the letter runs (fitted apart, the two weights came out 0.556 and 0.600)
    folded = punct(cur) and not punct(prev) and prev != SPACE and nxt == _LETTER
    out[_F["punct_runs"]] = int(punct(cur) and not punct(prev)) - int(folded)
    out[_F["letter_runs"]] += folded
    # a single space before a letter or punctuation is in that piece
    out[_F["space_runs"]] = cur == SPACE and prev != SPACE and not nxt & _FOLDS
    return [int(v) for v in out]


CLASS_CODES = _class_codes()
#: feature increments of each neighbourhood code ``prev << 5 | cur << 2 | (next & 3)``; 256 x 15
TRIPLE_FEATURES = np.array([_increments(code >> 5, (code >> 2) & 7, code & 3) for code in range(256)], dtype=np.int64)
_FOUR_DIGITS, _DIGIT_RUN = bytes([DIGIT]) * 4, re.compile(re.escape(bytes([DIGIT])) + b"+")
#: runs of four digits or more counted one by one, before numpy counts them all
_RUNS_ONE_BY_ONE = 4
_EDGE = bytes([OTHER])  # before the first character and after the last: no neighbour
_U32, _U4, _U3 = np.uint8(32), np.uint8(4), np.uint8(3)


def class_histogram(codes: bytes) -> np.ndarray:
    """How often each of the 256 neighbourhood codes occurs in a string of class codes (one per character)."""
    c = np.frombuffer(_EDGE + codes + _EDGE, np.uint8)
    # prev * 32 + cur * 4 + (next & 3) <= 7 * 32 + 7 * 4 + 3 = 255: uint8 all the way
    neighbourhoods = c[:-2] * _U32
    neighbourhoods += c[1:-1] * _U4
    neighbourhoods += c[2:] & _U3
    return np.bincount(neighbourhoods, minlength=256)


def digits_past_three(codes: bytes) -> int:
    """How many digits of a string of class codes come after the third of their run (digits_past_three).

    It needs four characters of context, more than a neighbourhood code holds. A few runs of four
    digits or more (a year, a port, a count in prose) are found one by one (a substring search
    and a regex match for where each ends: about 1 us a run, where numpy's calls cost about 4 us
    on a text of a few thousand characters); past ``_RUNS_ONE_BY_ONE`` such runs (logs, tables), a
    digit whose three characters before are digits too, by two ANDs of shifted numpy views. The
    short path in :mod:`aptmem.tokens.medium` counts the same on its class integer.
    """
    total, runs, at = 0, 0, codes.find(_FOUR_DIGITS)
    while at >= 0:
        runs += 1
        if runs > _RUNS_ONE_BY_ONE:
            digit = np.frombuffer(codes, np.uint8) == DIGIT
            pairs = digit[1:] & digit[:-1]  # this character and the one before it are digits
            return int(np.count_nonzero(pairs[2:] & pairs[:-2]))
        end = _DIGIT_RUN.match(codes, at).end()
        total += end - at - 3
        at = codes.find(_FOUR_DIGITS, end)
    return total


def code_features(codes: bytes) -> list[int]:
    """The class features of a string of class codes, exactly, in feature order (non-ASCII ones 0)."""
    return (class_histogram(codes) @ TRIPLE_FEATURES).tolist()


def weight_table(weights: tuple[float, ...]) -> np.ndarray:
    """Each neighbourhood's summed weights: ``TRIPLE_FEATURES @ weights`` (float64)."""
    return TRIPLE_FEATURES.astype(np.float64) @ np.asarray(weights, dtype=np.float64)


def script_cost_table(table: bytes) -> np.ndarray:
    """Each BMP code point's script and cost in one byte, ``cost | script << 2``, and a last entry 0 for every code point past it.

    ``table``: a :class:`~aptmem.tokens.medium.CharCosts` table (costs 0-3). The script is read off
    the code point's UTF-8 lead byte as the class string reads it (``0xE0 | cp >> 12``): 1 Han
    (lead bytes E4-E9), 2 CJK-wide (E3, EF), 3 Hangul (EA-ED, surrogates included), 0 the others.
    """
    lead = np.arange(len(table)) >> 12  # the lead byte's low nibble, for 3-byte characters (U+0800 on)
    script = np.zeros(len(table), np.uint8)
    three_bytes = np.arange(len(table)) >= 0x800
    script[three_bytes & (lead >= 4) & (lead <= 9)] = 1
    script[three_bytes & ((lead == 3) | (lead == 15))] = 2
    script[three_bytes & (lead >= 10) & (lead <= 13)] = 3
    return np.append(np.frombuffer(table, np.uint8) | (script << 2), np.uint8(0))


def script_cost_counts(text: str, table: np.ndarray) -> tuple[int, int, int, int, int]:
    """Han, CJK-wide and Hangul characters of ``text``, and its two- and three-token ones (``table``: :func:`script_cost_table`)."""
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), np.uint32)
    # a code point past the BMP is clipped to the table's last entry: no script, no cost
    c = np.bincount(table.take(points, mode="clip"), minlength=16).tolist()  # c[cost | script << 2]
    return sum(c[4:8]), sum(c[8:12]), sum(c[12:16]), c[2] + c[6] + c[10] + c[14], c[3] + c[7] + c[11] + c[15]
