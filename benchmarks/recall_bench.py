"""The recall benchmark: planted facts in generated sessions, every engine, held-out figures.

    python benchmarks/recall_bench.py [--seed 7] [--small] [--no-large] [--no-packet] [--engines fts,fts_trigram,...] [--large-engines fts,...]
                                      [--splits held_out,blind3,...]

1. Writes a workload (``recall_workload.py``): about 20k chunks ("small") with planted facts,
   and a second of about 130k chunks ("large") for latency and build figures.
2. For each engine builds an index from the logs (timed: seconds per 10k records; bytes on disk)
   and asks every question (timed per query: p50/p95), k=10 with a 1,024-token packet
   (``--no-packet``: none, so no ``answerable`` figure; counting a packet's tokens is most of a
   run's time, and the recall figures do not depend on it).
3. Scores with :mod:`aptmem.recall.scoring` and prints one table per split; ``held_out`` is what
   to quote (facts and paraphrase wordings nothing was tuned on), ``fresh`` and ``blind`` the same
   facts asked in styles written later and never tuned on (``blind``: phase 6, before the rerank;
   ``blind2``: phase 7, before that phase's ranking work; ``blind3``: phase 9, written blind, a
   development split of the fusion from phase 10; ``blind4``: phase 10, written blind, a
   development split from phase 11; ``blind5``: phase 11, written blind, held out, asked by no
   development split; ``blind6``: phase 12, written blind, held out likewise, an indirect request
   inside a longer message). ``--splits`` asks only the named splits' questions (the others
   are neither asked nor printed, so a held-out split can be kept from anyone tuning on the rest;
   query p50/p95 are then over the asked questions only).

Writes ``questions.parquet`` (one row per engine and question), ``summary.csv`` and ``engines.csv``
to ``reports/runs/recall-<time>/`` and prints that folder last.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parent))

from recall_workload import SPLITS, build_workload  # noqa: E402

from aptmem.errors import RecallEngineUnavailable  # noqa: E402
from aptmem.jsonl_store import JsonlStore  # noqa: E402
from aptmem.recall.abstain import best_coverage  # noqa: E402
from aptmem.recall.api import pack  # noqa: E402
from aptmem.recall.engines import get_engine, install_size  # noqa: E402
from aptmem.recall.index import RecallIndex, file_token  # noqa: E402
from aptmem.recall.scoring import judge, summarize  # noqa: E402

#: label -> (engines the index is built with, facts extracted, engine asked, L3 variant). Variants
#: with the same build share one index (so "wordllama" and "hybrid_rrf" are asked of the same vectors,
#: "fts" and "hybrid" of the same table: hybrid keeps no table of its own).
VARIANTS = {
    "fts": (("fts",), False, "fts", "chunks"),
    "fts_plain": (("fts",), False, "fts_plain", "chunks"),
    "fts_untyped": (("fts",), False, "fts_untyped", "chunks"),
    "fts_trigram": (("fts_trigram",), False, "fts_trigram", "chunks"),
    "fts_xl": (("fts",), False, "fts_xl", "chunks"),
    "wordllama": (("hybrid_rrf",), False, "wordllama", "chunks"),
    "hybrid": (("fts",), False, "hybrid", "chunks"),  # fts's table, reordered by embeddings at query time
    "hybrid_union": (("hybrid_rrf",), False, "hybrid_union", "chunks"),  # fts and wordllama tables, united before the rerank
    "hybrid_rrf": (("hybrid_rrf",), False, "hybrid_rrf", "chunks"),
    "use": (("hybrid_use",), False, "use", "chunks"),
    "hybrid_use": (("hybrid_use",), False, "hybrid_use", "chunks"),
    "fts_facts": (("fts",), True, "fts", "facts"),
    "hybrid_facts": (("fts",), True, "hybrid", "facts"),
}


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


class Builds:
    """One index per (engines, facts) and workload size, built once, timed."""

    def __init__(self, root: str, scratch: Path, size: str) -> None:
        self.root, self.scratch, self.size = root, scratch, size
        self.store = JsonlStore(root)
        self.built: dict[tuple, tuple[RecallIndex, float]] = {}

    def get(self, engines: tuple[str, ...], facts: bool) -> tuple[RecallIndex, float]:
        key = (engines, facts)
        if key not in self.built:
            path = self.scratch / f"{'+'.join(engines)}{'-facts' if facts else ''}-{self.size}.sqlite"
            start = time.perf_counter()
            index = RecallIndex(self.store, self.root, engines=engines, facts=facts, path=path,
                                change_token=lambda s: file_token(self.store.path(s)))
            try:
                index.refresh()
            except BaseException:
                index.close()
                raise
            self.built[key] = (index, time.perf_counter() - start)
        return self.built[key]

    def close(self) -> None:
        for index, _ in self.built.values():
            index.close()
        self.store.close()


def run_variant(builds: Builds, label: str, workload, score: bool, packets: bool = True) -> tuple[dict, list[dict]]:
    """Ask every question of one variant; return the engine row and the per-question rows (without packets: answerable None)."""
    engines, facts, engine, l3 = VARIANTS[label]
    index, build = builds.get(engines, facts)
    planted = frozenset((f.session_id, f.entry_id) for f in workload.facts)
    rows: list[dict] = []
    latencies: list[float] = []
    index.search("warm up the caches", k=10, l3=l3, engine=engine)
    for question in workload.questions:
        t0 = time.perf_counter_ns()
        hits = index.search(question.text, k=10, l3=l3, engine=engine)
        latencies.append((time.perf_counter_ns() - t0) / 1e6)
        if not score:
            continue
        packet = pack(question.text, hits, 1024).text if packets else ""
        judgement = judge(question, [(h.session_id, h.entry_id) for h in hits], packet, planted)
        rows.append({"variant": label, "qid": question.qid, "wording": question.wording, "split": question.split,
                     "language": question.language, "carrier": question.carrier, "kind": question.kind,
                     "coverage": best_coverage(question.text, hits), "question": question, "judgement": judgement})
    stats = index.stats()  # after the questions: fts_xl stores its dictionary at the first one
    records = sum(stats.records.values())
    size_info = install_size(get_engine(engine))
    return {"variant": label, "size": builds.size, "built_with": "+".join(engines) + (" facts" if facts else ""),
            "records": records, "chunks": stats.records.get("l3/chunk", 0), "build_s": build,
            "build_s_per_10k": build / max(1, records) * 10_000, "index_bytes": stats.bytes,
            "query_p50_ms": _percentile(latencies, 0.5), "query_p95_ms": _percentile(latencies, 0.95),
            "install_bytes": size_info.bytes, "install_missing": ",".join(size_info.missing)}, rows


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark; print the tables and the output folder."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--small", action="store_true", help="a quick run: a few thousand chunks, no large workload")
    parser.add_argument("--engines", default="fts,fts_plain,fts_trigram,fts_xl,wordllama,hybrid,hybrid_rrf,use,hybrid_use,fts_facts,hybrid_facts")
    parser.add_argument("--large-engines", default="fts,fts_plain,fts_trigram,fts_xl,wordllama,hybrid")
    parser.add_argument("--no-large", action="store_true", help="skip the large workload (130k records)")
    parser.add_argument("--no-packet", action="store_true", help="no 1,024-token packet per question (no answerable figure)")
    parser.add_argument("--splits", default=",".join(SPLITS), help=f"the splits to ask, comma-separated (default all: {','.join(SPLITS)})")
    parser.add_argument("--out", default=None)
    args = parser.parse_args(argv)
    splits = tuple(name.strip() for name in args.splits.split(",") if name.strip())
    unknown = [name for name in splits if name not in SPLITS]
    if unknown or not splits:
        parser.error(f"--splits: unknown split(s) {', '.join(map(repr, unknown)) or '(none given)'}; the workload has {', '.join(SPLITS)}")
    out = Path(args.out or f"reports/runs/recall-{time.strftime('%Y%m%d-%H%M%S')}")
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="recall-bench-"))
    engine_rows: list[dict] = []
    question_rows: list[dict] = []
    skipped: list[str] = []
    try:
        sizes = [("small", 30 if args.small else 180, 60 if args.small else 100, 120 if args.small else 400, args.engines)]
        if not args.small and not args.no_large:
            sizes.append(("large", 1200, 100, 400, args.large_engines))
        for size, sessions, per_session, facts, engines in sizes:
            root = scratch / f"root-{size}"
            t0 = time.perf_counter()
            workload = build_workload(str(root), seed=args.seed, sessions=sessions, entries_per_session=per_session, facts=facts)
            # Before any engine is asked: a split left out is never run, not only never printed.
            workload.questions = [q for q in workload.questions if q.split in splits]
            print(f"[{size}] {len(workload.sessions)} sessions, {workload.entries} entries, {len(workload.facts)} facts, "
                  f"{len(workload.questions)} questions, written in {time.perf_counter() - t0:.1f}s", flush=True)
            builds = Builds(str(root), scratch, size)
            for label in engines.split(","):
                try:
                    row, rows = run_variant(builds, label, workload, score=True, packets=not args.no_packet)
                except RecallEngineUnavailable as exc:  # an optional engine without its extra: the others still run
                    print(f"  {label:13s} skipped: {exc}", flush=True)
                    skipped.append(f"{label} ({size})")
                    continue
                engine_rows.append(row)
                for r in rows:
                    r["size"] = size
                question_rows.extend(rows)
                print(f"  {label:13s} {row['records']:7d} records  build {row['build_s']:6.1f}s "
                      f"({row['build_s_per_10k']:.2f} s/10k)  {row['index_bytes'] / 2**20:7.1f} MiB  "
                      f"p50 {row['query_p50_ms']:.2f} ms  p95 {row['query_p95_ms']:.2f} ms", flush=True)
            builds.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    summary: list[dict] = []
    for (variant, size), group in _groups(question_rows):
        for row in summarize([(r["question"], r["judgement"]) for r in group], by=("split", "wording")):
            summary.append({"variant": variant, "size": size, **row})
    pl.DataFrame(engine_rows).write_csv(out / "engines.csv")
    table = pl.DataFrame(summary)
    if args.no_packet:
        table = table.with_columns(pl.lit(None, dtype=pl.Float64).alias("answerable"))
    table.write_csv(out / "summary.csv")
    flat = [{k: v for k, v in r.items() if k not in ("question", "judgement")} | _flat(r["judgement"]) for r in question_rows]
    pl.DataFrame(flat).write_parquet(out / "questions.parquet")
    with pl.Config(tbl_rows=200, tbl_cols=20, tbl_width_chars=220):
        show = table.select(["variant", "size", "split", "wording", "questions", "entry_recall@1", "entry_recall@5", "entry_recall@10",
                             "session_recall@5", "entry_ndcg@10", "entry_mrr", "aggregation_evidence@10", "answerable",
                             "false_positive_rate"])
        for split in (name for name in SPLITS if name in splits):
            print(show.filter(pl.col("split") == split))
    if skipped:
        print(f"not measured (their extras are not installed): {', '.join(skipped)}")
    print(out)
    return 0


def _groups(rows: list[dict]):
    keys: dict[tuple, list[dict]] = {}
    for r in rows:
        keys.setdefault((r["variant"], r["size"]), []).append(r)
    return keys.items()


def _flat(judgement) -> dict:
    return {"entry_rank": judgement.entry_rank, "session_rank": judgement.session_rank, "entry_rr": judgement.entry_rr,
            "entry_ndcg10": judgement.entry_ndcg10, "answerable": judgement.answerable, "false_positive": judgement.false_positive,
            **{f"entry_recall@{k}": v for k, v in judgement.entry_recall.items()},
            **{f"session_recall@{k}": v for k, v in judgement.session_recall.items()}}


if __name__ == "__main__":
    raise SystemExit(main())
