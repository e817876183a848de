"""What the reference tokenizer spends on each non-ASCII character alone, and the non-ASCII features of a text.

A byte-level BPE gives a common ideograph one token and a rare one two or three (its UTF-8
bytes). Which characters those are is read off the reference tokenizer's vocabulary
(:meth:`CharCosts.measure`) when the medium tier's weights are fitted, and shipped beside them, so
counting needs no tokenizer. The compiled kernel (:mod:`aptmem.tokens.medium_kernel`) looks each
code point up in :meth:`CharCosts.array`; the pure-Python path counts them with two regular
expressions (character classes compiled once) and one translate of the lead bytes for the scripts.
"""

from __future__ import annotations

import base64
import binascii
import re
import zlib
from collections.abc import Callable

__all__ = ["CONTINUATION", "CharCosts", "non_ascii_features"]

#: code points a :class:`CharCosts` table covers: the Basic Multilingual Plane
PLANE = 0x10000
_ASCII = bytes(range(128))
#: UTF-8 continuation bytes: deleting them leaves one byte a character
CONTINUATION = bytes(range(0x80, 0xC0))


def _script_table() -> bytes:
    """UTF-8 lead byte -> script: h Han, f CJK-wide, k Hangul, x any other non-ASCII, . ASCII."""
    script = bytearray(b"." * 256)
    for c in range(0x80, 0x100):  # lead bytes of other non-ASCII characters (and stray bytes)
        script[c] = ord("x")
    for c in range(0xE4, 0xEA):  # U+4000..U+9FFF: CJK unified ideographs
        script[c] = ord("h")
    for c in (0xE3, 0xEF):  # U+3000..U+3FFF (CJK punctuation, kana), U+F000..U+FFFF (full-width forms)
        script[c] = ord("f")
    for c in range(0xEA, 0xEE):  # U+A000..U+DFFF: Hangul syllables (and Yi)
        script[c] = ord("k")
    return bytes(script)


_SCRIPT = _script_table()


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
        if len(table) != PLANE:
            raise ValueError(f"a character cost table has {PLANE} entries, not {len(table)}")
        self.table = bytes(table)
        self._patterns: tuple[re.Pattern[str], re.Pattern[str]] | None = None  # compiled on the first regex count
        self._array = None  # the table as a numpy array, made when the kernel first needs it

    @classmethod
    def measure(cls, count: Callable[[str], int]) -> CharCosts:
        """The table of a tokenizer: ``count(chr(cp))`` for every non-ASCII BMP code point (at most 3)."""
        table = bytearray(PLANE)
        for cp in range(0x80, PLANE):
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

    def array(self):  # noqa: ANN201 (a numpy array; numpy is imported only for the kernel)
        """The table as a writable ``uint8`` numpy array, the compiled kernel's argument (made once)."""
        if self._array is None:
            import numpy as np

            self._array = np.frombuffer(self.table, np.uint8).copy()  # writable: one compiled signature
        return self._array

    def counts(self, text: str, raw: bytes | None = None) -> tuple[int, int]:
        """How many characters of ``text`` (UTF-8: ``raw``, if at hand) take two tokens alone, and how many three."""
        return self.non_ascii(text, raw)[3:]

    def non_ascii(self, text: str, raw: bytes | None = None) -> tuple[int, int, int, int, int]:
        """The non-ASCII characters of ``text`` (UTF-8: ``raw``) by script and cost.

        Han, CJK-wide and Hangul characters (by UTF-8 lead byte: one translate), and the
        characters that take two and three tokens alone (two regex scans).
        """
        if raw is None:
            raw = text.encode("utf-8", "surrogatepass")
        if self._patterns is None:
            self._patterns = (_class_pattern(self.table, 2), _class_pattern(self.table, 3))
        if 2 * (len(raw) - len(text)) < len(text):
            # Mostly ASCII: look only at the other characters (dropping the ASCII bytes is one C loop).
            text = raw.translate(None, _ASCII).decode("utf-8", "surrogatepass")
        scripts = raw.translate(_SCRIPT, CONTINUATION)
        two, three = self._patterns
        return (scripts.count(b"h"), scripts.count(b"f"), scripts.count(b"k"),
                len(two.findall(text)), len(three.findall(text)))


def non_ascii_features(costs: CharCosts, text: str, raw: bytes) -> tuple[int, int, int, int, int, int]:
    """The six non-ASCII features of ``text`` (``raw``: its UTF-8), in ``FEATURES`` order."""
    han, wide, hangul, two, three = costs.non_ascii(text, raw)
    # A Han, CJK or Hangul character is 3 UTF-8 bytes; what is left of the extra bytes belongs to the others.
    return han, wide, hangul, len(raw) - len(text) - 2 * (han + wide + hangul), two, three
