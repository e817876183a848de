"""Index build time of this tree against another commit, side by side on the recall workload.

    python benchmarks/recall_build.py ROOT SESSIONS [--rev main] [--engines fts,wordllama] [--repeats 3]

Writes the workload of ``recall_bench.py`` (seed 7, 100 entries a session, 400 facts; 180 sessions
make about 20k records, 1,200 about 130k) to ROOT if it is not there yet. Then, ``--repeats``
times, builds a fresh index of ROOT's logs with ENGINES once with this tree's ``aptmem`` and once
with ``git archive REV``'s, each in its own process (a model loads in both; only the refresh is
timed), the two in turn, so that a load that comes and goes weighs on both alike. Prints seconds
per 10k records for each (wall clock, and CPU seconds of all the process's threads: on a loaded
machine the CPU figure moves less), their ratios and the load average beside every pair.

After the first pair it also checks that the two trees built the same index: the records, the
keyword tables' indexed text and the vectors, compared row by row (a digest of each table); it
prints which tables differ, and ``--allow-different`` lets the timing go on anyway.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_TREE = _HERE.parent
sys.path.insert(0, str(_HERE))

#: The build run in a child: a fresh index file (in a scratch folder) of the logs under ROOT.
_CHILD = """
import json, os, sys, time
from aptmem.jsonl_store import JsonlStore
from aptmem.recall.index import RecallIndex, file_token
root, path, engines = sys.argv[1], sys.argv[2], tuple(sys.argv[3].split(","))
store = JsonlStore(root)
index = RecallIndex(store, root, engines=engines, path=path, change_token=lambda s: file_token(store.path(s)))
start, cpu = time.perf_counter(), time.process_time()
index.refresh()
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
records = sum(index.stats().records.values())
index.close()
import aptmem
print(json.dumps({"seconds": seconds, "cpu": cpu, "records": records, "package": aptmem.__file__}))
"""


def _tree_at(rev: str, folder: Path) -> Path:
    """The ``aptmem`` package as it is at ``rev``, unpacked under ``folder``."""
    archive = subprocess.run(["git", "archive", rev, "aptmem"], cwd=_TREE, capture_output=True, check=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(folder, filter="data")
    return folder


def _build(source: Path, root: str, scratch: Path, engines: str) -> dict:
    """Build one index with the ``aptmem`` under ``source``; its seconds and records."""
    path = scratch / "index.sqlite"
    for part in (path, Path(f"{path}-wal"), Path(f"{path}-shm")):
        part.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(source)}
    done = subprocess.run([sys.executable, "-c", _CHILD, root, str(path), engines], cwd=scratch, env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


#: What "the same index" means: every table the engines fill, row by row in a fixed order (the
#: sessions' change tokens name files, so only their content columns are compared).
_CONTENT = {
    "docs": "SELECT * FROM docs ORDER BY doc_id",
    "sessions": "SELECT session_id, entries, fingerprint, meta_hash, first_ts, last_ts FROM sessions ORDER BY session_id",
    "fts_bigram": "SELECT rowid, body FROM fts_bigram ORDER BY rowid",
    "vec_wordllama": "SELECT doc_id, v FROM vec_wordllama ORDER BY doc_id",
}


def _digests(path: Path) -> dict[str, str]:
    """A digest of each content table the index at ``path`` has."""
    db = sqlite3.connect(path)
    try:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        out = {}
        for table, query in _CONTENT.items():
            if table in tables:
                digest = hashlib.blake2b(digest_size=16)
                for row in db.execute(query):
                    digest.update(repr(row).encode())
                out[table] = digest.hexdigest()
        return out
    finally:
        db.close()


def main(argv: list[str]) -> int:
    """Run the side-by-side build measurement; see the module docstring."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("root")
    p.add_argument("sessions", type=int)
    p.add_argument("--rev", default="main", help="the other commit (default main)")
    p.add_argument("--engines", default="fts,wordllama", help="engines to build (default fts,wordllama: keywords and embeddings; hybrid keeps no table of its own since phase 7)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--allow-different", action="store_true", help="go on timing when the two indexes differ")
    args = p.parse_args(argv)
    if not os.path.exists(args.root):
        from recall_workload import build_workload

        build_workload(args.root, seed=7, sessions=args.sessions, entries_per_session=100, facts=400)
    per_10k: dict[str, list[float]] = {"this": [], args.rev: []}
    cpu_10k: dict[str, list[float]] = {"this": [], args.rev: []}
    with tempfile.TemporaryDirectory() as folder:
        other = _tree_at(args.rev, Path(folder) / "rev")
        scratch = Path(folder) / "scratch"
        scratch.mkdir()
        for repeat in range(args.repeats):
            load = os.getloadavg()[0]
            row, cpu = {}, {}
            for label, source in (("this", _TREE), (args.rev, other)):
                result = _build(source, args.root, scratch, args.engines)
                if not result["package"].startswith(str(source)):
                    raise SystemExit(f"the build of {label} imported {result['package']}")
                row[label] = result["seconds"] / max(1, result["records"]) * 10_000
                cpu[label] = result["cpu"] / max(1, result["records"]) * 10_000
                per_10k[label].append(row[label])
                cpu_10k[label].append(cpu[label])
                if repeat == 0:  # kept for the comparison (with its write-ahead log, if one is left)
                    for suffix in ("", "-wal"):
                        if (scratch / f"index.sqlite{suffix}").exists():
                            shutil.copy(scratch / f"index.sqlite{suffix}", Path(folder) / f"{label}.sqlite{suffix}")
            if repeat == 0:
                ours, theirs = _digests(Path(folder) / "this.sqlite"), _digests(Path(folder) / f"{args.rev}.sqlite")
                differ = sorted(t for t in ours.keys() | theirs.keys() if ours.get(t) != theirs.get(t))
                print(f"index contents: {'the same' if not differ else 'DIFFERENT in ' + ', '.join(differ)} "
                      f"({', '.join(sorted(ours))})", flush=True)
                if differ and not args.allow_different:
                    raise SystemExit("the two trees built different indexes (--allow-different to time them anyway)")
            print(f"repeat {repeat} load {load:.1f}: this {row['this']:.2f} s/10k (CPU {cpu['this']:.2f}), {args.rev} "
                  f"{row[args.rev]:.2f} s/10k (CPU {cpu[args.rev]:.2f}), {result['records']} records; {args.rev} / this "
                  f"{row[args.rev] / row['this']:.2f}x (CPU {cpu[args.rev] / cpu['this']:.2f}x)", flush=True)
    median = {label: (statistics.median(per_10k[label]), statistics.median(cpu_10k[label])) for label in per_10k}
    (this, this_cpu), (rev, rev_cpu) = median["this"], median[args.rev]
    print(f"median: this {this:.2f} s/10k (CPU {this_cpu:.2f}), {args.rev} {rev:.2f} s/10k (CPU {rev_cpu:.2f}); "
          f"{args.rev} / this {rev / this:.2f}x (CPU {rev_cpu / this_cpu:.2f}x), load now {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
