"""The medium tier's two paths (the compiled kernel, the pure-Python big-integer popcounts) are one estimator:
the same features as a plain per-character reference, the same float to the last bit, the same counts;
the kernel's machine code is cached where it can be written and survives two processes compiling at once."""

from __future__ import annotations

import functools
import itertools
import os
import shutil
import subprocess
import sys
from pathlib import Path

import msgspec
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.tokens import MediumEstimator, medium_kernel
from aptmem.tokens.calibration.corpus import broad_corpus
from aptmem.tokens.char_costs import CharCosts
from aptmem.tokens.medium import FEATURES, features
from aptmem.tokens.medium_constants import load_constants
from aptmem.tokens.medium_python import python_estimate
from aptmem.tokens.piece_vocab import PieceVocab
from experiments.measurements.tokens.corpus import token_corpus

ROOT = Path(__file__).resolve().parent.parent
#: one character of every class the features tell apart: lower, upper, digit, punctuation, a control
#: character (punctuation too), underscore, space, tab, newline, non-ASCII
CLASS_REPRESENTATIVES = "aZ5.\x01_ \t\né"
#: a tail of every non-ASCII script the features count (Han, kana, Hangul, other, past the BMP)
SCRIPTS = "帮的蠡カ，한국é😀"
PATHS = ("python", "compiled")


def reference_features(text: str, costs: CharCosts, vocab: PieceVocab | None = None) -> dict[str, int]:
    """The features as the module docstrings state them, one character at a time (slow, plain)."""
    def kind(ch: str | None) -> str:
        if ch is None or not ch.isascii():
            return "other"
        if ch in "abcdefghijklmnopqrstuvwxyz":
            return "lower"
        if ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
            return "upper"
        if ch in "0123456789":
            return "digit"
        if ch in " \t\r\x0b\x0c":
            return "space"
        return "newline" if ch == "\n" else "punct"

    out = dict.fromkeys(FEATURES, 0)
    chars = list(text)
    run = 0
    for i, ch in enumerate(chars):
        prev2, prev, cur = (kind(chars[j]) if j >= 0 else "other" for j in (i - 2, i - 1, i))
        nxt = kind(chars[i + 1]) if i + 1 < len(chars) else "other"
        letter = cur in ("lower", "upper")
        out["letters"] += {"lower": 1, "upper": 2}.get(cur, 0)
        run = run + 1 if cur == "digit" else 0
        out["digits_past_three"] += run > 3
        out["letter_runs"] += letter and prev not in ("lower", "upper")
        out["case_changes"] += cur == "upper" and prev == "lower"
        out["digit_runs"] += cur == "digit" and prev != "digit"
        out["newline_runs"] += cur == "newline" and prev not in ("newline", "punct")
        out["space_runs"] += cur == "space" and prev != "space" and nxt not in ("lower", "upper", "punct")
        if cur == "punct" and prev != "punct":
            folded = prev != "space" and nxt in ("lower", "upper")
            out["letter_runs" if folded else "punct_runs"] += 1
        if not ch.isascii():
            size = len(ch.encode("utf-8", "surrogatepass"))
            script = {"han": 0x4000 <= ord(ch) <= 0x9FFF, "kana_wide": 0x3000 <= ord(ch) <= 0x3FFF or 0xF000 <= ord(ch) <= 0xFFFF,
                      "hangul": 0xA000 <= ord(ch) <= 0xDFFF}
            named = [name for name, hit in script.items() if hit]
            if named:
                out[named[0]] += 1
            else:
                out["other_extra_bytes"] += size - 1
            cost = costs.table[ord(ch)] if ord(ch) < 0x10000 else 0
            out["two_token_chars"] += cost == 2
            out["three_token_chars"] += cost == 3
        del prev2
    # Letter pieces as cut (piece_vocab's docstring): a run of ASCII letters, with a space before it or a
    # punctuation character not after punctuation or a space; one in the vocabulary is one token.
    vocab = vocab or _shipped_vocab()
    i = 0
    while i < len(chars):
        if kind(chars[i]) not in ("lower", "upper"):
            i += 1
            continue
        end = i
        while end < len(chars) and kind(chars[end]) in ("lower", "upper"):
            end += 1
        prev, prev2 = (kind(chars[j]) if j >= 0 else "other" for j in (i - 1, i - 2))
        folded = prev == "punct" and prev2 not in ("punct", "space")
        start = i - 1 if prev == "space" or folded else i
        piece = "".join(chars[start:end])
        if piece in vocab.pieces:
            out["vocab_pieces"] += 1
            out["letters"] -= sum(2 if c.isupper() else 1 for c in chars[i:end])
            out["letter_runs"] -= 2 if folded else 1
        i = end
    return out


