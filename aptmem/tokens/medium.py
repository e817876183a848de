"""The ``medium`` tier: a weighted count of character classes and of their runs, fitted to a real tokenizer.

What it counts, and why: a tokenizer such as cl100k_base first cuts text into pieces (a run of
letters with the space before it, up to three digits, a run of punctuation, a run of spaces or of
newlines), then merges each piece into as few vocabulary tokens as it can. So the estimate is a
linear formula over

* how many characters of each class the text holds (letters, an upper-case one twice; Han
  characters; CJK punctuation, kana and full-width forms; Hangul; the extra UTF-8 bytes of every
  other non-ASCII character; punctuation characters are not counted: fitted apart, once their
  runs and the folds below are counted, their weight came out 0), and the digits past the third
  of a run: the tokenizer cuts a digit run in pieces of up to three digits (``\\p{N}{1,3}``),
  every one a token, so a run costs one token and about one more per three digits past the
  third (fitted 0.333 a digit),
* how many non-ASCII characters the tokenizer cannot encode alone in one token: a byte-level
  BPE gives a common ideograph one token and a rare one two or three (its UTF-8 bytes). Which
  characters those are is read off the reference tokenizer's vocabulary
  (:class:`CharCosts`, shipped with the weights), not fitted: in cl100k_base 549 Han characters
  are one token, 12,396 two and 8,047 three, which is why a list of names costs more per
  character than prose, and
* how many runs of each class it holds (a run of letters is about a word; a change from lower
  to upper case inside one marks camelCase, base64 or a key; a digit run starts a piece; a
  punctuation run is a piece of its own; runs of non-ASCII characters are not counted:
  fitted apart, their weight came out 0 once the characters' own costs are counted). A run of
  spaces or of newlines is a piece too, except where the tokenizer folds it into its neighbour: a single
  space before a word or punctuation (`` word``), newlines right after punctuation (``{\\n``).
  A single punctuation character after a non-space and before a letter is folded into the word
  too (cl100k's ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+``: ``/src``, ``.py``, ``(self``, ``_name``): no
  punctuation run; counted with the letter runs, since the vocabulary has only some of those pieces
  (fitted as a feature of its own, its weight came out 0.556 tokens, a letter run's 0.600).

Weights are fitted by :mod:`aptmem.tokens.calibration.medium_fit` on a broad corpus and shipped
in ``medium_constants.json``; classes whose weights came out equal when fitted apart share one
feature, so one pass counts them.

How it is fast: the text is encoded once and ``bytes.translate`` maps every byte to its class
(deleting UTF-8 continuation bytes, so a character is one byte); no Python code runs per
character. Then one of two paths, which count the same (tests/test_medium_lookup.py):

* short texts (under ``NUMPY_FROM`` characters): the class string, one one-hot bit per class,
  is read as one big integer ``x``; ``x & mask`` with a per-feature mask and ``int.bit_count``
  give each class's size, and ``x ^ (x & (x << 8))`` marks where a run of each class starts,
  counted the same way (shifted against the neighbours, by one of two shifts: where upper case
  follows lower case, and which runs a neighbour folds in). Seven popcounts, and an eighth where
  the text has four digits in a row (one substring search tells), each about 1 ns a character
  (CPython's ``bit_count`` is not one instruction), but a fraction of a microsecond a call;
* long texts: every character's neighbourhood (its class and its neighbours') is one byte, and
  one numpy ``bincount`` of those bytes times each neighbourhood's summed weights is the
  estimate (:mod:`aptmem.tokens.medium_lookup`): about 7 ns a character on a loaded machine,
  but several microseconds a call.

Non-ASCII text adds one translate for its scripts and two regular-expression scans (character
classes compiled once) for its two- and three-token characters, or, from ``COSTS_NUMPY_FROM``
non-ASCII characters, one numpy lookup of each code point's script and cost.

Measured side by side with tiktoken and the previous tier (``python benchmarks/medium_against.py
--rev main --repeats 15``: the token measurement's corpus, 60 texts a kind, the best of 15 timings
per text, each counter first in turn; load 8.9 on 2 cores): 8.1x tiktoken over all kinds, 11.5x
on code, 10.8x on logs, 9.2x on JSON, 6.4x on Chinese, 6.3x on mixed replies, 5.9x on English
prose. The previous tier (no folded punctuation, a weight per digit) ran 9.4x in the same run:
this one is 0.86x its speed, the price of counting digits past the third of a run (about 0.4 us
a text that has four digits in a row, and a few microseconds for a long one with many) and of
the folded punctuation, for less error on text it was not fitted on: leave one kind out at most
7.3% (was 9.4%), held-out files 7.7% (was 10.1%), the real transcripts' kinds 9.97% (was 15.5%:
pi's edit confirmations; ``benchmarks/calibrate_tokens.py``, ``benchmarks/medium_real_text.py``). The tier is not 10x faster than tiktoken on prose: a text of
about 400 characters takes tiktoken about 40 us at that load, and the big-integer path's
operations each cost a fixed part of that (measured at load 8.9 on a 396-character text: the
translate 0.35 us, reading the class string as an integer 0.69, a shift 0.21, an AND or XOR
0.11, a popcount 0.64), about 7 us in all; a tenth of tiktoken would leave room for about four
popcounts and no shift.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import zlib
from collections.abc import Callable

from aptmem.tokens.medium_constants import FEATURES, MediumConstants, load_constants

__all__ = ["COSTS_NUMPY_FROM", "FEATURES", "NUMPY_FROM", "CharCosts", "MediumEstimator", "features"]

# One-hot class bits of the class string (one byte per character). Placed so that every test of a
# neighbour needs one of two shifts: the previous character's space, punctuation and letter bits
# land on this one's punctuation, newline and upper-case bits by ``x << 9`` (folded punctuation,
# newlines after punctuation, case changes), the next character's folding and letter bits on this
# one's space and punctuation bits by ``x >> 11`` (a single space before a word, folded punctuation).
_SPACE, _PUNCT, _NEWLINE, _FOLDS_SPACE, _LETTER, _UPPER, _DIGIT = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40
#: code points a :class:`CharCosts` table covers: the Basic Multilingual Plane
_PLANE = 0x10000
#: texts of at least this many characters are counted by one numpy lookup per character, shorter
#: ones by big-integer popcounts (numpy's calls cost more than a short text's popcounts); measured
#: by ``python benchmarks/medium_crossover.py``, which prints both paths' time per length (at load
#: 5 on 2 cores numpy was faster from 700-1,500 characters, by kind)
NUMPY_FROM = 1000
#: the popcounts' masks cover this many characters: the most NUMPY_FROM may be
_MASK_CHARS = 1 << 16
#: CharCosts counts at least this many non-ASCII characters with numpy, fewer with two regex scans
#: (measured by the same script: numpy faster from 96 non-ASCII characters, twice, at load 5)
COSTS_NUMPY_FROM = 96
_ASCII = bytes(range(128))


def _tables() -> tuple[bytes, bytes, bytes]:
    """The one-hot class table, the script table of non-ASCII lead bytes, and the continuation bytes."""
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
    return int.from_bytes(bytes([bits]) * _MASK_CHARS, "little")


# Built once at import: three small bytes objects and seven masks of 64 KiB, no I/O.
_ONEHOT, _SCRIPT, _CONTINUATION = _tables()
_M_LETTERS = _mask(_LETTER | _UPPER)  # popcount counts an upper-case letter twice
_M_LETTER = _mask(_LETTER)
_M_UPPER = _mask(_UPPER)
_M_DIGIT = _mask(_DIGIT)
_FOUR_DIGITS = bytes([_DIGIT]) * 4  # four digits in a row in the one-hot class string
_M_PUNCT = _mask(_PUNCT)
_M_NEWLINE = _mask(_NEWLINE)
_M_SPACE = _mask(_SPACE)


def _class_pattern(table: bytes, cost: int) -> re.Pattern[str]:
    """One character class of the code points whose entry in ``table`` is ``cost``, as ranges."""
    ranges: list[list[int]] = []
    for cp in range(0x80, len(table)):
        if table[cp] == cost:
            if ranges and ranges[-1][1] == cp - 1:
                ranges[-1][1] = cp
            else:
                ranges.append([cp, cp])
    if not ranges:
        return re.compile("(?!)")  # matches nothing
    return re.compile("[" + "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges) + "]")


class CharCosts:
    """How many tokens the reference tokenizer spends on each non-ASCII character of the BMP, alone.

    ``table`` holds one byte per code point below U+10000 (0 where not measured: ASCII,
    surrogates). Measured from the tokenizer (:meth:`measure`) when the weights are fitted and
    shipped beside them (:meth:`encode`), so counting needs no tokenizer.
    """

    def __init__(self, table: bytes) -> None:
        if len(table) != _PLANE:
            raise ValueError(f"a character cost table has {_PLANE} entries, not {len(table)}")
        self.table = bytes(table)
        self._two = _class_pattern(self.table, 2)
        self._three = _class_pattern(self.table, 3)
        self._numpy_table = None  # the table as a numpy array, made when a long text first needs it

    @classmethod
    def measure(cls, count: Callable[[str], int]) -> CharCosts:
        """The table of a tokenizer: ``count(chr(cp))`` for every non-ASCII BMP code point (at most 3)."""
        table = bytearray(_PLANE)
        for cp in range(0x80, _PLANE):
            if not 0xD800 <= cp < 0xE000:
                table[cp] = min(3, count(chr(cp)))
        return cls(bytes(table))

    def encode(self) -> str:
        """The table compressed, as text for the constants file."""
        return base64.b64encode(zlib.compress(self.table, 9)).decode("ascii")

    @classmethod
    def decode(cls, text: str) -> CharCosts:
        """A table from :meth:`encode`'s text; damaged text raises ValueError."""
        try:
            return cls(zlib.decompress(base64.b64decode(text, validate=True)))
        except (zlib.error, binascii.Error) as exc:
            raise ValueError(f"damaged character cost table ({exc})") from None

    def counts(self, text: str, raw: bytes | None = None) -> tuple[int, int]:
        """How many characters of ``text`` (UTF-8: ``raw``, if at hand) take two tokens alone, and how many three."""
        return self.non_ascii(text, raw)[3:]

    def non_ascii(self, text: str, raw: bytes | None = None) -> tuple[int, int, int, int, int]:
        """The non-ASCII characters of ``text`` (UTF-8: ``raw``) by script and cost.

        Han, CJK-wide and Hangul characters (by UTF-8 lead byte), and the characters that take
        two and three tokens alone. Many of them (``COSTS_NUMPY_FROM``) are counted by one numpy
        lookup of a table that holds each code point's script and cost; fewer by a translate of
        the lead bytes and two regex scans (numpy's calls cost more than a short scan).
        """
        if raw is None:
            raw = text.encode("utf-8", "surrogatepass")
        if 2 * (len(raw) - len(text)) < len(text):
            # Mostly ASCII: look only at the other characters (dropping the ASCII bytes is one C loop).
            text = raw.translate(None, _ASCII).decode("utf-8", "surrogatepass")
        if len(text) >= COSTS_NUMPY_FROM:
            if self._numpy_table is None:
                self._numpy_table = _numpy_lookup().script_cost_table(self.table)
            return _numpy_lookup().script_cost_counts(text, self._numpy_table)
        scripts = raw.translate(_SCRIPT, _CONTINUATION)
        return (scripts.count(b"h"), scripts.count(b"f"), scripts.count(b"k"),
                len(self._two.findall(text)), len(self._three.findall(text)))


