"""The postgres strategy and its server: real servers, real processes, real SIGKILLs.

Skipped, with the reason, where PostgreSQL's server binaries are missing. Each test that kills a
server starts its own; the rest share the process's scratch server.
"""

from __future__ import annotations

import os
import random
import signal
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_samples import compaction, entries_of, session_id, user
from store_writer_child import check_writers, go, run_writers, spawn, writer_entry

from aptmem.errors import CorruptLogError, ServiceUnavailable, StorageError
from strategies import postgres_server
from strategies.postgres import LINK_NAME, PostgresStore
from strategies.postgres_server import PostgresServer, find_bin_dir, shared_server

SID = "0e5d1c2b-7a6f-4e3d-9c8b-1a2b3c4d5e6f"

try:
    find_bin_dir()
except ServiceUnavailable as exc:
    pytest.skip(str(exc), allow_module_level=True)


@pytest.fixture(scope="module")
def _killable() -> Iterator[PostgresServer]:
    """One server of this module's own, apart from the shared one, so tests may kill it."""
    with PostgresServer() as running:
        yield running


@pytest.fixture
def server(_killable: PostgresServer) -> PostgresServer:
    """The module's killable server, running (a test before may have killed it); roots keep tests apart."""
    return _killable.start()


def test_missing_binaries_are_a_clear_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With no binaries anywhere, the error names PostgreSQL, where it looked and how to install it."""
    monkeypatch.setenv("APTMEM_PG_BIN", str(tmp_path / "nowhere"))
    monkeypatch.setattr(postgres_server, "_from_pg_config", lambda: [])
    monkeypatch.setattr(postgres_server, "_from_dpkg", lambda: [])
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ServiceUnavailable, match=r"PostgreSQL is not available: the server binaries .*nowhere.*apt-get install postgresql") as caught:
        find_bin_dir()
    assert caught.value.service == "PostgreSQL"


def test_server_is_unix_socket_only_and_unprivileged(server: PostgresServer) -> None:
    """No TCP listener; as root, the server runs as an unprivileged user and its files are that user's."""
    import psycopg

    with psycopg.connect(server.conninfo) as conn:
        assert conn.execute("SHOW listen_addresses").fetchone() == ("",)
        assert conn.execute("SHOW fsync").fetchone() == ("on",)
    owner = os.stat(server.data_dir).st_uid
    with open(f"/proc/{server.pid}/status") as status:
        uid = int(next(line for line in status if line.startswith("Uid:")).split()[1])
    assert uid == owner
    if os.geteuid() == 0:
        assert uid != 0


def test_synchronous_commit_is_set_per_connection(tmp_path: Path) -> None:
    """Each variant's connection runs with its own synchronous_commit, on one shared server."""
    for setting in ("on", "off"):
        store = PostgresStore(tmp_path / setting, synchronous_commit=setting)
        try:
            assert store._run(lambda conn: conn.execute("SHOW synchronous_commit").fetchone()[0]) == setting
            assert store.capabilities.durability == ("per_append" if setting == "on" else "batch")
        finally:
            store.close()


def test_roots_are_isolated_and_reopen_finds_the_same_sessions(tmp_path: Path) -> None:
    """Two roots on one server see only their own sessions; a new store on a root sees its sessions."""
    rng = random.Random(1601)
    sid = session_id(rng)
    first, second = PostgresStore(tmp_path / "a"), PostgresStore(tmp_path / "b")
    try:
        first.append(sid, user(0))
        assert second.sessions() == []
        assert not second.exists(sid)
    finally:
        first.close()
        second.close()
    again = PostgresStore(tmp_path / "a")
    try:
        assert entries_of(again, sid) == [user(0)]
        assert again.schema == first.schema != second.schema
        assert oct(os.stat(tmp_path / "a" / LINK_NAME).st_mode & 0o777) == "0o600"
    finally:
        again.close()


def test_a_tampered_root_link_is_refused(tmp_path: Path) -> None:
    """A link naming a schema this store never makes is damage, not SQL to run."""
    root = tmp_path / "root"
    root.mkdir()
    (root / LINK_NAME).write_text('{"schema": "public; DROP TABLE x"}')
    with pytest.raises(CorruptLogError, match="not a schema this store makes"):
        PostgresStore(root)


def test_concurrent_processes_lose_nothing(tmp_path: Path) -> None:
    """Four processes append 50 entries each to one session at once: all 200 there, each writer in order."""
    conninfo = shared_server().conninfo
    sid = session_id(random.Random(1602))
    run_writers("postgres_sync_on", tmp_path / "root", sid, 4, 50, conninfo=conninfo)
    store = PostgresStore(tmp_path / "root", conninfo=conninfo)
    try:
        got = entries_of(store, sid)
    finally:
        store.close()
    check_writers(got, 4, 50)


def _kill_mid_append(strategy: str, root: Path, conninfo: str, kill, acks_before: int = 60):  # type: ignore[no-untyped-def]
    """Start a writer, let it acknowledge ``acks_before`` appends, call ``kill()``; return (acked, sid)."""
    sid = session_id(random.Random(1603))
    child = spawn(strategy, root, sid, 0, 100_000, conninfo=conninfo)
    go(child)
    assert child.stdout is not None
    acked = 0
    while acked < acks_before:
        line = child.stdout.readline()
        assert line.startswith("ack "), line
        acked = int(line.split()[1])
    kill(child)
    for line in child.stdout:  # acks the child printed before the kill reached it
        if line.startswith("ack "):
            acked = int(line.split()[1])
    child.wait(30)
    return acked, sid


