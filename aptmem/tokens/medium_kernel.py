"""The ``medium`` tier's compiled kernel: every feature of a text in two passes over its UTF-8 bytes (numba).

The class and run pass; per character: its class (a table lookup for an ASCII byte; a non-ASCII
character is "other"), the neighbourhood code of the last four classes (a multiply-add, masked
where it is read), and two additions of that code's increments packed in 16-bit fields
(:func:`_packed_increments`), with no branch on the class; the fields are unpacked every 16 KiB.
The digits past the third of a run are one of those fields (the code holds four classes: a digit
after three digits), so no counter is carried from one character to the next but the code. The
rules are those of :mod:`aptmem.tokens.medium`, whose big-integer path counts the same
(``tests/test_medium_kernel.py`` holds the two, and a plain per-character reference, equal on
every short string of every class, random Unicode and the corpora). A non-ASCII character's code
point is decoded from its lead byte and continuation bytes in the loop and looked up in the
reference tokenizer's cost table (:class:`~aptmem.tokens.char_costs.CharCosts`, passed as an
array); its script is read off the lead byte, as the big-integer path reads it.

The piece pass (:func:`_vocab_pieces`) goes from letter run to letter run, eight bytes at a time:
one unaligned 8-byte load, a SWAR test of the eight bytes for ASCII letters (and their case), and
a count of trailing zeros find where a run starts and ends, so no byte of a word is looked at
alone and the loop turns once a word, not once a letter (a loop over the letters lost about a
branch misprediction a word). A piece of 4-16 bytes is then read as one or two words and tested
exactly in one of two open-addressing tables, of pieces up to 8 bytes (one word a slot) and
longer ones (two), both in one array (:func:`build_table`): half the bytes of one table of
two-word slots, so more of it stays in the cache.

Bytes are read with two small intrinsics (:func:`_byte`, :func:`_word`) instead of ``raw[i]``:
numba indexes a ``bytes`` with a signed index and adds a negative-index correction to every
read, three instructions of about twenty a character in the class pass (the loops keep
``0 <= i < len``).

The weighted sum is taken here in the big-integer path's order of additions (the non-ASCII
features, then the digits past the third of a run, then the class and run features), and numba
compiles without fast-math, so the float is the same to the last bit and every count is
identical. The weights and the cost table are arguments, so one compiled function serves every
constants set: a closure per constants set would compile for each (about a second), and the
tests and the calibration make hundreds of sets. :mod:`aptmem.tokens.medium` calls the compiled
function's own entry point, past numba's per-call type dispatch (about 0.2 us of 0.5 a call).

numba is imported with this module, and :mod:`aptmem.tokens.medium` imports it only once a
process has counted long enough for the import to pay (``import numba`` and reading the cache cost about half a second or more). The
machine code is cached on disk (``cache=True``: beside this file, or in numba's user cache
directory where the package is read-only), so only the first process on a machine compiles.
Everything the cached functions call is in this file: numba's cache is keyed on it.
"""

from __future__ import annotations

import sys

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

