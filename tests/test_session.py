"""The Session: append -> estimate -> compact, the context it assembles, reopening after a compaction."""

from __future__ import annotations

import json
import subprocess
from collections import Counter
import sys
from pathlib import Path

import pytest

from aptmem.compaction.policy import CompactionPolicy
from aptmem.context.render import count_messages
from aptmem.entries import Assistant, Compaction, Entry, ToolCall, ToolResult, User
from aptmem.ids import new_session_id
from aptmem.jsonl_store import JsonlStore
from aptmem.session import Session
from aptmem.tokens import count_entries, get_estimator
from aptmem.working_memory import WorkingMemory
from experiments.workloads.synthetic import generate

ROOT = Path(__file__).resolve().parent.parent


class Counting:
    """An estimator that counts how often it is asked, and for which texts (wrapping a real one)."""

    def __init__(self, inner) -> None:  # type: ignore[no-untyped-def]
        self.inner, self.calls, self.texts = inner, 0, Counter()
        self.name, self.tier, self.tokenizer = inner.name, inner.tier, inner.tokenizer

    def count(self, text: str) -> int:
        self.calls += 1
        self.texts[text] += 1
        return self.inner.count(text)


def workload(turns: int = 60, seed: int = 3) -> list[Entry]:
    return generate(turns=turns, seed=seed).entries


def test_below_the_trigger_appends_count_each_entry_once_and_never_confirm(tmp_path: Path) -> None:
    cheap, precise = Counting(get_estimator("medium")), Counting(get_estimator("precise"))
    with JsonlStore(tmp_path) as store:
        session = Session(store, new_session_id(), policy=CompactionPolicy(window=10_000_000), estimator=cheap, confirm=precise)
        entries = workload(20)
        for entry in entries:
            before = cheap.calls
            outcome = session.append(entry)
            assert outcome.compaction is None and not outcome.confirmed
            # Only the new entry's texts (content, tool name, arguments, ids...) are counted.
            assert cheap.calls - before <= 6
        assert set(cheap.texts.values()) == {1}, "no text is counted twice: the running total is not recounted"
        assert precise.calls == 0
        assert session.cheap_tokens() == count_entries(cheap.inner, entries)
        assert session.tokens() == count_entries(precise.inner, entries)  # counted now, lazily


@pytest.mark.parametrize("persist", ["append", "rewrite"])
def test_compaction_fires_at_the_trigger_and_a_reopened_session_sees_the_same_context(tmp_path: Path, persist: str) -> None:
    policy = CompactionPolicy(window=16_000, persist=persist)
    options = dict(policy=policy, estimator=get_estimator("medium"), confirm=get_estimator("precise"))
    sid = new_session_id()
    with JsonlStore(tmp_path) as store:
        session = Session(store, sid, **options)
        entries = workload(80)
        compactions = [o.compaction for o in map(session.append, entries) if o.compaction]
        assert compactions, "a 16k window must compact during 80 turns"
        for result in compactions:
            assert result.tokens_before >= policy.trigger_tokens
            assert result.tokens_after <= policy.target_tokens or result.entry.notes
        before = session.context()
    with JsonlStore(tmp_path) as store:
        reopened = Session(store, sid, **options)
        after = reopened.context()
        assert after.messages == before.messages and after.tokens == before.tokens
        assert isinstance(reopened.live[0], Compaction)
        stored = list(store.iter_entries(sid))
    if persist == "rewrite":
        assert stored == reopened.live, "rewrite: the file is the summary plus the kept turns"
    else:
        history = [e for e in stored if not isinstance(e, Compaction)]
        assert len(history) == len(entries) and len(reopened.live) > 1
        assert history[-(len(reopened.live) - 1) :] == reopened.live[1:], "append: the kept entries are the history's tail"
        assert sum(isinstance(e, Compaction) for e in stored) == len(compactions), "append: every compaction is on disk"