@functools.cache
def _shipped_costs() -> CharCosts:
    return MediumEstimator().costs


@functools.cache
def _shipped_vocab() -> PieceVocab:
    return MediumEstimator().vocab


@functools.cache
def _encoding_estimators(group: int, kernel: str) -> list[tuple[MediumEstimator, tuple[str, ...]]]:
    """Estimators whose count spells ``group`` features at once: weight 2 * base**j on the j-th of them."""
    shipped = load_constants()
    out = []
    for start in range(0, len(FEATURES), group):
        names = FEATURES[start:start + group]
        weights = {f: 0.0 for f in FEATURES} | {f: 2.0 * 64 ** j for j, f in enumerate(names)}
        out.append((MediumEstimator(msgspec.structs.replace(shipped, weights=weights), kernel=kernel), names))
    return out


def _decoded(count: int, names: tuple[str, ...]) -> dict[str, int]:
    """The features an encoding estimator's count spells (a count of 1 is the floor of a text with none)."""
    value = 0 if count == 1 else count // 2
    out = {}
    for name in names[:-1]:  # each below 64 (the short strings); the last, the highest weight, takes the rest
        value, out[name] = divmod(value, 64)
    out[names[-1]] = value
    return out


def _counted_features(text: str, estimators: list[tuple[MediumEstimator, tuple[str, ...]]]) -> dict[str, int]:
    found: dict[str, int] = {}
    for est, names in estimators:
        found |= _decoded(est.count(text), names)
    return found


def _both_floats(text: str, w: tuple[float, ...], costs: CharCosts) -> tuple[float, float]:
    vocab = _shipped_vocab()
    kernel = medium_kernel.estimate(text.encode("utf-8", "surrogatepass"), costs.array(), vocab.table(), np.array(w))
    return python_estimate(text, w, costs, vocab), kernel


@pytest.mark.parametrize("path", PATHS)
def test_both_paths_count_every_feature_of_every_short_string(path: str) -> None:
    # Every string of up to four characters of every class: each feature as the path counts it, spelled
    # out by estimators with one weight per feature, equals the plain reference and features().
    estimators = _encoding_estimators(5, path)
    costs = _shipped_costs()
    for length in range(1, 5):
        for chars in itertools.product(CLASS_REPRESENTATIVES, repeat=length):
            text = "".join(chars)
            expected = reference_features(text, costs)
            assert _counted_features(text, estimators) == expected, (path, text)
            assert dict(zip(FEATURES, features(text))) == expected, text


#: pieces random texts are made of: every class alone and in runs, every script, a lone surrogate
_PIECES = [*CLASS_REPRESENTATIVES, *SCRIPTS, "\ud800", "word", "Camel", "__init__", "  ", "\n\n", "123456", "{\n", " x",
           "_store", ".py", "(self", " the", "cwd", "\tfunction", "-quoted", "ABCDEFGHIJKLMNOPQ"]
#: any code point, surrogates included (a str may hold one; the tier encodes it with surrogatepass)
_ANY_CHAR = st.characters(codec=None, exclude_categories=())


@settings(max_examples=60, deadline=None)
@given(st.one_of(st.lists(st.sampled_from(_PIECES), max_size=800).map("".join), st.text(_ANY_CHAR, max_size=300)))
def test_both_paths_agree_with_the_reference_on_random_text(text: str) -> None:
    expected = reference_features(text, _shipped_costs())
    assert dict(zip(FEATURES, features(text))) == expected
    for path in PATHS:
        assert _counted_features(text, _encoding_estimators(1, path)) == expected, path
    python, kernel = _both_floats(text, MediumEstimator().constants.vector(), _shipped_costs())
    assert python == kernel