__all__ = ["CLASS_TABLE", "build_table", "count", "estimate", "feature_counts", "pack"]

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

    A neighbourhood is four classes, ``prev3 << 9 | prev2 << 6 | prev << 3 | cur`` (4,096 codes). ``cur`` adds
    what needs only the character before it; ``prev`` adds what needed its next neighbour too (a
    single space before a letter or punctuation folds into that piece; a single punctuation
    character after a non-space folds into the letters after it). Word A: letters (an upper-case
    one twice), letter runs (and folded punctuation), case changes, digit runs; word B: newline,
    punctuation and space runs, and the digits past the third of a run (cl100k cuts a digit run in
    pieces of up to three digits: a digit after three digits). No field gains more than 2 a character.
    """
    def letter(c: int) -> bool:
        return c in (LOWER, UPPER)

    a, b = np.zeros(4096, np.int64), np.zeros(4096, np.int64)
    for code in range(4096):
        p3, p2, p, c = code >> 9, (code >> 6) & 7, (code >> 3) & 7, code & 7
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
        digits_past_three = int(c == p == p2 == p3 == DIGIT)
        b[code] = newline_runs | punct_runs << 16 | space_runs << 32 | digits_past_three << 48
    return a, b


#: per neighbourhood code, the increments of the class and run features (module-level: frozen into the machine code)
PACKED_A, PACKED_B = _packed_increments()
#: UTF-8 bytes counted between two unpackings of the 16-bit fields: at most 2 a character, so they cannot overflow
_BLOCK = 16384


_MUL_LO = np.uint64(0x9E3779B97F4A7C15)  # odd multipliers (golden ratio, murmur): mix the words
_MUL_HI = np.uint64(0xC2B2AE3D27D4EB4F)


_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
_HIGH = np.uint64(0x8080808080808080)  # bit 7 of every byte
_CASE = np.uint64(0x2020202020202020)  # bit 5 of every byte: set in a lower-case letter, clear in an upper-case one
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_FROM_A = np.uint64(0x1F1F1F1F1F1F1F1F)  # 0x80 - ord("a"): bit 7 set in every byte from "a" on
_PAST_Z = np.uint64(0x0505050505050505)  # 0x80 - (ord("z") + 1): bit 7 set in every byte past "z"
_BYTE_SUM = np.uint64(0x0101010101010101)
_BIG_ENDIAN = sys.byteorder == "big"


def _data(context, builder, typ, value):  # noqa: ANN001, ANN202 (numba's code generation)
    """The pointer to the first byte of a ``bytes``."""
    return context.make_array(typ)(context, builder, value).data


@intrinsic
def _byte(typingctx, buf, idx):  # noqa: ANN001, ANN202
    """``buf[idx]``, without the negative-index correction numba adds to a signed index (callers keep ``0 <= idx < len``)."""
    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        data = builder.bitcast(_data(context, builder, signature.args[0], args[0]), ir.IntType(8).as_pointer())
        return builder.load(builder.gep(data, [args[1]]))

    return types.uint8(buf, idx), codegen


@intrinsic
def _word(typingctx, buf, idx):  # noqa: ANN001, ANN202
    """The 8 bytes of ``buf`` from ``idx``, little-endian, in one unaligned load (callers keep ``idx + 8 <= len``)."""
    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        data = builder.bitcast(_data(context, builder, signature.args[0], args[0]), ir.IntType(8).as_pointer())
        i64 = ir.IntType(64)
        word = builder.load(builder.bitcast(builder.gep(data, [args[1]]), i64.as_pointer()), align=1)
        if _BIG_ENDIAN:
            word = builder.call(builder.module.declare_intrinsic("llvm.bswap", [i64]), [word])
        return word

    return types.uint64(buf, idx), codegen


@njit(cache=True, nogil=True)
def _word8(raw, s, n):  # noqa: ANN001, ANN202
    """The 8 bytes of ``raw`` from ``s``, little-endian; those past its end ``n`` are 0."""
    if s + 8 <= n:
        return _word(raw, s)
    w = np.uint64(0)
    for t in range(max(0, n - s)):
        w |= np.uint64(_byte(raw, s + t)) << np.uint64(8 * t)
    return w


@njit(cache=True, nogil=True)
def _letter_bits(w):  # noqa: ANN001, ANN202
    """Bit 7 of each byte of ``w`` set where that byte is an ASCII letter, every other bit clear (SWAR)."""
    y = (w | _CASE) & _LOW7  # folded to lower case, bit 7 off so the additions below carry into no other byte
    return (y + _FROM_A) & ~(y + _PAST_Z) & ~w & _HIGH  # from "a", not past "z", and not a byte of 0x80 or more


@njit(cache=True, nogil=True)
def _count_high(m):  # noqa: ANN001, ANN202
    """How many bytes of ``m`` have bit 7 set (``m`` has no other bits set)."""
    return np.int64(((m >> np.uint64(7)) * _BYTE_SUM) >> np.uint64(56))


@njit(cache=True, nogil=True)
def _slot(lo, hi, mask):  # noqa: ANN001, ANN202
    """The first slot a piece packed in two words probes (multiplicative hashing, high bits)."""
    return ((lo * _MUL_LO) ^ (hi * _MUL_HI)) >> np.uint64(40) & mask


@njit(cache=True, nogil=True)
def _short_slot(lo, mask):  # noqa: ANN001, ANN202
    """The first slot a piece of at most 8 bytes probes."""
    return ((lo * _MUL_LO) >> np.uint64(40)) & mask


@njit(cache=True)
def build_table(short, long):  # noqa: A002, ANN001, ANN201 (uint64[n]: pieces of up to 8 bytes; uint64[m, 2]: longer ones)
    """The pieces' two open-addressing tables (linear probing, each at most half full) in one array.

    ``[short size, long size, short slots (a word each)..., long slots (two words each)...]``; a
    piece is its bytes read little-endian (in two words past 8 bytes), 0 an empty slot: no piece
    is 0, and a piece's last byte, a letter, is never 0, so no two lengths pack alike.
    """
    short_size = 1 << 10
    while short_size < 2 * len(short):
        short_size <<= 1
    long_size = 1 << 10
    while long_size < 2 * len(long):
        long_size <<= 1
    table = np.zeros(2 + short_size + 2 * long_size, np.uint64)
    table[0], table[1] = short_size, long_size
    mask = np.uint64(short_size - 1)
    for k in range(len(short)):
        j = _short_slot(short[k], mask)
        while table[2 + j] != 0 and table[2 + j] != short[k]:
            j = (j + np.uint64(1)) & mask
        table[2 + j] = short[k]
    mask = np.uint64(long_size - 1)
    base = 2 + short_size
    for k in range(len(long)):
        lo, hi = long[k, 0], long[k, 1]
        j = _slot(lo, hi, mask)
        while table[base + 2 * j] != 0 and not (table[base + 2 * j] == lo and table[base + 2 * j + 1] == hi):
            j = (j + np.uint64(1)) & mask
        table[base + 2 * j], table[base + 2 * j + 1] = lo, hi
    return table


@njit(cache=True, nogil=True)
def _in_table(lo, hi, length, table):  # noqa: ANN001, ANN202
    """Whether the piece ``lo``/``hi`` of ``length`` bytes is in :func:`build_table`'s ``table``."""
    if length <= 8:
        mask = table[0] - np.uint64(1)
        j = _short_slot(lo, mask)
        while True:
            key = table[np.uint64(2) + j]
            if key == lo:
                return True
            if key == np.uint64(0):
                return False
            j = (j + np.uint64(1)) & mask
    mask = table[1] - np.uint64(1)
    base = np.uint64(2) + table[0]
    j = _slot(lo, hi, mask)
    while True:
        at = base + np.uint64(2) * j
        key = table[at]
        if key == lo and table[at + np.uint64(1)] == hi:
            return True
        if key == np.uint64(0):
            return False
        j = (j + np.uint64(1)) & mask