def _judge(got: list, acked: int, *, lossless: bool) -> None:  # type: ignore[type-arg]
    """What survived is a prefix of what the writer appended, in order, at most one entry past its acks."""
    assert got == [writer_entry(0, n) for n in range(len(got))], "entries invented, altered or out of order"
    assert len(got) <= acked + 1, f"{len(got)} entries but only {acked} acknowledged (+1 in flight)"
    if lossless:
        assert len(got) >= acked, f"acknowledged {acked}, only {len(got)} survived"


@pytest.mark.parametrize("setting", ["on", "off"])
def test_client_killed_mid_append_loses_nothing_acknowledged(setting: str, server: PostgresServer, tmp_path: Path) -> None:
    """SIGKILL of the writing client: the server has every acknowledged append, in both settings."""
    acked, sid = _kill_mid_append(f"postgres_sync_{setting}", tmp_path / "root", server.conninfo, lambda child: child.send_signal(signal.SIGKILL))
    store = PostgresStore(tmp_path / "root", conninfo=server.conninfo)
    try:
        _judge(entries_of(store, sid), acked, lossless=True)
        assert store.recover(sid).loadable
    finally:
        store.close()


@pytest.mark.parametrize("setting", ["on", "off"])
def test_server_killed_mid_append_keeps_the_promise(setting: str, server: PostgresServer, tmp_path: Path) -> None:
    """SIGKILL of every server process mid-append, then a restart (crash recovery from the WAL).

    ``synchronous_commit=on`` promises every acknowledged append; ``off`` only that what survives is
    a clean prefix (the last acknowledged commits may be gone). The writer sees its append fail.
    """
    log_start = server.log_path.stat().st_size

    def kill_server(child) -> None:  # type: ignore[no-untyped-def]
        server.kill()

    acked, sid = _kill_mid_append(f"postgres_sync_{setting}", tmp_path / "root", server.conninfo, kill_server)
    server.start()
    store = PostgresStore(tmp_path / "root", conninfo=server.conninfo, synchronous_commit=setting)
    try:
        got = entries_of(store, sid)
        _judge(got, acked, lossless=setting == "on")
        assert store.recover(sid).loadable
        store.append(sid, user(10**6))  # the store goes on writing after the restart
        assert entries_of(store, sid)[-1] == user(10**6)
    finally:
        store.close()
    assert "not properly shut down; automatic recovery in progress" in server.log_path.read_bytes()[log_start:].decode()


def test_store_reconnects_after_a_server_restart(server: PostgresServer, tmp_path: Path) -> None:
    """An append while the server is down fails (not acknowledged); after the restart the same store goes on."""
    sid = session_id(random.Random(1604))
    store = PostgresStore(tmp_path / "root", conninfo=server.conninfo)
    try:
        store.append_many(sid, [user(0), compaction(1, "e0")])
        server.kill()
        with pytest.raises((StorageError, ServiceUnavailable)):
            store.append(sid, user(2))
        server.start()
        deadline = time.monotonic() + 30
        while True:
            try:
                store.append(sid, user(3))
                break
            except (StorageError, ServiceUnavailable):
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert entries_of(store, sid) == [user(0), compaction(1, "e0"), user(3)]
        assert store.read_live(sid) == [compaction(1, "e0"), user(0), user(3)]
    finally:
        store.close()


def test_close_flushes_asynchronous_commits(server: PostgresServer, tmp_path: Path) -> None:
    """Under synchronous_commit=off, close() waits for the WAL: a server kill right after loses nothing.

    (Without the flush, a kill right after 200 appends lost the last 6-7 of them in three trials.)
    """
    sid = session_id(random.Random(1605))
    store = PostgresStore(tmp_path / "root", conninfo=server.conninfo, synchronous_commit="off")
    entries = [user(n) for n in range(200)]
    for entry in entries:
        store.append(sid, entry)
    store.close()
    server.kill()
    server.start()
    again = PostgresStore(tmp_path / "root", conninfo=server.conninfo)
    try:
        assert entries_of(again, sid) == entries
    finally:
        again.close()


@pytest.mark.skipif(os.geteuid() != 0, reason="run as a normal user already: every other test here covers it")
def test_a_normal_user_starts_its_own_server(tmp_path: Path) -> None:
    """As root, fork a child that drops to an unprivileged user (the interpreter already loaded, so no
    file under root's home is needed), then starts a server as itself and stores a session in it."""
    import pwd

    account = pwd.getpwnam("nobody")
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(reader)
            os.setgroups([])
            os.setgid(account.pw_gid)
            os.setuid(account.pw_uid)
            with PostgresServer("/tmp") as own:
                assert own.user is None  # not root: the server runs as the caller
                store = PostgresStore(tempfile.mkdtemp(dir="/tmp"), conninfo=own.conninfo)
                store.append_many(SID, [user(0), user(1)])
                got = entries_of(store, SID)
                store.close()
                os.write(writer, f"{os.getuid()} {len(got)} {got == [user(0), user(1)]}".encode())
            code = 0
        except BaseException as exc:  # noqa: BLE001 - reported through the pipe
            os.write(writer, f"error {type(exc).__name__}: {exc}".encode())
        finally:
            os._exit(code)
    os.close(writer)
    with os.fdopen(reader) as pipe:
        said = pipe.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, said
    assert said == f"{account.pw_uid} 2 True"


def test_a_root_opened_on_another_server_is_refused(server: PostgresServer, tmp_path: Path) -> None:
    """A root made on one server, opened on another: refused with the reason, not shown empty."""
    root = tmp_path / "root"
    PostgresStore(root, conninfo=server.conninfo).close()
    with pytest.raises(ServiceUnavailable, match="does not hold"):
        PostgresStore(root, conninfo=shared_server().conninfo)
