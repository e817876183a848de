"""An index killed mid-update (a real SIGKILL of a real ``aptmem index`` process) catches up with
nothing missing and nothing duplicated: after every kill, appends and a rewrite land, and the final
index equals one rebuilt from scratch, record for record."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from aptmem.continuation import create_session
from aptmem.entries import Assistant, ToolResult, User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall.index import RecallIndex, file_token

SEED = int(os.environ.get("APTMEM_TEST_SEED", "1515"))
KILLS = 8


def _fill(root: Path, rng: random.Random, sessions: int, entries: int) -> list[str]:
    words = "cache retry queue worker deploy schema migration shard replica token router config vault pipeline".split()
    ids = []
    with JsonlStore(root) as store:
        for s in range(sessions):
            sid = create_session(store, root, title=f"session {s}")
            batch = []
            for i in range(entries):
                text = " ".join(rng.choice(words) for _ in range(rng.randint(20, 120))) + f" marker-{s}-{i}"
                kind = rng.random()
                if kind < 0.4:
                    batch.append(User(content=text, ts=i))  # no id: named by position
                elif kind < 0.7:
                    batch.append(Assistant(content=text, ts=i, id=f"a{s}-{i}"))
                else:
                    batch.append(ToolResult(call_id=f"c{i}", content='{"log":"%s","n":%d}' % (text, i), ts=i, id=f"r{s}-{i}"))
            store.append_many(sid, batch)
            ids.append(sid)
    return ids


def _index(root: Path, *options: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "aptmem", "index", "--root", str(root), *options],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _records(db) -> list[tuple]:
    return sorted(db.execute("SELECT session_id, level, kind, entry_id, position, ts, text FROM docs").fetchall())


def test_killed_index_catches_up_with_nothing_missing_or_duplicated(tmp_path: Path) -> None:
    rng = random.Random(SEED)
    root = tmp_path / "sessions"
    ids = _fill(root, rng, sessions=40, entries=120)
    # How long one full index takes here (a copy of the root), to place the kills inside it.
    copy = tmp_path / "copy"
    shutil.copytree(root, copy)
    start = time.perf_counter()
    assert _index(copy).wait(timeout=300) == 0
    full = time.perf_counter() - start

    partial_states = 0
    for kill in range(KILLS):
        # A commit after every session: the most places a kill can land between two commits (the
        # default batches sessions for about half a second; test_kill_during_batched_build_...).
        child = _index(root, "--commit-seconds", "0")
        time.sleep(rng.uniform(0.1, 0.9) * full)
        child.send_signal(signal.SIGKILL)
        code = child.wait(timeout=60)
        if code == -signal.SIGKILL and (root / "recall-index.sqlite").exists():
            store = JsonlStore(root)
            index = RecallIndex(store, root, change_token=lambda s: file_token(store.path(s)))
            positions = dict(index.db.execute("SELECT session_id, entries FROM sessions").fetchall())
            behind = sum(positions.get(sid) != len(list(store.iter_entries(sid))) for sid in ids)
            # No session is half indexed: every record belongs to a session whose row is committed.
            orphans = index.db.execute("SELECT COUNT(*) FROM docs WHERE session_id NOT IN (SELECT session_id FROM sessions)").fetchone()[0]
            assert orphans == 0, f"seed {SEED}, kill {kill}"
            partial_states += 0 < behind < len(ids)  # killed with part of the work done and part left
            index.close()
            store.close()
        # The sessions move on between kills: appends, and one session rewritten.
        with JsonlStore(root) as store:
            for sid in rng.sample(ids, 5):
                store.append(sid, User(content=f"late news {kill} for {sid} ticket OPS-{rng.randint(100, 999)}", ts=10_000 + kill))
            victim = rng.choice(ids)
            kept = list(store.iter_entries(victim))[-10:]
            store.replace(victim, kept)
    assert partial_states, f"seed {SEED}: no kill landed inside an update"

    assert _index(root).wait(timeout=300) == 0
    store = JsonlStore(root)
    caught_up = RecallIndex(store, root, change_token=lambda s: file_token(store.path(s)))
    rebuilt = RecallIndex(store, root, path=tmp_path / "rebuilt.sqlite")
    rebuilt.rebuild()
    got, want = _records(caught_up.db), _records(rebuilt.db)
    assert len(got) == len(set(got)), f"seed {SEED}: duplicated records"
    assert got == want, f"seed {SEED}: {len(set(want) - set(got))} missing, {len(set(got) - set(want))} extra"
    fts_rows = caught_up.db.execute("SELECT COUNT(*) FROM fts_bigram").fetchone()[0]
    assert fts_rows == len(got), f"seed {SEED}: the keyword table disagrees with the records"
    caught_up.db.execute("INSERT INTO fts_bigram(fts_bigram) VALUES('integrity-check')")
    for sid in ids:  # every session's position and fingerprint match the log now
        entries = len(list(store.iter_entries(sid)))
        assert caught_up.db.execute("SELECT entries FROM sessions WHERE session_id = ?", (sid,)).fetchone()[0] == entries
    caught_up.close()
    rebuilt.close()
    store.close()


@pytest.mark.parametrize("seed", [SEED + 1, SEED + 2])
def test_kill_during_first_index_leaves_no_orphans(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    root = tmp_path / "sessions"
    _fill(root, rng, sessions=12, entries=80)
    child = _index(root)
    time.sleep(rng.uniform(0.3, 1.5))
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    assert _index(root).wait(timeout=300) == 0
    store = JsonlStore(root)
    index = RecallIndex(store, root)
    rebuilt = RecallIndex(store, root, path=tmp_path / "rebuilt.sqlite")
    rebuilt.rebuild()
    assert _records(index.db) == _records(rebuilt.db), f"seed {seed}"
    index.close()
    rebuilt.close()
    store.close()


@pytest.mark.parametrize("seed", [SEED + 3, SEED + 4])
def test_kill_during_batched_build_keeps_whole_sessions(tmp_path: Path, seed: int) -> None:
    """With batched commits (several sessions a commit) a kill keeps whole sessions only."""
    rng = random.Random(seed)
    root = tmp_path / "sessions"
    ids = _fill(root, rng, sessions=30, entries=100)
    child = _index(root, "--commit-seconds", "0.05")
    time.sleep(rng.uniform(0.5, 2.0))
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    store = JsonlStore(root)
    if (root / "recall-index.sqlite").exists():
        index = RecallIndex(store, root, change_token=lambda s: file_token(store.path(s)))
        positions = dict(index.db.execute("SELECT session_id, entries FROM sessions").fetchall())
        for sid, entries in positions.items():  # a committed session is whole
            assert entries == len(list(store.iter_entries(sid))), f"seed {seed}: {sid}"
        orphans = index.db.execute("SELECT COUNT(*) FROM docs WHERE session_id NOT IN (SELECT session_id FROM sessions)").fetchone()[0]
        assert orphans == 0, f"seed {seed}"
        index.close()
    assert _index(root).wait(timeout=300) == 0
    index = RecallIndex(store, root)
    rebuilt = RecallIndex(store, root, path=tmp_path / "rebuilt.sqlite")
    rebuilt.rebuild()
    assert _records(index.db) == _records(rebuilt.db), f"seed {seed}"
    assert len(ids) == int(index.db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0])
    index.close()
    rebuilt.close()
    store.close()


def test_commit_seconds_must_be_a_duration(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    root.mkdir()
    for bad in ("-1", "soon", "nan"):
        done = subprocess.run([sys.executable, "-m", "aptmem", "index", "--root", str(root), "--commit-seconds", bad],
                              capture_output=True, text=True)
        assert done.returncode == 2 and "--commit-seconds" in done.stderr, bad
