"""A process killed at any moment of a compaction leaves the old session or the new one.

Loadable, never a mix, never empty, for both ways to persist a compaction (``append``: one
line appended; ``rewrite``: an atomic replace of the file). Real processes are killed with
SIGKILL (see ``compaction_crash_child.py``):

* at every file-system call the compaction makes (before it, after it, and for a write after
  only part of its bytes), each point's outcome checked against where the commit point is;
* at seeded random moments, the test itself sending the signal.

After each kill the session is read as an agent would (``read_live``, ``iter_entries``), then
``recover()``-ed in the store's default mode and read again: the file must be byte for byte
the session before the compaction or the one an uninterrupted compaction writes (a reference
run on a copy), and a killed compaction can be run again to reach that same new session.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from aptmem.entries import Compaction, Entry
from aptmem.jsonl_store import JsonlStore
from aptmem.tokens import count_entry, get_estimator
from compaction_crash_child import CHILD_UUID_START, FIXED_TS, HOWS, open_session, pin_compactions
from experiments.workloads.synthetic import generate

CHILD = Path(__file__).resolve().parent / "compaction_crash_child.py"
SID = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"
WAYS = ("append", "rewrite")
SYNC = "always"  # the JSONL store fdatasyncs each append: one more kill point in the append way


@dataclass(frozen=True)
class Spec:
    """A workload and a policy: the session on disk has had ``earlier`` compactions and is past the trigger."""

    turns: int
    seed: int
    window: int
    keep_turns: int
    earlier: int


# About 365 entries on disk in the append way (62 live; the rewrite way writes 26 lines).
SMALL = Spec(turns=60, seed=11, window=8000, keep_turns=4, earlier=5)
# About 706 entries on disk in the append way (289 live; the rewrite way writes 70 lines).
LARGE = Spec(turns=120, seed=11, window=32_000, keep_turns=10, earlier=2)


def job(spec: Spec, way: str, root: Path) -> dict[str, Any]:
    return {"root": str(root), "session_id": SID, "sync": SYNC,
            "policy": {"window": spec.window, "keep_turns": spec.keep_turns, "persist": way}}


def build_session(root: Path, spec: Spec, way: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Append a workload through a Session until ``spec.earlier`` compactions happened, then
    append the entry that crosses the trigger behind the session's back: a compaction is due."""
    pin_compactions(monkeypatch.setattr, start=1)
    entries = generate(turns=spec.turns, seed=spec.seed, facts=5, tool_result_median_bytes=300, tool_result_sigma=1.0,
                       max_tool_result_bytes=4096, assistant_median_bytes=300).entries
    estimator = get_estimator("medium")
    session = open_session(job(spec, way, root), str(root))
    store = session.store
    policy = session.policy
    compactions = 0
    for entry in entries:
        if compactions >= spec.earlier and session.cheap_tokens() + count_entry(estimator, entry) >= policy.trigger_tokens:
            store.append(SID, entry)
            break
        compactions += session.append(entry).compaction is not None
    else:
        raise AssertionError(f"{spec}: the workload ended before the session was due for a compaction")
    store.close()


@dataclass
class Snapshot:
    """A session as loaded: the file's bytes, every entry, the live context."""

    data: bytes
    entries: list[Entry]
    live: list[Entry]
    debris: str = ""  # what the crash left beside the log: "temp file", "torn line" (now in quarantine)


def load(root: Path) -> Snapshot:
    """Load the session under ``root`` as after a crash; check what must hold whatever the outcome."""
    allowed = {f"{SID}.jsonl", f"{SID}.lock", f"{SID}.jsonl.quarantine"}
    names = os.listdir(root)
    temp = [n for n in names if n.startswith(f".{SID}.jsonl.") and n.endswith(".tmp")]
    stray = [n for n in names if n not in allowed and n not in temp]
    assert stray == [], f"unexpected files after the crash: {stray}"
    store = JsonlStore(root)  # recovery mode: the default, skip
    try:
        assert store.sessions() == [SID]  # a leftover temp file is not a session
        seen_before_repair = (list(store.iter_entries(SID)), store.read_live(SID))
        report = store.recover(SID)
        assert report.loadable and report.damaged_lines == [], report
        debris = "temp file" if temp else "torn line" if report.torn_tail_bytes else ""
        snapshot = Snapshot(store.path(SID).read_bytes(), list(store.iter_entries(SID)), store.read_live(SID), debris)
    finally:
        store.close()
    assert snapshot.entries and snapshot.live, "the session is empty"
    assert (snapshot.entries, snapshot.live) == seen_before_repair, "the repair changed what a reader sees"
    return snapshot


