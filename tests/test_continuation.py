"""Tests of creating sessions and continuing an old session in a new one (JSONL store)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

import aptmem.logreader
from aptmem.continuation import HISTORY_CHUNK, continue_session, create_session
from aptmem.entries import Assistant, Compaction, Entry, Metadata, ToolCall, ToolResult, User, decode_line, encode_line
from aptmem.errors import CorruptLogError, InvalidSessionId, RootMismatchError, SessionExists, SessionNotFound
from aptmem.fsutil import atomic_write
from aptmem.ids import is_session_id
from aptmem.jsonl_store import DEFAULT_SYNC, JsonlStore
from aptmem.working_memory import WorkingMemory

SEED = 7_2024
OLD = "1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d"
NEW = "8f7e6d5c-4b3a-4f2e-9d1c-0b9a8f7e6d5c"


@pytest.fixture
def store(tmp_path: Path) -> Iterator[JsonlStore]:
    with JsonlStore(tmp_path) as s:
        yield s


def _history(n: int, seed: int = SEED) -> list[Entry]:
    """A seeded mixed history of ``n`` entries."""
    rng = random.Random(seed)
    out: list[Entry] = []
    for i in range(n):
        kind = rng.randrange(4)
        ts = 1_717_000_000_000 + i
        if kind == 0:
            out.append(User(ts=ts, id=f"u{i}", content=f"question {i} 你好"))
        elif kind == 1:
            out.append(Assistant(ts=ts, id=f"a{i}", content=f"answer {i}", model="m"))
        elif kind == 2:
            out.append(ToolCall(ts=ts, id=f"c{i}", name="read", args={"path": f"src/{i}.py"}))
        else:
            out.append(ToolResult(ts=ts, id=f"r{i}", call_id=f"c{i - 1}", content="x" * rng.randrange(50)))
    return out


def _old_session(store: JsonlStore, root: Path, entries: list[Entry]) -> None:
    """Make OLD with a sidecar full of working memory and the given history."""
    create_session(store, root, title="old title", model="m-old", session_id=OLD)
    memory = WorkingMemory(root, OLD)
    memory.set_text("goal: ship it")
    memory.set("plan", ["a", "b"])
    memory.set("step", 2)
    store.append_many(OLD, entries)


# -- create_session ----------------------------------------------------------------------------


def test_create_session_makes_log_and_sidecar(store: JsonlStore, tmp_path: Path) -> None:
    sid = create_session(store, tmp_path, title="t", model="m")
    assert is_session_id(sid)
    assert store.sessions() == [sid]
    assert list(store.iter_entries(sid)) == []
    meta = WorkingMemory(tmp_path, sid).load()
    assert (meta.title, meta.model, meta.parent, meta.memory, meta.working) == ("t", "m", None, "", {})


def test_create_session_refuses_taken_or_invalid_ids(store: JsonlStore, tmp_path: Path) -> None:
    create_session(store, tmp_path, session_id=OLD)
    with pytest.raises(SessionExists):
        create_session(store, tmp_path, session_id=OLD)
    WorkingMemory(tmp_path, NEW).create()  # a sidecar alone also takes the id
    with pytest.raises(SessionExists):
        create_session(store, tmp_path, session_id=NEW)
    assert not store.exists(NEW)
    with pytest.raises(InvalidSessionId):
        create_session(store, tmp_path, session_id="../escape")


# -- continue_session --------------------------------------------------------------------------


def test_continue_inherits_working_memory_and_links_parent(store: JsonlStore, tmp_path: Path) -> None:
    _old_session(store, tmp_path, _history(20))
    old_sidecar = WorkingMemory(tmp_path, OLD).path.read_bytes()
    old_log = store.path(OLD).read_bytes()
    new = continue_session(store, tmp_path, OLD)
    assert is_session_id(new) and new != OLD
    meta = WorkingMemory(tmp_path, new).load()
    assert meta.session_id == new
    assert meta.parent == OLD
    assert (meta.title, meta.model, meta.memory, meta.working) == ("old title", "m-old", "goal: ship it", {"plan": ["a", "b"], "step": 2})
    assert list(store.iter_entries(new)) == []  # no history by default
    assert store.sessions() == sorted([OLD, new])
    # The old session is not changed.
    assert WorkingMemory(tmp_path, OLD).path.read_bytes() == old_sidecar
    assert store.path(OLD).read_bytes() == old_log


def test_continue_with_given_id_and_title(store: JsonlStore, tmp_path: Path) -> None:
    _old_session(store, tmp_path, _history(3))
    assert continue_session(store, tmp_path, OLD, new_id=NEW, title="part two") == NEW
    meta = WorkingMemory(tmp_path, NEW).load()
    assert (meta.title, meta.parent) == ("part two", OLD)
    # The new session's memory is its own: changing it leaves the old one alone.
    WorkingMemory(tmp_path, NEW).set("step", 3)
    assert WorkingMemory(tmp_path, OLD).get("step") == 2


def test_continue_refuses_taken_new_id(store: JsonlStore, tmp_path: Path) -> None:
    _old_session(store, tmp_path, _history(3))
    with pytest.raises(SessionExists):
        continue_session(store, tmp_path, OLD, new_id=OLD)
    create_session(store, tmp_path, session_id=NEW, title="taken")
    with pytest.raises(SessionExists):
        continue_session(store, tmp_path, OLD, new_id=NEW)
    assert WorkingMemory(tmp_path, NEW).load().title == "taken"
    with pytest.raises(InvalidSessionId):
        continue_session(store, tmp_path, OLD, new_id="NOT-A-UUID")


def test_continue_missing_old_session(store: JsonlStore, tmp_path: Path) -> None:
    with pytest.raises(SessionNotFound):
        continue_session(store, tmp_path, OLD, new_id=NEW)
    WorkingMemory(tmp_path, OLD).create(memory="orphan")  # a sidecar without a log is no session
    with pytest.raises(SessionNotFound):
        continue_session(store, tmp_path, OLD, new_id=NEW)
    assert not store.exists(NEW) and not WorkingMemory(tmp_path, NEW).exists()
    with pytest.raises(InvalidSessionId):
        continue_session(store, tmp_path, "../../etc/passwd")


def test_continue_log_without_sidecar_starts_empty(store: JsonlStore, tmp_path: Path) -> None:
    store.create(OLD)
    store.append(OLD, User(ts=1, content="hi"))
    new = continue_session(store, tmp_path, OLD, new_id=NEW)
    meta = WorkingMemory(tmp_path, new).load()
    assert (meta.title, meta.model, meta.memory, meta.working, meta.parent) == ("", None, "", {}, OLD)


def test_continue_with_summary_copies_latest_summary(store: JsonlStore, tmp_path: Path) -> None:
    head = _history(30)
    entries = [
        *head[:10],
        Compaction(ts=2, summary="first summary", first_kept=None),
        *head[10:25],
        Compaction(ts=3, summary="latest summary 摘要", first_kept=head[20].id, tokens_before=900, tokens_after=120),
        *head[25:],
    ]
    _old_session(store, tmp_path, entries)
    new = continue_session(store, tmp_path, OLD, new_id=NEW, with_summary=True)
    got = list(store.iter_entries(new))
    assert len(got) == 1
    first = got[0]
    assert type(first) is Compaction
    assert (first.summary, first.first_kept, first.notes) == ("latest summary 摘要", None, [f"summary carried over from session {OLD}"])
    assert (first.tokens_before, first.tokens_after) == (None, None)
    assert store.read_live(new) == [first]
    assert WorkingMemory(tmp_path, new).get("plan") == ["a", "b"]


def test_continue_with_summary_reads_original_marker_name(store: JsonlStore, tmp_path: Path) -> None:
    _old_session(store, tmp_path, _history(5))
    store.close()
    with store.path(OLD).open("ab") as f:
        f.write(b'{"type":"compaction_marker","summary":"old style","ts":1717000009000}\n')
    with JsonlStore(tmp_path) as again:
        continue_session(again, tmp_path, OLD, new_id=NEW, with_summary=True)
        (first,) = list(again.iter_entries(NEW))
    assert type(first) is Compaction and first.summary == "old style"


def test_continue_with_summary_when_never_compacted(store: JsonlStore, tmp_path: Path) -> None:
    _old_session(store, tmp_path, _history(8))
    new = continue_session(store, tmp_path, OLD, with_summary=True)
    assert list(store.iter_entries(new)) == []
    assert WorkingMemory(tmp_path, new).load().parent == OLD


def test_continue_with_history_copies_everything_in_chunks(store: JsonlStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    n = 2 * HISTORY_CHUNK + 276
    entries = _history(n)
    entries.insert(100, Compaction(ts=5, summary="mid", first_kept=entries[90].id))
    entries.insert(7, decode_line(b'{"type":"future_kind","ts":1,"payload":[1,2]}'))  # kept verbatim
    entries.append(Metadata(ts=9, kind="model_change", data={"to": "m2"}))
    _old_session(store, tmp_path, entries)
    sizes: list[int] = []
    real = store.append_many

    def counting(session_id: str, batch: list[Entry]) -> None:
        sizes.append(len(batch))
        real(session_id, batch)

    monkeypatch.setattr(store, "append_many", counting)
    new = continue_session(store, tmp_path, OLD, new_id=NEW, with_history=True)
    assert sizes == [HISTORY_CHUNK, HISTORY_CHUNK, len(entries) - 2 * HISTORY_CHUNK]
    assert list(store.iter_entries(new)) == entries
    assert store.path(new).read_bytes() == store.path(OLD).read_bytes()
    assert WorkingMemory(tmp_path, new).load().parent == OLD


def test_summary_and_history_are_exclusive(store: JsonlStore, tmp_path: Path) -> None:
    _old_session(store, tmp_path, _history(3))
    with pytest.raises(ValueError, match="exclusive"):
        continue_session(store, tmp_path, OLD, new_id=NEW, with_summary=True, with_history=True)
    assert store.sessions() == [OLD]


# -- the old history is not read ---------------------------------------------------------------


def _damaged_old(tmp_path: Path, n: int = 1000) -> tuple[JsonlStore, list[Entry]]:
    """OLD whose line 2 is damage that strict full parsing rejects, with a compaction near the end."""
    with JsonlStore(tmp_path) as setup:
        _old_session(setup, tmp_path, [])
        path = setup.path(OLD)
    body = _history(n)
    tail = [Compaction(ts=4, summary="near the end", first_kept=None), *_history(3, seed=SEED + 1)]
    lines = [encode_line(body[0]), b'{"type":"user","content":"torn in the mid\n', *map(encode_line, body[1:]), *map(encode_line, tail)]
    atomic_write(path, lines)
    return JsonlStore(tmp_path, recovery="strict"), tail


def test_strict_full_parse_rejects_the_old_history(tmp_path: Path) -> None:
    strict, _ = _damaged_old(tmp_path)
    with strict, pytest.raises(CorruptLogError) as info:
        continue_session(strict, tmp_path, OLD, new_id=NEW, with_history=True)
    assert info.value.line == 2
    assert any(NEW in note for note in info.value.__notes__)  # says which new session is partial
    assert not WorkingMemory(tmp_path, NEW).exists()


@pytest.mark.parametrize(("with_summary", "expected_decodes"), [(False, 0), (True, 4)])
def test_continue_does_not_parse_old_history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_summary: bool, expected_decodes: int) -> None:
    strict, _ = _damaged_old(tmp_path)
    decodes = 0
    real = aptmem.logreader.decode_line

    def counting(raw: bytes) -> Entry:
        nonlocal decodes
        decodes += 1
        return real(raw)

    monkeypatch.setattr(aptmem.logreader, "decode_line", counting)
    with strict:
        monkeypatch.setattr(strict, "iter_entries", lambda sid: pytest.fail("the old history was streamed"))
        new = continue_session(strict, tmp_path, OLD, new_id=NEW, with_summary=with_summary)
        # Default: not one old line decoded. With the summary: the compaction and the 3 lines
        # after it, of 1,004 (the damaged line 2 would have stopped a strict full parse).
        assert decodes == expected_decodes
        got = strict.read_live(new)
    assert WorkingMemory(tmp_path, new).load().memory == "goal: ship it"
    if with_summary:
        assert [type(e) for e in got] == [Compaction] and got[0].summary == "near the end"
    else:
        assert got == []


# -- one folder per session ---------------------------------------------------------------------


def test_a_log_and_its_sidecar_never_land_in_two_folders(store: JsonlStore, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    with pytest.raises(RootMismatchError, match="elsewhere"):
        create_session(store, other, title="t")
    assert list(store.sessions()) == [] and not other.exists()
    sid = create_session(store, title="t")  # the store's own folder, by default
    assert WorkingMemory(tmp_path, sid).exists() and store.exists(sid)
    assert create_session(store, tmp_path / ".", title="same folder")  # the same folder, spelled otherwise
    with pytest.raises(RootMismatchError):
        continue_session(store, other, sid)
    assert is_session_id(continue_session(store, None, sid))


def test_continuing_a_missing_session_names_the_folder_searched(store: JsonlStore, tmp_path: Path) -> None:
    with pytest.raises(SessionNotFound, match=str(tmp_path)):
        continue_session(store, tmp_path, OLD)


def test_the_library_and_the_command_line_sync_alike_by_default(tmp_path: Path) -> None:
    from aptmem.cli import build_parser

    assert DEFAULT_SYNC == "batch" and JsonlStore(tmp_path).sync == DEFAULT_SYNC
    assert build_parser().parse_args(["append", OLD]).sync == DEFAULT_SYNC


# -- issue 11: a creation that failed half way, a damaged latest compaction --------------------------


def test_create_session_after_a_full_disk_can_be_retried_with_the_same_id(store: JsonlStore, tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 9: the sidecar write fails (the log already exists); the retry finishes the session."""
    import errno

    from aptmem import working_memory
    from aptmem.errors import StorageError

    def full(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(working_memory, "atomic_write", full)
    with pytest.raises(StorageError) as failed:
        create_session(store, tmp_path, title="t", session_id=NEW)
    monkeypatch.undo()
    assert store.exists(NEW) and not WorkingMemory(tmp_path, NEW).exists()  # what the failure left
    assert create_session(store, tmp_path, title="t", session_id=NEW) == NEW
    assert WorkingMemory(tmp_path, NEW).load().title == "t"
    assert "again" in " ".join(getattr(failed.value, "__notes__", []))
    with pytest.raises(SessionExists):  # a whole session is still refused
        create_session(store, tmp_path, session_id=NEW)


def test_with_summary_refuses_a_damaged_line_that_may_be_the_latest_compaction(store: JsonlStore, tmp_path: Path) -> None:
    """Finding 9: it used to carry the older summary (or nothing) in silence."""
    _old_session(store, tmp_path, [])
    older = Compaction(ts=2, summary="the older summary", kept_before=0)
    path = store.path(OLD)
    with open(path, "ab") as f:
        f.write(encode_line(User(ts=1, content="a")) + encode_line(older) + encode_line(User(ts=3, content="b")))
        f.write(b'{"type":"compaction","summary":"the latest summ\x00\x17ry","ts":4}garbage\n')
        f.write(encode_line(User(ts=5, content="c")))
    with pytest.raises(CorruptLogError, match="looks like a compaction"):
        continue_session(store, tmp_path, OLD, with_summary=True)
    assert store.sessions() == [OLD]  # nothing was created
    with open(path, "ab") as f:  # a torn compaction at the end was never acknowledged: not refused
        f.write(b'{"type":"compaction","summ')
    store.recover(OLD)  # quarantines both the damaged line and the torn tail
    new = continue_session(store, tmp_path, OLD, with_summary=True)
    assert next(iter(store.iter_entries(new))).summary == "the older summary"