_lookup = None


def _numpy_lookup():  # noqa: ANN202 (the module, imported on first use)
    """:mod:`aptmem.tokens.medium_lookup`, imported on first use: it imports numpy, which a short text never needs."""
    global _lookup
    if _lookup is None:
        from aptmem.tokens import medium_lookup

        _lookup = medium_lookup
    return _lookup


_shipped_costs: CharCosts | None = None


def _default_costs() -> CharCosts:
    global _shipped_costs
    if _shipped_costs is None:
        _shipped_costs = CharCosts.decode(load_constants().char_costs)
    return _shipped_costs


def features(text: str, costs: CharCosts | None = None) -> tuple[int, ...]:
    """The feature values of ``text``, in :data:`~aptmem.tokens.medium_constants.FEATURES` order.

    ``costs`` says which characters take two or three tokens alone (default: the shipped table).
    """
    raw = text.encode("utf-8", "surrogatepass")
    lookup = _numpy_lookup()
    codes = raw.translate(lookup.CLASS_CODES, _CONTINUATION)
    out = lookup.code_features(codes)
    out[1] = lookup.digits_past_three(codes)
    if not text.isascii():
        out[2:8] = _non_ascii_features(costs or _default_costs(), text, raw)
    return tuple(out)


def _non_ascii_features(costs: CharCosts, text: str, raw: bytes) -> tuple[int, int, int, int, int, int]:
    """The six non-ASCII features of ``text`` (``raw``: its UTF-8), in :data:`FEATURES` order."""
    han, wide, hangul, two, three = costs.non_ascii(text, raw)
    # A Han, CJK or Hangul character is 3 UTF-8 bytes; what is left of the extra bytes belongs to the others.
    return han, wide, hangul, len(raw) - len(text) - 2 * (han + wide + hangul), two, three


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
        self._weights: tuple[float, ...] | None = None
        self._table = None  # the long path's weight per neighbourhood (numpy), made on its first text
        self._costs: CharCosts | None = None
        if constants is not None:
            self._use(constants)

    def _use(self, constants: MediumConstants) -> None:
        self._constants = constants
        self._weights = constants.vector()
        self._table = None
        self._costs = CharCosts.decode(constants.char_costs)

    @property
    def constants(self) -> MediumConstants:
        """The constants in use (loaded on first access)."""
        if self._constants is None:
            self._use(load_constants(self._path))
        assert self._constants is not None
        return self._constants

    @property
    def costs(self) -> CharCosts:
        """The reference tokenizer's character costs the constants ship."""
        if self._costs is None:
            self._use(self.constants)
        assert self._costs is not None
        return self._costs

    @property
    def tokenizer(self) -> str:
        """The tokenizer the weights were fitted to (e.g. ``cl100k_base``)."""
        return self.constants.reference

    def count(self, text: str) -> int:
        """Return the estimated token count of ``text`` (0 for empty text, else at least 1)."""
        w = self._weights
        if w is None:
            self._use(self.constants)
            w = self._weights
            assert w is not None
        if len(text) >= NUMPY_FROM:
            estimate = self._count_long(text)
        else:
            # The hot path: the features as big-integer popcounts, inlined. The tests check
            # that it and the long path agree with features() on every corpus text.
            if text.isascii():
                raw = text.encode("ascii")
                classes = raw.translate(_ONEHOT)
                estimate = 0.0
            else:
                raw = text.encode("utf-8", "surrogatepass")
                classes = raw.translate(_ONEHOT, _CONTINUATION)
                estimate = self._non_ascii(text, raw)
            x = int.from_bytes(classes, "little")
            r = x ^ (x & (x << 8))  # where a run of each class starts (x & ~before without a negative number: faster)
            prev = x << 9  # the previous character's space / punctuation / letter bit on this one's punctuation / newline / upper bit
            nxt = x >> 11  # the next character's folding / letter bit on this one's space / punctuation bit
            # The runs a neighbour folds in, dropped with an AND and an XOR (one popcount where a
            # difference of two took two): newlines after punctuation, single spaces before a word or
            # punctuation. A punctuation run that starts after a non-space and is followed by a letter
            # (so one character long) is folded into the word: taken from the punctuation runs (its
            # bits are among theirs: an XOR) and counted with the letter runs (other bits: an OR).
            newlines = r & _M_NEWLINE
            newlines ^= newlines & prev
            spaces = r & _M_SPACE
            spaces ^= spaces & nxt
            punct_runs = r & _M_PUNCT
            folded = punct_runs & nxt
            folded ^= folded & prev
            digit_runs = (r & _M_DIGIT).bit_count()
            if digit_runs and _FOUR_DIGITS in classes:  # (most texts have no run of four digits: one substring search)
                # digits_past_three: cl100k cuts a digit run in pieces of up to three digits, each one
                # token; a digit whose three characters before are digits too, by two shifts and ANDs
                digits = x & _M_DIGIT
                digits &= digits << 8
                estimate += w[1] * (digits & (digits << 16)).bit_count()
            estimate += (w[0] * (x & _M_LETTERS).bit_count()
                         + w[8] * ((r & _M_LETTER) | folded).bit_count() + w[9] * (r & prev & _M_UPPER).bit_count()
                         + w[10] * digit_runs + w[11] * newlines.bit_count()
                         + w[12] * (punct_runs ^ folded).bit_count() + w[13] * spaces.bit_count())
        n = int(estimate + 0.5)
        return n if n or not text else 1

    def _non_ascii(self, text: str, raw: bytes) -> float:
        """The weighted non-ASCII features of ``text`` (``raw``: its UTF-8)."""
        w = self._weights
        assert w is not None
        han, wide, hangul, other, two, three = _non_ascii_features(self.costs, text, raw)
        return w[2] * han + w[3] * wide + w[4] * hangul + w[5] * other + w[6] * two + w[7] * three

    def _count_long(self, text: str) -> float:
        """The estimate of a long text, unrounded: one lookup per character (:mod:`aptmem.tokens.medium_lookup`)."""
        lookup = _numpy_lookup()
        if self._table is None:
            assert self._weights is not None
            self._table = lookup.weight_table(self._weights)
        if text.isascii():  # (a translate that deletes nothing is faster)
            codes = text.encode("ascii").translate(lookup.CLASS_CODES)
            estimate = 0.0
        else:
            raw = text.encode("utf-8", "surrogatepass")
            codes = raw.translate(lookup.CLASS_CODES, _CONTINUATION)
            estimate = self._non_ascii(text, raw)
        estimate += float(lookup.class_histogram(codes).dot(self._table))
        # (digits_past_three finds a text's runs of four digits by substring search first: numpy only for many)
        return estimate + self._weights[1] * lookup.digits_past_three(codes)

    def __repr__(self) -> str:
        return f"MediumEstimator(path={self._path!r})" if self._path else "MediumEstimator()"
