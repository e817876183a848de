"""The conformance suite: one set of tests every storage strategy and variant must pass.

Each test runs once per YAML file in ``configs/strategy/`` (see ``conftest.py``). Randomness is
seeded, and every assertion that depends on it names its seed.
"""

from __future__ import annotations

import os
import random

import pytest
from store_samples import (
    BAD_IDS,
    UNKNOWN_LINES,
    compaction,
    entries_of,
    failing_after,
    file_modes,
    footprint,
    random_entry,
    random_history,
    session_id,
    unknown_entries,
    user,
)

from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, UnknownEntry, User, decode_line, encode_entry, entry_type
from aptmem.errors import ClosedStoreError, InvalidEntry, InvalidSessionId, SessionExists, SessionNotFound
from aptmem.store import RECOVERY_MODES, Capabilities, CompactionWrite, SessionStore, select_live

# -- the interface -------------------------------------------------------------------------------


def test_store_implements_the_interface(store: SessionStore) -> None:
    """Every strategy is a SessionStore and declares its capabilities up front."""
    assert isinstance(store, SessionStore)
    caps = store.capabilities
    assert isinstance(caps, Capabilities)
    assert caps.durability in ("per_append", "batch", "process", "none")
    assert "strict" in caps.recovery_modes
    assert set(caps.recovery_modes) <= set(RECOVERY_MODES)


def test_append_order_preserved(store: SessionStore) -> None:
    """Entries come back exactly as appended, in append order."""
    seed = 1001
    rng = random.Random(seed)
    sid = session_id(rng)
    history = random_history(rng, 120)
    for entry in history:
        store.append(sid, entry)
    got = entries_of(store, sid)
    assert len(got) == 120, f"seed={seed}"
    assert got == history, f"seed={seed}"


def test_reopen_reads_back_and_continues(store_factory) -> None:  # type: ignore[no-untyped-def]
    """A new store on the same root reads what the closed one wrote, and appends after it."""
    seed = 1002
    rng = random.Random(seed)
    ids = [session_id(rng) for _ in range(3)]
    expected: dict[str, list[Entry]] = {sid: [] for sid in ids}
    first = store_factory()
    for n in range(60):
        sid = ids[n % 3]
        entry = random_entry(rng, n)
        first.append(sid, entry)
        expected[sid].append(entry)
    first.close()
    again = store_factory()
    assert again.sessions() == sorted(ids), f"seed={seed}"
    for sid in ids:
        assert entries_of(again, sid) == expected[sid], f"seed={seed} session={sid}"
        more = random_history(rng, 5, start=100)
        again.append_many(sid, more)
        assert entries_of(again, sid) == expected[sid] + more, f"seed={seed} session={sid}"
        assert again.read_live(sid) == expected[sid] + more, f"seed={seed} session={sid}"


def test_megabyte_entries(store_factory) -> None:  # type: ignore[no-untyped-def]
    """Entries of about 1 MB (ASCII, Chinese, emoji with escapes) round-trip, also after reopen."""
    seed = 1003
    rng = random.Random(seed)
    sid = session_id(rng)
    ascii_mb = "".join(rng.choice("abcdefghij klmnop\n\"\\") for _ in range(4096)) * 256
    chinese_mb = "帮我看看这个错误日志，谢谢。" * 25_000  # 3 bytes a character: about 1 MB
    emoji_mb = "🙂👍🏽\x00\u2028</script>" * 40_000
    history = [
        user(0),
        User(ts=1, id="big-ascii", content=ascii_mb),
        ToolResult(ts=2, id="big-cjk", call_id="c1", content=chinese_mb),
        user(3),
        Assistant(ts=4, id="big-emoji", content=emoji_mb),
    ]
    assert all(len(s.encode()) >= 1_000_000 for s in (ascii_mb, chinese_mb, emoji_mb))
    store = store_factory()
    for entry in history:
        store.append(sid, entry)
    assert entries_of(store, sid) == history, f"seed={seed}"
    assert store.read_live(sid) == history, f"seed={seed}"
    store.close()
    again = store_factory()
    assert entries_of(again, sid) == history, f"seed={seed}"
    stats = again.stats(sid)
    assert stats.entries == 5
    assert stats.bytes_on_disk >= 3_000_000


