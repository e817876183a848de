"""A real PostgreSQL server on a scratch folder, started and stopped by the caller, Unix socket only.

:class:`PostgresServer` runs Debian's server binaries (``initdb``, ``postgres``, from the
``postgresql`` package, outside PATH under ``/usr/lib/postgresql/<major>/bin``):

* ``initdb`` makes a cluster in ``<scratch>/data`` (trust authentication: the only way in is a Unix
  socket in a private folder), owned by an unprivileged user when the caller is root, because
  PostgreSQL refuses to run as root: ``postgres`` when that user exists (Debian's package makes it),
  else ``nobody``. Root can still reach the socket and read the files.
* ``postgres`` is started as a child of the caller, not through ``pg_ctl start``, which would detach
  it: its own process group (so a crash test can SIGKILL every server process at once, as a
  crashed server machine's processes die) and a parent-death signal, so a harness that dies
  never leaves a server running on a shared machine. ``listen_addresses=''``: no TCP at all. The
  durability settings are PostgreSQL's defaults (``fsync``, ``full_page_writes`` on);
  ``synchronous_commit`` is chosen per connection by the store.
* :meth:`stop` asks for a fast shutdown (SIGINT, what ``pg_ctl stop -m fast`` sends), :meth:`kill`
  SIGKILLs the whole group; :meth:`start` again on the same folder runs crash recovery from the
  WAL, as after any crash.

When the binaries are missing, :func:`find_bin_dir` raises
:class:`~aptmem.errors.ServiceUnavailable` saying how to install them; tests skip with that reason.
:func:`shared_server` is the one scratch server of a process, for stores given no server:
started on first use, stopped when the process that started it exits.
"""

from __future__ import annotations

import atexit
import ctypes
import glob
import os
import pwd
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from aptmem.errors import ServiceUnavailable

__all__ = ["PostgresServer", "PostgresService", "find_bin_dir", "shared_server", "DATABASE", "ROLE", "SERVICE"]

SERVICE = "PostgreSQL"
HOW = "install Debian's postgresql package (apt-get install postgresql), or set APTMEM_PG_BIN to its bin folder"
#: The superuser initdb makes and the database the scratch server creates for the stores.
ROLE = "aptmem"
DATABASE = "aptmem"
_BINARIES = ("initdb", "postgres")
_PR_SET_PDEATHSIG = 1


def find_bin_dir() -> Path:
    """Find the folder holding ``initdb`` and ``postgres``; raise :class:`ServiceUnavailable` if none.

    Looked for in order: ``$APTMEM_PG_BIN``; ``pg_config --bindir``; the files of Debian's installed
    ``postgresql-<major>`` packages (``dpkg -L``), newest major first; ``initdb`` on PATH.
    """
    candidates: list[Path] = []
    if os.environ.get("APTMEM_PG_BIN"):
        candidates.append(Path(os.environ["APTMEM_PG_BIN"]))
    candidates.extend(_from_pg_config())
    candidates.extend(_from_dpkg())
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(os.path.realpath(on_path)).parent)
    for folder in candidates:
        if all(os.access(folder / name, os.X_OK) for name in _BINARIES):
            return folder
    looked = ", ".join(str(c) for c in candidates) or "nothing found by pg_config, dpkg or PATH"
    raise ServiceUnavailable(SERVICE, f"the server binaries (initdb, postgres) were not found (looked in: {looked})", HOW)


def _from_pg_config() -> list[Path]:
    """The bin folder ``pg_config`` names (libpq-dev's pg_config names the server's folder too)."""
    try:
        out = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, timeout=10, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return [Path(out.strip())] if out.strip() else []


def _from_dpkg() -> list[Path]:
    """Bin folders of the installed ``postgresql-<major>`` packages, newest first."""
    try:
        listed = subprocess.run(["dpkg-query", "-W", "-f=${Package} ${Status}\\n", "postgresql-[0-9]*"],
                                capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    packages = [line.split()[0] for line in listed.splitlines() if line.endswith("installed") and line.split()[0][11:].isdigit()]
    folders = []
    for package in sorted(packages, key=lambda name: int(name[11:]), reverse=True):
        try:
            files = subprocess.run(["dpkg", "-L", package], capture_output=True, text=True, timeout=10).stdout.split()
        except (OSError, subprocess.SubprocessError):
            continue
        folders.extend(Path(path).parent for path in files if path.endswith("/bin/initdb"))
    return folders or [Path(p).parent for p in sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)]