def test_a_huge_tool_result_is_shortened_in_the_view_but_kept_on_disk(tmp_path: Path) -> None:
    policy = CompactionPolicy(window=4_000)
    sid = new_session_id()
    huge = ToolResult(call_id="c1", content="row,value\n" * 20_000, ts=3, id="r1")
    with JsonlStore(tmp_path) as store:
        session = Session(store, sid, policy=policy, estimator=get_estimator("medium"), confirm=get_estimator("precise"))
        session.append(User(content="dump the table", ts=1, id="u1"))
        session.append(ToolCall(name="sql", args={"q": "select *"}, ts=2, id="c1"))
        outcome = session.append(huge)
        assert outcome.compaction is not None
        marker = outcome.compaction.entry
        # The kept turn is [u1, c1, r1]: r1 is shown shortened, named by its position in it.
        assert list(marker.truncated_at) == [2] and any("shortened ToolResult r1" in n for n in marker.notes)
        assert any("larger than the window" in n for n in marker.notes)
        assert session.tokens() <= policy.window
        shown = next(m for m in session.context().messages if "characters cut by aptmem compaction" in m.get("content", ""))
        assert shown["role"] == "tool"
        on_disk = [e for e in store.iter_entries(sid) if e.id == "r1"]
        assert on_disk == [huge], "append: the full entry stays on disk"
    with JsonlStore(tmp_path) as store:
        reopened = Session(store, sid, policy=policy, estimator=get_estimator("medium"), confirm=get_estimator("precise"))
        assert reopened.tokens() == session.tokens()


def test_system_prompt_and_working_memory_are_part_of_the_context(tmp_path: Path) -> None:
    sid = new_session_id()
    memory = WorkingMemory(tmp_path, sid)
    memory.create(memory="The user prefers small commits.")
    precise = get_estimator("precise")
    with JsonlStore(tmp_path) as store:
        session = Session(store, sid, policy=CompactionPolicy(window=100_000), estimator=precise,
                          system_prompt="You are a careful coding agent.", memory=memory)
        session.append(User(content="hello", ts=1))
        context = session.context()
        assert context.messages[0]["role"] == "system"
        assert "careful coding agent" in context.messages[0]["content"] and "small commits" in context.messages[0]["content"]
        assert context.tokens == count_messages(precise.count, context.rendered)
        assert context.messages[0]["content"] == context.rendered.system_text
        before = session.tokens()
        memory.set("plan", ["write the test first", "then the fix"])
        session.refresh_memory()
        assert session.tokens() > before


