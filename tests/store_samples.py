"""Sample entries, ids and small helpers for the storage tests: seeded and exactly reproducible."""

from __future__ import annotations

import os
import random
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

from aptmem.entries import (
    Assistant,
    Compaction,
    CompactionMarker,
    Entry,
    Metadata,
    ToolCall,
    ToolResult,
    UnknownEntry,
    User,
    decode_line,
)
from aptmem.store import SessionStore

_WORDS = [
    "the", "bug", "is", "in", "parser", "fix", "read", "src/foo.ts", "ok", "42", "{", "}", "\"quoted\"",
    "帮我看看这个", "错误", "日志", "🙂", "👍🏽", "👨‍👩‍👧‍👦", "🇨🇳", "é", "مرحبا", "𝔘𝔫𝔦", "tab\there", "line\nbreak",
]


def session_id(rng: random.Random) -> str:
    """A canonical session id drawn from ``rng``, so a failing test names a reproducible id."""
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def text(rng: random.Random, words: int) -> str:
    """Random text mixing English, code, Chinese, emoji and escapes."""
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def random_entry(rng: random.Random, n: int, ident: str | None = None) -> Entry:
    """One entry of a random kind; ``n`` makes its timestamp and default id unique."""
    ts = 1_717_000_000_000 + n
    ident = ident if ident is not None else f"e{n}"
    kind = rng.randrange(6)
    if kind == 0:
        return User(ts=ts, id=ident, content=text(rng, rng.randrange(1, 30)))
    if kind == 1:
        return Assistant(ts=ts, id=ident, content=text(rng, rng.randrange(0, 40)), model="m-1", usage={"input": n, "output": 7})
    if kind == 2:
        return ToolCall(ts=ts, id=ident, name="read", args={"path": f"src/{n}.py", "lines": [1, n], "opts": {"deep": True}})
    if kind == 3:
        return ToolResult(ts=ts, id=ident, call_id=f"call-{n}", content=text(rng, rng.randrange(0, 60)), is_error=n % 7 == 0)
    if kind == 4:
        return Metadata(ts=ts, id=ident, kind="model_change", data={"model": "m-2", "n": n})
    return User(ts=ts, content=text(rng, 3))  # an entry without an id


def random_history(rng: random.Random, count: int, start: int = 0) -> list[Entry]:
    """``count`` random entries with unique ids ``e<start>``, ``e<start+1>``, ..."""
    return [random_entry(rng, start + i) for i in range(count)]


def user(n: int, ident: str | None = None) -> User:
    """A small deterministic user entry."""
    return User(ts=1_717_000_000_000 + n, id=ident if ident is not None else f"e{n}", content=f"message {n}")


def compaction(n: int, first_kept: str | None, legacy: bool = False) -> Compaction:
    """A compaction entry (the legacy ``compaction_marker`` type when ``legacy``)."""
    kind = CompactionMarker if legacy else Compaction
    return kind(ts=1_717_000_000_000 + n, id=f"c{n}", summary=f"summary up to {n}", first_kept=first_kept, tokens_before=1000 + n, tokens_after=300)


#: Lines of valid JSON with types this version does not know; kept byte-for-byte.
UNKNOWN_LINES = [
    b'{"type":"future_kind","ts":1717000000001,"x":[1,2,{"y":"\\u00e9"}]}',
    b'{ "ts" : 5 , "type" : "spaced_out",  "note":"odd spacing and key order" }',
    '{"type":"branch","id":"u-1","ts":7,"big":123456789012345678901234567890,"f":1.50,"s":"\\ud83d\\ude00 中文"}'.encode(),
    b'{"type":"no_ts","payload":null,"list":[],"obj":{}}',
]


def unknown_entries() -> list[UnknownEntry]:
    """The unknown lines decoded; each must be an :class:`UnknownEntry`."""
    entries = [decode_line(line) for line in UNKNOWN_LINES]
    assert all(isinstance(entry, UnknownEntry) for entry in entries)
    return entries  # type: ignore[return-value]


def every_kind() -> list[Entry]:
    """One entry of every kind and shape a peer store must map: ids or none, a legacy inline tool
    result, an error result, both compaction names, metadata, and the unknown lines."""
    return [
        User(ts=1, id="u1", content="帮我看看这个 bug"),
        Assistant(ts=2, id="msg_1", content="looking", model="gpt-x", usage={"input": 10, "output": 3}),
        ToolCall(ts=3, id="call_1", name="read", args={"path": "src/foo.ts", "lines": [1, 2.5]}),
        ToolCall(ts=4, name="legacy", args={}, result="inline result"),
        ToolResult(ts=5, call_id="call_1", content="file text", name="read", is_error=True),
        compaction(6, "u1"),
        compaction(7, None, legacy=True),
        Metadata(ts=8, kind="model_change", data={"model": "m-2"}),
        *unknown_entries(),
    ]


def footprint(root: Path) -> int:
    """Bytes of the store's files in ``root``, leaving out SQLite's ``-shm`` (an index, not data)."""
    return sum(
        entry.stat(follow_symlinks=False).st_size
        for entry in os.scandir(root)
        if entry.is_file(follow_symlinks=False) and not entry.name.endswith("-shm")
    )


#: Strings that are not session ids, each for a different reason.
BAD_IDS = [
    "../../etc/passwd",
    "/etc/passwd",
    "",
    "not-a-uuid",
    "3F2504E0-4F89-41D3-9A0C-0305E82C3301",  # upper case
    "3f2504e0-4f89-11d3-9a0c-0305e82c3301",  # version 1
    "3f2504e0-4f89-41d3-9a0c-0305e82c3301\x00",  # NUL
    "３f2504e0-4f89-41d3-9a0c-0305e82c3301",  # a full-width digit
    "3f2504e0-4f89-41d3-9a0c-0305e82c3301\n",
    "3f2504e0-4f89-41d3-9a0c-0305e82c3301/../x",
]


def entries_of(store: SessionStore, sid: str) -> list[Entry]:
    """Every entry of a session, oldest first."""
    return list(store.iter_entries(sid))


def failing_after(entries: list[Entry]) -> Iterator[Entry]:
    """Yield ``entries`` then fail, as a producer that crashes halfway through a rewrite would."""
    yield from entries
    raise RuntimeError("producer failed halfway")


def file_modes(root: Path) -> dict[str, int]:
    """Map each file in ``root`` to its permission bits."""
    return {name: stat.S_IMODE(os.lstat(root / name).st_mode) for name in os.listdir(root)}
