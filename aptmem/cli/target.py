"""The one way every single-session command names its session: a PATH, or ``--root DIR SESSION_ID``.

* ``aptmem cat sessions/<id>.jsonl``: a path to a log (a log named ``<uuid>.jsonl`` also names
  its sessions folder, where its sidecar and lock live);
* ``aptmem cat --root sessions <id>``: a session id in a folder of sessions;
* ``aptmem cat <id>``: a session id alone is looked up in ``$APTMEM_ROOT``, else ``./sessions``
  (unless a file of that name exists here).

Before a command reads or changes the file, :func:`resolve` checks that it is a session log at
all (:func:`aptmem.sessionfile.check_session_log`): a transcript, a sidecar or pretty-printed
JSON is refused with exit 2, and nothing is changed.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path

from aptmem.errors import NotASessionError, SessionNotFound
from aptmem.ids import is_session_id, validate_session_id
from aptmem.logreader import DEFAULT_LINE_CAP
from aptmem.sessionfile import check_session_log

__all__ = ["LOG_SUFFIX", "Target", "add_root_option", "add_target", "default_root", "resolve", "resolve_name"]

LOG_SUFFIX = ".jsonl"
_ROOT_HELP = "the folder of sessions: then the argument is a SESSION_ID (default for a bare id: $APTMEM_ROOT or ./sessions)"


def default_root() -> str:
    """The folder of sessions when ``--root`` is not given: ``$APTMEM_ROOT``, else ``./sessions``."""
    return os.environ.get("APTMEM_ROOT") or "sessions"


def add_root_option(p: argparse.ArgumentParser) -> None:
    """Add ``--root DIR`` (the folder of sessions; :func:`default_root` when not given) to a command."""
    p.add_argument("--root", default=None, metavar="DIR", help="the folder of sessions (default: $APTMEM_ROOT or ./sessions)")


def add_target(p: argparse.ArgumentParser, *, dest: str = "target", what: str = "the session") -> None:
    """Add the positional ``PATH | SESSION_ID`` and the ``--root DIR`` option to a command."""
    p.add_argument(dest, metavar="PATH|SESSION_ID", help=f"{what}: a log's path, or with --root (or alone) its id")
    p.add_argument("--root", default=None, metavar="DIR", help=_ROOT_HELP)


@dataclass(frozen=True)
class Target:
    """A session named on the command line: its log, and its folder and id when it has them."""

    path: Path
    root: Path | None
    session_id: str | None

    @property
    def where(self) -> str:
        """How to name the session in a message: the id and folder, or the path."""
        return f"session {self.session_id} in {self.root}" if self.session_id and self.root else str(self.path)


def resolve_name(name: str, root: str | None) -> Target:
    """Turn a command-line name (and ``--root``) into a :class:`Target`, checking nothing on disk."""
    if root is not None:
        session_id = validate_session_id(name)  # a path here is refused: "looks like a path"
        return Target(Path(root) / (session_id + LOG_SUFFIX), Path(root), session_id)
    if is_session_id(name) and not os.path.lexists(name):
        folder = default_root()
        return Target(Path(folder) / (name + LOG_SUFFIX), Path(folder), name)
    path = Path(name)
    stem = path.name[: -len(LOG_SUFFIX)] if path.name.endswith(LOG_SUFFIX) else ""
    if is_session_id(stem):
        return Target(path, path.parent, stem)
    return Target(path, None, None)


def resolve(name: str, root: str | None, *, need_id: bool = False, must_exist: bool = True,
            check: bool = True, cap: int = DEFAULT_LINE_CAP) -> Target:
    """Resolve a session named on the command line; refuse what is not there or not a session log.

    ``need_id``: the command works in a sessions folder (it takes the writer lock, finds the
    sidecar), so the log must be ``<uuid>.jsonl``. ``must_exist``: the log must exist (``append``
    creates it). ``check``: run the session-log guard on an existing file.
    """
    target = resolve_name(name, root)
    if need_id and target.session_id is None:
        raise NotASessionError(str(target.path), "this command works on a session log named <uuid>.jsonl in its "
                                                 "sessions folder (or give --root DIR SESSION_ID)")
    exists = os.path.lexists(target.path)
    if must_exist and not exists:
        if target.session_id is not None and target.root is not None:
            raise SessionNotFound(target.session_id, f"{target.root} (no {target.path.name} there)")
        raise NotASessionError(str(target.path), "no such file")
    if check and exists:
        check_session_log(target.path, cap)
    return target