def test_both_paths_give_the_same_float_on_the_whole_calibration_corpus() -> None:
    est = MediumEstimator()
    w = est.constants.vector()
    texts = [s.text for s in broad_corpus(0, 200)] + [s.text for s in token_corpus(1, 60)]
    by_path = {path: MediumEstimator(kernel=path) for path in PATHS}
    for index, text in enumerate(texts):
        python, kernel = _both_floats(text, w, est.costs)
        assert python == kernel, (index, len(text))  # bit for bit: the same additions in the same order
        formula = max(int(sum(a * b for a, b in zip(w, features(text), strict=True)) + 0.5), 1)
        assert [e.count(text) for e in by_path.values()] == [formula] * 2, (index, len(text))


def test_scripts_and_character_costs_by_the_kernel_and_by_regex_agree() -> None:
    costs = _shipped_costs()
    every_char = "".join(chr(cp) for cp in range(0x80, 0x10000) if not 0xD800 <= cp < 0xE000) + "😀\udc80"
    texts = [every_char, "abc 帮 def 的蠡龘 x" * 40] + [s.text for s in broad_corpus(0, 30) if not s.text.isascii()]
    for text in texts:
        named = dict(zip(FEATURES, features(text)))
        kernel = tuple(named[f] for f in ("han", "kana_wide", "hangul", "two_token_chars", "three_token_chars"))
        assert kernel == costs.non_ascii(text), text[:40]
    # every BMP character once: the counts are the table's
    assert costs.counts(every_char) == (costs.table.count(2), costs.table.count(3))


