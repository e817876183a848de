"""How the embedding is fused with the keyword ranking, measured on the development splits only.

    python benchmarks/recall_fusion.py [--seed 7] [--weights 0.5,1,1.5,2,3,4,6]

Writes the 20k-record workload of ``recall_bench.py`` (same seed and shape) to a scratch folder,
indexes it with ``fts`` and ``wordllama``, and asks every question of the development splits
(``tune``, ``held_out``, ``fresh``, ``blind``, since phase 8 ``blind2``, since phase 10
``blind3`` and since phase 11 ``blind4``; never ``blind5``, the held-out one).
For each question it keeps ``fts``'s ranking and ``wordllama``'s, and the cosine of each of
``fts``'s best records to the question, both of the whole record and of its closest piece. Then
it prints recall@1/5/10 per split and wording of:

* ``fts`` and ``wordllama`` alone, and ``rrf`` (the old ``hybrid``: reciprocal rank fusion);
* ``convex w``: over the union of the two rankings, ``w`` x fts's min-max normalized score plus
  ``1 - w`` x the cosine's (score fusion);
* ``record w`` / ``piece w``: fts's best 20 reordered by score + ``w`` x (1 + cosine) of the
  whole record / of its closest piece (what ``hybrid`` does);
* ``piece w @d``: the same with the best ``d`` reordered, for d in ``--depths``.

and the summary line per variant: the mean recall@5 and @1 over the split x wording cells. The
weight of :data:`aptmem.recall.engines.dense_rerank.WEIGHT` is the ``piece`` weight with the best
mean @5, ties broken by the mean @1; its ``DEPTH`` the smallest depth that keeps both.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_workload import build_workload  # noqa: E402

from aptmem.jsonl_store import JsonlStore  # noqa: E402
from aptmem.recall.engines.dense_rerank import DenseRerankEngine, reorder  # noqa: E402
from aptmem.recall.index import RecallIndex, file_token, level_filter  # noqa: E402

#: The splits asked here: the development splits (blind2, held out in phase 7, is one since phase 8;
#: blind3, held out in phase 9, is one since phase 10; blind4, held out in phase 10, is one since
#: phase 11; the split written later to be held out, phase 11's ``blind5``, is never asked here).
DEVELOPMENT = ("tune", "held_out", "fresh", "blind", "blind2", "blind3", "blind4")
DEPTH = 50
#: The deepest head reordered (the fts rerank's depth).
HEAD = 20

Ranking = list[tuple[int, float]]


class Asked:
    """One question's rankings and cosines."""

    def __init__(self, split: str, wording: str, evidence: set, fts: Ranking, emb: Ranking,
                 record_cos: dict[int, float], piece_cos: dict[int, float]) -> None:
        self.split, self.wording, self.evidence = split, wording, evidence
        self.fts, self.emb, self.record_cos, self.piece_cos = fts, emb, record_cos, piece_cos


def _ask(seed: int, scratch: Path) -> tuple[list[Asked], dict[int, tuple[str, str]]]:
    root = scratch / "root"
    workload = build_workload(str(root), seed=seed, sessions=180, entries_per_session=100, facts=400)
    store = JsonlStore(str(root))
    index = RecallIndex(store, str(root), engines=("fts", "wordllama"), path=scratch / "index.sqlite",
                        change_token=lambda s: file_token(store.path(s)))
    index.refresh()
    db, where = index.db, level_filter("all", "chunks")
    fts, emb = index._searcher("fts"), index._searcher("wordllama")
    dense = index._searcher("hybrid")
    assert isinstance(dense, DenseRerankEngine)
    entry = {doc_id: (sid, eid) for doc_id, sid, eid in db.execute("SELECT doc_id, session_id, entry_id FROM docs")}
    texts = dict(db.execute("SELECT doc_id, text FROM docs"))
    asked: list[Asked] = []
    for question in workload.questions:
        if question.split not in DEVELOPMENT or question.aggregation or not question.evidence:
            continue
        keyword = fts.search(db, question.text, DEPTH, where)
        meaning = emb.search(db, question.text, DEPTH, where)
        candidates = sorted({i for i, _ in keyword} | {i for i, _ in meaning})
        record_cos = _record_cosines(index, question.text, candidates)
        piece_cos = dense.similarity(question.text, [(i, texts[i]) for i, _ in keyword[:HEAD]])
        asked.append(Asked(question.split, question.wording, set(question.evidence), keyword, meaning, record_cos, piece_cos))
    index.close()
    store.close()
    return asked, entry


