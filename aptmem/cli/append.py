"""``aptmem append PATH`` (or ``--root DIR SESSION_ID``): append the JSON entries read on stdin to a session.

Each stdin line is one entry (``{"type":"user","content":"hi","ts":1717000000000}``); blank lines
are skipped, a UTF-8 BOM and CRLF line ends are tolerated. The session's log is created if absent
(no sidecar: a log alone is a session); an existing file that is not a session log (an agent's
transcript, a sidecar, pretty-printed JSON) is refused before anything is appended. The original
design's lines are entries as written (a ``tool_result`` naming its tool, ``metadata`` with its
title, creation time and model). Every line is checked before it is stored:

* it must decode as an aptmem entry of a known type (the library's reason is quoted: not JSON,
  missing ``ts``, a number out of range, JSON nested too deeply, ...);
* fields its type does not declare are refused (storing the entry would drop them);
* a ``type`` this version does not know is refused unless ``--keep-unknown`` (then the line is
  stored byte for byte, as the library keeps such lines when it reads them);
* it must fit the line cap (a longer line is refused without being read whole).

What a bad line does: by default lines are appended as they arrive (a long-running agent can
pipe one entry per turn), so a bad line stops the command with exit 2 and an error naming its
line number and reason; the good lines before it stay stored (``--json`` reports how many), the
bad line and everything after it are not. ``--all-or-nothing`` reads and checks all of stdin
first and then appends it as one write: a bad line anywhere means nothing is appended.

Concurrency: with the writer lock (the default) any number of ``append`` processes, and library
writers, can append to one session at once without damaging or losing a line. The lock is
taken per burst (the lines already waiting on stdin, at most 1,024 or 0.1 s of them) and released
before the command waits for more input, so an idle long-running appender never blocks the
others. A process that holds the lock longer (a long compaction, a burst of another writer)
makes ``append`` wait up to ``--lock-timeout`` seconds, then fail with a clear error.

A killed ``append`` (SIGKILL, SIGTERM) is a process crash: every line appended so far is whole in
the file, since each is one write; with ``--sync batch`` the last burst may not be synced yet.

Exit codes: 0 every line appended; 2 a bad line, a bad id, the lock not free in time, a write or
sync error; 1 the existing log holds damage the recovery ``--mode`` refuses.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import time
from typing import Any

import msgspec

from aptmem.cli.target import add_target, resolve
from aptmem.entries import KNOWN_TYPES, Entry, UnknownEntry, decode_line, entry_type
from aptmem.errors import AptmemError, CorruptLogError, InvalidEntry, LockTimeout
from aptmem.jsonl_store import DEFAULT_SYNC, SYNC_POLICIES, JsonlStore
from aptmem.jsonvalue import MAX_INT_DIGITS
from aptmem.logreader import DEFAULT_LINE_CAP, over_cap_reason
from aptmem.store import RECOVERY_MODES

__all__ = ["BURST_GAP_SECONDS", "BURST_LINES", "BURST_SECONDS", "InputLineError", "parse_line", "register", "run"]

#: Lines appended under one taking of the lock when input keeps coming (fairness to others)...
BURST_LINES = 1024
#: ... and seconds: with a sync per line on a slow disk, 1,024 lines could hold the lock for
#: seconds while other writers and compactions wait.
BURST_SECONDS = 0.1
#: After a burst cut short by those caps, the next waits this long before taking the lock again:
#: waiters poll for it, and without a gap a producer faster than the disk would keep it (library
#: writers racing such a stream made under 3 appends a second).
BURST_GAP_SECONDS = 0.002
_CHUNK = 1 << 16
_BOM = b"\xef\xbb\xbf"
# The fields each known type declares, by their JSON names (plus the tag).
_FIELDS: dict[str, frozenset[str]] = {}


class InputLineError(InvalidEntry):
    """A stdin line is not an entry ``append`` can store; ``line`` is 1-based."""

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"<stdin>:{line}: {reason}")


def register(commands: argparse._SubParsersAction) -> None:
    """Add the ``append`` command."""
    p = commands.add_parser("append", help="append JSON entries read on stdin (one per line) to a session",
                            description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_target(p, what="the session (its log <uuid>.jsonl is created if absent)")
    p.add_argument("--no-lock", action="store_true",
                   help="do not take the writer lock (unsafe with other writers; for measurements)")
    p.add_argument("--lock-timeout", type=float, default=10.0, metavar="SECONDS",
                   help="wait at most this long for another writer's lock (default 10; negative: forever)")
    p.add_argument("--sync", choices=SYNC_POLICIES, default=DEFAULT_SYNC,
                   help=f"{DEFAULT_SYNC} (default, as the library's): fdatasync every 64 lines and before the lock is "
                        "released, so a line is durable by the time the command exits; always: after every line; none: never")
    p.add_argument("--all-or-nothing", action="store_true",
                   help="check all of stdin before appending any of it (held in memory), then append it in one write")
    p.add_argument("--keep-unknown", action="store_true", help="store lines of an unknown type verbatim instead of refusing them")
    p.add_argument("--mode", choices=RECOVERY_MODES, default="skip",
                   help="recovery mode for a torn tail found in the existing log (default: skip)")
    p.add_argument("--line-cap", type=int, default=DEFAULT_LINE_CAP, help="longest line accepted, in bytes")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last line (also on failure)")
    p.set_defaults(handler=run)


def _declared(kind: str) -> frozenset[str]:
    """The JSON field names an entry of known type ``kind`` may carry."""
    if kind not in _FIELDS:
        from aptmem.entries import KnownEntry

        for cls in KnownEntry.__args__:  # type: ignore[attr-defined]
            names = {f.encode_name for f in msgspec.structs.fields(cls)}
            _FIELDS[cls.__struct_config__.tag] = frozenset(names | {"type"})
    return _FIELDS[kind]


def parse_line(raw: bytes, number: int, *, keep_unknown: bool = False) -> Entry | None:
    """Check one stdin line (without its line end); return its entry, None for a blank line.

    Raises :class:`InputLineError` naming the line and the reason.
    """
    if number == 1 and raw.startswith(_BOM):
        raw = raw[len(_BOM):]
    if raw.endswith(b"\r"):
        raw = raw[:-1]
    if not raw.strip():
        return None
    try:
        entry = decode_line(raw)
    except InvalidEntry as exc:
        reason = str(exc)
        if "out of range" in reason:
            reason += f" (JSON numbers here: integers of at most {MAX_INT_DIGITS} characters, floats within ±1.8e308)"
        raise InputLineError(number, reason) from None
    if isinstance(entry, UnknownEntry):
        if not keep_unknown:
            raise InputLineError(number, f"unknown entry type {entry.type!r} (known: {', '.join(sorted(KNOWN_TYPES))}); "
                                         "--keep-unknown stores such lines verbatim")
        return entry
    fields: Any = msgspec.json.decode(raw)  # decoded once already, so nesting is within limits
    extra = sorted(set(fields) - _declared(entry_type(entry)))
    if extra:
        raise InputLineError(number, f"field {extra[0]!r} is not a field of a {entry_type(entry)!r} entry "
                                     f"(storing the entry would drop it)")
    return entry


class _Appender:
    """Appends checked entries to one session, taking the writer lock once per burst."""

    def __init__(self, args: argparse.Namespace, root: str, session_id: str) -> None:
        self.args = args
        self.root = root
        self.session_id = session_id
        self.store: JsonlStore | None = None
        self.appended = 0
        self.bursts = 0
        self.created = False
        self.in_burst = 0
        self.burst: Any = None
        self.burst_started = 0.0

    def _open(self) -> JsonlStore:
        if self.store is None:
            a = self.args
            store = JsonlStore(self.root, sync=a.sync, recovery=a.mode, line_cap=a.line_cap,
                               lock=not a.no_lock, lock_timeout=a.lock_timeout)
            if self.bursts == 0:
                self.created = not store.exists(self.session_id)
            self.burst = store.holding(self.session_id)  # the writer lock, for the whole burst
            try:
                self.burst.__enter__()
            except BaseException:
                store.close()
                raise
            self.store = store
            self.bursts += 1
            self.in_burst = 0
            self.burst_started = time.monotonic()
        return self.store

    def append(self, entry: Entry) -> None:
        """Append one entry (opening the session, and taking its lock, if needed)."""
        self._open().append(self.session_id, entry)
        self.appended += 1
        self.in_burst += 1
        if self.in_burst >= BURST_LINES or time.monotonic() - self.burst_started >= BURST_SECONDS:
            self.end_burst()
            time.sleep(BURST_GAP_SECONDS)  # let a waiting writer or compaction in

    def append_all(self, entries: list[Entry]) -> None:
        """Append every entry as one write (``--all-or-nothing``)."""
        if entries:
            self._open().append_many(self.session_id, entries)
            self.appended = len(entries)

    def end_burst(self) -> None:
        """Sync as the policy says and release the lock: other writers may go now."""
        store, self.store = self.store, None
        if store is not None:
            try:
                self.burst.__exit__(None, None, None)
            finally:
                store.close()


def _stdin_ready(fd: int) -> bool:
    """Whether stdin has data (or end of input) waiting, so a read would not block."""
    try:
        return bool(select.select([fd], [], [], 0)[0])
    except (OSError, ValueError):  # not selectable: treat it as a file, always ready
        return True


def _lines(fd: int, cap: int, appender: _Appender | None) -> Any:
    """Yield (number, raw line) from ``fd``; before a read that could block, end the burst.

    Memory is bounded by the line cap: a line longer than it is refused as soon as that is known.
    Each chunk read is searched once for line ends, so a long line costs linear time.
    """
    buffer = bytearray()
    number = 0
    while True:
        if appender is not None and appender.store is not None and not _stdin_ready(fd):
            appender.end_burst()  # never hold the lock while waiting for input
        chunk = os.read(fd, _CHUNK)
        if not chunk:
            break
        searched = len(buffer)  # the bytes before hold no line end: search only the new chunk
        buffer += chunk
        start, end = 0, buffer.find(b"\n", searched)
        while end != -1:
            number += 1
            if end - start > cap:
                raise InputLineError(number, over_cap_reason(cap))
            yield number, bytes(buffer[start:end])
            start = end + 1
            end = buffer.find(b"\n", start)
        del buffer[:start]
        if len(buffer) > cap:
            raise InputLineError(number + 1, over_cap_reason(cap))
    if buffer:
        yield number + 1, bytes(buffer)


def run(args: argparse.Namespace) -> int:
    """Append stdin's entries; print a summary with ``--json``; return the exit code."""
    # The id is validated and an existing file checked before anything is read or created.
    target = resolve(args.target, args.root, need_id=True, must_exist=False, cap=args.line_cap)
    assert target.root is not None and target.session_id is not None  # need_id
    session_id = target.session_id
    appender = _Appender(args, str(target.root), session_id)
    fd = sys.stdin.fileno()
    error: BaseException | None = None
    try:
        if args.all_or_nothing:
            entries = [e for n, raw in _lines(fd, args.line_cap, None)
                       if (e := parse_line(raw, n, keep_unknown=args.keep_unknown)) is not None]
            appender.append_all(entries)
        else:
            for number, raw in _lines(fd, args.line_cap, appender):
                entry = parse_line(raw, number, keep_unknown=args.keep_unknown)
                if entry is not None:
                    appender.append(entry)
    except (AptmemError, OSError) as exc:
        error = exc
    finally:
        try:
            appender.end_burst()
        except (AptmemError, OSError) as exc:  # the final sync failed: the lines may not be durable
            error = error or exc
    if args.json:
        out = {"session_id": session_id, "path": str(target.path),
               "appended": appender.appended, "created": appender.created, "bursts": appender.bursts,
               "sync": args.sync, "lock": not args.no_lock, "error": None if error is None else _message(error)}
        print(msgspec.json.encode(out).decode())
    if error is None:
        return 0
    n = appender.appended
    kept = "nothing was appended" if n == 0 else f"{n} {'entry was' if n == 1 else 'entries were'} appended before it"
    from aptmem.cli import EXIT_DAMAGE, EXIT_USAGE, one_line

    print(f"aptmem: {one_line(_message(error))}; {kept}", file=sys.stderr)

    return EXIT_DAMAGE if isinstance(error, CorruptLogError) else EXIT_USAGE


def _message(error: BaseException) -> str:
    """The error's text, with advice where the bare error would leave the user guessing."""
    text = str(error)
    if isinstance(error, LockTimeout):
        text += ("; another writer holds this session's lock (a burst of appends, a compaction or a repair); "
                 "wait longer with --lock-timeout SECONDS (negative: forever)")
    return text