@njit(cache=True, nogil=True)
def _next_letter(raw, j, n):  # noqa: ANN001, ANN202
    """Where the first ASCII letter at or after ``j`` is (``n`` if none), eight bytes at a time."""
    while j < n:
        letters = _letter_bits(_word8(raw, j, n))
        if letters != np.uint64(0):
            return j + (trailing_zeros(letters) >> 3)
        j += 8
    return n


@njit(cache=True, nogil=True)
def _vocab_pieces(raw, table):  # noqa: ANN001, ANN202
    """The letter pieces of ``raw`` in ``table`` (piece_vocab's rule): how many, their letters (upper twice), their runs.

    From run to run of ASCII letters, eight bytes at a time (the module docstring); a run's lead
    character (a space, or punctuation not after punctuation or a space) is read off the bytes
    before it. A folded punctuation character is a letter run of its own in the tier.
    """
    vocab = vocab_letters = vocab_runs = 0
    n = len(raw)
    s = _next_letter(raw, 0, n)
    while s < n:  # s: where a run starts
        w = _word8(raw, s, n)
        letters = _letter_bits(w)
        uppers = letters & ~(w << np.uint64(2))  # letters with bit 5 clear (shifted to bit 7)
        ends = ~letters & _HIGH
        if ends != np.uint64(0):  # the run ends within these eight bytes
            k = trailing_zeros(ends) >> 3
            below = (np.uint64(1) << np.uint64(8 * k)) - np.uint64(1)
            upper = _count_high(uppers & below)
            e = s + k
            # the next run most often starts in the same eight bytes: no load on the way to it, and its
            # letters are those past the first non-letter (``ends ^ (ends - 1)``: the bits up to it), not
            # past ``below``, which waits for the count of trailing zeros (about a tenth faster on prose)
            after = letters & ~(ends ^ (ends - np.uint64(1)))
            nxt = s + (trailing_zeros(after) >> 3) if after != np.uint64(0) else _next_letter(raw, s + 8, n)
        else:
            upper = _count_high(uppers)
            e = s + 8
            while True:
                w = _word8(raw, e, n)
                letters = _letter_bits(w)
                uppers = letters & ~(w << np.uint64(2))
                ends = ~letters & _HIGH
                if ends != np.uint64(0):
                    k = trailing_zeros(ends) >> 3
                    upper += _count_high(uppers & ((np.uint64(1) << np.uint64(8 * k)) - np.uint64(1)))
                    e += k
                    break
                upper += _count_high(uppers)
                e += 8
            nxt = _next_letter(raw, e, n)
        lead = OTHER  # the lead character: a space, or punctuation not after punctuation or a space
        if s >= 1:
            before = _byte(raw, s - 1)
            p = CLASS_TABLE[before] if before < 0x80 else OTHER
            if p == SPACE:
                lead = SPACE
            elif p == PUNCT:
                p2 = OTHER
                if s >= 2:
                    b2 = _byte(raw, s - 2)
                    p2 = CLASS_TABLE[b2] if b2 < 0x80 else OTHER
                if p2 != PUNCT and p2 != SPACE:
                    lead = PUNCT
        start = s - (lead != OTHER)
        length = e - start
        # piece_vocab's MIN_PIECE_BYTES and MAX_PIECE_BYTES, never in the table; typed here, not imported: numba's
        # cache is keyed on this file, so a bound imported from another would outlive an edit of it there (a
        # narrower bound here than the vocabulary's would make the kernel and the Python path disagree: the tests)
        if length < 4 or length > 16:
            s = nxt
            continue
        lo = _word8(raw, start, n)
        hi = np.uint64(0)
        if length <= 8:
            lo &= _ONES >> np.uint64(64 - 8 * length)
        else:
            hi = _word8(raw, start + 8, n) & (_ONES >> np.uint64(128 - 8 * length))
        if _in_table(lo, hi, length, table):
            vocab += 1
            vocab_letters += length - (lead >= PUNCT) + upper
            vocab_runs += 1 + (lead == PUNCT)
        s = nxt
    return vocab, vocab_letters, vocab_runs


