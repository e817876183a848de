"""WordLlama's token ids for many texts at once, each distinct piece tokenized once per process.

WordLlama's tokenizer (Llama's SentencePiece BPE) writes spaces as U+2581 and has no
pre-tokenizer. No token of its vocabulary holds a U+2581 after another character (the embedder
checks it when the model loads), so no BPE merge crosses the start of a run of U+2581: a text's
tokens are the tokens of its pieces, each piece a run of U+2581 and the characters up to the next
run. Histories repeat their pieces, so :class:`PieceTokenizer` remembers each piece's token ids and
reads a text's ids from its pieces' ids with numpy (one gather per batch of texts, no Python work
per token).

A new piece is cut, before the tokenizer, at places no vocabulary entry spans
(:func:`token_parts`), and each part is tokenized once: minified JSON's keys and marks repeat.
Digits, newlines and tabs stand alone (no entry of two characters holds one), so every one of
them is a part of its own:

* pieces that differ only in them ("2024-05-22T20:29:00Z", "2024-05-12T15:55:00Z") have one
  *shape* (each of them replaced by the first), learned once; a piece's ids are its shape's ids
  with the ids of its own lone characters put back;
* a new shape is cut *run* by run, a run ending at each lone character, and runs repeat far more
  than shapes (the 20k-record benchmark's 93k new pieces are 47k shapes, 28k distinct runs).

Every level (pieces, shapes, runs, parts) keeps its ids end to end in one array, and a batch's ids
are read with one numpy gather per level.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from itertools import chain, repeat
from typing import Any

import numpy as np

from aptmem.errors import RecallError

__all__ = ["PieceTokenizer", "alone_chars", "piece_keys", "token_parts"]

_SPACE = "\u2581"
_PIECES = re.compile(f"{_SPACE}*[^{_SPACE}]+|{_SPACE}+")
#: A byte-fallback token (``<0x0A>``): never the result of a merge, so it constrains no split.
BYTE_TOKEN = re.compile(r"<0x[0-9A-F]{2}>")
_LETTER = r"[^\W\d_]"
#: Pieces remembered with their token ids; every memo is cleared when they grow past this, so a
#: long build stays bounded.
MEMO_PIECES = 500_000


def alone_chars(vocab: Sequence[str]) -> str:
    """The digits and control whitespace no entry of ``vocab`` longer than one character holds (sorted).

    Such a character is a part of its own wherever it stands: no merge joins it to a neighbour.
    """
    in_multi = set("".join(t for t in vocab if len(t) > 1))
    return "".join(sorted(ch for ch in "0123456789\n\t\r\f\v" if ch not in in_multi))


def token_parts(vocab: Sequence[str]) -> re.Pattern[str]:
    """A pattern whose ``findall`` cuts a piece into parts at places no token of ``vocab`` spans.

    A BPE token is a vocabulary entry and merges never cross a place no entry spans, so the parts'
    tokens, joined, are exactly the piece's tokens. The places are derived from the vocabulary,
    not assumed:

    * around every character that only ever stands alone in a token (:func:`alone_chars`: Llama
      splits digits; it has no newline token, a newline is byte fallback);
    * between a punctuation mark no token has before a letter and the letter after it, and
      between a letter and a punctuation mark no token has after a letter (``":"a"`` in JSON).

    The pattern consumes one part at a time (each character looks ahead at the next one): a
    zero-width split with look-behinds costs about twice as much. It tests the lone characters
    only as one class, so swapping one for another never moves a cut (:class:`PieceTokenizer`
    relies on that).
    """
    multi = "\x00".join(t for t in vocab if len(t) > 1)
    marks = [chr(c) for c in range(33, 127) if not chr(c).isalnum()]

    def chars(cs: Sequence[str]) -> str:
        return "".join(re.escape(c) for c in cs) or "\x00"  # NUL: no letter, mark or digit

    alone = chars(alone_chars(vocab))
    before_letter = chars([m for m in marks if not re.search(re.escape(m) + _LETTER, multi)])
    after_letter = chars([m for m in marks if not re.search(_LETTER + re.escape(m), multi)])
    # A character joins the part of the next one unless the place between them is a cut:
    # a letter before a mark of after_letter, a mark of before_letter before a letter, anything
    # before a character that stands alone.
    letter = f"{_LETTER}(?![{after_letter}{alone}])"
    mark = f"[{before_letter}](?!{_LETTER}|[{alone}])"
    other = f"(?:[^\\w{alone}{before_letter}]|(?![{alone}{before_letter}])[\\d_])(?![{alone}])"
    return re.compile(f"[{alone}]|(?:{letter}|{mark}|{other})*[^{alone}]")


def piece_keys(text: str) -> list[str]:
    """The keys of a text's pieces: each piece without its first U+2581, spaces for the others.

    A piece is a run of spaces (as U+2581) and the characters up to the next run, so for a text
    with single spaces only, no U+2581 and no space at either end, the keys are
    ``text.split(" ")``: one pass in C instead of a pattern over the text (the piece of a key is
    U+2581 and the key, its spaces as U+2581). Any other text is split by the pattern itself.
    """
    if not text:
        return []
    if "  " not in text and text[0] != " " and text[-1] != " " and _SPACE not in text:
        return text.split(" ")
    return [piece[1:].replace(_SPACE, " ") for piece in _PIECES.findall(_SPACE + text.replace(" ", _SPACE))]


class _Ragged:
    """Rows of token ids end to end in one int32 array (grown by doubling), with each row's start and length."""

    def __init__(self) -> None:
        self.flat = np.empty(1 << 16, dtype=np.int32)
        self.size = 0
        self.starts = np.empty(1 << 12, dtype=np.int64)
        self.lens = np.empty(1 << 12, dtype=np.int64)
        self.rows = 0

    def append(self, ids: Any, lens: Any) -> int:
        """Add rows (their ids end to end, and each one's length); the index of the first."""
        first, size = self.rows, self.size
        need_rows, need_ids = first + len(lens), size + len(ids)
        if need_rows > len(self.lens):
            grow = max(need_rows, 2 * len(self.lens))
            self.starts = np.resize(self.starts, grow)
            self.lens = np.resize(self.lens, grow)
        if need_ids > len(self.flat):
            self.flat = np.resize(self.flat, max(need_ids, 2 * len(self.flat)))
        self.flat[size:need_ids] = ids
        self.lens[first:need_rows] = lens
        self.starts[first:need_rows] = size + np.cumsum(lens) - lens
        self.rows, self.size = need_rows, need_ids
        return first

    def gather(self, rows: Any) -> tuple[Any, Any]:
        """The ids of ``rows`` end to end (a new array) and each row's length."""
        lens = self.lens[rows]
        ends = np.cumsum(lens)
        # Position k of the output, in row r, reads flat[starts[r] + k - (ends[r] - lens[r])].
        shift = self.starts[rows] - (ends - lens)
        return self.flat[np.repeat(shift, lens) + np.arange(int(ends[-1]) if len(ends) else 0)], lens


class PieceTokenizer:
    """Token ids of texts as a Llama BPE tokenizer without pre-tokenizer gives them (see the module docstring).

    ``encoder``: the ``tokenizers.Tokenizer`` that tokenizes one piece (spaces already U+2581, no
    normalizer, no special tokens); ``vocab``: its vocabulary. Byte-fallback entries are left out
    of the cutting rules (they are never the result of a merge).
    """

    def __init__(self, encoder: Any, vocab: Sequence[str]) -> None:
        self._encoder = encoder
        words = [t for t in vocab if not BYTE_TOKEN.fullmatch(t)]
        self.cut = token_parts(words)
        alone = alone_chars(words)
        self._alone = alone
        self._shape_of = str.maketrans(dict.fromkeys(alone, alone[:1])) if alone else {}
        # Each lone character is one part and (ASCII: one byte at most) one token; a shape holds
        # the first one's token where the piece held any of them.
        self._alone_token = np.full(128, -1, dtype=np.int32)
        for ch, encoding in zip(alone, encoder.encode_batch_fast(list(alone), add_special_tokens=False)):
            if len(encoding.ids) != 1:
                raise RecallError(f"the tokenizer gives {len(encoding.ids)} tokens for {ch!r}, which stands alone")
            self._alone_token[ord(ch)] = encoding.ids[0]
        self._reset()

    def _reset(self) -> None:
        self._piece_row: dict[str, int] = {}  # a piece's key -> its row of self._pieces
        self._pieces = _Ragged()
        self._shape_row: dict[str, int] = {}  # a key's shape -> its row of self._shapes
        self._shapes = _Ragged()
        self._run_row: dict[str, int] = {}  # a shape's run between lone characters -> its row of self._runs
        self._runs = _Ragged()
        self._part_row: dict[str, int] = {}  # a part -> its row of self._parts
        self._parts = _Ragged()

    def token_arrays(self, texts: Sequence[str]) -> tuple[Any, Any]:
        """Every text's token ids end to end (int32) and each text's count of them (int64)."""
        split = [piece_keys(t) for t in texts]
        keys = list(chain.from_iterable(split))
        rows = self._piece_row
        # Set operations over the keys run in C: most of a text's pieces are known already.
        new = set(keys).difference(rows)
        if len(rows) + len(new) > MEMO_PIECES:
            self._reset()
            rows = self._piece_row
            new = set(keys)
        if new:
            self._learn(list(new))
        ids, lens = self._pieces.gather(np.fromiter(map(rows.__getitem__, keys), dtype=np.int64, count=len(keys)))
        return ids, _totals(lens, np.fromiter(map(len, split), dtype=np.int64, count=len(split)))

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """Each text's token ids as lists (what :meth:`token_arrays` gives, split per text)."""
        ids, lengths = self.token_arrays(texts)
        ends = np.cumsum(lengths)
        return [row.tolist() for row in np.split(ids, ends[:-1])] if len(texts) else []

    def _learn(self, keys: list[str]) -> None:
        """Remember the token ids of new pieces (given by their keys)."""
        # The keys end to end as code points: a key's shape has the first lone character in
        # place of each of its own (numpy over the code points; str.translate of text that is not
        # all ASCII costs ten times as much). A NUL inside a key would break the split: then one by one.
        joined = "\x00".join(keys)
        codes = np.frombuffer(joined.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
        small = np.flatnonzero(codes < 128)
        at = small[self._alone_token[codes[small]] >= 0]
        lone = self._alone_token[codes[at]]
        if len(at):
            shaped = codes.copy()
            shaped[at] = ord(self._alone[0])
            shapes = shaped.tobytes().decode("utf-32-le", "surrogatepass").split("\x00")
        else:
            shapes = joined.split("\x00")
        if len(shapes) != len(keys):
            shapes = [k.translate(self._shape_of) for k in keys]
        shape_rows = self._shape_row
        fresh = set(shapes).difference(shape_rows)
        if fresh:
            self._learn_shapes(list(fresh))
        ids, lens = self._shapes.gather(np.fromiter(map(shape_rows.__getitem__, shapes), dtype=np.int64, count=len(shapes)))
        if len(at):
            # The lone characters of the pieces, in order, are where their shapes hold the first one's token.
            places = np.flatnonzero(ids == self._alone_token[ord(self._alone[0])])
            if len(places) != len(lone):  # cannot happen (the pattern treats lone characters alike): never guess ids
                raise RecallError(f"{len(lone)} lone characters in new pieces, {len(places)} places for them in their shapes")
            ids[places] = lone
        first = self._pieces.append(ids, lens)
        self._piece_row.update(zip(keys, range(first, first + len(keys))))

    def _learn_shapes(self, shapes: list[str]) -> None:
        """Remember the ids of new shapes (of keys): the ids of their runs, each run up to and with a lone character."""
        forms = [_SPACE + s.replace(" ", _SPACE) for s in shapes]  # the pieces as the tokenizer sees them
        joined, lone = "\x00".join(forms), self._alone[:1]
        if lone and joined.count("\x00") == len(forms) - 1:
            # A lone character is a part of its own (token_parts), so a shape's parts are the parts
            # of its runs up to and with each lone character: the runs repeat far more than shapes.
            runs = joined.replace(lone, f"{lone}\x00").split("\x00")
            per_shape = np.fromiter(map(str.count, forms, repeat(lone)), dtype=np.int64, count=len(forms)) + 1
        else:  # no lone characters, or a NUL inside a piece: each shape is one run
            runs, per_shape = forms, np.ones(len(forms), dtype=np.int64)
        rows = self._run_row
        unseen = list(set(runs).difference(rows))
        if unseen:
            self._learn_runs(unseen)
        ids, lens = self._runs.gather(np.fromiter(map(rows.__getitem__, runs), dtype=np.int64, count=len(runs)))
        first = self._shapes.append(ids, _totals(lens, per_shape))
        self._shape_row.update(zip(shapes, range(first, first + len(shapes))))

    def _learn_runs(self, runs: list[str]) -> None:
        """Cut new runs into parts, tokenize the parts not seen yet, and remember each run's ids."""
        cut = self.cut.findall
        # A run of word marks and letters has no cut (cuts fall at digits, newlines and ASCII
        # marks only): most new pieces of prose are words, and str.isalpha is far cheaper than the pattern.
        parts = [[r] if r.lstrip(_SPACE).isalpha() else cut(r) for r in runs]
        every = list(chain.from_iterable(parts))
        rows = self._part_row
        unseen = list(set(every).difference(rows))
        if unseen:
            encodings = [e.ids for e in self._encoder.encode_batch_fast(unseen, add_special_tokens=False)]
            lens = np.fromiter(map(len, encodings), dtype=np.int64, count=len(encodings))
            first = self._parts.append(np.fromiter(chain.from_iterable(encodings), dtype=np.int32, count=int(lens.sum())), lens)
            rows.update(zip(unseen, range(first, first + len(unseen))))
        ids, lens = self._parts.gather(np.fromiter(map(rows.__getitem__, every), dtype=np.int64, count=len(every)))
        first = self._runs.append(ids, _totals(lens, np.fromiter(map(len, parts), dtype=np.int64, count=len(parts))))
        self._run_row.update(zip(runs, range(first, first + len(runs))))


def _totals(lens: Any, groups: Any) -> Any:
    """Sums of ``lens`` over consecutive groups of ``groups[i]`` items each (a group may be empty)."""
    running = np.concatenate(([0], np.cumsum(lens)))
    last = np.cumsum(groups)
    return running[last] - running[last - groups]