def test_chinese_and_emoji_text(store: SessionStore) -> None:
    """Non-ASCII text everywhere (content, args, ids, first_kept) survives exactly."""
    sid = session_id(random.Random(1004))
    history: list[Entry] = [
        decode_line('{"type":"user","content":"帮我看看这个 bug","ts":1717000000000}'.encode()),
        decode_line(b'{"type":"tool_call","name":"read","args":{"path":"src/foo.ts"},"result":"...","ts":1717000002000}'),
        User(ts=3, id="用户-1", content="你好，世界 👋🏽 👨‍👩‍👧‍👦 🇨🇳 e\u0301 مرحبا 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u2028\u2029 \x00\x1f"),
        ToolCall(ts=4, id="调用-😀", name="写文件", args={"路径": "文档/说明.md", "emoji": "🚀", "nested": ["ü", {"ß": "ẞ"}]}),
        ToolResult(ts=5, id="结果", call_id="调用-😀", content="完成 ✅"),
        compaction(6, first_kept="用户-1"),
        Assistant(ts=7, content="好的 🙆"),
    ]
    store.append_many(sid, history[:2])
    for entry in history[2:]:
        store.append(sid, entry)
    assert entries_of(store, sid) == history
    assert store.read_live(sid) == [history[5], history[2], history[3], history[4], history[6]]


def test_many_sessions_in_one_root(store: SessionStore) -> None:
    """Fifty sessions side by side; ``sessions()`` lists exactly them and none leaks into another."""
    seed = 1005
    rng = random.Random(seed)
    ids = [session_id(rng) for _ in range(50)]
    expected: dict[str, list[Entry]] = {sid: [] for sid in ids}
    for sid in ids:  # interleaved: one entry each, then a batch each
        expected[sid].append(random_entry(rng, len(expected[sid])))
        store.append(sid, expected[sid][-1])
    for sid in ids:
        batch = random_history(rng, 2, start=1)
        store.append_many(sid, batch)
        expected[sid].extend(batch)
    assert store.sessions() == sorted(ids), f"seed={seed}"
    for sid in ids:
        assert store.exists(sid)
        assert entries_of(store, sid) == expected[sid], f"seed={seed} session={sid}"
    assert not store.exists(session_id(rng))


# -- the live context ----------------------------------------------------------------------------


def test_read_live_after_appended_marker(store: SessionStore) -> None:
    """An appended compaction naming an earlier entry: live is marker, kept entries, what follows."""
    sid = session_id(random.Random(1006))
    history = [user(n) for n in range(20)]
    store.append_many(sid, history)
    assert store.read_live(sid) == history
    first = compaction(20, first_kept="e12")
    after = [user(n) for n in range(21, 24)]
    store.append(sid, first)
    store.append_many(sid, after)
    everything = history + [first] + after
    expected = [first, *history[12:], *after]
    assert store.read_live(sid) == expected
    assert select_live(everything) == expected
    # A second compaction supersedes the first; it keeps entries that came after the first.
    second = compaction(24, first_kept="e22")
    store.append(sid, second)
    assert store.read_live(sid) == [second, after[1], after[2]]
    tail = user(25)
    store.append(sid, tail)
    assert store.read_live(sid) == [second, after[1], after[2], tail]
    assert entries_of(store, sid) == everything + [second, tail]


# name: (first_kept, ids of the entries after the marker, how many entries before it are kept)
_EDGE_CASES = {
    "no_first_kept": (None, ["e8", "e9", "e10"], 0),
    "names_nothing": ("missing", ["e8", "e9", "e10"], 0),
    "names_entry_after_marker": ("e9", ["e8", "e9", "e10"], 0),
    "marker_is_last": ("e4", [], 3),
    # Ids need not be unique (providers reuse tool-call ids): the kept entry is the latest one
    # with that id *before* the marker, even if the id shows up again after it.
    "duplicate_id_after_marker": ("e3", ["e8", "e3", "e10"], 4),
    "names_unknown_entry": ("unk-1", ["e8", "e9", "e10"], 1),
}


