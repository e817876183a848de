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
  (:class:`~aptmem.tokens.char_costs.CharCosts`, shipped with the weights), not fitted: in
  cl100k_base 549 Han characters are one token, 12,396 two and 8,047 three, which is why a list
  of names costs more per character than prose, and
* how many runs of each class it holds (a run of letters is about a word; a change from lower
  to upper case inside one marks camelCase, base64 or a key; a digit run starts a piece; a
  punctuation run is a piece of its own; runs of non-ASCII characters are not counted:
  fitted apart, their weight came out 0 once the characters' own costs are counted). A run of
  spaces or of newlines is a piece too, except where the tokenizer folds it into its neighbour: a single
  space before a word or punctuation (`` word``), newlines right after punctuation (``{\\n``).
  A single punctuation character after a non-space and before a letter is folded into the word
  too (cl100k's ``[^\\r\\n\\p{L}\\p{N}]?\\p{L}+``: ``/src``, ``.py``, ``(self``, ``_name``): no
  punctuation run; counted with the letter runs, since the vocabulary has only some of those pieces
  (fitted as a feature of its own, its weight came out 0.556 tokens, a letter run's 0.600), and
* how many letter pieces, as cl100k cuts them (the letters with their leading space or folded
  punctuation character), are one token of its vocabulary (``vocab_pieces``): such a piece costs
  exactly one token however long it is, so its letters and its runs leave the letter features
  and it is priced on its own (:mod:`aptmem.tokens.piece_vocab`: the pieces of 4-16 bytes, read
  off the tokenizer by the calibration and shipped with the weights; shorter pieces are nearly
  all one token and the letter features price them). Tested on the piece as cut, not the bare
  letters: ``cwd`` is one token, ``_cwd`` two, which is what code is full of.

Weights are fitted by :mod:`aptmem.tokens.calibration.medium_fit` on a broad corpus and shipped
in ``medium_constants.json``; classes whose weights came out equal when fitted apart share one
feature.

How it is fast: two paths that count the same, to the last bit of the float
(``tests/test_medium_kernel.py``):

* the compiled kernel (:mod:`aptmem.tokens.medium_kernel`, numba): one loop over the UTF-8
  bytes computes every class and run feature, per character a class lookup and two table
  additions, and a second pass goes from letter run to letter run eight bytes at a time and looks
  each piece of 4-16 bytes up in an exact open-addressing table; called through the compiled
  function's own entry point with one array of its tables (a call costs about 0.3-0.5 us);
* the pure-Python path (:mod:`aptmem.tokens.medium_python`): big-integer popcounts, about 10 ns a
  character, but no import to pay. ``import numba`` and loading the cached machine code cost
  about half a second, more than a short-lived process (a command line, a crash test's writer)
  ever spends counting. So by default (``kernel="auto"``) a process counts in Python until it has
  spent ``KERNEL_AFTER_SECONDS`` doing so (the import's cost: the rule of renting skis until the
  rent paid equals the price, so no process spends more than twice what the better choice in
  hindsight would have), then loads the kernel once for every estimator of the process.
  ``kernel="compiled"`` loads it on the first count (a process known to count a lot, the
  harness's speed measurement), ``kernel="python"`` never.

Measured side by side with tiktoken and the tier of the stop before (``python
benchmarks/medium_against.py --rev 029190b --repeats 15``: the token measurement's corpus, 60 texts
a kind, the best of 15 timings per text, each counter first in turn; load 1.9 on 2 cores): this
tier is 29.8x tiktoken over all kinds, 16.8x on English prose (the kind with the most letter
pieces; 10.1x before the run-to-run piece pass), 27.3x on Chinese, 25.8x on mixed replies, 31.7x
on code, 39.3x on JSON, 36.2x on logs, 1.50-1.70x the tier before on every kind. The token
measurement itself (all 300 texts of a kind in one timing, so the tables' cache misses count)
gives 14.4-14.5x on English and 26.2x over all (two runs, load 1.5). The pieces are what bring
the error on real tool output it was not fitted on from 10.0% to at most 9.0% on every kind
(``benchmarks/medium_real_text.py``).
The pure-Python path (``--kernel python``) is 6.6x tiktoken: not 10x on prose (a text of about
400 characters takes tiktoken about 28 us idle, the big-integer path's fifteen-odd O(n) operations
about 4 us), and 0.79x the tier before the kernel, which had a numpy path for long texts and many
non-ASCII characters (numpy's import is a cost of its own, and the kernel replaces both).
"""

from __future__ import annotations

import functools
import os
import threading
import time

from aptmem.tokens.char_costs import CharCosts
from aptmem.tokens.medium_constants import FEATURES, MediumConstants, load_constants
from aptmem.tokens.medium_python import python_estimate
from aptmem.tokens.piece_vocab import PieceVocab

__all__ = ["FEATURES", "KERNELS", "KERNEL_AFTER_SECONDS", "CharCosts", "MediumEstimator", "PieceVocab", "features",
           "kernel_loaded"]

#: what ``MediumEstimator(kernel=...)`` takes: when the compiled kernel is loaded
KERNELS = ("auto", "compiled", "python")
#: seconds a process counts in pure Python before ``kernel="auto"`` loads the compiled kernel: about
#: what loading it costs with its machine code cached (``import numba`` and the first call, which reads
#: the cache), measured in fresh processes by ``python benchmarks/medium_kernel_load.py``: median 0.82 s
#: at load 2.5 on 2 cores (import numba 0.49, first call 0.30), 1.08 s at load 5.5; the lead measured
#: ``import numba`` alone at 0.36 s idle. Taken a little under the loaded figures: a process that
#: counts this long is one that keeps counting
KERNEL_AFTER_SECONDS = 0.5

_kernel = None  # aptmem.tokens.medium_kernel once loaded (it imports numba)
_kernel_lock = threading.Lock()
_python_seconds = 0.0  # time this process has spent counting in pure Python, in kernel="auto" estimators


def _load_kernel():  # noqa: ANN202 (the module)
    """:mod:`aptmem.tokens.medium_kernel`, imported once per process (numba with it)."""
    global _kernel
    if _kernel is None:
        with _kernel_lock:
            if _kernel is None:
                from aptmem.tokens import medium_kernel

                _kernel = medium_kernel
    return _kernel


def _entry_point(dispatcher, *args):  # noqa: ANN001, ANN002, ANN202 (a numba dispatcher and its arguments)
    """The compiled function for ``args``' types, called past numba's per-call type dispatch.

    A dispatcher types every argument on every call before it calls the machine code: about
    0.2 us of the 0.5 us an empty call of the kernel costs, a twentieth of counting a 1,000-character
    text. The compiled overload's own entry point (``overloads[types].entry_point``, what the
    dispatcher calls) takes the same arguments and only unboxes them, so the estimator calls it
    with arguments of those types only. Where a numba version keeps it elsewhere, the dispatcher
    serves, slower and the same.
    """
    dispatcher(*args)  # compiles, or loads from the cache, the overload for these types
    from numba import typeof

    try:
        return dispatcher.overloads[tuple(typeof(a) for a in args)].entry_point
    except (AttributeError, KeyError, TypeError):
        return dispatcher


def kernel_loaded() -> bool:
    """Whether this process has loaded the compiled kernel (and so numba)."""
    return _kernel is not None


@functools.lru_cache(maxsize=4)
def _decoded_costs(encoded: str) -> CharCosts:
    """The cost table a constants file ships, decoded once per process however many estimators share it."""
    return CharCosts.decode(encoded)


@functools.lru_cache(maxsize=4)
def _decoded_vocab(encoded: str) -> PieceVocab:
    """The piece vocabulary a constants file ships, decoded once per process (and its kernel table built once).

    Decoding checks 77,508 pieces (about 0.1 s) and the kernel's table takes about 0.15 s more:
    paid by every new estimator, that was a third of a second each (``get_estimator("medium")``
    builds one), where the calibration's hundreds of weight sets and a session's estimators all
    share one vocabulary.
    """
    return PieceVocab.decode(encoded)


@functools.lru_cache(maxsize=1)
def _shipped_tables() -> tuple[CharCosts, PieceVocab]:
    """The shipped constants' tables (the file is read once, not on every :func:`features` call)."""
    constants = load_constants()
    return _decoded_costs(constants.char_costs), _decoded_vocab(constants.pieces)


def features(text: str, costs: CharCosts | None = None, vocab: PieceVocab | None = None) -> tuple[int, ...]:
    """The feature values of ``text``, in :data:`~aptmem.tokens.medium_constants.FEATURES` order (by the kernel).

    ``costs`` says which characters take two or three tokens alone, ``vocab`` which letter pieces
    are one token (default: the shipped tables).
    """
    raw = text.encode("utf-8", "surrogatepass")
    if costs is None or vocab is None:
        shipped_costs, shipped_vocab = _shipped_tables()
        costs, vocab = costs or shipped_costs, vocab or shipped_vocab
    return tuple(_load_kernel().feature_counts(raw, costs.array(), vocab.table()))


class MediumEstimator:
    """Script-aware estimate: weighted character classes and runs (see the module docstring).

    ``constants`` (or a ``constants_path``) replaces the weights shipped with the package, e.g.
    to score a fresh calibration. The shipped file is read on the first :meth:`count`, not at
    import or construction. ``kernel`` says when the compiled kernel is loaded (:data:`KERNELS`):
    ``auto`` once the process has counted in Python for :data:`KERNEL_AFTER_SECONDS`,
    ``compiled`` on the first count, ``python`` never; the counts are the same.
    """

    name = "medium"
    tier = "medium"

    def __init__(self, constants: MediumConstants | None = None,
                 constants_path: str | os.PathLike[str] | None = None, *, kernel: str = "auto") -> None:
        if kernel not in KERNELS:
            raise ValueError(f"kernel must be one of {', '.join(KERNELS)}, not {kernel!r}")
        self.kernel = kernel
        self._constants = constants
        self._path = constants_path
        self._weights: tuple[float, ...] | None = None
        self._costs: CharCosts | None = None
        self._vocab: PieceVocab | None = None
        self._compiled = None  # (the compiled count, the kernel's tables) once this estimator counts with the kernel
        if constants is not None:
            self._use(constants)

    def _use(self, constants: MediumConstants) -> None:
        self._constants = constants
        self._weights = constants.vector()
        self._compiled = None
        self._costs = _decoded_costs(constants.char_costs)
        self._vocab = _decoded_vocab(constants.pieces)

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
    def vocab(self) -> PieceVocab:
        """The reference tokenizer's one-token letter pieces the constants ship."""
        if self._vocab is None:
            self._use(self.constants)
        assert self._vocab is not None
        return self._vocab

    @property
    def tokenizer(self) -> str:
        """The tokenizer the weights were fitted to (e.g. ``cl100k_base``)."""
        return self.constants.reference

    def count(self, text: str) -> int:
        """Return the estimated token count of ``text`` (0 for empty text, else at least 1)."""
        compiled = self._compiled
        if compiled is not None:  # the hot path: one call of the compiled kernel
            count, packed = compiled
            return count(text.encode("utf-8", "surrogatepass"), packed)
        if self._weights is None:
            self._use(self.constants)
        if self.kernel == "python":
            n = int(python_estimate(text, self._weights, self._costs, self._vocab) + 0.5)
        elif self.kernel == "compiled" or _kernel is not None:
            self._bind_kernel()
            return self.count(text)
        else:  # auto, the kernel not loaded yet: count in Python and keep the time it took
            global _python_seconds
            started = time.perf_counter()
            n = int(python_estimate(text, self._weights, self._costs, self._vocab) + 0.5)
            _python_seconds += time.perf_counter() - started
            if _python_seconds >= KERNEL_AFTER_SECONDS:
                self._bind_kernel()
        return n if n or not text else 1

    def _bind_kernel(self) -> None:
        """Count with the compiled kernel from now on (loading it, and numba, if this process has not yet)."""
        import numpy as np

        assert self._weights is not None and self._costs is not None and self._vocab is not None
        kernel = _load_kernel()
        packed = kernel.pack(self._costs.array(), self._vocab.table(), np.array(self._weights, dtype=np.float64))
        self._compiled = (_entry_point(kernel.count, b"", packed), packed)

    def __repr__(self) -> str:
        kernel = "" if self.kernel == "auto" else f", kernel={self.kernel!r}"
        return f"MediumEstimator(path={self._path!r}{kernel})" if self._path else f"MediumEstimator({kernel[2:]})"