def outcome(got: Snapshot, old: Snapshot, new: Snapshot) -> str:
    """``old`` or ``new``; anything else fails (a mix, or bytes of neither)."""
    for name, want in (("old", old), ("new", new)):
        if got.data == want.data:
            assert (got.entries, got.live) == (want.entries, want.live)
            return name
    raise AssertionError(f"neither the old nor the new session: {len(got.entries)} entries, {len(got.live)} live, "
                         f"{len(got.data)} bytes (old {len(old.data)}, new {len(new.data)})")


def judge(root: Path, old: Snapshot, new: Snapshot, where: str) -> tuple[str, str]:
    """Load the session after a kill and say which it is, and what debris the crash left; failures name ``where``."""
    try:
        snapshot = load(root)
        return outcome(snapshot, old, new), snapshot.debris
    except AssertionError as exc:
        raise AssertionError(f"{where}: {exc}") from exc


def run_child(command: str, payload: dict[str, Any], timeout: float = 120) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(CHILD), command], input=json.dumps(payload), capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    return json.loads(done.stdout)


def compact_again(root: Path, spec: Spec, way: str, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """Resume after the crash: compact the session again in this process; return the file's bytes."""
    pin_compactions(monkeypatch.setattr, start=CHILD_UUID_START)
    session = open_session(job(spec, way, root), str(root))
    try:
        session.compact()
    finally:
        session.store.close()
    return (root / f"{SID}.jsonl").read_bytes()


def reference(tmp_path: Path, spec: Spec, way: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Snapshot, Snapshot, dict[str, Any]]:
    """Build the session, load it (old), compact a copy without a kill (new); return the count run's report."""
    pristine = tmp_path / "pristine"
    build_session(pristine, spec, way, monkeypatch)
    old = load(pristine)
    copy = tmp_path / "reference"
    shutil.copytree(pristine, copy)
    counted = run_child("count", job(spec, way, copy))
    new = load(copy)
    check_new_state(old, new, way)
    return pristine, old, new, counted


def check_new_state(old: Snapshot, new: Snapshot, way: str) -> None:
    """The reference compaction did what its way says (so 'new' is the state the test means)."""
    marker = new.live[0]
    assert isinstance(marker, Compaction) and marker.ts == FIXED_TS and marker.summary
    kept = new.live[1:]
    assert kept and [e.id for e in kept] == [e.id for e in old.live[len(old.live) - len(kept) :]]
    if way == "append":
        assert new.entries == [*old.entries, marker]  # the full history stays, the marker names what is kept
        assert marker.first_kept == kept[0].id
    else:
        assert new.entries == new.live  # the file is the summary and the kept turns
        assert len(new.entries) < len(old.entries)


def expected_outcome(index: int, how: str, commit: int) -> str:
    """Where a kill lands relative to the commit point: the call that makes the new session visible.

    At the commit point itself, a write cut before its last byte is a torn line (old), a write
    missing only its line end is a whole entry the reader accepts (new).
    """
    if index != commit:
        return "old" if index < commit else "new"
    return {"before": "old", "torn_half": "old", "torn_last": "new", "after": "new"}[how]


@pytest.mark.parametrize("way", WAYS)
def test_a_compaction_killed_at_any_file_system_call_leaves_the_old_or_the_new_session(
    way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = SMALL
    pristine, old, new, counted = reference(tmp_path, spec, way, monkeypatch)
    session = open_session(job(spec, way, pristine), str(pristine))
    assert session.tokens() >= session.policy.trigger_tokens  # the compaction was due
    session.store.close()
    calls = [tuple(call) for call in counted["calls"]]
    names = [name for name, _ in calls]
    marker_line = len(new.data) - len(old.data)
    if way == "append":
        # One write of the whole marker line, then the store's sync policy.
        assert calls == [("write", marker_line), ("fdatasync", 0)]
        commit = 0
    else:
        # One write per line into the temp file, its fsync, the rename, the folder's fsync.
        assert names == ["write"] * len(new.entries) + ["fsync", "replace", "fsync"]
        assert sum(size for _, size in calls) == len(new.data)
        commit = names.index("replace")

    points = [(i, how) for i, name in enumerate(names) for how in (HOWS if name == "write" else ("before", "after"))]
    runs = []
    for i, how in points:
        root = tmp_path / "runs" / f"{i:03d}-{how}"
        shutil.copytree(pristine, root)
        runs.append({"root": str(root), "call": i, "how": how})
    fates = run_child("kill", {**job(spec, way, pristine), "runs": runs})["fates"]
    assert fates == ["SIGKILL"] * len(points)

    table: Counter[tuple[str, str, str]] = Counter()  # (call, how, outcome) -> kill points
    outcomes: Counter[str] = Counter()
    wrong: list[str] = []
    for (i, how), run in zip(points, runs):
        root, where = Path(run["root"]), f"{way}: killed at {names[i]} #{i} {how}"
        got, debris = judge(root, old, new, where)
        outcomes[got] += 1
        call = "write" if names[i] == "write" else f"{names[i]} #{i}"
        table[(call, how, got + (f", {debris} left" if debris else ""))] += 1
        want = expected_outcome(i, how, commit)
        if got != want:
            wrong.append(f"{where}: {got}, expected {want}")
        if got == "old":
            assert compact_again(root, spec, way, monkeypatch) == new.data, f"{where}: compacting again"
    print(f"\n{way}: {len(points)} kill points over {len(calls)} calls (commit at #{commit}) -> {dict(outcomes)}")
    for (call, how, got), n in sorted(table.items(), key=lambda item: item[0]):
        print(f"  {call:12} {how:9} -> {got}: {n}")
    assert wrong == []
    assert outcomes["old"] > 0 and outcomes["new"] > 0  # the kills straddle the commit point


def random_kills(way: str, kills: int, seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Kill ``kills`` compactions of the large session at random moments (seeded); return the outcomes."""
    spec = LARGE
    pristine, old, new, counted = reference(tmp_path, spec, way, monkeypatch)
    rng = random.Random(seed)
    # Half the kills anywhere from the start of the compaction to a little past its end, half
    # around its writes (which come last, after the summary is made), so some land mid-write.
    end = counted["compact_ns"] / 1e9
    writes = counted["first_call_ns"] / 1e9
    outcomes: Counter[str] = Counter()
    for k in range(kills):
        root = tmp_path / "random" / f"{k:03d}"
        shutil.copytree(pristine, root)
        delay = rng.uniform(0, 1.5 * end) if k % 2 else rng.uniform(0.8 * writes, 1.2 * end)
        where = f"{way}: seed={seed} kill {k} after {delay * 1000:.2f} ms"
        child = subprocess.Popen([sys.executable, str(CHILD), "ready"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
        assert child.stdin is not None and child.stdout is not None
        child.stdin.write(json.dumps(job(spec, way, root)))
        child.stdin.close()
        line = child.stdout.readline()
        if line == "ready\n":
            time.sleep(delay)
            child.kill()
        child.wait(timeout=60)
        out, err = child.stdout.read(), child.stderr.read()  # a few lines at most: no pipe fills up
        child.stdout.close()
        child.stderr.close()
        assert line == "ready\n" and child.returncode in (-9, 0), f"{where}: {line!r} {out!r} {err!r}"
        got, debris = judge(root, old, new, where)
        outcomes[got + (f", {debris} left" if debris else "")] += 1
        if got == "old":
            assert compact_again(root, spec, way, monkeypatch) == new.data, f"{where}: compacting again"
    print(f"\n{way}: {kills} random kills (seed={seed}) -> {dict(outcomes)}")
    return outcomes


@pytest.mark.parametrize("way", WAYS)
def test_a_compaction_killed_at_a_random_moment_leaves_the_old_or_the_new_session(
    way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    outcomes = random_kills(way, kills=3, seed=20240611, tmp_path=tmp_path, monkeypatch=monkeypatch)
    assert sum(outcomes.values()) == 3  # each one old or new, checked inside


@pytest.mark.slow
@pytest.mark.parametrize("way", WAYS)
def test_many_random_kills_never_leave_a_mix(way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    outcomes = random_kills(way, kills=40, seed=7, tmp_path=tmp_path, monkeypatch=monkeypatch)
    assert sum(outcomes.values()) == 40
