"""Fit recall's abstention threshold on the tune half; report its errors on the held-out half.

    python benchmarks/recall_abstention.py RUN_DIR      # a folder written by benchmarks/recall_bench.py

For each variant and size of ``RUN_DIR/questions.parquet``, the coverage test of
:mod:`aptmem.recall.abstain` (``coverage``: share of the question's terms in its best hits) is
thresholded: recall answers when coverage >= tau, else abstains. tau is chosen on the ``tune``
questions alone, maximizing balanced accuracy (mean of the share of present-fact questions
answered and the share of absent-fact questions abstained); then on ``held_out``:

* false-positive rate: absent-fact questions answered anyway (a confident wrong answer);
* false-negative rate: present-fact questions abstained, and among them those whose evidence
  was in the top 5 (a right answer thrown away).

Writes ``abstention.csv`` beside the questions and prints it.
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl


def _rates(frame: pl.DataFrame, tau: float) -> dict[str, float | None]:
    present = frame.filter(pl.col("kind") != "absent")
    absent = frame.filter(pl.col("kind") == "absent")
    found = present.filter(pl.col("entry_recall@5") > 0)

    def share(part: pl.DataFrame, answered: bool) -> float | None:
        if not part.height:
            return None
        hit = (part["coverage"] >= tau) if answered else (part["coverage"] < tau)
        return float(hit.mean())  # type: ignore[arg-type]

    return {"present": present.height, "absent": absent.height, "answered_present": share(present, True),
            "false_positive_rate": share(absent, True), "false_negative_rate": share(present, False),
            "false_negative_found_rate": share(found, False)}


def fit(frame: pl.DataFrame) -> float:
    """The threshold maximizing balanced accuracy on ``frame`` (ties: the lowest)."""
    candidates = sorted({0.0, *frame["coverage"].to_list()})
    best, best_score = 0.0, -1.0
    for tau in candidates:
        rates = _rates(frame, tau)
        if rates["answered_present"] is None or rates["false_positive_rate"] is None:
            return 0.0
        score = (rates["answered_present"] + 1 - rates["false_positive_rate"]) / 2  # type: ignore[operator]
        if score > best_score + 1e-12:
            best, best_score = tau, score
    return best


def main(argv: list[str] | None = None) -> int:
    """Fit and report; print the table."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    run = Path(args[0])
    questions = pl.read_parquet(run / "questions.parquet")
    rows = []
    for (variant, size), group in questions.group_by("variant", "size", maintain_order=True):
        tau = fit(group.filter(pl.col("split") == "tune"))
        for split in ("tune", "held_out"):
            for wording in ("all", "template", "paraphrase", "other_language"):
                part = group.filter(pl.col("split") == split)
                if wording != "all":  # absent questions come in every wording: compare like with like
                    part = part.filter(pl.col("wording") == wording)
                rows.append({"variant": variant, "size": size, "tau": tau, "split": split, "wording": wording,
                             **_rates(part, tau)})
    table = pl.DataFrame(rows)
    table.write_csv(run / "abstention.csv")
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=220):
        print(table)
    print(run / "abstention.csv")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