@njit(cache=True, nogil=True)
def feature_counts(raw, costs, table):  # noqa: ANN001, ANN201 (numba infers the types: bytes, uint8[:], uint64[:])
    """The 15 feature values of a text's UTF-8 ``raw``, in ``FEATURES`` order.

    ``costs``: the BMP cost table; ``table``: the vocabulary's pieces (:meth:`PieceVocab.table`).
    ``raw`` is the encoding of a ``str`` (``surrogatepass``): well-formed, so a lead byte's
    continuation bytes are there.
    """
    letters = dp3 = han = wide = hangul = other = two = three = 0
    letter_runs = case_changes = digit_runs = newline_runs = punct_runs = space_runs = 0
    n = len(raw)
    code = OTHER  # the classes before the first character: no neighbour
    i = 0
    while i < n:
        acc_a = acc_b = 0
        end = min(n, i + _BLOCK)
        while i < end:
            b = _byte(raw, i)
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
                        cp = ((b & 0x0F) << 12) | ((_byte(raw, i + 1) & 0x3F) << 6) | (_byte(raw, i + 2) & 0x3F)
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
                        cp = ((b & 0x1F) << 6) | (_byte(raw, i + 1) & 0x3F)
                        i += 2
                        other += 1
                    cost = costs[cp]
                    two += cost == 2
                    three += cost == 3
            # the last four classes are the code's low 12 bits; masked where it is read, not as it is made, so
            # the chain from one character to the next is one multiply-add (numba's integers wrap, no bit
            # above the twelfth is read): about a tenth faster than masking it each time
            code = code * 8 + cur
            at = code & 0xFFF
            acc_a += PACKED_A[at]
            acc_b += PACKED_B[at]
        if i >= n:  # after the text there is no neighbour: the last character's deferred increments
            code = (code << 3) & 0xFFF
            acc_a += PACKED_A[code]
            acc_b += PACKED_B[code]
        letters += acc_a & 0xFFFF
        letter_runs += (acc_a >> 16) & 0xFFFF
        case_changes += (acc_a >> 32) & 0xFFFF
        digit_runs += acc_a >> 48
        newline_runs += acc_b & 0xFFFF
        punct_runs += (acc_b >> 16) & 0xFFFF
        space_runs += (acc_b >> 32) & 0xFFFF
        dp3 += acc_b >> 48
    vocab, vocab_letters, vocab_runs = _vocab_pieces(raw, table)
    # a piece of the vocabulary costs one token: its letters and runs are not counted as such
    return (letters - vocab_letters, dp3, han, wide, hangul, other, two, three,
            letter_runs - vocab_runs, case_changes, digit_runs, newline_runs, punct_runs, space_runs, vocab)