def _server_user() -> pwd.struct_passwd | None:
    """The unprivileged user to run the server as when the caller is root (None: run as the caller)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise ServiceUnavailable(SERVICE, "running as root, and neither a 'postgres' nor a 'nobody' user exists to run the server as",
                             "create an unprivileged user, or run as one")


def _die_with_parent() -> None:
    """In the server's process, before exec: be sent SIGQUIT (immediate shutdown) if the caller dies.

    Runs after the switch to the server's user (the kernel clears this setting on a change of user).
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGQUIT, 0, 0, 0)


class PostgresServer:
    """One PostgreSQL cluster on a scratch folder and the server process running it."""

    def __init__(self, base: str | os.PathLike[str] | None = None, *, port: int = 5432,
                 settings: dict[str, str] | None = None, start_timeout: float = 60.0) -> None:
        self.bin_dir = find_bin_dir()
        self.user = _server_user()
        self.port = port
        self.start_timeout = start_timeout
        #: extra server settings (``-c name=value``); the durability settings stay at their defaults
        self.settings = {"shared_buffers": "32MB", "max_connections": "60", **(settings or {})}
        # The data may live anywhere the server's user can reach; the socket lives in a short path,
        # since a Unix socket's path is limited to 107 bytes.
        self.scratch = Path(tempfile.mkdtemp(prefix="aptmem-pg-", dir=base))
        self.data_dir = self.scratch / "data"
        self.socket_dir = Path(tempfile.mkdtemp(prefix="aptmem-pgs-", dir="/tmp" if os.path.isdir("/tmp") else None))
        self.log_path = self.scratch / "server.log"
        for folder in (self.scratch, self.socket_dir):
            os.chmod(folder, 0o700)
            if self.user is not None:
                os.chown(folder, self.user.pw_uid, self.user.pw_gid)
        self._process: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()

    # -- the connection string -------------------------------------------------------------------

    @property
    def conninfo(self) -> str:
        """The libpq connection string of the store database, through the Unix socket."""
        return f"host={self.socket_dir} port={self.port} user={ROLE} dbname={DATABASE}"

    @property
    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def pid(self) -> int:
        """The postmaster's process id (the leader of the server's process group)."""
        if self._process is None:
            raise RuntimeError("the server is not running")
        return self._process.pid

    # -- lifecycle -------------------------------------------------------------------------------

    def _as_server_user(self) -> dict[str, object]:
        """``subprocess`` arguments that run a command as the server's user."""
        if self.user is None:
            return {}
        return {"user": self.user.pw_uid, "group": self.user.pw_gid, "extra_groups": []}

    def start(self) -> "PostgresServer":
        """Make the cluster if needed, start the server and wait until it accepts connections."""
        if self.running:
            return self
        if not (self.data_dir / "PG_VERSION").exists():
            self._initdb()
        with open(self.log_path, "ab") as log:
            if self.user is not None:
                os.chown(self.log_path, self.user.pw_uid, self.user.pw_gid)
            command = [str(self.bin_dir / "postgres"), "-D", str(self.data_dir), "-p", str(self.port),
                       "-k", str(self.socket_dir), "-c", "listen_addresses="]
            for name, value in self.settings.items():
                command += ["-c", f"{name}={value}"]
            self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                             cwd=self.scratch, start_new_session=True, preexec_fn=_die_with_parent,
                                             **self._as_server_user())  # type: ignore[call-overload]
        self._wait_ready()
        return self

    def _initdb(self) -> None:
        """Run initdb on the data folder (as the server's user), then create the store database."""
        command = [str(self.bin_dir / "initdb"), "-D", str(self.data_dir), f"--username={ROLE}", "--auth=trust",
                   "--encoding=UTF8", "--locale=C"]
        done = subprocess.run(command, capture_output=True, text=True, cwd=self.scratch, timeout=self.start_timeout,
                              **self._as_server_user())  # type: ignore[call-overload]
        if done.returncode != 0:
            raise ServiceUnavailable(SERVICE, f"initdb failed in {self.data_dir}: {done.stderr.strip()[-500:]}",
                                     "the server's user must be able to reach and write the scratch folder")

    def _wait_ready(self) -> None:
        """Poll until the server accepts a connection; create the store database the first time."""
        import psycopg

        deadline = time.monotonic() + self.start_timeout
        while True:
            if self._process is not None and self._process.poll() is not None:
                raise ServiceUnavailable(SERVICE, f"the server exited with code {self._process.returncode}: {self._log_tail()}")
            try:
                with psycopg.connect(host=str(self.socket_dir), port=self.port, user=ROLE, dbname="postgres",
                                     autocommit=True, connect_timeout=5) as conn:
                    if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (DATABASE,)).fetchone() is None:
                        conn.execute(f"CREATE DATABASE {DATABASE}")
                return
            except psycopg.OperationalError as exc:
                if time.monotonic() > deadline:
                    self.kill()
                    raise ServiceUnavailable(SERVICE, f"the server did not accept connections within {self.start_timeout:g}s: "
                                                      f"{exc}; {self._log_tail()}") from None
                time.sleep(0.05)

    def _log_tail(self) -> str:
        try:
            return "server log: " + self.log_path.read_text(errors="replace").strip()[-800:]
        except OSError:
            return "no server log"

    def stop(self, timeout: float = 30.0) -> None:
        """Shut the server down fast (SIGINT: open transactions roll back, then a checkpoint)."""
        process = self._process
        if process is None:
            return
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.kill()
        self._process = None

    def kill(self) -> None:
        """SIGKILL every process of the server at once, as a crash would; the files stay as they are."""
        process = self._process
        if process is None:
            return
        # Every backend calls setsid() when the postmaster forks it, so the postmaster's process
        # group is not the server: its children are found by their parent and killed one by one.
        # (A backend left alive answers the next query before it notices its postmaster died.)
        children = _children_of(process.pid)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for child in children:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        process.wait()
        self._process = None
        # Wait until none holds the data folder (or the socket) before anyone restarts it.
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and (_group_alive(process.pid) or any(_alive(c) for c in children)):
            time.sleep(0.01)

    def remove(self) -> None:
        """Stop the server and delete its scratch and socket folders."""
        self.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)
        shutil.rmtree(self.socket_dir, ignore_errors=True)

    def __enter__(self) -> "PostgresServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _children_of(pid: int) -> list[int]:
    """The ids of the processes whose parent is ``pid`` (read from /proc: the server is Linux-only)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if int(fields[1]) == pid:
            found.append(int(name))
    return found


def _alive(pid: int) -> bool:
    """Whether a process exists and is not a zombie (a zombie holds no socket and no file)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            return stat.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return False


