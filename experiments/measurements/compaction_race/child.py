"""The processes of the compaction race: one writer or one compactor each.

Run as ``python -m experiments.measurements.compaction_race.child`` with one JSON job on stdin
(``role``, ``cell``, ``spec``, ``root``, ``session_id``, ``coord``, ``out``). Every process waits
for ``<coord>/go``, then:

* a writer appends its entries one by one and, after each acknowledgement (``append``
  returned, or the ``aptmem append`` process exited 0, or a long-lived one reported how many
  it stored), writes the entry's digest to ``out``. It stops once it made its quota *and* every
  compactor reached its target (``<coord>/reached.<name>``), or on ``<coord>/stop``; then it
  leaves ``<coord>/done.<name>``.
* a compactor compacts in a loop and writes one JSON line per compaction to ``out``: whether it
  changed the session and the digests of the entries it summarized, read from the compaction
  that committed. It leaves ``reached.<name>`` at its target and stops once every writer is done.

A digest is the first 16 hex digits of SHA-256 of the entry's canonical encoding, the same
whoever writes or reads the entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

from experiments.core.strategy import build_store
from experiments.measurements.compaction_race.spec import CompactorSpec, RaceCell, WriterSpec

__all__ = ["digest", "make_entry", "main"]

_WORDS = ("alpha", "bravo", "index", "cache", "retry", "parser", "commit", "buffer", "socket", "router", "token", "shard")


def digest(entry: Any) -> str:
    """The race's name of an entry: SHA-256 of its canonical encoding, first 16 hex digits."""
    from aptmem.entries import encode_entry

    return hashlib.sha256(encode_entry(entry)).hexdigest()[:16]


def make_entry(writer: str, n: int, with_ids: bool, rng: random.Random) -> Any:
    """The ``n``-th entry of ``writer``: a user turn or a reply, unique text; every 500th is
    metadata (as rare as in an agent's session: a rewrite carries it over, never summarizes it)."""
    from aptmem.entries import Assistant, Metadata, User, now_ms

    text = f"{writer} #{n}: " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 30)))
    ident = f"{writer}-{n}" if with_ids else None
    pick = rng.random()
    if n % 500 == 1:
        return Metadata(kind="race", data={"writer": writer, "n": n}, ts=now_ms(), id=ident)
    if pick < 0.5:
        return User(content=text, ts=now_ms(), id=ident)
    return Assistant(content=text, ts=now_ms(), id=ident)


def _store(cell: RaceCell, root: str) -> Any:
    return build_store(cell.store, root)


def _exists(coord: Path, name: str) -> bool:
    return (coord / name).exists()


def _touch(coord: Path, name: str) -> None:
    (coord / name).write_bytes(b"")


def _wait_go(coord: Path) -> None:
    while not _exists(coord, "go"):
        time.sleep(0.005)


def _writers_may_stop(coord: Path, cell: RaceCell) -> bool:
    return _exists(coord, "stop") or all(_exists(coord, f"reached.{c.name}") for c in cell.compactors)


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "aptmem", *args]


def _cli_store_options(cell: RaceCell) -> list[str]:
    """The JSONL strategy's settings as ``aptmem append`` options."""
    settings = cell.store.settings
    return ["--sync", str(settings.get("sync", "none")), "--mode", str(settings.get("recovery", "skip")), "--lock-timeout", "60"]


def run_writer(job: dict[str, Any], cell: RaceCell, spec: WriterSpec) -> None:
    """Append until the quota is made and the compactors are done; one digest per acknowledgement."""
    coord, root, sid = Path(job["coord"]), job["root"], job["session_id"]
    rng = random.Random(f"{cell.seed}:{spec.name}")
    with open(job["out"], "w", encoding="ascii") as out:
        def ack(entry: Any) -> None:
            out.write(digest(entry) + "\n")
            out.flush()

        _wait_go(coord)
        n = 0
        if spec.kind == "cli_stream":
            _stream(cell, spec, root, sid, coord, rng, ack)
        else:
            store = _opened(cell, root) if spec.kind == "library" else None
            while n < spec.appends or not _writers_may_stop(coord, cell):
                if _exists(coord, "stop"):
                    break
                entry = make_entry(spec.name, n, spec.with_ids, rng)
                if spec.kind == "library":
                    _patiently(lambda: store.append(sid, entry), out)
                elif spec.kind == "library_fresh":
                    _patiently(lambda: _append_fresh(cell, root, sid, entry), out)
                else:
                    from aptmem.entries import encode_line

                    done = subprocess.run(_cli("append", "--root", root, sid, *_cli_store_options(cell)),
                                          input=encode_line(entry), capture_output=True, timeout=120)
                    if done.returncode != 0:
                        raise RuntimeError(f"aptmem append exited {done.returncode}: {done.stderr.decode(errors='replace')}")
                ack(entry)
                n += 1
                if spec.pause_ms:
                    time.sleep(spec.pause_ms / 1000)
            if store is not None:
                store.close()
    _touch(coord, f"done.{spec.name}")


def _opened(cell: RaceCell, root: str) -> Any:
    """The cell's store, opened; opening a database may wait for its lock too: try again then."""
    from aptmem.errors import LockTimeout

    for _ in range(30):
        try:
            return _store(cell, root)
        except LockTimeout:
            continue
    return _store(cell, root)


