"""The OpenAI Agents SDK peer: faithful items, the SDK reading what the store wrote, one loop per store."""

from __future__ import annotations

import asyncio
import json
import random
import sqlite3
import threading
from pathlib import Path

from agents import SQLiteSession
from store_samples import entries_of, every_kind, random_history, session_id, user
from store_writer_child import check_writers, run_writers

from aptmem.entries import ToolCall, User
from strategies.openai_agents_sqlite import OpenAIAgentsSqliteStore
from strategies.openai_items import entry_to_item, item_to_entry

KINDS = every_kind()
def test_every_entry_kind_is_a_responses_item_and_back() -> None:
    """Each kind maps onto the Responses item a Runner stores, and reads back equal."""
    items = [entry_to_item(entry) for entry in KINDS]
    assert items[0]["role"] == "user" and items[0]["content"] == "帮我看看这个 bug"
    assert items[1]["type"] == "message" and items[1]["role"] == "assistant"
    assert items[1]["content"] == [{"type": "output_text", "text": "looking", "annotations": []}]
    assert items[2]["type"] == "function_call" and items[2]["call_id"] == "call_1"
    assert json.loads(items[2]["arguments"]) == {"path": "src/foo.ts", "lines": [1, 2.5]}
    assert items[4] == {"type": "function_call_output", "call_id": "call_1", "output": "file text",
                        "aptmem": {"type": "tool_result", "ts": 5, "name": "read", "is_error": True}}
    assert items[5]["role"] == "system" and items[5]["content"] == "summary up to 6"
    for index, (entry, item) in enumerate(zip(KINDS, items)):
        assert item_to_entry(json.loads(json.dumps(item)), f"item {index}") == entry


def test_the_sdk_reads_what_the_store_wrote_and_the_store_reads_the_sdks(tmp_path: Path) -> None:
    """A plain SQLiteSession sees the store's items; items a Runner stored (no extras) read by shape."""
    sid = session_id(random.Random(1701))
    store = OpenAIAgentsSqliteStore(tmp_path)
    try:
        store.append_many(sid, KINDS[:5])
        sdk = SQLiteSession(sid, store.db_path)
        try:
            assert asyncio.run(sdk.get_items()) == [json.loads(json.dumps(entry_to_item(e))) for e in KINDS[:5]]
            asyncio.run(sdk.add_items([{"role": "user", "content": "from the runner"},
                                       {"type": "function_call", "call_id": "c9", "name": "ls", "arguments": "{\"d\": 1}"}]))
        finally:
            sdk.close()
        got = entries_of(store, sid)
        assert got[:5] == KINDS[:5]
        assert got[5:] == [User(ts=0, content="from the runner"), ToolCall(ts=0, id="c9", name="ls", args={"d": 1})]
    finally:
        store.close()


def test_one_event_loop_and_reused_connections(tmp_path: Path) -> None:
    """300 appends run on one loop; the SDK's worker threads (and their connections) are reused."""
    sid = session_id(random.Random(1702))
    store = OpenAIAgentsSqliteStore(tmp_path)
    try:
        loop = store._loop
        threads_before = threading.active_count()
        for entry in random_history(random.Random(1702), 300):
            store.append(sid, entry)
        assert store._loop is loop
        session = store._sessions[sid]
        workers = loop._default_executor._max_workers  # type: ignore[union-attr]
        assert len(session._connections) <= workers
        assert threading.active_count() <= threads_before + workers
    finally:
        store.close()
    assert store._loop is None


def test_durability_is_read_from_the_connection(tmp_path: Path) -> None:
    """WAL with synchronous FULL (sqlite's default here) is declared per-append, as measured."""
    store = OpenAIAgentsSqliteStore(tmp_path)
    try:
        assert store.journal_mode == "wal"
        expected = "per_append" if store.synchronous >= 2 else "process"
        assert store.capabilities.durability == expected
    finally:
        store.close()


def test_recover_finds_a_row_the_sdk_would_skip(tmp_path: Path) -> None:
    """A row whose JSON is damaged vanishes from the SDK's get_items; recover reports it, changes nothing."""
    sid = session_id(random.Random(1703))
    store = OpenAIAgentsSqliteStore(tmp_path)
    try:
        store.append_many(sid, [user(0), user(1), user(2)])
        with sqlite3.connect(store.db_path) as conn:
            conn.execute("UPDATE agent_messages SET message_data = '{\"role\": \"us' WHERE id = (SELECT min(id) + 1 FROM agent_messages)")
        assert entries_of(store, sid) == [user(0), user(2)]  # the SDK skipped the damaged row
        report = store.recover(sid)
        assert not report.loadable and report.refused_line == 2 and "not JSON" in (report.error or "")
        assert entries_of(store, sid) == [user(0), user(2)]
    finally:
        store.close()


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    """Four processes append 50 entries each to one session at once: all 200 there, each in order."""
    sid = session_id(random.Random(1704))
    run_writers("openai_agents_sqlite", tmp_path / "root", sid, 4, 50)
    store = OpenAIAgentsSqliteStore(tmp_path / "root")
    try:
        got = entries_of(store, sid)
    finally:
        store.close()
    check_writers(got, 4, 50)