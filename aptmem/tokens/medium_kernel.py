"""The ``medium`` tier's compiled kernel: every feature of a text in one loop over its UTF-8 bytes (numba).

One pass; per character: its class (a table lookup for an ASCII byte; a non-ASCII character is
"other"), the neighbourhood code of the last three classes (a shift, an OR and an AND), two
additions of that code's increments packed in 16-bit fields (:func:`_packed_increments`), and the
length of the current digit run, with no branch on the class; the fields are unpacked every
16 KiB. The rules are those of :mod:`aptmem.tokens.medium`, whose big-integer path counts the
same (``tests/test_medium_kernel.py`` holds the two, and a plain per-character reference, equal on
every short string of every class, random Unicode and the corpora). A non-ASCII character's code
point is decoded from its lead byte and continuation bytes in the loop and looked up in the
reference tokenizer's cost table (:class:`~aptmem.tokens.char_costs.CharCosts`, passed as an
array); its script is read off the lead byte, as the big-integer path reads it.

The weighted sum is taken here in the big-integer path's order of additions (the non-ASCII
features, then the digits past the third of a run, then the class and run features), and numba
compiles without fast-math, so the float is the same to the last bit and every count is
identical. The weights and the cost table are arguments, so one compiled function serves every
constants set: two array arguments cost about 0.2-0.3 us a call more than a function of the text
alone (an empty call measured 0.57-0.66 us against 0.28-0.43 us, load 3-5), but a closure per
constants set would compile for each (about a second), and the tests and the calibration make
hundreds of sets.

numba is imported with this module, and :mod:`aptmem.tokens.medium` imports it only once a
process has counted long enough for the import to pay (``import numba`` and reading the cache cost about half a second or more). The
machine code is cached on disk (``cache=True``: beside this file, or in numba's user cache
directory where the package is read-only), so only the first process on a machine compiles.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["CLASS_TABLE", "build_slots", "estimate", "feature_counts"]

# Class codes of an ASCII byte (a non-ASCII character is OTHER). A space before a letter or
# punctuation folds into its piece; before a digit, a space, a newline or a non-ASCII character it does not.
OTHER, LOWER, UPPER, DIGIT, PUNCT, SPACE, NEWLINE = 0, 1, 2, 3, 4, 5, 6


def _class_table() -> np.ndarray:
    """ASCII byte -> class code (control characters and DEL count as punctuation, as in the big-integer path)."""
    table = np.full(128, PUNCT, np.uint8)
    for c in b"abcdefghijklmnopqrstuvwxyz":
        table[c] = LOWER
    for c in b"ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        table[c] = UPPER
    for c in b"0123456789":
        table[c] = DIGIT
    for c in b" \t\r\x0b\x0c":
        table[c] = SPACE
    table[ord("\n")] = NEWLINE
    return table


#: ASCII byte -> class code; a module-level array, so numba freezes it into the machine code
CLASS_TABLE = _class_table()


def _packed_increments() -> tuple[np.ndarray, np.ndarray]:
    """What each neighbourhood adds to the class and run features, packed in two words of 16-bit fields.

    A neighbourhood is three classes, ``prev2 << 6 | prev << 3 | cur`` (512 codes). ``cur`` adds
    what needs only the character before it; ``prev`` adds what needed its next neighbour too (a
    single space before a letter or punctuation folds into that piece; a single punctuation
    character after a non-space folds into the letters after it). Word A: letters (an upper-case
    one twice), letter runs (and folded punctuation), case changes, digit runs; word B: newline,
    punctuation and space runs. No field gains more than 2 a character.
    """
    def letter(c: int) -> bool:
        return c in (LOWER, UPPER)

    a, b = np.zeros(512, np.int64), np.zeros(512, np.int64)
    for code in range(512):
        p2, p, c = code >> 6, (code >> 3) & 7, code & 7
        letters = (c == LOWER) + 2 * (c == UPPER)
        letter_runs = int(letter(c) and not letter(p))
        case_changes = int(c == UPPER and p == LOWER)
        digit_runs = int(c == DIGIT and p != DIGIT)
        newline_runs = int(c == NEWLINE and p != NEWLINE and p != PUNCT)  # newlines right after punctuation are in its piece
        space_runs = int(p == SPACE and p2 != SPACE and not (letter(c) or c == PUNCT))
        punct_runs = 0
        if p == PUNCT and p2 != PUNCT:
            if p2 != SPACE and letter(c):
                letter_runs += 1  # one punctuation character folded into the word after it (``/src``, ``.py``)
            else:
                punct_runs = 1
        a[code] = letters | letter_runs << 16 | case_changes << 32 | digit_runs << 48
        b[code] = newline_runs | punct_runs << 16 | space_runs << 32
    return a, b


#: per neighbourhood code, the increments of the class and run features (module-level: frozen into the machine code)
PACKED_A, PACKED_B = _packed_increments()
#: UTF-8 bytes counted between two unpackings of the 16-bit fields: at most 2 a character, so they cannot overflow
_BLOCK = 16384


_MUL_LO = np.uint64(0x9E3779B97F4A7C15)  # odd multipliers (golden ratio, murmur): mix the two words
_MUL_HI = np.uint64(0xC2B2AE3D27D4EB4F)


@njit(cache=True, nogil=True)
def _slot(lo, hi, mask):  # noqa: ANN001, ANN202
    """The first slot a packed piece probes (multiplicative hashing, high bits)."""
    return ((lo * _MUL_LO) ^ (hi * _MUL_HI)) >> np.uint64(40) & mask


@njit(cache=True)
def build_slots(keys):  # noqa: ANN001, ANN201 (uint64[n, 2])
    """An open-addressing table (linear probing, at most half full) of the packed pieces ``keys``."""
    size = 1 << 10
    while size < 2 * len(keys):
        size <<= 1
    slots = np.zeros((size, 2), np.uint64)
    mask = np.uint64(size - 1)
    for k in range(len(keys)):
        lo, hi = keys[k, 0], keys[k, 1]
        j = _slot(lo, hi, mask)
        while slots[j, 0] != 0 and not (slots[j, 0] == lo and slots[j, 1] == hi):
            j = (j + np.uint64(1)) & mask
        slots[j, 0], slots[j, 1] = lo, hi
    return slots


#: ASCII byte -> 1 for a lower-case letter, 2 for an upper-case one, else 0 (the piece pass's one lookup a byte)
_LETTER_KIND = np.zeros(256, np.uint8)
_LETTER_KIND[ord("a"):ord("z") + 1] = 1
_LETTER_KIND[ord("A"):ord("Z") + 1] = 2


@njit(cache=True, nogil=True)
def _vocab_pieces(raw, slots):  # noqa: ANN001, ANN202
    """The letter pieces of ``raw`` in ``slots`` (piece_vocab's rule): how many, their letters (upper twice), their runs.

    A pass of its own over the text: in the main loop the branch on where a run starts and ends
    cost the loop its speed (measured about 3x slower on English). A piece of at most 16 bytes
    (none 0) is packed little-endian in two words while its letters are scanned (one pass over
    them, its upper-case letters counted on the way), and tested exactly in the open-addressing
    table; a folded punctuation character is a letter run of its own in the tier.
    """
    vocab = vocab_letters = vocab_runs = 0
    n = len(raw)
    mask = np.uint64(len(slots) - 1)
    j = 0
    while j < n:
        if _LETTER_KIND[raw[j]] == 0:  # not an ASCII letter (a non-ASCII byte is 0x80 or more)
            j += 1
            continue
        start = j
        lo = hi = np.uint64(0)
        shift = 0
        lead = OTHER
        if j >= 1:  # the lead character: a space, or punctuation not after punctuation or a space
            before = raw[j - 1]
            p = CLASS_TABLE[before] if before < 0x80 else OTHER
            folds = p == SPACE
            if p == PUNCT:
                p2 = CLASS_TABLE[raw[j - 2]] if j >= 2 and raw[j - 2] < 0x80 else OTHER
                folds = p2 != PUNCT and p2 != SPACE
            if folds:
                start, lead, shift = j - 1, p, 8
                lo = np.uint64(before)
        upper = 0
        while j < n:
            kind = _LETTER_KIND[raw[j]]
            if kind == 0:
                break
            upper += kind >> 1
            if shift < 64:
                lo |= np.uint64(raw[j]) << np.uint64(shift)
            elif shift < 128:
                hi |= np.uint64(raw[j]) << np.uint64(shift - 64)
            shift += 8
            j += 1
        # piece_vocab's MIN_PIECE_BYTES and MAX_PIECE_BYTES, never in the table; typed here, not imported: numba's
        # cache is keyed on this file, so a bound imported from another would outlive an edit of it there (a
        # narrower bound here than the vocabulary's would make the kernel and the Python path disagree: the tests)
        if not 4 <= j - start <= 16:
            continue
        k = _slot(lo, hi, mask)
        while slots[k, 0] != np.uint64(0):
            if slots[k, 0] == lo and slots[k, 1] == hi:
                vocab += 1
                vocab_letters += j - start - (lead >= PUNCT) + upper
                vocab_runs += 1 + (lead == PUNCT)
                break
            k = (k + np.uint64(1)) & mask
    return vocab, vocab_letters, vocab_runs


@njit(cache=True, nogil=True)
def feature_counts(raw, costs, slots):  # noqa: ANN001, ANN201 (numba infers the types: bytes, uint8[:], uint64[:, 2])
    """The 15 feature values of a text's UTF-8 ``raw``, in ``FEATURES`` order.

    ``costs``: the BMP cost table; ``slots``: the vocabulary's pieces (:meth:`PieceVocab.slots`).
    ``raw`` is the encoding of a ``str`` (``surrogatepass``): well-formed, so a lead byte's
    continuation bytes are there.
    """
    letters = dp3 = han = wide = hangul = other = two = three = 0
    letter_runs = case_changes = digit_runs = newline_runs = punct_runs = space_runs = 0
    n = len(raw)
    code = OTHER  # the classes before the first character: no neighbour
    digit_run = 0
    i = 0
    while i < n:
        acc_a = acc_b = 0
        end = min(n, i + _BLOCK)
        while i < end:
            b = raw[i]
            if b < 0x80:
                cur = CLASS_TABLE[b]
                i += 1
            else:
                cur = OTHER
                # decode the code point from the lead byte and the continuation bytes
                if b >= 0xF0:  # past the BMP: no cost in the table
                    other += 3
                    i += 4
                else:
                    if b >= 0xE0:
                        cp = ((b & 0x0F) << 12) | ((raw[i + 1] & 0x3F) << 6) | (raw[i + 2] & 0x3F)
                        i += 3
                        if 0xE4 <= b <= 0xE9:  # U+4000..U+9FFF: CJK unified ideographs
                            han += 1
                        elif b == 0xE3 or b == 0xEF:  # CJK punctuation, kana; full-width forms
                            wide += 1
                        elif 0xEA <= b <= 0xED:  # Hangul syllables (and Yi, and surrogates)
                            hangul += 1
                        else:
                            other += 2
                    else:
                        cp = ((b & 0x1F) << 6) | (raw[i + 1] & 0x3F)
                        i += 2
                        other += 1
                    cost = costs[cp]
                    two += cost == 2
                    three += cost == 3
            code = ((code << 3) | cur) & 0x1FF
            acc_a += PACKED_A[code]
            acc_b += PACKED_B[code]
            # cl100k cuts a digit run in pieces of up to three digits: count the digits past the third
            digit_run = (digit_run + 1) * (cur == DIGIT)
            dp3 += digit_run > 3
        if i >= n:  # after the text there is no neighbour: the last character's deferred increments
            code = (code << 3) & 0x1FF
            acc_a += PACKED_A[code]
            acc_b += PACKED_B[code]
        letters += acc_a & 0xFFFF
        letter_runs += (acc_a >> 16) & 0xFFFF
        case_changes += (acc_a >> 32) & 0xFFFF
        digit_runs += acc_a >> 48
        newline_runs += acc_b & 0xFFFF
        punct_runs += (acc_b >> 16) & 0xFFFF
        space_runs += acc_b >> 32
    vocab, vocab_letters, vocab_runs = _vocab_pieces(raw, slots)
    # a piece of the vocabulary costs one token: its letters and runs are not counted as such
    return (letters - vocab_letters, dp3, han, wide, hangul, other, two, three,
            letter_runs - vocab_runs, case_changes, digit_runs, newline_runs, punct_runs, space_runs, vocab)


@njit(cache=True, nogil=True)
def estimate(raw, costs, slots, w):  # noqa: ANN001, ANN201 (bytes, uint8[:], uint64[:, 2], float64[:])
    """The unrounded estimate of a text's UTF-8 ``raw``: the features times the weights ``w``, in the big-integer path's order."""
    (letters, dp3, han, wide, hangul, other, two, three,
     letter_runs, case_changes, digit_runs, newline_runs, punct_runs, space_runs, vocab) = feature_counts(raw, costs, slots)
    total = w[2] * han + w[3] * wide + w[4] * hangul + w[5] * other + w[6] * two + w[7] * three
    total += w[1] * dp3
    total += (w[0] * letters + w[8] * letter_runs + w[9] * case_changes + w[10] * digit_runs
              + w[11] * newline_runs + w[12] * punct_runs + w[13] * space_runs + w[14] * vocab)
    return total