@njit(cache=True, nogil=True)
def estimate(raw, costs, table, w):  # noqa: ANN001, ANN201 (bytes, uint8[:], uint64[:], float64[:])
    """The unrounded estimate of a text's UTF-8 ``raw``: the features times the weights ``w``, in the big-integer path's order."""
    (letters, dp3, han, wide, hangul, other, two, three,
     letter_runs, case_changes, digit_runs, newline_runs, punct_runs, space_runs, vocab) = feature_counts(raw, costs, table)
    total = w[2] * han + w[3] * wide + w[4] * hangul + w[5] * other + w[6] * two + w[7] * three
    total += w[1] * dp3
    total += (w[0] * letters + w[8] * letter_runs + w[9] * case_changes + w[10] * digit_runs
              + w[11] * newline_runs + w[12] * punct_runs + w[13] * space_runs + w[14] * vocab)
    return total


#: words of :func:`pack` before the cost table: the weights (float64), padded
_WEIGHT_WORDS = 16


def pack(costs: np.ndarray, table: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The weights, the cost table and the piece table in one ``uint64`` array, the one argument :func:`count` takes.

    One array argument, not three: a call unboxes each argument, about 35-70 ns an array.
    """
    if len(w) > _WEIGHT_WORDS or len(costs) % 8:
        raise ValueError(f"{len(w)} weights (at most {_WEIGHT_WORDS}) and {len(costs)} costs (a multiple of 8)")
    weights = np.zeros(_WEIGHT_WORDS, np.float64)
    weights[:len(w)] = w
    return np.concatenate([weights.view(np.uint64), np.ascontiguousarray(costs, np.uint8).view(np.uint64),
                           np.asarray(table, np.uint64)])


@njit(cache=True, nogil=True)
def count(raw, packed):  # noqa: ANN001, ANN201 (bytes; uint64[:] from pack)
    """The estimate of a text's UTF-8 ``raw`` rounded as the tier rounds it: to the nearest count, at least 1 for a text not empty.

    ``packed``: :func:`pack`'s weights, cost table (65,536 bytes) and piece table.
    """
    w = packed[:_WEIGHT_WORDS].view(np.float64)
    costs = packed[_WEIGHT_WORDS:_WEIGHT_WORDS + 8192].view(np.uint8)
    n = int(estimate(raw, costs, packed[_WEIGHT_WORDS + 8192:], w) + 0.5)
    return n if n != 0 or len(raw) == 0 else 1
