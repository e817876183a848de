"""Power loss simulated on the bytes: crash images built from a file's current and durable state.

A power loss keeps what was synced and loses, in part or whole, what was not. For each file
the writer left, :class:`~experiments.core.crashsim.fs_model.FileImage` holds its current bytes and its durable
bytes (what the last sync made safe). When the durable bytes are a prefix of the current ones
(an append-only file), the rest is the *unsynced tail*, and the image of each damage kind is:

* ``torn``: the tail reached the disk up to a random byte, nothing after it (a torn write);
* ``zero``: the tail reached the disk up to a random byte and reads as NUL bytes after it, the
  file keeping its full size (ext4's delayed allocation after a crash);
* ``drop``: none of the tail reached the disk;
* ``middle``: no power loss, but a partial line spliced into the middle of the current file at
  a line boundary (two writers interleaving their writes): a prefix of another line, cut at a
  random byte and ended by a line end of its own, so it damages no neighbour.

A file rewritten in place since its last sync (durable bytes not a prefix of the current ones)
is torn or zero-filled after the common prefix, with the old bytes still there past the tear.

SQLite's I/O is C code below Python's reach, so its files are modelled from its documented
rules (https://www.sqlite.org/wal.html, https://www.sqlite.org/pragma.html#pragma_synchronous):
in WAL mode the write-ahead log is append-only and frames are synced at every commit with
``synchronous=FULL``, only at checkpoints with ``NORMAL`` (the WAL header when the log is
reused after one), never with ``OFF``. :func:`wal_state` parses a WAL file's frame headers to
find the frames of its current generation (those whose salts match the header), so the
unsynced region can be given as the durable prefix of the WAL and torn, zeroed or dropped like
any other tail. SQLite must then reject torn frames by their checksums.
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass

from experiments.core.crashsim.fs_model import FileImage

__all__ = ["DAMAGES", "WalState", "damage_file", "splice_middle", "build_image", "wal_state"]

#: The damage kinds of a power-loss image, in report order.
DAMAGES = ("torn", "zero", "drop", "middle")

_WAL_HEADER = 32
_FRAME_HEADER = 24


def _common_prefix(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of ``a`` and ``b`` (found by halving, not byte by byte)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def damage_file(image: FileImage, damage: str, rng: random.Random) -> bytes | None:
    """The bytes a power loss of kind ``damage`` (torn, zero, drop) leaves of one file; None: absent."""
    if damage not in ("torn", "zero", "drop"):
        raise ValueError(f"not a power-loss damage: {damage!r}")
    current, durable = image.current, image.durable
    if damage == "drop" or current is None or durable is None:
        return durable  # nothing unsynced survives; a name never made durable is gone
    start = _common_prefix(durable, current)
    if start == len(current):
        return durable if len(durable) > len(current) else current  # nothing unsynced to lose
    reached = start + rng.randrange(len(current) - start)  # the tail reached the disk up to here
    if damage == "torn":
        return current[:reached] + durable[reached:]
    return current[:reached] + b"\0" * (len(current) - reached) + durable[len(current):]


def splice_middle(data: bytes, rng: random.Random, *, lines: bool = True) -> bytes:
    """``data`` with a partial line (a prefix of one of its lines) spliced in at a line boundary.

    The fragment is cut at a random byte before the line's last character, so it is never a
    whole entry, and gets a line end of its own. Without ``lines`` (a JSON array) it goes in at
    a random byte. A file of one line gets it before that line.
    """
    if not data:
        return b"{\n"  # no line to take a piece of: the shortest partial entry
    starts = [0] + [i + 1 for i in range(len(data) - 1) if data[i] == 0x0A]
    source = rng.randrange(len(starts))
    end = data.find(b"\n", starts[source])
    line = data[starts[source] : end if end >= 0 else len(data)].rstrip(b"\r")
    fragment = line[: rng.randrange(1, len(line))] if len(line) > 1 else b"{"
    if not lines:
        at = rng.randrange(1, len(data)) if len(data) > 1 else 0
        return data[:at] + fragment + data[at:]
    inner = starts[1:]  # boundaries with a line before them and after them
    at = inner[rng.randrange(len(inner))] if inner else 0
    return data[:at] + fragment + b"\n" + data[at:]


def build_image(files: dict[str, FileImage], damage: str, rng: random.Random, *, target: str,
                lines: bool = True) -> dict[str, bytes | None]:
    """The crash image of every file: power-loss ``damage`` on each, or ``middle`` on ``target`` only."""
    if damage == "middle":
        out: dict[str, bytes | None] = {name: image.current for name, image in files.items()}
        if out.get(target) is not None:
            out[target] = splice_middle(out[target] or b"", rng, lines=lines)
        return out
    return {name: damage_file(image, damage, rng) for name, image in sorted(files.items())}


@dataclass(frozen=True)
class WalState:
    """The current generation of a SQLite WAL file: its salts and where its last commit ends."""

    salts: tuple[int, int] | None
    #: byte offset just past the last commit frame of the current generation (32: no frames)
    end: int
    commits: int
    page_size: int


def wal_state(data: bytes | None) -> WalState:
    """Parse a WAL file's header and frame headers (checksums are SQLite's to verify, not ours).

    Frames whose salts match the header are the current generation; stale frames of an earlier
    generation (a WAL is overwritten from the start after a checkpoint, not truncated) differ.
    """
    if data is None or len(data) < _WAL_HEADER:
        return WalState(None, 0, 0, 0)
    _magic, _version, page_size, _seq, salt1, salt2 = struct.unpack(">6I", data[:24])
    frame = _FRAME_HEADER + page_size
    offset = end = _WAL_HEADER
    commits = 0
    while offset + frame <= len(data):
        _page, db_size, s1, s2 = struct.unpack(">4I", data[offset : offset + 16])
        if (s1, s2) != (salt1, salt2):
            break
        offset += frame
        if db_size:  # a commit frame records the database size after the commit
            end = offset
            commits += 1
    return WalState((salt1, salt2), end, commits, page_size)