@pytest.mark.parametrize("case", list(_EDGE_CASES))
def test_read_live_edge_cases(store: SessionStore, case: str) -> None:
    """Corner cases of ``first_kept``; every strategy must agree with ``select_live`` exactly."""
    sid = session_id(random.Random(1007))
    first_kept, after_ids, kept = _EDGE_CASES[case]
    before = [*(user(n) for n in range(6)), decode_line(b'{"type":"branch","id":"unk-1","ts":6}')]
    marker = compaction(7, first_kept)
    after = [user(8 + i, ident=ident) for i, ident in enumerate(after_ids)]
    history = [*before, marker, *after]
    store.append_many(sid, history[:4])
    for entry in history[4:]:
        store.append(sid, entry)
    expected = [marker, *before[len(before) - kept :], *after]
    assert select_live(history) == expected
    assert store.read_live(sid) == expected


def test_read_live_after_rewrite(store: SessionStore) -> None:
    """A rewritten session starts with its compaction; live is it, the kept turns and new entries."""
    sid = session_id(random.Random(1008))
    store.append_many(sid, [user(n) for n in range(30)])
    summary = compaction(30, first_kept="e25")
    kept = [user(n) for n in range(25, 30)]
    store.replace(sid, [summary, *kept])
    new = [user(n) for n in range(31, 34)]
    for entry in new:
        store.append(sid, entry)
    expected = [summary, *kept, *new]
    assert entries_of(store, sid) == expected
    assert select_live(expected) == expected
    assert store.read_live(sid) == expected
    assert store.stats(sid).entries == 9
    assert store.stats(sid).compactions == 1


def test_legacy_compaction_marker_type(store: SessionStore) -> None:
    """A ``compaction_marker`` line (the original design's name) reads and acts as a compaction."""
    sid = session_id(random.Random(1009))
    legacy = decode_line('{"type":"compaction_marker","summary":"旧的摘要","first_kept":"e3","ts":1717000005000}'.encode())
    assert isinstance(legacy, Compaction) and entry_type(legacy) == "compaction_marker"
    history = [user(n) for n in range(5)]
    tail = user(6)
    store.append_many(sid, history)
    store.append(sid, legacy)
    store.append(sid, tail)
    live = store.read_live(sid)
    assert live == [legacy, history[3], history[4], tail]
    assert entry_type(live[0]) == "compaction_marker"
    assert entry_type(entries_of(store, sid)[5]) == "compaction_marker"
    stats = store.stats(sid)
    assert (stats.entries, stats.compactions) == (7, 1)


def test_read_live_matches_select_live_randomized(store: SessionStore) -> None:
    """Random histories with compactions (appended and rewritten) and reused ids: always select_live."""
    for seed in (2001, 2002, 2003):
        rng = random.Random(seed)
        sid = session_id(rng)
        n = 0
        for step in range(30):
            action = rng.random()
            if action < 0.15:
                pool = [f"id{rng.randrange(12)}", None, "nowhere"]
                store.append(sid, compaction(n, rng.choice(pool), legacy=rng.random() < 0.3))
                n += 1
            elif action < 0.2:
                kept = [random_entry(rng, n + i, ident=f"id{rng.randrange(12)}") for i in range(rng.randrange(4))]
                store.replace(sid, [compaction(n + 9, kept[0].id if kept else None), *kept])
                n += 10
            else:
                batch = [random_entry(rng, n + i, ident=f"id{rng.randrange(12)}") for i in range(rng.randrange(1, 4))]
                store.append_many(sid, batch)
                n += len(batch)
            history = entries_of(store, sid)
            assert store.read_live(sid) == select_live(history), f"seed={seed} step={step}"


# -- entry kinds ---------------------------------------------------------------------------------