def _append_fresh(cell: RaceCell, root: str, sid: str, entry: Any) -> None:
    """Open a new store (waiting for it as :func:`_opened` does), append, close."""
    store = _opened(cell, root)
    try:
        store.append(sid, entry)
    finally:
        store.close()


def _patiently(append: Any, out: Any) -> None:
    """Append, trying again while the lock stays busy past the store's timeout (a slow disk under
    a compaction's fsyncs): such an append was not acknowledged, so trying again is what a caller
    does. Each wait is noted in ``out`` as a line ``wait``."""
    from aptmem.errors import LockTimeout

    for _ in range(30):
        try:
            append()
            return
        except LockTimeout:
            out.write("wait\n")
            out.flush()
    append()


def _stream(cell: RaceCell, spec: WriterSpec, root: str, sid: str, coord: Path, rng: random.Random, ack: Any) -> None:
    """Feed one long-lived ``aptmem append`` a line at a time; acknowledge what it reports stored."""
    from aptmem.entries import encode_line

    proc = subprocess.Popen(_cli("append", "--root", root, sid, "--json", *_cli_store_options(cell)),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin is not None
    sent = []
    try:
        while len(sent) < spec.appends or not _writers_may_stop(coord, cell):
            if _exists(coord, "stop"):
                break
            entry = make_entry(spec.name, len(sent), spec.with_ids, rng)
            proc.stdin.write(encode_line(entry))
            proc.stdin.flush()
            sent.append(entry)
            # A pause now and then ends the burst: the process releases the lock and waits.
            time.sleep(spec.pause_ms / 1000 if spec.pause_ms else (0.002 if len(sent) % 8 == 0 else 0.0005))
    finally:
        out, err = proc.communicate(timeout=300)  # closes stdin: the end of input
    report = json.loads(out.decode().strip().splitlines()[-1])
    for entry in sent[: report["appended"]]:
        ack(entry)
    if proc.returncode != 0:
        raise RuntimeError(f"aptmem append exited {proc.returncode}: {err.decode(errors='replace')}")


def run_compactor(job: dict[str, Any], cell: RaceCell, spec: CompactorSpec) -> None:
    """Compact until the target is reached and every writer is done; one JSON line per compaction."""
    coord, root, sid = Path(job["coord"]), job["root"], job["session_id"]
    session = None
    if spec.kind == "library":
        from aptmem.compaction.policy import CompactionPolicy
        from aptmem.session import Session
        from aptmem.tokens import get_estimator

        store = _opened(cell, root)
        _wait_go(coord)
        while not store.exists(sid):
            time.sleep(0.005)
        session = Session(store, sid, policy=CompactionPolicy(window=cell.window, keep_turns=cell.keep_turns, persist=cell.persist),
                          estimator=get_estimator("rough"))
    else:
        _wait_go(coord)
    changed = 0
    with open(job["out"], "w", encoding="ascii") as out:
        while True:
            writers_done = all(_exists(coord, f"done.{w.name}") for w in cell.writers)
            if _exists(coord, "stop") or (writers_done and changed >= spec.compactions):
                break
            record = _compact_once(session, cell, root, sid)
            changed += record["changed"]
            out.write(json.dumps(record) + "\n")
            out.flush()
            if changed >= spec.compactions and not _exists(coord, f"reached.{spec.name}"):
                _touch(coord, f"reached.{spec.name}")
            if writers_done and changed >= spec.compactions:
                break
            if spec.pause_ms or not record["changed"]:
                time.sleep(spec.pause_ms / 1000 or 0.002)  # nothing new to summarize: let the writers write
    _touch(coord, f"reached.{spec.name}")  # also when stopped early: writers must not wait for it
    if session is not None:
        session.store.close()


def _compact_once(session: Any, cell: RaceCell, root: str, sid: str) -> dict[str, Any]:
    """One compaction, by the library or by ``aptmem compact``; what it committed."""
    from aptmem.errors import AptmemError

    if session is not None:
        try:
            result = session.compact()
        except AptmemError as exc:  # e.g. a lock held too long: nothing was written
            return {"changed": False, "error": str(exc), "digests": []}
        return {"changed": result.changed, "error": None,
                "digests": [digest(e) for e in result.plan.summarized] if result.changed else []}
    path = str(Path(root) / f"{sid}.jsonl")
    if not os.path.exists(path):
        time.sleep(0.01)
        return {"changed": False, "error": None, "digests": []}
    done = subprocess.run(_cli("compact", path, "--window", str(cell.window), "--keep-turns", str(cell.keep_turns),
                               "--persist", cell.persist, "--force", "--json", "--tier", "rough", "--no-confirm"),
                          capture_output=True, timeout=300)
    if done.returncode != 0:
        return {"changed": False, "error": done.stderr.decode(errors="replace").strip(), "digests": []}
    report = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return {"changed": bool(report["changed"]), "error": None, "digests": report.get("summarized_digests", [])}


def main() -> int:
    """Read the job on stdin and play its role."""
    job = json.loads(sys.stdin.read())
    cell = msgspec.convert(job["cell"], RaceCell)
    if job["role"] == "writer":
        run_writer(job, cell, msgspec.convert(job["spec"], WriterSpec))
    else:
        run_compactor(job, cell, msgspec.convert(job["spec"], CompactorSpec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
