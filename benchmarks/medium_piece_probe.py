"""Fit-only probe of vocabulary-piece features for the medium tier: unseen real text and both cross-validations.

    python benchmarks/medium_piece_probe.py [VARIANT ...]   # default: every variant

Nothing is shipped or written: the extra columns are computed here (a regular expression over
the text) beside the shipped features, the same fits as benchmarks/medium_real_text.py (corpus
without transcripts, scored on the sessions of tests/fixtures/real) and
benchmarks/calibrate_tokens.py --dry-run (leave one kind out, held-out files) are made, and the
MAPE per kind printed (weights unrounded, so the base row can differ from the scripts' in the
second decimal).

Variants (extra columns next to the 14 shipped features):
  base   : the shipped features
  bare   : + count of bare ASCII letter runs (len >= 2) that are one cl100k token (colleague's (b))
  cut    : + count of letter pieces *as cut* (leading space / folded punctuation + letters) that are one token
  cutsplit: pieces as cut; one-token pieces' letters and runs moved out of letters/letter_runs into their own
            columns (so NNLS can price a one-token piece at 1 without the letter weights)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import numpy as np

_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(_ROOT))
sys.path.insert(0, str(_ROOT / "benchmarks"))



from aptmem.tokens import MediumEstimator, get_estimator
from aptmem.tokens.calibration.corpus import broad_corpus, held_out_file
from aptmem.tokens.calibration.medium_fit import feature_matrix, fit_weights
from aptmem.tokens.calibration.sources import Sources
from medium_real_text import session_texts

from aptmem.tokens.precise_tiktoken import load_encoding

VOCAB: set[bytes] = set()  # cl100k_base's tokens of up to 16 bytes, read in main()
RUN = re.compile(r"[A-Za-z]+")
PUNCT = set(chr(c) for c in range(128)) - set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t\r\x0b\x0c\n")
SPACE = set(" \t\r\x0b\x0c")


def pieces(text: str):  # noqa: ANN201
    """(piece as cut, bare run, letters weight (upper twice), runs in base letter_runs) for each ASCII letter run."""
    for m in RUN.finditer(text):
        s, run = m.start(), m.group()
        lead = ""
        runs = 1
        if s >= 1:
            c = text[s - 1]
            if c in SPACE and c != "\r":
                lead = c
            elif c in PUNCT:
                c2 = text[s - 2] if s >= 2 else None
                if c2 is None or (c2 not in PUNCT and c2 not in SPACE):
                    lead = c
                    runs = 2  # the folded punctuation counts as a letter run in the base features
        yield lead + run, run, sum(2 if ch.isupper() else 1 for ch in run), runs


def extra(text: str, variant: str) -> list[float]:
    """The variant's extra columns of one text."""
    if variant == "base":
        return []
    if variant == "bare":
        return [sum(1 for _, run, _, _ in pieces(text) if len(run) >= 2 and run.encode() in VOCAB)]
    if variant == "cut":
        return [sum(1 for cut, _, _, _ in pieces(text) if cut.encode() in VOCAB)]
    if variant == "cutsplit":
        n = letters = runs = 0
        for cut, _, w, r in pieces(text):
            if cut.encode() in VOCAB:
                n, letters, runs = n + 1, letters + w, runs + r
        return [n, -letters, -runs]  # applied to base columns 0 and 8 below
    if variant == "baresplit":
        n = letters = runs = 0
        for cut, run, w, r in pieces(text):
            if len(run) >= 2 and run.encode() in VOCAB:
                n, letters, runs = n + 1, letters + w, runs + 1
        return [n, -letters, -runs]
    raise ValueError(variant)


def matrix(samples, costs, variant):
    base = feature_matrix(samples, costs)
    rows = [extra(s.text, variant) for s in samples]
    if variant in ("cutsplit", "baresplit"):
        ex = np.array(rows, dtype=np.float64)
        base = base.copy()
        base[:, 0] += ex[:, 1]
        base[:, 8] += ex[:, 2]
        return np.hstack([base, ex[:, :1]])
    if not rows or not rows[0]:
        return base
    return np.hstack([base, np.array(rows, dtype=np.float64)])


def est(x, w):
    e = np.floor(x @ w + 0.5)
    return np.maximum(e, 1)


def mape(e, y):
    return float(np.mean(np.abs(e - y) / y) * 100)


def main():
    """Fit and score every variant named on the command line."""
    variants = sys.argv[1:] or ["base", "bare", "cut", "baresplit", "cutsplit"]
    VOCAB.update(b for b in load_encoding("cl100k_base").token_byte_values() if len(b) <= 16)
    precise = get_estimator("precise", "cl100k_base")
    costs = MediumEstimator().costs
    texts = [(k, s, t) for k, s, t in session_texts(_ROOT / "tests" / "fixtures" / "real") if precise.count(t)]
    y_sess = np.array([precise.count(t) for _, _, t in texts], dtype=np.float64)
    kinds_sess = np.array([k for k, _, _ in texts])
    no_tr = broad_corpus(0, 200, sources=Sources(transcripts=None))
    y_no = np.array([precise.count(s.text) for s in no_tr], dtype=np.float64)
    src = Sources(transcripts=_ROOT / "tests" / "fixtures" / "real")
    train = broad_corpus(0, 200, sources=src)
    check = broad_corpus(1, 200, sources=src)
    y_tr = np.array([precise.count(s.text) for s in train], dtype=np.float64)
    y_ck = np.array([precise.count(s.text) for s in check], dtype=np.float64)

    class _T:  # session texts as samples
        def __init__(self, t):
            self.text = t
    for v in variants:
        print(f"\n### variant {v}")
        xs = matrix([_T(t) for _, _, t in texts], costs, v)
        w = fit_weights(matrix(no_tr, costs, v), y_no)
        print("weights (no transcripts):", np.round(w, 4).tolist())
        e = est(xs, w)
        row = {k: mape(e[kinds_sess == k], y_sess[kinds_sess == k]) for k in dict.fromkeys(kinds_sess)}
        row["all"] = mape(e, y_sess)
        if v in ("baresplit", "cutsplit"):
            r = kinds_sess == "read_output"
            sig = (e[r] - y_sess[r]) / y_sess[r] * 100
            print("read_output signed mean", round(float(sig.mean()), 2))
        print("unseen (medium_real_text):", {k: round(val, 2) for k, val in row.items()})
        xtr, xck = matrix(train, costs, v), matrix(check, costs, v)
        ktr, kck = np.array([s.kind for s in train]), np.array([s.kind for s in check])
        loko = {}
        for k in dict.fromkeys(kck):
            wk = fit_weights(xtr[ktr != k], y_tr[ktr != k])
            loko[k] = round(mape(est(xck[kck == k], wk), y_ck[kck == k]), 2)
        print("loko max", max(loko.values()), loko)
        held = np.array([held_out_file(s.source, 0) for s in train])
        wh = fit_weights(xtr[~held], y_tr[~held])
        eh = est(xtr[held], wh)
        hk = {k: round(mape(eh[ktr[held] == k], y_tr[held][ktr[held] == k]), 2) for k in dict.fromkeys(ktr[held])}
        print("held-out files max", max(hk.values()), hk)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