def test_unknown_entries_round_trip_byte_for_byte(store_factory) -> None:  # type: ignore[no-untyped-def]
    """Unknown entry types come back with exactly their original bytes, by every write path."""
    rng = random.Random(1010)
    one, many, rewritten = session_id(rng), session_id(rng), session_id(rng)
    unknowns = unknown_entries()
    store = store_factory()
    for entry in unknowns:
        store.append(one, entry)
    store.append_many(many, [user(0), *unknowns, user(1)])
    store.replace(rewritten, [compaction(0, "u-1"), *unknowns])
    store.close()
    again = store_factory()
    for sid, expected in ((one, unknowns), (many, [user(0), *unknowns, user(1)]), (rewritten, [compaction(0, "u-1"), *unknowns])):
        got = entries_of(again, sid)
        assert got == expected
        raws = [entry.raw for entry in got if isinstance(entry, UnknownEntry)]
        assert raws == UNKNOWN_LINES
    assert again.read_live(rewritten) == [compaction(0, "u-1"), *unknowns]


def test_append_many_is_one_ordered_batch(store: SessionStore) -> None:
    """append_many appends every entry in order; mixed with single appends; empty is a no-op."""
    seed = 1011
    rng = random.Random(seed)
    sid = session_id(rng)
    first = random_history(rng, 100)
    single = random_entry(rng, 100)
    second = random_history(rng, 7, start=101)
    store.append_many(sid, first)
    store.append(sid, single)
    store.append_many(sid, tuple(second))
    store.append_many(sid, [])
    assert entries_of(store, sid) == [*first, single, *second], f"seed={seed}"
    assert store.stats(sid).entries == 108


def test_unencodable_entries_change_nothing(store: SessionStore) -> None:
    """An entry that cannot be encoded is refused; the history (and a whole batch) is untouched."""
    sid = session_id(random.Random(1012))
    good = [user(0), user(1)]
    store.append_many(sid, good)
    bad = ToolCall(ts=2, name="x", args={"handle": object()})
    with pytest.raises(InvalidEntry):
        store.append(sid, bad)
    with pytest.raises(InvalidEntry):
        store.append_many(sid, [user(2), bad, user(3)])
    assert entries_of(store, sid) == good
    store.append(sid, user(4))
    assert entries_of(store, sid) == [*good, user(4)]


# -- sessions and ids ----------------------------------------------------------------------------


def test_create_exists_and_missing_sessions(store: SessionStore) -> None:
    """create/exists/sessions for empty sessions; SessionExists and SessionNotFound where due."""
    rng = random.Random(1013)
    sid, missing = session_id(rng), session_id(rng)
    assert not store.exists(sid)
    assert store.sessions() == []
    store.create(sid)
    assert store.exists(sid)
    assert store.sessions() == [sid]
    assert entries_of(store, sid) == []
    assert store.read_live(sid) == []
    stats = store.stats(sid)
    assert (stats.entries, stats.compactions) == (0, 0)
    with pytest.raises(SessionExists):
        store.create(sid)
    store.append(sid, user(0))
    with pytest.raises(SessionExists):
        store.create(sid)
    assert entries_of(store, sid) == [user(0)]
    for read in (store.iter_entries, store.read_live, store.stats, store.recover):
        with pytest.raises(SessionNotFound):
            read(missing)
    assert not store.exists(missing)
    assert store.sessions() == [sid]


def test_invalid_session_ids_refused_before_any_file(store: SessionStore, store_factory) -> None:  # type: ignore[no-untyped-def]
    """Every method refuses a bad id with InvalidSessionId, and nothing appears on disk."""
    root = store_factory.root
    before = sorted(os.listdir(root))
    calls = {
        "create": lambda sid: store.create(sid),
        "exists": lambda sid: store.exists(sid),
        "append": lambda sid: store.append(sid, user(0)),
        "append_many": lambda sid: store.append_many(sid, [user(0)]),
        "append_many_empty": lambda sid: store.append_many(sid, []),
        "iter_entries": lambda sid: store.iter_entries(sid),
        "read_live": lambda sid: store.read_live(sid),
        "replace": lambda sid: store.replace(sid, [user(0)]),
        "recover": lambda sid: store.recover(sid),
        "stats": lambda sid: store.stats(sid),
    }
    for bad in [*BAD_IDS, None, 42]:
        for name, call in calls.items():
            with pytest.raises(InvalidSessionId):
                call(bad)
                pytest.fail(f"{name}({bad!r}) was accepted")
    assert sorted(os.listdir(root)) == before
    assert store.sessions() == []


