"""The medium tier's two paths (big-integer popcounts for short texts, one numpy lookup per character for
long ones) are one estimator: the same features and the same counts on every text."""

from __future__ import annotations

import functools
import itertools
import random

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.tokens import MediumEstimator, medium
from aptmem.tokens.calibration.corpus import broad_corpus
from aptmem.tokens.medium import FEATURES, features
from aptmem.tokens.medium_constants import load_constants
from experiments.measurements.tokens.corpus import token_corpus

#: one character of every class the features tell apart: lower, upper, digit, punctuation, a control
#: character (punctuation too), underscore, space, tab, newline, non-ASCII
CLASS_REPRESENTATIVES = "aZ5.\x01_ \t\né"
#: a tail of every non-ASCII script the features count (Han, kana, Hangul, other, past the BMP)
SCRIPTS = "帮的蠡カ，한국é😀"


@functools.cache
def _encoding_estimators(group: int) -> list[tuple[MediumEstimator, tuple[str, ...]]]:
    """Estimators whose count spells ``group`` features at once: weight 2 * base**j on the j-th of them."""
    shipped = load_constants()
    out = []
    for start in range(0, len(FEATURES), group):
        names = FEATURES[start:start + group]
        weights = {f: 0.0 for f in FEATURES} | {f: 2.0 * 64 ** j for j, f in enumerate(names)}
        out.append((MediumEstimator(msgspec.structs.replace(shipped, weights=weights)), names))
    return out


def _decoded(count: int, names: tuple[str, ...]) -> dict[str, int]:
    """The features an encoding estimator's count spells (a count of 1 is the floor of a text with none)."""
    value = 0 if count == 1 else count // 2
    out = {}
    for name in names:
        value, out[name] = divmod(value, 64)
    return out


def _counted_features(text: str, estimators: list[tuple[MediumEstimator, tuple[str, ...]]]) -> dict[str, int]:
    found: dict[str, int] = {}
    for est, names in estimators:
        found |= _decoded(est.count(text), names)
    return found


@pytest.mark.parametrize("path", ["popcount", "numpy"])
def test_both_paths_count_every_feature_of_every_short_string(path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every string of up to four characters of every class: each feature as the popcounts and the
    # lookup count it, spelled out by estimators with one weight per feature, equals features().
    monkeypatch.setattr(medium, "NUMPY_FROM", 0 if path == "numpy" else medium.NUMPY_FROM)
    estimators = _encoding_estimators(5)
    for length in range(1, 5):
        for chars in itertools.product(CLASS_REPRESENTATIVES, repeat=length):
            text = "".join(chars)
            assert _counted_features(text, estimators) == dict(zip(FEATURES, features(text))), (path, text)


#: pieces random texts are made of: every class alone and in runs, every script, a lone surrogate
_PIECES = [*CLASS_REPRESENTATIVES, *SCRIPTS, "\ud800", "word", "Camel", "__init__", "  ", "\n\n", "123456", "{\n", " x"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=800).map("".join))
def test_both_paths_agree_with_features_on_random_text(text: str) -> None:
    expected = dict(zip(FEATURES, features(text)))
    one_each = _encoding_estimators(1)
    for threshold in (0, 1 << 16):  # numpy for every text, then popcounts for every text
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(medium, "NUMPY_FROM", threshold)
            assert _counted_features(text, one_each) == expected


def test_both_paths_count_the_whole_calibration_corpus_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    est = MediumEstimator()
    w = est.constants.vector()
    texts = [s.text for s in broad_corpus(0, 200)] + [s.text for s in token_corpus(1, 60)]
    shipped_threshold = medium.NUMPY_FROM
    for index, text in enumerate(texts):
        formula = max(int(sum(a * b for a, b in zip(w, features(text), strict=True)) + 0.5), 1)
        counts = []
        for threshold in (shipped_threshold, 0, 1 << 16):  # as shipped, numpy only, popcounts only
            monkeypatch.setattr(medium, "NUMPY_FROM", threshold)
            counts.append(est.count(text))
        assert counts == [formula] * 3, (index, len(text))


def test_scripts_and_character_costs_by_numpy_and_by_regex_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    costs = MediumEstimator().costs
    rng = random.Random(7)
    every_char = [chr(cp) for cp in range(0x80, 0x10000) if not 0xD800 <= cp < 0xE000] + ["😀", "\udc80"]
    rng.shuffle(every_char)
    texts = ["".join(every_char), "abc 帮 def 的蠡龘 x" * 40] + [s.text for s in broad_corpus(0, 30) if not s.text.isascii()]
    for text in texts:
        by_numpy, by_regex = [], []
        for threshold, out in ((0, by_numpy), (1 << 30, by_regex)):
            monkeypatch.setattr(medium, "COSTS_NUMPY_FROM", threshold)
            out.append(costs.non_ascii(text))
        assert by_numpy == by_regex, text[:40]
    # every BMP character once: the counts are the table's
    assert costs.counts(texts[0]) == (costs.table.count(2), costs.table.count(3))


def test_a_text_longer_than_the_masks_is_counted_whole() -> None:
    # The lookup has no blocks: a run across the 64k mark is one run, as the tokenizer sees it.
    text = "word " * 20_000
    named = dict(zip(FEATURES, features(text)))
    assert named["letter_runs"] == 20_000 and named["letters"] == 80_000
    assert MediumEstimator().count(text) == max(1, int(sum(a * b for a, b in zip(MediumEstimator().constants.vector(),
                                                                               features(text))) + 0.5))


def test_the_numpy_threshold_fits_the_popcount_masks() -> None:
    assert 0 < medium.NUMPY_FROM <= medium._MASK_CHARS
