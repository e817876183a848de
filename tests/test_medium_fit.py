"""The broad token corpus and the medium tier's fit: seeded and offline, known answers, the checks it reports."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

import numpy as np
import pytest

from aptmem.tokens import MediumEstimator, get_estimator
from aptmem.tokens.calibration.corpus import KINDS, Sample, broad_corpus, corpus_digest, held_out_file
from aptmem.tokens.calibration.medium_fit import (constants_from_fit, feature_matrix, fit_weights, held_out_files,
                                                  kind_errors, leave_one_kind_out, nnls)
from aptmem.tokens.calibration.sources import Sources
from aptmem.tokens.medium import CharCosts
from aptmem.tokens.piece_vocab import PieceVocab
from aptmem.tokens.medium_constants import FEATURES, load_constants

ROOT = Path(__file__).resolve().parent.parent
SOURCES = Sources(transcripts=ROOT / "tests" / "fixtures" / "real")
SEED = 11
COSTS = MediumEstimator().costs
VOCAB = MediumEstimator().vocab


def test_the_corpus_is_seeded_has_every_kind_and_names_its_files() -> None:
    first = broad_corpus(SEED, 4, sources=SOURCES)
    assert first == broad_corpus(SEED, 4, sources=SOURCES)  # same seed, same installation: same texts
    assert first != broad_corpus(SEED + 1, 4, sources=SOURCES)
    assert [k for k in KINDS if sum(s.kind == k for s in first) == 4] == list(KINDS)
    assert all(s.text.strip() and s.source for s in first)
    tool = [s for s in first if s.kind == "agent_output"]
    assert all(s.source.endswith(".jsonl") for s in tool)  # real tool output of the fixtures
    # Without transcripts the agent_output kind is left out, not made up.
    assert not [s for s in broad_corpus(SEED, 2, sources=Sources()) if s.kind == "agent_output"]
    with pytest.raises(ValueError, match="unknown kind"):
        broad_corpus(SEED, 1, sources=SOURCES, kinds=["poetry"])


def test_held_out_files_are_a_seeded_fifth() -> None:
    names = [f"pkg/file_{i}.py" for i in range(2000)]
    held = [n for n in names if held_out_file(n, 0)]
    assert 300 < len(held) < 500 and held != [n for n in names if held_out_file(n, 1)]


def test_nnls_on_known_answers() -> None:
    rng = np.random.default_rng(SEED)
    a = rng.random((60, 4))
    truth = np.array([2.0, 0.0, 0.5, 1.5])
    assert np.allclose(nnls(a, a @ truth), truth, atol=1e-8), f"seed {SEED}"
    # Unconstrained least squares wants a negative weight here; the constrained one pins it to 0.
    b = a @ np.array([1.0, -0.7, 0.0, 0.0])
    x = nnls(a, b)
    assert (x >= 0).all() and x[1] == 0
    unconstrained = np.linalg.lstsq(a, b, rcond=None)[0]
    assert unconstrained[1] < 0 and np.linalg.norm(a @ x - b) >= np.linalg.norm(a @ unconstrained - b)


def test_fit_weights_recovers_a_linear_tokenizer() -> None:
    # The sample reads the repository's own files, so an edit elsewhere can leave a feature out of
    # it (no accented letter at all: a zero column, whose weight no fit can recover). A few fixed
    # texts make every feature occur whatever the files say.
    fixed = ["Café naïve — résumé in 5 µs, ±2 °C ≥ 3", "数据库迁移方案 カタカナ、全角ＡＢ 한국어 텍스트", "x_y = fooBar(1234567)\n\n\tend"]
    samples = [*broad_corpus(SEED, 6, sources=SOURCES),
               *(Sample(kind="fixed", index=i, source="test", text=t) for i, t in enumerate(fixed))]
    x = feature_matrix(samples, COSTS, VOCAB)
    assert (x != 0).any(axis=0).all(), [f for f, seen in zip(FEATURES, (x != 0).any(axis=0)) if not seen]
    truth = np.linspace(0.1, 1.2, len(FEATURES))
    weights = fit_weights(x, x @ truth)
    assert np.allclose(weights, truth, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="at least one token"):
        fit_weights(x, np.zeros(len(samples)))


def test_the_checks_report_every_kind_held_out() -> None:
    precise = get_estimator("precise")
    samples = broad_corpus(SEED, 12, sources=SOURCES)
    exact = [precise.count(s.text) for s in samples]
    x = feature_matrix(samples, COSTS, VOCAB)
    loko = leave_one_kind_out(samples, exact, x, "cl100k_base", COSTS, VOCAB)
    assert [e.kind for e in loko] == list(KINDS) and all(e.texts == 12 for e in loko)
    files, fitted, held = held_out_files(samples, exact, x, "cl100k_base", COSTS, VOCAB, SEED)
    assert fitted + held == len(samples) and sum(e.texts for e in files) == held
    errors = kind_errors(samples, [e + 1 for e in exact], exact)
    assert all(e.mean_signed_pct > 0 for e in errors)


def test_shipped_constants_record_every_check() -> None:
    about = load_constants().calibration
    assert about["script"] == "benchmarks/calibrate_tokens.py" and about["corpus_sha256"]
    for check in ("error_on_check_seed", "leave_one_kind_out", "legacy_corpus"):
        assert about[check], check
    assert set(about["leave_one_kind_out"]) == set(about["kinds"]) == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_medium_on_unseen_texts_of_the_broad_corpus(kind: str) -> None:
    precise, medium = get_estimator("precise"), get_estimator("medium")
    seed = random.Random(kind).randrange(100, 10_000)  # a seed the shipped fit never saw (it used 0, checked 1)
    texts = [s.text for s in broad_corpus(seed, 40, sources=SOURCES, kinds=[kind])]
    mape = 100 * sum(abs(medium.count(t) - precise.count(t)) / precise.count(t) for t in texts) / len(texts)
    # The design's goal on every kind: real CJK words cost more per character than prose, which the
    # tokenizer's own character costs (two_token_chars, three_token_chars) account for.
    limit = 10.0
    assert mape <= limit, f"medium MAPE {mape:.1f}% on {kind} (corpus seed {seed})"


def _copy_repo(dest: Path) -> Path:
    """The files a clean clone has that the corpus reads (no virtualenv, caches or run outputs)."""
    ignore = shutil.ignore_patterns(".git", ".venv", "__pycache__", ".pytest_cache", ".hypothesis", "*.egg-info", "runs")
    shutil.copytree(ROOT, dest, ignore=ignore)
    return dest


def test_the_corpus_is_the_same_from_a_copy_of_the_repository(tmp_path: Path) -> None:
    # Two builds, and a build from a copy of the repository elsewhere (other absolute paths, other
    # file times, fresh Sources): the same texts. Nothing comes from the installed packages.
    first = broad_corpus(0, 20, sources=Sources(transcripts=ROOT / "tests" / "fixtures" / "real"))
    again = broad_corpus(0, 20, sources=Sources(transcripts=ROOT / "tests" / "fixtures" / "real"))
    assert corpus_digest(first) == corpus_digest(again)
    copy = _copy_repo(tmp_path / "clone")
    elsewhere = broad_corpus(0, 20, sources=Sources(repo=copy, transcripts=copy / "tests" / "fixtures" / "real"))
    assert corpus_digest(elsewhere) == corpus_digest(first)
    assert not [s for s in first if "site-packages" in s.source]
    # The fitted constants file is not read back into the corpus that fits it.
    (copy / "aptmem" / "tokens" / "medium_constants.json").write_text('{"changed": true}')
    changed = broad_corpus(0, 20, sources=Sources(repo=copy, transcripts=copy / "tests" / "fixtures" / "real"))
    assert corpus_digest(changed) == corpus_digest(first)


def test_the_shipped_constants_are_what_the_fit_produces() -> None:
    """The shipped constants against a fresh fit on the corpus of this checkout (what the script fits).

    The character cost table is measured from the tokenizer and must be equal. The corpus holds
    the repository's own files, so every commit that changes them moves the fit a little: on the
    same corpus (same digest) the weights must be equal; on a changed one the estimates of the
    two may differ by at most 1% of a text's tokens at the median and each kind's error by at most
    1 percentage point, else rerun benchmarks/calibrate_tokens.py.
    """
    shipped = load_constants()
    about = shipped.calibration
    precise = get_estimator("precise", shipped.reference)
    assert CharCosts.decode(shipped.char_costs).table == CharCosts.measure(precise.count).table
    # the one-token letter pieces are read off the tokenizer's vocabulary, each checked alone
    candidates = PieceVocab.from_tokens(precise.token_bytes()).pieces
    assert PieceVocab.decode(shipped.pieces).pieces == {p for p in candidates if precise.count(p) == 1}
    train = broad_corpus(about["seed"], about["per_kind"], sources=SOURCES)
    exact = [precise.count(s.text) for s in train]
    fresh = fit_weights(feature_matrix(train, COSTS, VOCAB), np.array(exact, dtype=np.float64))
    refit = constants_from_fit(fresh, shipped.reference, COSTS, VOCAB, {})
    if corpus_digest(train) == about["corpus_sha256"]:
        assert refit.weights == shipped.weights
        return
    ours, theirs = MediumEstimator(shipped), MediumEstimator(refit)
    a, b = [ours.count(s.text) for s in train], [theirs.count(s.text) for s in train]
    assert float(np.median([abs(x - y) / max(y, 1) for x, y in zip(a, b)])) <= 0.01
    for mine, new in zip(kind_errors(train, a, exact), kind_errors(train, b, exact), strict=True):
        assert abs(mine.mape_pct - new.mape_pct) <= 1.0, (mine.kind, mine.mape_pct, new.mape_pct)