# -- stats, files, replace, recovery, close -------------------------------------------------------


def test_stats_count_entries_and_bytes(store_factory) -> None:  # type: ignore[no-untyped-def]
    """Exact entry and compaction counts; bytes on disk is the real size of the store's files."""
    seed = 1014
    rng = random.Random(seed)
    sid = session_id(rng)
    store, root = store_factory(), store_factory.root
    history = [*random_history(rng, 10), compaction(10, "e5"), user(11), compaction(12, None, legacy=True), *random_history(rng, 3, start=13)]
    store.append_many(sid, history[:6])
    for entry in history[6:]:
        store.append(sid, entry)
    stats = store.stats(sid)
    assert stats.session_id == sid
    assert (stats.entries, stats.compactions) == (16, 2), f"seed={seed}"
    assert stats.bytes_on_disk > 0
    payload = sum(len(encode_entry(entry)) for entry in history)
    in_files = store.capabilities.storage == "files"
    if in_files:
        assert stats.bytes_on_disk == footprint(root), f"seed={seed} files={sorted(os.listdir(root))}"
        assert os.path.exists(stats.path)
    else:  # a server's tables: at least the bytes stored (uncompressed), in whole pages
        assert stats.bytes_on_disk >= payload, f"seed={seed}"
    before = stats.bytes_on_disk
    store.close()
    again = store_factory()
    stats = again.stats(sid)
    assert (stats.entries, stats.compactions) == (16, 2), f"seed={seed}"
    if in_files:
        assert stats.bytes_on_disk == footprint(root), f"seed={seed} files={sorted(os.listdir(root))}"
    else:
        assert stats.bytes_on_disk == before, f"seed={seed}"


def test_store_files_are_private(store_factory) -> None:  # type: ignore[no-untyped-def]
    """Every file the store makes is mode 0600 (whatever the umask), its root 0700."""
    rng = random.Random(1015)
    sid, other = session_id(rng), session_id(rng)
    old_umask = os.umask(0o022)
    try:
        store = store_factory()
        store.create(other)
        store.append(sid, user(0))
        store.replace(sid, [compaction(1, None), user(2)])
        store.append(sid, user(3))
        modes = file_modes(store_factory.root)
        store.close()
        store_factory().append(other, user(4))
        modes.update(file_modes(store_factory.root))
    finally:
        os.umask(old_umask)
    root_mode = os.stat(store_factory.root).st_mode & 0o777
    assert modes and all(mode == 0o600 for mode in modes.values()), {name: oct(mode) for name, mode in modes.items()}
    assert root_mode == 0o700, oct(root_mode)


def test_replace_is_atomic(store: SessionStore, store_factory) -> None:  # type: ignore[no-untyped-def]
    """replace swaps the whole history, or (when it fails halfway) changes nothing at all."""
    rng = random.Random(1016)
    sid, fresh = session_id(rng), session_id(rng)
    store.append_many(sid, [user(n) for n in range(10)])
    new = [compaction(10, "e8"), user(8), user(9)]
    store.replace(sid, new)
    assert entries_of(store, sid) == new
    with pytest.raises(RuntimeError, match="halfway"):
        store.replace(sid, failing_after([user(20), user(21)]))
    assert entries_of(store, sid) == new
    with pytest.raises(InvalidEntry):
        store.replace(sid, [user(30), ToolCall(ts=31, name="x", args={"bad": object()})])
    assert entries_of(store, sid) == new
    assert not [name for name in os.listdir(store_factory.root) if name.endswith(".tmp")]
    store.append(sid, user(40))
    assert entries_of(store, sid) == [*new, user(40)]
    assert store.stats(sid).entries == 4
    store.replace(fresh, [user(50)])
    assert store.exists(fresh)
    assert entries_of(store, fresh) == [user(50)]
    store.replace(sid, [])
    assert entries_of(store, sid) == []
    assert store.read_live(sid) == []


