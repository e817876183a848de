"""Replaying a session that holds compactions of its own: honoured (the context each one left) or stripped."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from aptmem.compaction.policy import CompactionPolicy
from aptmem.entries import Compaction, User
from aptmem.ids import new_session_id
from aptmem.importers import import_session
from aptmem.jsonl_store import JsonlStore
from aptmem.compaction.replay import replay
from aptmem.session import Session
from aptmem.tokens import get_estimator

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "real"


def aptmem(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aptmem", *args], capture_output=True, text=True, cwd=ROOT, timeout=300)


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("imported")
    report = import_session("claude-code", FIXTURES / "claude-code-compacted-auto.jsonl", root)
    return root / f"{report.session_id}.jsonl"


def test_replay_honours_the_sessions_compaction_like_the_session_reopened_from_disk(imported: Path, tmp_path: Path) -> None:
    done = aptmem("replay", str(imported), "--window", "1000000", "--into", str(tmp_path), "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert (out["source_compactions"], out["stripped_compactions"], out["compactions"]) == (1, 0, 0)
    policy = CompactionPolicy(window=1_000_000)
    with JsonlStore(imported.parent) as store:  # the imported session, read back from disk
        original = Session(store, imported.stem, policy=policy, estimator=get_estimator("medium"),
                           confirm=get_estimator("precise"))
        assert out["final_tokens"] == original.tokens()
    with JsonlStore(tmp_path) as store:  # and the replayed one, reopened
        replayed = Session(store, out["session_id"], policy=policy, estimator=get_estimator("medium"),
                           confirm=get_estimator("precise"))
        assert replayed.tokens() == out["final_tokens"]
        assert isinstance(replayed.live[0], Compaction)


def test_replay_strips_the_sessions_compactions_when_told(imported: Path) -> None:
    honoured = json.loads(aptmem("replay", str(imported), "--window", "1000000", "--json").stdout.splitlines()[-1])
    done = aptmem("replay", str(imported), "--window", "1000000", "--strip-compactions", "--json")
    assert done.returncode == 0, done.stderr
    stripped = json.loads(done.stdout.strip().splitlines()[-1])
    assert (stripped["source_compactions"], stripped["stripped_compactions"]) == (0, 1)
    assert stripped["entries"] == honoured["entries"] - 1
    # The whole history, uncompacted: several times what the compaction left.
    assert stripped["final_tokens"] > 3 * honoured["final_tokens"]
    human = aptmem("replay", str(imported), "--window", "200000")
    assert human.returncode == 0 and "1 honoured, 0 left out" in human.stdout


def test_a_compaction_needs_reopen_or_strip(tmp_path: Path) -> None:
    history = [User(ts=1, id="a", content="hello " * 50), User(ts=2, id="b", content="more"),
               Compaction(ts=3, id="k", summary="said hello", first_kept="b"), User(ts=4, id="c", content="next")]
    with JsonlStore(tmp_path) as store:
        sid = new_session_id()
        options = {"policy": CompactionPolicy(window=10_000), "estimator": get_estimator("rough")}
        with pytest.raises(ValueError, match="reopen"):
            replay(history, Session(store, sid, **options))
        with pytest.raises(ValueError, match="source_compactions"):
            replay(history, Session(store, new_session_id(), **options), source_compactions="ignore")
        sid = new_session_id()
        report, steps = replay(history, Session(store, sid, **options), keep_steps=True,
                               reopen=lambda: Session(store, sid, **options))
        assert report.source_compactions == 1 and [s.source_compaction for s in steps] == [False, False, True, False]
        live = store.read_live(sid)
        assert [e.id for e in live] == ["k", "b", "c"]
        assert report.final_tokens == Session(store, sid, **options).tokens()
        report, _ = replay(history, Session(store, new_session_id(), **options), source_compactions="strip")
        assert (report.entries, report.stripped_compactions) == (3, 1)