def test_replay_and_compact_from_the_command_line(tmp_path: Path) -> None:
    src = tmp_path / "src.jsonl"
    src.write_bytes(generate(turns=60, seed=5).encode() + b"garbage line\n")
    done = subprocess.run([sys.executable, "-m", "aptmem", "replay", str(src), "--window", "16000", "--json"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout.strip().splitlines()[-1])
    for key in ("entries", "turns", "compactions", "max_occupancy", "post_compaction_occupancy", "split_tool_pairs",
                "oversized_entries"):
        assert key in out, key
    assert out["turns"] == 60 and out["compactions"] == len(out["post_compaction_occupancy"]) > 0
    assert out["split_tool_pairs"] == 0 and out["max_occupancy"] <= 0.8
    assert out["damaged_lines"] == [out["entries"] + 1]

    root = tmp_path / "sessions"
    kept = subprocess.run([sys.executable, "-m", "aptmem", "replay", str(src), "--window", "1000000", "--into", str(root),
                           "--json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    sid = json.loads(kept.stdout.strip().splitlines()[-1])["session_id"]
    path = root / f"{sid}.jsonl"
    quiet = subprocess.run([sys.executable, "-m", "aptmem", "compact", str(path), "--window", "1000000", "--json"],
                           capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert quiet.returncode == 0 and json.loads(quiet.stdout)["compacted"] is False
    forced = subprocess.run([sys.executable, "-m", "aptmem", "compact", str(path), "--window", "1000000", "--force",
                             "--persist", "rewrite", "--json"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    result = json.loads(forced.stdout)
    assert forced.returncode == 0 and result["compacted"] is True and result["kept_turns"] == 10
    with JsonlStore(root) as store:
        stored = list(store.iter_entries(sid))
    assert isinstance(stored[0], Compaction) and sum(isinstance(e, User) for e in stored) == 10
    bad = subprocess.run([sys.executable, "-m", "aptmem", "compact", str(src), "--window", "1000"],
                         capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and "<uuid>.jsonl" in bad.stderr


# -- issue 11 and 12: compaction under the writer lock, id-less entries, nothing to summarize ----------


def _rough_session(store: JsonlStore, sid: str, persist: str, window: int = 2000, keep_turns: int = 2) -> Session:
    return Session(store, sid, policy=CompactionPolicy(window=window, keep_turns=keep_turns, persist=persist),
                   estimator=get_estimator("rough"))


@pytest.mark.parametrize("persist", ["append", "rewrite"])
def test_entries_appended_after_a_compactor_opened_the_session_are_not_lost(tmp_path: Path, persist: str) -> None:
    """Finding 1: the compaction plans from what it reads under the lock, not from a stale snapshot."""
    sid = new_session_id()
    writer = JsonlStore(tmp_path)
    for entry in workload(30):
        writer.append(sid, entry)
    compactor_store = JsonlStore(tmp_path)
    compactor = _rough_session(compactor_store, sid, persist, keep_turns=5)  # its snapshot: the turns so far
    late = [User(content=f"appended by another writer after the snapshot, number {n}", ts=n) for n in range(4)]
    for entry in late:  # no ids, as `aptmem append` writes them
        writer.append(sid, entry)
    writer.close()
    result = compactor.compact()
    compactor_store.close()
    with JsonlStore(tmp_path) as store:
        stored = list(store.iter_entries(sid))
        live = store.read_live(sid)
    assert all(entry in stored for entry in late), "an entry appended meanwhile was lost"
    assert live[-len(late):] == late, "the newest entries are kept verbatim"
    assert compactor.live == live, "the compactor's context is the one it wrote"
    assert result.changed


@pytest.mark.parametrize("persist", ["append", "rewrite"])
def test_a_session_of_entries_without_ids_compacts_and_resumes(tmp_path: Path, persist: str) -> None:
    """Finding 2: the marker names what it keeps by position, so id-less turns stay live."""
    sid = new_session_id()
    with JsonlStore(tmp_path) as store:
        for n in range(40):
            store.append(sid, User(content=f"question {n} " + "word " * 20, ts=2 * n))
            store.append(sid, Assistant(content=f"answer {n} " + "word " * 20, ts=2 * n + 1))
        session = _rough_session(store, sid, persist, keep_turns=3)
        result = session.compact()
        assert len(result.plan.kept) == 6
    with JsonlStore(tmp_path) as store:
        resumed = _rough_session(store, sid, persist, keep_turns=3)
        assert len(resumed.live) == 7, "the summary and the 6 entries of the 3 kept turns"
        assert resumed.live == session.live
        assert result.entry is not None and result.entry.kept_before == (6 if persist == "append" else 0)
        assert [m["content"] for m in resumed.context().messages] == [m["content"] for m in session.context().messages]
        if persist == "append":  # a later rewrite keeps those turns too
            again = Session(store, sid, policy=CompactionPolicy(window=2000, keep_turns=3, persist="rewrite"),
                            estimator=get_estimator("rough"))
            assert again.compact().entry is None  # nothing new to summarize: nothing rewritten
            assert len(list(store.iter_entries(sid))) == 81


@pytest.mark.parametrize("persist", ["append", "rewrite"])
def test_a_compaction_with_nothing_to_summarize_changes_nothing_and_says_so(tmp_path: Path, persist: str) -> None:
    """Issue 12: right after a compaction, another one writes no marker that summarizes 0 entries."""
    sid = new_session_id()
    with JsonlStore(tmp_path) as store:
        session = _rough_session(store, sid, persist)
        for entry in workload(30):
            session.store.append(sid, entry)
        first = session.compact()
        assert first.entry is not None
        before = store.path(sid).read_bytes()
        second = session.compact()
        assert store.path(sid).read_bytes() == before, "a compaction that summarized nothing wrote something"
        assert not second.changed and second.entry is None and second.written is None
        assert second.reason and second.reason.startswith("nothing to summarize")
        assert store.path(sid).read_bytes() == before
