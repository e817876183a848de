"""Writer processes of the concurrency measurement that are *not* ``aptmem append`` (harness only).

``python -m experiments.measurements.concurrency.writers KIND ...``, one process per writer:

* ``log-buffered --path P --buffer N``: a naive JSONL logger, as many applications write one:
  ``open(path, "a", buffering=N)`` held open, then ``json.dump(entry, f); f.write("\\n")`` per
  line read on stdin. Python's buffered file API hands the kernel chunks cut wherever its buffers
  fill, so a line is split across ``write()`` calls, and other processes' writes can land between
  the pieces. This is a deliberately unsafe writer for comparison, never a library option.
* ``sidecar --root R --session S --writer W --sets K``: ``WorkingMemory.set`` K times (the
  library: read-modify-write under the sidecar's lock).
* ``sidecar-unlocked ...``: the same read-modify-write with no lock (load, change, atomic
  replace), as a caller who skips the lock would do. Also harness only.

The sidecar writers wait for one line on stdin (the start signal) so that all begin together.
Each prints one JSON object: ``{"acknowledged": n}`` (entries written or keys set that returned).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

__all__ = ["main", "sidecar_key"]


def sidecar_key(writer: int, index: int) -> str:
    """The working-memory key writer ``writer`` sets in its ``index``-th call."""
    return f"w{writer}-{index}"


def _log_buffered(args: argparse.Namespace) -> int:
    """The naive logger: json.dump each stdin line's object into a small-buffered text file."""
    done = 0
    # Text mode, as a logger writes: TextIOWrapper passes its pending text down in chunks, and the
    # small binary buffer below it hands those to write() as they come, cut mid-line.
    with open(args.path, "a", encoding="utf-8", buffering=args.buffer) as log:
        for line in sys.stdin:
            if not line.strip():
                continue
            json.dump(json.loads(line), log, ensure_ascii=False, separators=(",", ":"))
            log.write("\n")
            done += 1
    print(json.dumps({"acknowledged": done}), flush=True)
    return 0


def _sidecar(args: argparse.Namespace, locked: bool) -> int:
    """Set ``args.sets`` keys of this writer, with the library (locked) or unlocked."""
    import msgspec

    from aptmem.fsutil import atomic_write
    from aptmem.working_memory import WorkingMemory

    memory = WorkingMemory(args.root, args.session, lock_timeout=args.lock_timeout)
    sys.stdin.readline()  # the start signal
    done = 0
    try:
        for index in range(args.sets):
            key = sidecar_key(args.writer, index)
            if locked:
                memory.set(key, index)
            else:
                # Read, change, replace atomically: each write is whole, but two writers that
                # read the same version each write back their own change only.
                doc = msgspec.json.decode(Path(memory.path).read_bytes())
                doc["working"][key] = index
                atomic_write(memory.path, msgspec.json.encode(doc))
            done += 1
    finally:
        print(json.dumps({"acknowledged": done}), flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the writer's kind and options and run it."""
    p = argparse.ArgumentParser(prog="python -m experiments.measurements.concurrency.writers", description=__doc__.split("\n\n")[0])
    kinds = p.add_subparsers(dest="kind", required=True)
    log = kinds.add_parser("log-buffered", help="a naive buffered JSONL logger (unsafe on purpose)")
    log.add_argument("--path", required=True, help="the JSONL file to append to")
    log.add_argument("--buffer", type=int, default=512, help="the binary buffer's size in bytes")
    for kind in ("sidecar", "sidecar-unlocked"):
        side = kinds.add_parser(kind, help="set keys in a session's working memory")
        side.add_argument("--root", required=True, help="the sessions folder")
        side.add_argument("--session", required=True, help="the session id")
        side.add_argument("--writer", type=int, required=True, help="this writer's number (names its keys)")
        side.add_argument("--sets", type=int, required=True, help="how many keys to set")
        side.add_argument("--lock-timeout", type=float, default=60.0, help="seconds to wait for the lock")
    args = p.parse_args(argv)
    if args.kind == "log-buffered":
        return _log_buffered(args)
    return _sidecar(args, locked=args.kind == "sidecar")


if __name__ == "__main__":
    sys.exit(main())
