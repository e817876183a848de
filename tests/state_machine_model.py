"""The in-memory model of one session for the state-machine tests, and the entries they append.

:class:`Model` knows what was acknowledged and what the store's promise says a crash may take:

* ``acked``: the history as acknowledged so far (what every read must return);
* ``lineage``: the histories a power loss may fall back to, newest last. A rewrite under a
  promise that survives power loss (``per_append``, ``batch``) is durable, so the lineage is just
  the current history; under ``process`` and ``none`` the older histories stay possible;
* ``floor``: how many leading entries a power loss must keep, by the promise: all of them for
  ``per_append``; for ``batch``, everything once the store closed, rewrote or recovered (each
  syncs), and all but the last ``batch_size - 1`` once the current writer has appended a whole
  batch (so it has synced since it opened: the store syncs at ``batch_size`` entries, or sooner
  on time, and a sync makes the whole file durable).
"""

from __future__ import annotations

from hypothesis import strategies as st

from aptmem.entries import Assistant, Compaction, CompactionMarker, Entry, Metadata, ToolCall, ToolResult, User, decode_line

__all__ = ["EntryMaker", "Model", "entry_specs"]

KINDS = ("user", "assistant", "tool_call", "tool_result", "metadata", "unknown")
_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=24)


def entry_specs() -> st.SearchStrategy[tuple[str, str, str]]:
    """What an entry is drawn from: its kind, a text, and how it gets its id (own, none, reused)."""
    return st.tuples(st.sampled_from(KINDS), _TEXT, st.sampled_from(["own", "own", "none", "reused"]))


class EntryMaker:
    """Builds entries from specs; a counter makes every timestamp (and so every line) unique."""

    def __init__(self) -> None:
        self.n = 0

    def entry(self, spec: tuple[str, str, str]) -> Entry:
        """One entry of the spec's kind, text and id rule."""
        kind, text, id_rule = spec
        self.n += 1
        n = self.n
        ts = 1_717_000_000_000 + n
        ident = {"own": f"e{n}", "none": None, "reused": f"e{max(1, n // 3)}"}[id_rule]
        if kind == "user":
            return User(ts=ts, id=ident, content=text)
        if kind == "assistant":
            return Assistant(ts=ts, id=ident, content=text, model="m", usage={"input": n})
        if kind == "tool_call":
            return ToolCall(ts=ts, id=ident, name="read", args={"path": text, "n": n, "nested": [text, {"k": None}]})
        if kind == "tool_result":
            return ToolResult(ts=ts, id=ident, call_id=f"e{n - 1}", content=text, is_error=n % 5 == 0)
        if kind == "metadata":
            return Metadata(ts=ts, id=ident, kind="note", data={"text": text})
        import msgspec

        raw = msgspec.json.encode({"type": "future_kind", "id": ident, "ts": ts, "x": [text, n]})
        return decode_line(raw)

    def compaction(self, history: list[Entry], pick: int, named: str, legacy: bool) -> Compaction:
        """A compaction whose ``first_kept`` names an entry of ``history``, nothing, or a missing id."""
        self.n += 1
        ids = [e.id for e in history if e.id is not None]
        first_kept = None
        if named == "kept" and ids:
            first_kept = ids[pick % len(ids)]
        elif named == "missing":
            first_kept = "no-such-id"
        kind = CompactionMarker if legacy else Compaction
        return kind(ts=1_717_000_000_000 + self.n, id=f"c{self.n}", summary=f"up to {self.n}", first_kept=first_kept)


class Model:
    """What was acknowledged, and what a crash may take under the store's promise."""

    def __init__(self, durability: str, batch_size: int) -> None:
        self.durability = durability
        self.batch = batch_size
        self.lineage: list[list[Entry]] = [[]]
        self.floor = 0
        self.writer_appended = 0  # entries appended since the store's writer opened (batch)
        self.exists = False
        #: acknowledged entries lost to crashes the promise allows (counted, not judged)
        self.lost = 0

    @property
    def acked(self) -> list[Entry]:
        """The current acknowledged history."""
        return self.lineage[-1]

    @property
    def survives_power_loss(self) -> bool:
        return self.durability in ("per_append", "batch")

    def acknowledged(self, entries: list[Entry]) -> None:
        """``entries`` were appended and acknowledged."""
        if not entries:
            return
        self.exists = True
        self.acked.extend(entries)
        if self.durability == "per_append":
            self.floor = len(self.acked)
        elif self.durability == "batch":
            self.writer_appended += len(entries)
            if self.writer_appended >= self.batch:
                self.floor = max(self.floor, len(self.acked) - (self.batch - 1))

    def rewritten(self, history: list[Entry]) -> None:
        """The history was replaced (a compaction's rewrite, or starting over)."""
        self.exists = True
        if self.survives_power_loss:
            self.lineage = [list(history)]
            self.floor = len(history)
        else:
            self.lineage.append(list(history))
        self.writer_appended = 0

    def closed(self) -> None:
        """The store was closed: its writer, if it appended since it opened, syncs (``batch``).

        A store that never appended has no writer to sync: entries a crashed writer left unsynced
        stay unsynced, so the floor does not move.
        """
        if self.durability == "batch" and self.writer_appended:
            self.floor = len(self.acked)
        self.writer_appended = 0

    def recovered(self) -> None:
        """The session was recovered: the writer is released first, as on close."""
        self.closed()

    def judge_crash(self, kind: str, got: list[Entry] | None, inflight: Entry | None, seed: int, exists: bool) -> None:
        """Check what a new store reads after a crash of ``kind``; make it the acknowledged state."""
        where = f"crash={kind} seed={seed} durability={self.durability} floor={self.floor} acked={len(self.acked)}"
        power = kind not in ("process", "torn_append")
        if got is None:
            assert self.durability == "none", f"{where}: the session is not loadable"
            self.lost += len(self.acked)
            return
        fits = [c for c in self.lineage if got == c[: len(got)]]
        whole_inflight = inflight is not None and got == [*self.acked, inflight]
        assert fits or whole_inflight, f"{where}: read {got!r}\nwhich is no prefix of an acknowledged history: invented or altered entries"
        if not power and self.durability != "none":
            assert got[: len(self.acked)] == self.acked, f"{where}: a process crash lost acknowledged entries: read {len(got)}"
        if power and self.survives_power_loss:
            assert got[: self.floor] == self.acked[: self.floor] and len(got) >= self.floor, \
                f"{where}: a power loss lost acknowledged-durable entries: read {len(got)} of {self.floor}"
        self.lost += max(0, max((len(c) for c in fits), default=len(self.acked)) - len(got))
        if power:
            self.lineage = [list(got)]  # after a reboot, what is on the disk is all there is
        else:
            # A killed process synced nothing: the histories a power loss could still fall back to stay.
            self.lineage[-1] = list(got)
        self.exists = exists
        self.floor = len(got) if power else min(self.floor, len(got))  # after a reboot, the disk is durable
        self.writer_appended = 0