def _record_cosines(index: RecallIndex, question: str, doc_ids: Sequence[int]) -> dict[int, float]:
    """The cosine of the question to each record's stored embedding (what wordllama ranks by)."""
    emb = index._searcher("wordllama")
    vectors = emb._matrix(index.db)
    row = {int(i): n for n, i in enumerate(vectors.ids)}
    query = emb._model().embed([question])[0]
    return {i: float(vectors.matrix[row[i]] @ query) for i in doc_ids if i in row}


def _minmax(ranking: Ranking) -> dict[int, float]:
    if not ranking:
        return {}
    top, low = max(s for _, s in ranking), min(s for _, s in ranking)
    return {i: (s - low) / ((top - low) or 1.0) for i, s in ranking}


def _rrf(a: Asked) -> list[int]:
    scores: dict[int, float] = defaultdict(float)
    for ranking in (a.fts, a.emb):
        for rank, (doc_id, _) in enumerate(ranking, start=1):
            scores[doc_id] += 1 / (60 + rank)
    return sorted(scores, key=lambda i: -scores[i])


def _convex(w: float) -> Callable[[Asked], list[int]]:
    def order(a: Asked) -> list[int]:
        keyword = _minmax(a.fts)
        cosine = _minmax([(i, a.record_cos[i]) for i in a.record_cos])
        scores = {i: w * keyword.get(i, 0.0) + (1 - w) * cosine.get(i, 0.0) for i in set(keyword) | set(cosine)}
        return sorted(scores, key=lambda i: -scores[i])
    return order


def _head(w: float, attribute: str, depth: int = HEAD) -> Callable[[Asked], list[int]]:
    def order(a: Asked) -> list[int]:
        return [i for i, _ in reorder(a.fts, getattr(a, attribute), w, depth)]
    return order


def _recall(order: list[int], evidence: set, entry: dict[int, tuple[str, str]]) -> tuple[bool, bool, bool]:
    seen: list[tuple[str, str]] = []
    for doc_id in order:
        if entry[doc_id] not in seen:
            seen.append(entry[doc_id])
        if len(seen) == 10:
            break
    return tuple(any(e in evidence for e in seen[:k]) for k in (1, 5, 10))  # type: ignore[return-value]


def main(argv: list[str] | None = None) -> int:
    """Run the sweep; print one table per variant and the summary lines."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--weights", default="0.5,1,1.5,2,3,4,6")
    parser.add_argument("--depths", default="8,10,12,16")
    args = parser.parse_args(argv)
    weights = [float(w) for w in args.weights.split(",")]
    scratch = Path(tempfile.mkdtemp(prefix="recall-fusion-"))
    try:
        asked, entry = _ask(args.seed, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    variants: dict[str, Callable[[Asked], list[int]]] = {
        "fts": lambda a: [i for i, _ in a.fts], "wordllama": lambda a: [i for i, _ in a.emb], "rrf": _rrf}
    variants |= {f"convex {w}": _convex(w) for w in (0.5, 0.7, 0.8, 0.9)}
    variants |= {f"record {w:g}": _head(w, "record_cos") for w in weights}
    variants |= {f"piece {w:g}": _head(w, "piece_cos") for w in weights}
    variants |= {f"piece {w:g} @{d}": _head(w, "piece_cos", int(d)) for w in weights for d in args.depths.split(",")}
    summary: list[str] = []
    for label, order in variants.items():
        cells: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        for a in asked:
            cell = cells[(a.split, a.wording)]
            for n, hit in enumerate(_recall(order(a), a.evidence, entry)):
                cell[n] += hit
            cell[3] += 1
        print(label)
        for (split, wording), (r1, r5, r10, n) in sorted(cells.items()):
            print(f"  {split:9s} {wording:15s} n={n:3d}  {100 * r1 / n:5.1f} / {100 * r5 / n:5.1f} / {100 * r10 / n:5.1f}")
        mean5 = sum(100 * c[1] / c[3] for c in cells.values()) / len(cells)
        mean1 = sum(100 * c[0] / c[3] for c in cells.values()) / len(cells)
        summary.append(f"{label:12s} mean recall@5 {mean5:6.2f}  @1 {mean1:6.2f}")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
