"""The LangChain peer: faithful messages, the library's own file format, what it does not promise."""

from __future__ import annotations

import json
import os
import random
import warnings
from pathlib import Path

import pytest
from store_samples import compaction, entries_of, every_kind, random_history, session_id, user

from aptmem.entries import Assistant, ToolCall, ToolResult, User
from aptmem.errors import CorruptLogError, UnsafePathError
from strategies.langchain_file import LangchainFileStore
from strategies.langchain_messages import entry_to_message, message_to_entry

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langchain_community.chat_message_histories import FileChatMessageHistory
    from langchain_core.messages import AIMessage, ChatMessage, HumanMessage, SystemMessage, ToolMessage

KINDS = every_kind()
def test_every_entry_kind_is_a_langchain_message_and_back() -> None:
    """Each kind maps onto the LangChain message an app would keep, and reads back equal."""
    messages = [entry_to_message(entry) for entry in KINDS]
    kinds = [type(message) for message in messages]
    assert kinds[:8] == [HumanMessage, AIMessage, AIMessage, AIMessage, ToolMessage, SystemMessage, SystemMessage, ChatMessage]
    assert messages[1].response_metadata == {"model_name": "gpt-x"}
    assert messages[2].tool_calls == [{"name": "read", "args": {"path": "src/foo.ts", "lines": [1, 2.5]}, "id": "call_1", "type": "tool_call"}]
    assert messages[4].tool_call_id == "call_1" and messages[4].status == "error"
    assert messages[5].content == "summary up to 6"
    for index, (entry, message) in enumerate(zip(KINDS, messages)):
        assert message_to_entry(message, f"message {index}") == entry


def test_the_file_is_byte_for_byte_what_the_library_writes(tmp_path: Path) -> None:
    """Appends go through the library; replace writes the very bytes the library would have written."""
    sid = session_id(random.Random(1801))
    store = LangchainFileStore(tmp_path / "store")
    history = random_history(random.Random(1801), 30)
    store.append_many(sid, history[:10])
    for entry in history[10:]:
        store.append(sid, entry)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = FileChatMessageHistory(str(tmp_path / "plain.json"), encoding="utf-8")
        plain.add_messages([entry_to_message(entry) for entry in history])
    assert store.path(sid).read_bytes() == (tmp_path / "plain.json").read_bytes()
    store.replace(sid, history)
    assert store.path(sid).read_bytes() == (tmp_path / "plain.json").read_bytes()
    assert entries_of(store, sid) == history
    store.close()


def test_a_file_langchain_wrote_reads_by_message_type(tmp_path: Path) -> None:
    """A history written by LangChain alone (no aptmem extras) reads as entries with ts 0."""
    sid = session_id(random.Random(1802))
    store = LangchainFileStore(tmp_path)
    store.create(sid)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        FileChatMessageHistory(str(store.path(sid)), encoding="utf-8").add_messages(
            [HumanMessage(content="hi"), AIMessage(content="hello", id="m1"),
             AIMessage(content="", tool_calls=[{"name": "ls", "args": {}, "id": "t1"}]), ToolMessage(content="a b", tool_call_id="t1")])
    assert entries_of(store, sid) == [User(ts=0, content="hi"), Assistant(ts=0, id="m1", content="hello"),
                                      ToolCall(ts=0, id="t1", name="ls"), ToolResult(ts=0, call_id="t1", content="a b")]
    store.close()


def test_a_torn_file_is_refused_and_left_alone(tmp_path: Path) -> None:
    """A file cut mid-rewrite (what a crash leaves) does not load; strict recovery reports it, changes nothing."""
    sid = session_id(random.Random(1803))
    store = LangchainFileStore(tmp_path)
    store.append_many(sid, [user(0), user(1)])
    data = store.path(sid).read_bytes()
    store.path(sid).write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptLogError, match="not a JSON list of messages"):
        entries_of(store, sid)
    report = store.recover(sid)
    assert not report.loadable and report.error
    assert store.path(sid).read_bytes() == data[: len(data) // 2]
    store.close()


def test_a_symlinked_session_file_is_refused(tmp_path: Path) -> None:
    """The library would follow a link; the store refuses it before handing the path over."""
    sid = session_id(random.Random(1804))
    root = tmp_path / "root"
    store = LangchainFileStore(root)
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps([]))
    os.symlink(target, store.path(sid))
    with pytest.raises(UnsafePathError):
        store.append(sid, user(0))
    assert target.read_text() == "[]"
    store.close()


def test_appends_rewrite_in_place_and_replace_renames(tmp_path: Path) -> None:
    """Why durability is ``none``: each append rewrites the same file in place (same inode, whole
    history each time); only ``replace``, written by this store, swaps in a new file atomically."""
    sid = session_id(random.Random(1805))
    store = LangchainFileStore(tmp_path)
    store.append(sid, user(0))
    inode = store.path(sid).stat().st_ino
    sizes = []
    for n in range(1, 40):
        store.append(sid, user(n))
        assert store.path(sid).stat().st_ino == inode, "an append did not rewrite the file in place"
        sizes.append(store.path(sid).stat().st_size)
    assert all(later > earlier for earlier, later in zip(sizes, sizes[1:]))
    store.replace(sid, [compaction(40, "e39"), user(39)])
    assert store.path(sid).stat().st_ino != inode
    assert entries_of(store, sid) == [compaction(40, "e39"), user(39)]
    store.close()
