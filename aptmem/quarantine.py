"""The quarantine beside a log (``<log>.quarantine``): where repairs and rewrites move bytes.

Nothing a repair or a rewrite compaction removes from a log without a summary standing for it
is destroyed: it is first appended here, each piece behind a header line that says where it
came from (line, byte offset, length) and why, then the log is cut or replaced. The file is a
sequence of ``#aptmem-quarantine {header}\\n`` + exactly ``length`` bytes + ``\\n``.

A batch (the pieces of one repair) ends with an empty piece whose header has ``end`` true and
the batch's fingerprint (the log's identity and state, and what is being removed). Before a
repair writes its batch it looks at the end of the quarantine: when the last batch there is
complete and has the same fingerprint, a repair of this very state was killed after its
quarantine was durable and before the cut, and the pieces are not copied a second time.

Order of durability, so that a power loss cannot leave the log cut with no quarantine: the
batch is written and fsynced, then the folder (the quarantine's name) is fsynced, and only
then does the caller cut or replace the log. A batch that fails half way (a full disk) is cut
back off, so the next one never starts glued to the middle of a line.
"""

from __future__ import annotations

import errno
import hashlib
import os
from pathlib import Path

import msgspec

from aptmem.entries import now_ms
from aptmem.errors import StorageError, UnsafePathError
from aptmem.fsutil import fsync_dir, open_append, open_read, write_all

__all__ = ["HEADER", "QUARANTINE_SUFFIX", "QuarantineBatch", "fingerprint", "quarantine_path"]

QUARANTINE_SUFFIX = ".quarantine"
HEADER = b"#aptmem-quarantine "
_COPY_CHUNK = 1 << 20
_TAIL = 4096  # an end record is far shorter: the last batch's end is found in this many bytes


def quarantine_path(log_path: str | os.PathLike[str]) -> Path:
    """Return where a log's removed bytes are kept."""
    return Path(os.fspath(log_path) + QUARANTINE_SUFFIX)


class _Header(msgspec.Struct, kw_only=True):
    """The header line written before each piece (and, with ``end``, after the last one)."""

    source: str
    line: int
    offset: int
    length: int
    reason: str
    mode: str
    at: int
    #: physical lines in the piece (adjacent damaged lines travel as one piece)
    lines: int = 1
    batch: str | None = None
    end: bool = False


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(_Header)


def fingerprint(log_fd: int, purpose: str, *facts: object) -> str:
    """A batch's fingerprint: the log's identity and state (device, inode, size, mtime), the
    purpose (recovery mode or compaction) and whatever else decides the pieces (``facts``)."""
    st = os.fstat(log_fd)
    text = repr((st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, purpose, facts))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class QuarantineBatch:
    """Copy pieces of a log into its quarantine as one batch; see the module docstring.

    ``src_fd`` is a readable descriptor of the log (pieces are copied with ``pread``). Use
    :meth:`add` for each piece, then :meth:`commit` before cutting the log; :meth:`abort` on an
    error cuts a partial batch back off. ``done`` is True when a complete batch with the same
    fingerprint is already there: then nothing is written.
    """

    def __init__(self, log_path: str | os.PathLike[str], src_fd: int, mode: str, batch: str) -> None:
        self.log_path = os.fspath(log_path)
        self.path = quarantine_path(log_path)
        self.src_fd = src_fd
        self.mode = mode
        self.batch = batch
        self.pieces = 0
        self.bytes = 0
        self._fd = -1
        self._start = 0
        self.done = _last_batch(self.path) == batch

    def _open(self) -> int:
        """Open the quarantine for appending (created 0600), starting on a fresh line."""
        if self._fd < 0:
            self._fd = open_append(self.path, readable=True)
            self._start = os.fstat(self._fd).st_size
            if self._start and os.pread(self._fd, 1, self._start - 1) != b"\n":
                write_all(self._fd, b"\n")  # a batch killed mid-piece: never glue a header to it
        return self._fd

    def add(self, line: int, offset: int, length: int, reason: str, lines: int = 1) -> None:
        """Append the log's bytes [offset, offset + length) behind a header naming them."""
        self.pieces += 1
        self.bytes += length
        if self.done:
            return
        fd = self._open()
        self._header(fd, line, offset, length, reason, lines, end=False)
        position, left = offset, length
        while left > 0:
            chunk = os.pread(self.src_fd, min(left, _COPY_CHUNK), position)
            if not chunk:
                raise StorageError(errno.EIO, f"{self.log_path}: changed while being quarantined (ended at byte {position})")
            write_all(fd, chunk)
            position += len(chunk)
            left -= len(chunk)
        write_all(fd, b"\n")

    def _header(self, fd: int, line: int, offset: int, length: int, reason: str, lines: int, *, end: bool) -> None:
        header = _Header(source=os.path.basename(self.log_path), line=line, offset=offset, length=length, reason=reason,
                         mode=self.mode, at=now_ms(), lines=lines, batch=self.batch, end=end)
        write_all(fd, HEADER + _encoder.encode(header) + b"\n")

    def commit(self, end_offset: int) -> None:
        """End the batch (an empty piece at ``end_offset``, the log's size) and make it durable:
        fsync of the quarantine, then of its folder. Call before the log is cut."""
        if self.done or not self.pieces:
            return
        fd = self._open()
        self._header(fd, 0, end_offset, 0, f"end of {self.pieces} pieces", 0, end=True)
        write_all(fd, b"\n")
        os.fsync(fd)
        fsync_dir(self.path.parent)
        self._close()

    def abort(self) -> None:
        """Cut a batch that could not be finished back off (nothing of it stays half written)."""
        if self._fd >= 0:
            try:
                os.ftruncate(self._fd, self._start)
            except OSError:
                pass  # the next batch still starts on a fresh line
            self._close()

    def _close(self) -> None:
        if self._fd >= 0:
            fd, self._fd = self._fd, -1
            os.close(fd)


def _last_batch(path: Path) -> str | None:
    """The fingerprint of the quarantine's last batch if that batch is complete, else None."""
    try:
        fd = open_read(path)
    except (OSError, UnsafePathError):
        return None
    try:
        size = os.fstat(fd).st_size
        tail = os.pread(fd, min(size, _TAIL), max(0, size - _TAIL))
    finally:
        os.close(fd)
    if not tail.endswith(b"\n\n"):
        return None
    start = tail.rfind(b"\n" + HEADER, 0, len(tail) - 2)
    start = start + 1 if start >= 0 else (0 if tail.startswith(HEADER) and size <= _TAIL else -1)
    if start < 0:
        return None
    try:
        header = _decoder.decode(tail[start + len(HEADER) : -2])
    except msgspec.DecodeError:
        return None
    return header.batch if header.end and header.length == 0 else None
