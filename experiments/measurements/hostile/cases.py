"""Hostile input, tried for real: session ids, symlinks, folders that cannot be written.

Every case runs in a scratch folder of its own holding ``sessions/`` (one seeded session: a log
of three entries and a sidecar) and ``outside/victim`` (a file a hostile path might aim at). It
records what happened (``refused``, ``accepted`` or ``reported``), the error text a user sees,
whether the error was *clear* (the library raised one of aptmem's own errors; a command printed
one ``aptmem: ...`` line and no traceback), and whether everything stored survived (*intact*:
the seeded entries and keys still load and the victim is unchanged).

Commands run through their entry point in this process (:func:`main_in_process`: the same code as
``python -m aptmem`` without the interpreter's start-up); a case that needs a process of its own
(a file-size limit) starts one. The cases on input data (deep JSON, long numbers, file modes) and
on process-wide hazards (a full disk, a failing fsync) are in :mod:`experiments.measurements.hostile.inputs`.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aptmem.entries import Assistant, User
from aptmem.errors import AptmemError
from experiments.core.runinfo import REPO_ROOT, child_env
from experiments.measurements.hostile.result import CaseResult

__all__ = ["Case", "SID", "SID2", "Scratch", "cli", "hostile_ids", "id_cases", "library", "main_in_process",
           "permission_cases", "run_cli", "symlink_cases", "unwritable"]

SID = "0b7e4d5c-2b1f-4c3a-9d8e-7f6a5b4c3d2e"  # the seeded session
SID2 = "1c8f5e6d-3c2a-4d4b-8e9f-8a7b6c5d4e3f"  # a second, valid id for cases that need a fresh one
VICTIM = b"precious data that no session file may overwrite\n"


@dataclass(frozen=True)
class Case:
    """One hostile case: what it is, where it is tried, what should happen, and how to try it."""

    category: str
    case: str
    surface: str
    expect: str  # refused | accepted | reported
    run: Callable[[Scratch], CaseResult]
    #: True when the case runs in processes of its own (child scenarios): such cases may run side
    #: by side; the others run one at a time in this process (commands run through ``main``).
    spawns: bool = False


class Scratch:
    """The folder of one case: ``sessions/`` with one seeded session, and ``outside/victim``."""

    def __init__(self, base: Path) -> None:
        from aptmem.jsonl_store import JsonlStore
        from aptmem.working_memory import WorkingMemory

        self.base = base
        self.root = base / "sessions"
        self.outside = base / "outside"
        self.outside.mkdir(parents=True)
        self.victim = self.outside / "victim"
        self.victim.write_bytes(VICTIM)
        with JsonlStore(self.root) as store:
            store.append_many(SID, [User(content="hello", ts=1, id="u1"), Assistant(content="hi", ts=2, id="a1"),
                                    User(content="bye", ts=3, id="u2")])
        WorkingMemory(self.root, SID).create(title="seeded", working={"plan": ["a", "b"]})

    def log(self, session_id: str = SID) -> Path:
        return self.root / f"{session_id}.jsonl"

    def intact(self) -> bool:
        """The seeded entries and keys load as written, and the victim is unchanged."""
        from aptmem.jsonl_store import JsonlStore
        from aptmem.working_memory import WorkingMemory

        try:
            with JsonlStore(self.root, recovery="skip") as store:
                ids = [e.id for e in store.iter_entries(SID)]
            working = WorkingMemory(self.root, SID).load().working
        except (AptmemError, OSError):
            return False
        return ids[:3] == ["u1", "a1", "u2"] and working.get("plan") == ["a", "b"] and self.victim.read_bytes() == VICTIM


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else ""


def library(scratch: Scratch, action: Callable[[], object]) -> CaseResult:
    """Run a library call; refused if it raised (clear only if the error is aptmem's own)."""
    try:
        action()
    except Exception as exc:  # noqa: BLE001 - any exception is the observation
        clear = isinstance(exc, AptmemError)
        note = "" if clear else f"raised {type(exc).__name__}, not an aptmem error"
        return CaseResult(outcome="refused", error=_first_line(str(exc)) or type(exc).__name__, clear=clear,
                intact=scratch.intact(), note=note)
    return CaseResult(outcome="accepted", error=None, clear=True, intact=scratch.intact(), note="")


def run_cli(*args: str, stdin: bytes = b"", **popen: Any) -> subprocess.CompletedProcess[bytes]:
    """Run ``python -m aptmem ARGS`` as a process of its own."""
    return subprocess.run([sys.executable, "-m", "aptmem", *args], input=stdin, capture_output=True, env=child_env(),
                          cwd=REPO_ROOT, timeout=120, **popen)


def main_in_process(*args: str, stdin: bytes = b"") -> tuple[int, str, str]:
    """Run the command line's entry point (``aptmem.cli.main``) here: exit code, stdout, stderr.

    The same code as ``python -m aptmem`` without the interpreter's start-up, so a hundred cases
    take seconds. stdin is a real file (``append`` reads its descriptor). Not thread-safe: it swaps
    ``sys.stdin``/``stdout``/``stderr``. An exception escaping ``main`` is printed as the traceback
    a user would have seen.
    """
    from aptmem.cli import main

    out, err = io.BytesIO(), io.BytesIO()
    out_text = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    err_text = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    with tempfile.TemporaryFile() as source:
        source.write(stdin)
        source.seek(0)
        saved = sys.stdin, sys.stdout, sys.stderr
        sys.stdin = open(source.fileno(), encoding="utf-8", closefd=False)  # noqa: SIM115 - closed below
        sys.stdout, sys.stderr = out_text, err_text
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
        except Exception:  # noqa: BLE001 - what a user would see: a traceback
            code = 1
            err_text.write(traceback.format_exc())
        finally:
            sys.stdin.close()
            sys.stdin, sys.stdout, sys.stderr = saved
            out_text.flush()
    return code, out.getvalue().decode(errors="replace"), err.getvalue().decode(errors="replace")


def cli(scratch: Scratch, *args: str, stdin: bytes = b"", reported_on: int | None = None,
        process: bool = False, **popen: Any) -> CaseResult:
    """Run a command (in this process, or with ``process`` as a process of its own); judge what it printed.

    Refused on a non-zero exit, ``reported`` on exit ``reported_on``. Clear: no traceback, and a
    refusal is one ``aptmem: ...`` line on stderr.
    """
    if process:
        done = run_cli(*args, stdin=stdin, **popen)
        code, out, err = done.returncode, done.stdout.decode(errors="replace"), done.stderr.decode(errors="replace")
    else:
        code, out, err = main_in_process(*args, stdin=stdin)
    lines = [line for line in err.splitlines() if line.strip()]
    clear = "Traceback" not in err and (code == 0 or (len(lines) == 1 and lines[0].startswith("aptmem: ")))
    outcome = "accepted" if code == 0 else "reported" if code == reported_on else "refused"
    error = _first_line(err) or None
    if outcome == "reported" and not lines:  # e.g. fsck: the finding is on stdout
        clear, error = True, (out.strip().splitlines() or [None])[0]
    note = f"exit {code}" + ("; run as a process of its own" if process else "")
    return CaseResult(outcome=outcome, error=error, clear=clear, intact=scratch.intact(), note=note, stdout=out)


def _line(content: str = "from stdin") -> bytes:
    return b'{"type":"user","content":"%s","ts":9}\n' % content.encode()


# -- session ids -------------------------------------------------------------------------------

def hostile_ids(scratch_base: str) -> list[tuple[str, str]]:
    """(what, id) pairs: every way an id could aim a path elsewhere or look valid without being so."""
    return [
        ("traversal", "../outside/victim"),
        ("absolute path", f"{scratch_base}/outside/victim"),
        ("NUL byte", SID + "\x00.jsonl"),
        ("look-alike digits (fullwidth)", SID.replace("0", "\uff10")),
        ("look-alike letter (Cyrillic e)", SID.replace("e", "\u0435")),
        ("look-alike dash (U+2010)", SID.replace("-", "\u2010")),
        ("upper case", SID.upper()),
        ("UUID version 1", "c232ab00-9414-11ec-b3c8-9f6bdeced846"),
        ("nil UUID", "00000000-0000-0000-0000-000000000000"),
        ("braces", "{" + SID + "}"),
        ("urn:uuid: prefix", "urn:uuid:" + SID),
        ("trailing newline", SID + "\n"),
        ("empty", ""),
    ]


def _store(name: str, root: Path) -> Any:
    from experiments.core.strategy import build_store, load_strategy

    return build_store(load_strategy(name), root)


def id_cases() -> Iterator[Case]:
    """Each hostile id through the library (three stores, working memory, continue) and the commands."""
    from aptmem.continuation import continue_session
    from aptmem.working_memory import WorkingMemory

    for what, template in hostile_ids("{base}"):
        def hostile(s: Scratch, template: str = template) -> str:
            return template.replace("{base}", str(s.base))

        for strategy in ("jsonl_none", "sqlite_wal_full", "full_json_atomic"):
            def append(s: Scratch, strategy: str = strategy, hostile: Callable[[Scratch], str] = hostile) -> CaseResult:
                store = _store(strategy, s.root)
                try:
                    return library(s, lambda: store.append(hostile(s), User(content="x", ts=1)))
                finally:
                    store.close()

            yield Case("session id", what, f"library: {strategy} append", "refused", append)
        yield Case("session id", what, "library: WorkingMemory", "refused",
                   lambda s, h=hostile: library(s, lambda: WorkingMemory(s.root, h(s)).set("k", 1)))

        def cont(s: Scratch, hostile: Callable[[Scratch], str] = hostile) -> CaseResult:
            with _store("jsonl_none", s.root) as store:
                return library(s, lambda: continue_session(store, s.root, hostile(s)))

        yield Case("session id", what, "library: continue_session", "refused", cont)
        if "\x00" in template:  # argv cannot carry a NUL byte: no command line can be handed one
            continue
        yield Case("session id", what, "aptmem append", "refused",
                   lambda s, h=hostile: cli(s, "append", "--root", str(s.root), h(s), stdin=_line()))
        yield Case("session id", what, "aptmem continue", "refused",
                   lambda s, h=hostile: cli(s, "continue", h(s), "--root", str(s.root)))
        yield Case("session id", what, "aptmem compact", "refused",
                   lambda s, h=hostile: cli(s, "compact", str(s.root / f"{h(s)}.jsonl"), "--window", "1000", "--force"))


# -- symlinks and odd roots ----------------------------------------------------------------------

def _link(s: Scratch, name: str) -> None:
    (s.root / name).unlink(missing_ok=True)
    (s.root / name).symlink_to(s.victim)


def symlink_cases() -> Iterator[Case]:
    """Session files planted as symlinks to a victim outside; roots that are links or files."""
    from aptmem.jsonl_store import JsonlStore
    from aptmem.working_memory import WorkingMemory

    def with_link(name: str, then: Callable[[Scratch], CaseResult]) -> Callable[[Scratch], CaseResult]:
        def run(s: Scratch) -> CaseResult:
            _link(s, name)
            return then(s)
        return run

    def lib_append(s: Scratch) -> CaseResult:
        with JsonlStore(s.root) as store:
            return library(s, lambda: store.append(SID2, User(content="x", ts=1)))

    def lib_read(s: Scratch) -> CaseResult:
        with JsonlStore(s.root) as store:
            return library(s, lambda: list(store.iter_entries(SID2)))

    log, meta = f"{SID2}.jsonl", f"{SID2}.meta.json"
    yield Case("symlink", "session log is a symlink", "library: JsonlStore.append", "refused", with_link(log, lib_append))
    yield Case("symlink", "session log is a symlink", "library: JsonlStore.iter_entries", "refused", with_link(log, lib_read))
    yield Case("symlink", "session log is a symlink", "aptmem append", "refused",
               with_link(log, lambda s: cli(s, "append", "--root", str(s.root), SID2, stdin=_line())))
    yield Case("symlink", "session log is a symlink", "aptmem cat", "refused", with_link(log, lambda s: cli(s, "cat", str(s.log(SID2)))))
    yield Case("symlink", "session log is a symlink", "aptmem fsck --repair", "refused",
               with_link(log, lambda s: cli(s, "fsck", str(s.log(SID2)), "--repair")))
    yield Case("symlink", "sidecar is a symlink", "library: WorkingMemory.set", "refused",
               with_link(meta, lambda s: library(s, lambda: WorkingMemory(s.root, SID2).set("k", 1))))
    yield Case("symlink", "sidecar is a symlink", "library: WorkingMemory.create", "refused",
               with_link(meta, lambda s: library(s, lambda: WorkingMemory(s.root, SID2).create())))
    yield Case("symlink", "writer lock is a symlink", "library: JsonlStore.append", "refused", with_link(f"{SID2}.lock", lib_append))
    yield Case("symlink", "writer lock is a symlink", "aptmem append", "refused",
               with_link(f"{SID2}.lock", lambda s: cli(s, "append", "--root", str(s.root), SID2, stdin=_line())))
    yield Case("symlink", "sidecar lock is a symlink", "library: WorkingMemory.set", "refused",
               with_link(f"{SID}.meta.lock", lambda s: library(s, lambda: WorkingMemory(s.root, SID).set("k", 1))))

    def damaged_then(then: Callable[[Scratch], CaseResult]) -> Callable[[Scratch], CaseResult]:
        def run(s: Scratch) -> CaseResult:
            with open(s.log(), "ab") as f:  # a damaged line, then a good one: a repair would quarantine
                f.write(b"garbage\n" + _line("after the damage"))
            _link(s, f"{SID}.jsonl.quarantine")
            return then(s)
        return run

    def lib_recover(s: Scratch) -> CaseResult:
        with JsonlStore(s.root) as store:
            return library(s, lambda: store.recover(SID))

    yield Case("symlink", "quarantine file is a symlink", "library: JsonlStore.recover", "refused", damaged_then(lib_recover))
    yield Case("symlink", "quarantine file is a symlink", "aptmem fsck --repair", "refused",
               damaged_then(lambda s: cli(s, "fsck", str(s.log()), "--repair")))

    def root_link(s: Scratch) -> CaseResult:
        link = s.base / "linked-root"
        link.symlink_to(s.root)
        with JsonlStore(link) as store:
            return library(s, lambda: store.append(SID, User(content="via the link", ts=4, id="u3")))

    yield Case("odd root", "root is a symlink to a folder (the user's choice)", "library: JsonlStore.append", "accepted", root_link)

    def root_file(then: Callable[[Scratch, Path], CaseResult]) -> Callable[[Scratch], CaseResult]:
        def run(s: Scratch) -> CaseResult:
            target = s.base / "a-file"
            target.write_bytes(b"not a folder\n")
            return then(s, target)
        return run

    yield Case("odd root", "root is a regular file", "library: JsonlStore", "refused",
               root_file(lambda s, f: library(s, lambda: JsonlStore(f))))
    yield Case("odd root", "root is a regular file", "aptmem append", "refused",
               root_file(lambda s, f: cli(s, "append", "--root", str(f), SID2, stdin=_line())))
    yield Case("odd root", "root is a regular file", "aptmem new", "refused", root_file(lambda s, f: cli(s, "new", "--root", str(f))))


# -- folders that cannot be written ----------------------------------------------------------------

@contextmanager
def unwritable(folder: Path) -> Iterator[str]:
    """Make ``folder`` unwritable for this process; yield how (or '' if it could not be done).

    Root ignores permission bits, so as root the folder is made immutable (``chattr +i``); as
    any other user ``chmod 555`` does.
    """
    how = ""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        how = "chmod 555"
    elif shutil.which("chattr") and subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode == 0:
        how = "chattr +i (as root)"
    try:
        yield how
    finally:
        if how.startswith("chattr"):
            subprocess.run(["chattr", "-i", str(folder)], capture_output=True)
        elif how:
            folder.chmod(0o700)


def permission_cases() -> Iterator[Case]:
    """Appends, compactions and sidecar writes in a sessions folder that cannot be written."""
    from aptmem.entries import Compaction
    from aptmem.jsonl_store import JsonlStore
    from aptmem.working_memory import WorkingMemory

    def locked_down(then: Callable[[Scratch], CaseResult]) -> Callable[[Scratch], CaseResult]:
        def run(s: Scratch) -> CaseResult:
            with unwritable(s.root) as how:
                if not how:
                    return CaseResult(outcome="skipped", error=None, clear=True, intact=True,
                            note="could not make a folder unwritable here")
                result = then(s)
            result.note = f"{result.note}; made unwritable by {how}".strip("; ")
            result.intact = s.intact()  # checked again once the folder is writable
            return result
        return run

    def lib(action: Callable[[Any, Scratch], object]) -> Callable[[Scratch], CaseResult]:
        def run(s: Scratch) -> CaseResult:
            with JsonlStore(s.root) as store:
                return library(s, lambda: action(store, s))
        return run

    cat = "folder not writable"
    yield Case(cat, "append to a new session", "library: JsonlStore.append", "refused",
               locked_down(lib(lambda st, s: st.append(SID2, User(content="x", ts=1)))))
    yield Case(cat, "append to an existing session (needs only the file)", "library: JsonlStore.append", "accepted",
               locked_down(lib(lambda st, s: st.append(SID, User(content="more", ts=4, id="u3")))))
    yield Case(cat, "compaction rewrite (temp file + rename)", "library: JsonlStore.replace", "refused",
               locked_down(lib(lambda st, s: st.replace(SID, [Compaction(summary="s", ts=5)]))))
    yield Case(cat, "working-memory write", "library: WorkingMemory.set", "refused",
               locked_down(lambda s: library(s, lambda: WorkingMemory(s.root, SID).set("plan", ["c"]))))
    yield Case(cat, "append to a new session", "aptmem append", "refused",
               locked_down(lambda s: cli(s, "append", "--root", str(s.root), SID2, stdin=_line())))
    yield Case(cat, "create a session", "aptmem new", "refused", locked_down(lambda s: cli(s, "new", "--root", str(s.root))))
    yield Case(cat, "compaction rewrite", "aptmem compact --persist rewrite", "refused",
               locked_down(lambda s: cli(s, "compact", str(s.log()), "--window", "1000", "--force", "--persist", "rewrite",
                                         "--keep-turns", "1", "--tier", "rough", "--no-confirm")))
