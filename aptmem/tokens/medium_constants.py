"""The ``medium`` tier's constants: one weight per feature (class or run count), fitted against a real tokenizer.

They live in ``medium_constants.json`` beside this module (package data), written by
``benchmarks/calibrate_tokens.py``; anyone can rerun that script and diff the file.
"""

from __future__ import annotations

import math
import os
from importlib import resources
from pathlib import Path
from typing import Any

import msgspec

from aptmem.errors import TokenizerUnavailable

__all__ = ["CONSTANTS_FILE", "FEATURES", "MediumConstants", "decode_constants", "encode_constants", "load_constants"]

#: What the medium tier counts, in the order of its weights: character classes, then runs. Classes
#: whose weights came out the same when fitted apart share one feature (one pass over the text).
FEATURES = (
    "letters",             # ASCII letters, an upper-case one counted twice
    "digits_past_three",   # ASCII digits after the third of a run: cut in groups of three, one token each
    "han",                 # code points U+4000..U+9FFF (UTF-8 lead bytes E4..E9): CJK ideographs
    "kana_wide",           # U+3000..U+3FFF and U+F000..U+FFFF: CJK punctuation, kana, full- and half-width forms
    "hangul",              # U+A000..U+DFFF (lead bytes EA..ED): Hangul syllables
    "other_extra_bytes",   # every other non-ASCII character, weighted by its UTF-8 length - 1
    "two_token_chars",     # non-ASCII characters the reference tokenizer encodes alone in two tokens
    "three_token_chars",   # ... and in three (a rare ideograph or syllable: one token per UTF-8 byte)
    "letter_runs",         # runs of letters (about the words), and single punctuation characters folded into the word after them
    "case_changes",        # upper case right after lower case: camelCase, base64, keys
    "digit_runs",          # runs of digits: each starts a group of three
    "newline_runs",        # runs of newlines, but those right after punctuation (its piece takes them)
    "punct_runs",          # runs of punctuation, but a single one between a non-space and a letter (``/src``, ``.py``)
    "space_runs",          # runs of spaces (space, tab, CR, VT, FF), but a single space before a letter or punctuation
    "vocab_pieces",        # letter pieces as cut (lead space or folded punctuation) that are one token; their letters and runs are not in letters / letter_runs
)

CONSTANTS_FILE = "medium_constants.json"


class MediumConstants(msgspec.Struct, kw_only=True, forbid_unknown_fields=False):
    """Weights per feature (tokens per unit), the tokenizer they were fitted to, and how."""

    reference: str
    weights: dict[str, float]
    #: the reference tokenizer's tokens per non-ASCII character alone, measured
    #: (:class:`aptmem.tokens.medium.CharCosts`, zlib-compressed, base64); required, checked on load
    char_costs: str = ""
    #: the letter pieces the reference tokenizer encodes as one token, read off its vocabulary
    #: (:class:`aptmem.tokens.piece_vocab.PieceVocab`, zlib-compressed, base64); required, checked on load
    pieces: str = ""
    #: how the weights were made: script, seed, corpus size, fit, training error per kind.
    calibration: dict[str, Any] = {}

    def vector(self) -> tuple[float, ...]:
        """The weights in :data:`FEATURES` order."""
        return tuple(self.weights[f] for f in FEATURES)


_encoder = msgspec.json.Encoder(order="deterministic")
_decoder = msgspec.json.Decoder(MediumConstants)


def encode_constants(constants: MediumConstants) -> bytes:
    """Encode constants as indented JSON (reviewable in a diff), ending in a newline."""
    return msgspec.json.format(_encoder.encode(constants), indent=2) + b"\n"


def decode_constants(raw: bytes, where: str = CONSTANTS_FILE) -> MediumConstants:
    """Decode and check constants; a damaged or foreign file is :class:`TokenizerUnavailable`."""
    try:
        constants = _decoder.decode(raw)
    except msgspec.DecodeError as exc:
        raise TokenizerUnavailable("medium", f"{where} is damaged ({exc}); reinstall aptmem or rerun "
                                   "benchmarks/calibrate_tokens.py") from None
    if set(constants.weights) != set(FEATURES):
        raise TokenizerUnavailable("medium", f"{where} has weights for {sorted(constants.weights)}, this version "
                                   f"needs {list(FEATURES)}; rerun benchmarks/calibrate_tokens.py")
    if not constants.char_costs:
        raise TokenizerUnavailable("medium", f"{where} has no character cost table; rerun benchmarks/calibrate_tokens.py")
    if not constants.pieces:
        raise TokenizerUnavailable("medium", f"{where} has no piece vocabulary; rerun benchmarks/calibrate_tokens.py")
    if not all(math.isfinite(w) and w >= 0 for w in constants.weights.values()):
        raise TokenizerUnavailable("medium", f"{where} has a negative or non-finite weight; rerun "
                                   "benchmarks/calibrate_tokens.py")
    return constants


def load_constants(path: str | os.PathLike[str] | None = None) -> MediumConstants:
    """Read constants from ``path``, or the file shipped in the package when ``path`` is None."""
    if path is None:
        try:
            raw = resources.files("aptmem.tokens").joinpath(CONSTANTS_FILE).read_bytes()
        except FileNotFoundError:
            raise TokenizerUnavailable("medium", f"the package file aptmem/tokens/{CONSTANTS_FILE} is missing; "
                                       "reinstall aptmem or run benchmarks/calibrate_tokens.py") from None
        return decode_constants(raw)
    try:
        raw = Path(path).read_bytes()
    except OSError as exc:
        raise TokenizerUnavailable("medium", f"cannot read constants {os.fspath(path)}: {exc.strerror or exc}") from None
    return decode_constants(raw, os.fspath(path))