def _group_alive(pgid: int) -> bool:
    """Whether any process of a process group still exists."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class PostgresService:
    """The service the PostgreSQL strategies declare in their YAML (``service._target_``).

    The harness starts it before it builds any of their stores and stops it after
    (:func:`experiments.core.strategy.services_started`): one scratch server whose connection
    string becomes the stores' ``conninfo``. A machine without the server's binaries raises
    :class:`~aptmem.errors.ServiceUnavailable` from :meth:`start`.
    """

    def __init__(self, **settings: str) -> None:
        #: extra server settings (``-c name=value``)
        self.settings = settings
        self.server: PostgresServer | None = None

    def start(self, scratch: Path) -> dict[str, str]:
        """Start a server under ``scratch``; return ``{"conninfo": ...}`` for the stores."""
        os.chmod(scratch, 0o755)  # the server's own user (when run as root) must reach its folder inside
        server = PostgresServer(scratch, settings=self.settings)
        try:
            server.start()
        except BaseException:
            server.remove()
            raise
        self.server = server
        return {"conninfo": server.conninfo}

    def crash(self) -> None:
        """SIGKILL every process of the server at once (a crashed machine's server); its files stay."""
        if self.server is None:
            raise RuntimeError("the PostgreSQL service was not started")
        self.server.kill()

    def restart(self) -> None:
        """Start the server again on its data folder: PostgreSQL replays its WAL, as after any crash."""
        if self.server is None:
            raise RuntimeError("the PostgreSQL service was not started")
        self.server.start()

    def stop(self) -> None:
        """Stop the server and delete its files."""
        if self.server is not None:
            self.server.remove()
            self.server = None


_shared: PostgresServer | None = None


def shared_server() -> PostgresServer:
    """The process's scratch server, started on first use (in ``$APTMEM_PG_SCRATCH`` or the temp folder).

    It is stopped and removed when the process that started it exits; a forked child that inherits
    it connects to it and leaves its lifecycle alone. The server dies with the thread that started
    it (its parent-death signal), so start it from a thread that lives as long as it is needed.
    """
    global _shared
    if _shared is not None and _shared._owner != os.getpid():
        return _shared  # a forked child uses its parent's server; the parent stops it
    if _shared is None:
        server = PostgresServer(os.environ.get("APTMEM_PG_SCRATCH") or None)
        try:
            server.start()
        except BaseException:
            server.remove()
            raise
        _shared = server
        atexit.register(_remove_if_owner, server)
    elif not _shared.running:
        _shared.start()
    return _shared


def _remove_if_owner(server: PostgresServer) -> None:
    """atexit: remove the shared server, only in the process that started it."""
    if server._owner == os.getpid():
        server.remove()
