"""A writer process for the peer and server store tests: appends numbered entries, saying each ack.

``python tests/store_writer_child.py STRATEGY ROOT SESSION WRITER COUNT [--conninfo C] [--size N]``
builds the strategy's store on ROOT (with ``conninfo`` for a server store), waits for one line on
stdin (the start signal, so several writers begin together), then appends COUNT entries
(:func:`writer_entry`) one ``append`` at a time, printing ``ack <n>`` after each one returned. A
failed append prints ``error <type>: <message>`` and exits 3. Killing it at any moment is the point.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from aptmem.entries import User  # noqa: E402


def writer_entry(writer: int, n: int, size: int = 40) -> User:
    """The ``n``-th entry (from 0) writer ``writer`` appends: its id names both, its text is ``size`` long."""
    text = f"writer {writer} entry {n} "
    return User(ts=1_717_000_000_000 + n, id=f"w{writer}-{n}", content=(text * (size // len(text) + 1))[:size])


def spawn(strategy: str, root: Path, session: str, writer: int, count: int, *, conninfo: str | None = None,
          size: int = 40) -> subprocess.Popen[str]:
    """Start one writer process and wait until its store is open (it then waits for the start line)."""
    command = [sys.executable, __file__, strategy, str(root), session, str(writer), str(count), "--size", str(size)]
    if conninfo:
        command += ["--conninfo", conninfo]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "ready", f"writer {writer} did not start"
    return child


def go(child: subprocess.Popen[str]) -> None:
    """Send a waiting writer its start line."""
    assert child.stdin is not None
    child.stdin.write("go\n")
    child.stdin.flush()


def run_writers(strategy: str, root: Path, session: str, writers: int, count: int, *,
                conninfo: str | None = None, timeout: float = 120) -> list[str]:
    """Run ``writers`` processes appending ``count`` entries each to one session at once; their output."""
    children = [spawn(strategy, root, session, w, count, conninfo=conninfo) for w in range(writers)]
    for child in children:
        go(child)
    outputs = [child.communicate(timeout=timeout)[0] for child in children]
    for w, child in enumerate(children):
        assert child.returncode == 0, f"writer {w} failed: {outputs[w][-500:]}"
    return outputs


def check_writers(got: list, writers: int, count: int) -> None:  # type: ignore[type-arg]
    """Every writer's ``count`` entries are in ``got``, each writer's in its own order, nothing else."""
    assert len(got) == writers * count, f"{len(got)} entries, {writers} x {count} appended"
    for writer in range(writers):
        mine = [entry for entry in got if entry.id.startswith(f"w{writer}-")]
        assert mine == [writer_entry(writer, n) for n in range(count)], f"writer {writer}'s entries lost or reordered"


def main() -> int:
    """Parse the arguments, wait for the start line, append and acknowledge."""
    parser = argparse.ArgumentParser()
    for name in ("strategy", "root", "session"):
        parser.add_argument(name)
    parser.add_argument("writer", type=int)
    parser.add_argument("count", type=int)
    parser.add_argument("--conninfo", default=None)
    parser.add_argument("--size", type=int, default=40)
    args = parser.parse_args()
    from experiments.core.strategy import build_store, load_strategy

    overrides = {"conninfo": args.conninfo} if args.conninfo else {}
    store = build_store(load_strategy(args.strategy), args.root, **overrides)
    print("ready", flush=True)
    sys.stdin.readline()
    for n in range(args.count):
        try:
            store.append(args.session, writer_entry(args.writer, n, args.size))
        except Exception as exc:  # noqa: BLE001 - reported to the test, which judges it
            print(f"error {type(exc).__name__}: {exc}", flush=True)
            return 3
        print(f"ack {n + 1}", flush=True)
    store.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