def test_every_length_of_piece_at_every_offset_of_the_kernels_eight_byte_words() -> None:
    # The kernel reads eight bytes at a time: a piece of every length (4-8 bytes in one table, 9-16
    # in the other) at every offset of a word, after every lead, ending the text (its tail is read
    # byte by byte), inside a run longer than 16 bytes, and the same pieces in upper case.
    vocab, costs = _shipped_vocab(), _shipped_costs()
    by_length: dict[int, list[str]] = {}
    for piece in sorted(vocab.pieces):
        by_length.setdefault(len(piece), []).append(piece)
    assert sorted(by_length) == list(range(4, 17))
    texts = []
    for length, pieces in by_length.items():
        for piece in pieces[:: max(1, len(pieces) // 6)]:
            letters = piece.lstrip(" \t\r\x0b\x0c!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~\x00\x7f")
            for offset in range(9):
                pad = "9" * offset
                texts += [pad + piece, pad + piece + "!", pad + " " + letters + "7", pad + "._" + letters,
                          pad + "\x00" + letters, pad + letters.upper() + " ", pad + letters * 3, "é" + pad + piece]
    for text in texts:
        assert dict(zip(FEATURES, features(text))) == reference_features(text, costs), repr(text)
    # and as the estimator counts them, by the compiled count's own entry point
    python, compiled = MediumEstimator(kernel="python"), MediumEstimator(kernel="compiled")
    assert [compiled.count(t) for t in texts] == [python.count(t) for t in texts]


def test_the_compiled_count_past_numbas_dispatch_counts_as_the_dispatcher_does() -> None:
    from aptmem.tokens.medium import _entry_point

    est = MediumEstimator(kernel="compiled")
    packed = medium_kernel.pack(est.costs.array(), est.vocab.table(), np.array(est.constants.vector()))
    direct = _entry_point(medium_kernel.count, b"", packed)
    assert direct is not medium_kernel.count  # numba keeps the overload's entry point where this reads it
    for text in ["", "a", "hello world", "帮 héllo 😀", "x" * 70_000]:
        raw = text.encode("utf-8", "surrogatepass")
        assert direct(raw, packed) == medium_kernel.count(raw, packed) == est.count(text)

    class Bare:  # a callable that is no numba dispatcher: served as it is
        def __call__(self, *args: object) -> int:
            return 7

    bare = Bare()
    assert _entry_point(bare, b"", packed) is bare
    with pytest.raises(ValueError, match="weights"):
        medium_kernel.pack(est.costs.array(), est.vocab.table(), np.zeros(17))


def test_a_text_longer_than_the_python_masks_is_counted_whole() -> None:
    # A run across the 64k mark is one run, as the tokenizer sees it; the kernel unpacks its counters
    # every 16k bytes, so a text of many blocks checks that too.
    # (" qzxwv" is no token of the vocabulary, "word" after a digit is one)
    assert {"qzxwv", " qzxwv"}.isdisjoint(_shipped_vocab().pieces) and "word" in _shipped_vocab().pieces
    text = "qzxwv " * 20_000 + "1234567word" * 3_000
    named = dict(zip(FEATURES, features(text)))
    assert named["letter_runs"] == 20_000 and named["letters"] == 100_000 and named["digits_past_three"] == 12_000
    assert named["vocab_pieces"] == 3_000
    w = MediumEstimator().constants.vector()
    python, kernel = _both_floats(text, w, _shipped_costs())
    assert python == kernel
    assert {MediumEstimator(kernel=path).count(text) for path in PATHS} == {int(kernel + 0.5)}


def test_auto_counts_in_python_until_the_import_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    # In a fresh process a few counts never import numba; past KERNEL_AFTER_SECONDS (set to 0 here)
    # the next count loads the kernel, and every estimator of the process counts with it.
    code = ("import sys\nfrom aptmem.tokens import medium\nfrom aptmem.tokens import MediumEstimator\n"
            "a, b = MediumEstimator(), MediumEstimator()\n"
            "before = [a.count('hello world ' * 50) for _ in range(20)]\n"
            "print('numba' in sys.modules, medium.kernel_loaded())\n"
            "medium.KERNEL_AFTER_SECONDS = 0.0\n"
            "after = [a.count('hello world ' * 50), b.count('hello world ' * 50)]\n"
            "print(medium.kernel_loaded(), b._compiled is not None, set(before) == set(after))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "False", "True", "True", "True"]
    with pytest.raises(ValueError, match="kernel must be one of"):
        MediumEstimator(kernel="fast")


def _count_in_child(env: dict[str, str], folder: Path) -> subprocess.Popen[str]:
    code = ("import numpy as np, medium_kernel\n"
            "print(medium_kernel.feature_counts('Hello 12345 帮'.encode(), np.zeros(65536, np.uint8), "
            "medium_kernel.build_table(np.array([ord('H') | ord('e') << 8 | ord('l') << 16 | ord('l') << 24 "
            "| ord('o') << 32], np.uint64), np.zeros((0, 2), np.uint64))))\n")
    return subprocess.Popen([sys.executable, "-c", code], cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _kernel_copy(tmp_path: Path) -> Path:
    folder = tmp_path / "pkg"
    folder.mkdir()
    shutil.copy(ROOT / "aptmem" / "tokens" / "medium_kernel.py", folder)
    return folder


def test_two_processes_compiling_at_once_share_one_cache(tmp_path: Path) -> None:
    # What two pytest-xdist workers do on a fresh clone: both compile into an empty cache at once.
    folder, cache = _kernel_copy(tmp_path), tmp_path / "cache"
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache), "PYTHONPATH": str(folder)}
    children = [_count_in_child(env, folder) for _ in range(2)]
    outs = [child.communicate(timeout=300) for child in children]
    # 'Hello' is the one piece of the vocabulary (its letters and run go to vocab_pieces); spaces before a digit and a Han character
    expected = "(0, 2, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 2, 1)"
    assert [(child.returncode, out.strip()) for child, (out, _) in zip(children, outs)] == [(0, expected)] * 2, outs
    assert list(cache.rglob("*.nbi")) and list(cache.rglob("*.nbc"))
    third = _count_in_child(env, folder)
    assert third.communicate(timeout=300)[0].strip() == expected and third.returncode == 0


def test_the_cache_falls_back_to_the_user_cache_where_the_package_cannot_be_written(tmp_path: Path) -> None:
    # A read-only install: numba cannot make __pycache__ beside the module (here a file of that name
    # stands in its way, which holds even for root) and caches in the user's cache directory instead.
    folder = _kernel_copy(tmp_path)
    (folder / "__pycache__").write_text("not a directory")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env |= {"XDG_CACHE_HOME": str(tmp_path / "user-cache"), "HOME": str(tmp_path), "PYTHONPATH": str(folder),
            "PYTHONDONTWRITEBYTECODE": "1"}
    child = _count_in_child(env, folder)
    out, err = child.communicate(timeout=300)
    assert child.returncode == 0, err
    assert list((tmp_path / "user-cache" / "numba").rglob("*.nbc")), err