def test_recover_strict_on_a_clean_session(store: SessionStore) -> None:
    """Recovery of an undamaged session is loadable and changes nothing; bad modes are refused."""
    sid = session_id(random.Random(1017))
    store.append_many(sid, [user(n) for n in range(12)])
    report = store.recover(sid, "strict")
    assert report.loadable and report.clean and not report.repaired
    assert report.entries == 12
    assert entries_of(store, sid) == [user(n) for n in range(12)]
    with pytest.raises(ValueError):
        store.recover(sid, "no_such_mode")  # type: ignore[arg-type]
    for mode in RECOVERY_MODES:
        if mode not in store.capabilities.recovery_modes:
            with pytest.raises(ValueError):
                store.recover(sid, mode)  # type: ignore[arg-type]


def test_use_after_close_is_refused(store: SessionStore) -> None:
    """Appending to a closed store raises ClosedStoreError; closing twice is fine."""
    sid = session_id(random.Random(1018))
    store.append(sid, user(0))
    store.close()
    store.close()
    with pytest.raises(ClosedStoreError):
        store.append(sid, user(1))


# -- compaction under the writer lock -------------------------------------------------------------


def _compactable_history() -> list[Entry]:
    """Turns with and without ids, and a metadata entry no summary stands for, in the middle."""
    history: list[Entry] = []
    for n in range(6):
        history.append(User(content=f"question {n}", ts=10 * n, id=f"u{n}" if n % 2 else None))
        history.append(Assistant(content=f"answer {n}", ts=10 * n + 1))
        if n == 2:
            history.append(Metadata(kind="model_change", model="m-2", ts=10 * n + 2))
    return history


@pytest.mark.parametrize("persist", ["append", "rewrite"])
def test_compact_plans_from_the_stored_live_context_and_writes_under_the_lock(store: SessionStore, persist: str) -> None:
    """``compact`` hands the planner the live context as stored, writes what it returns, and a
    reopened read sees the summary and the kept tail; a rewrite carries the metadata over."""
    sid = session_id(random.Random(4242))
    history = _compactable_history()
    store.append_many(sid, history)
    seen: list[list[Entry]] = []
    marker = Compaction(summary="what the first turns said", ts=99)

    def plan(live: list[Entry]) -> CompactionWrite:
        seen.append(list(live))
        return CompactionWrite(marker=marker, kept=4, persist=persist)  # type: ignore[arg-type]

    written = store.compact(sid, plan)
    assert seen == [history]
    assert written is not None and written.persist == persist and written.kept == 4
    assert written.summarized == len(history) - 4
    live = store.read_live(sid)
    assert isinstance(live[0], Compaction) and live[0].summary == marker.summary
    assert live[1:] == history[-4:]
    assert store.latest_summary(sid) == live[0]
    stored = entries_of(store, sid)
    if persist == "append":
        assert live[0].kept_before == 4
        assert stored[:-1] == history and stored[-1] == live[0]
    else:
        assert live[0].kept_before == 0
        metadata = [e for e in history if isinstance(e, Metadata)]
        assert stored == [*metadata, live[0], *history[-4:]]
        assert (written.carried, written.removed_entries) == (1, len(history) - 4 - 1)
    # A planner that declines, or fails, changes nothing.
    assert store.compact(sid, lambda live: None) is None

    def failing(live: list[Entry]) -> CompactionWrite:
        raise RuntimeError("the summarizer failed")

    with pytest.raises(RuntimeError):
        store.compact(sid, failing)
    assert entries_of(store, sid) == stored
    # A second compaction supersedes the first: the planner gets the first summary and the tail.
    store.append(sid, User(content="after the summary", ts=200))
    second = store.compact(sid, lambda live: CompactionWrite(marker=Compaction(summary="second", ts=201), kept=2,
                                                              persist=persist))  # type: ignore[arg-type]
    assert second is not None and second.summarized == 3
    assert store.read_live(sid)[1:] == [history[-1], User(content="after the summary", ts=200)]
    with pytest.raises(SessionNotFound):
        store.compact(session_id(random.Random(4243)), plan)
