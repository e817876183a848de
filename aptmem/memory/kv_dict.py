"""``kv_dict``: compaction plus structured facts in the working dict.

Every entry a compaction takes out of the context (and the old live context when a session is
continued) is read for facts (:mod:`aptmem.memory.facts`). Each fact is a record in the sidecar's
working dict under ``aptmem.facts``: its statement, its value, its subject and anchors, and the
time it became valid. A later fact of the same slot (:func:`~aptmem.memory.facts.same_slot`)
with another value supersedes it: the record takes the new value and keeps the old one, with the
time it stopped being valid, as ``before``. The summary itself (by default the salient
summarizer without its Facts section) keeps requests, to-dos, decisions and errors.

The records are rendered where the system message goes, under the day each became valid, as
many as fit ``share`` of the window: ``recent_share`` of that for the newest, the rest for the
most salient. The store is bounded too: past ``max_records`` the least salient are forgotten.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Callable, Sequence
from datetime import datetime, timezone

import msgspec

from aptmem.compaction.salient import SalientSummarizer
from aptmem.compaction.summarizer import Summarizer
from aptmem.entries import Entry
from aptmem.errors import MemoryStrategyError
from aptmem.memory.base import RESERVED_PREFIX, Carry, check_carry, render_working
from aptmem.memory.lexical import Ranker
from aptmem.memory.facts import (FORM_PENALTY, Fact, facts_of_entry, family, form, same_slot, tokens, update_target,
                                 word_frequency)
from aptmem.memory.snippets import unclocked
from aptmem.working_memory import SessionMeta, WorkingMemory

__all__ = ["FACTS_KEY", "FactRecord", "KeyValueMemory", "merge_facts"]

#: The working-dict key the records live under.
FACTS_KEY = RESERVED_PREFIX + "facts"
#: What a record gains once it was updated: the agent must not fall back on the value it replaced.
_UPDATED_BONUS = 1.0
#: What a record loses per doubling of the times its value changed, past the first: a slot whose value flips again and
#: again (a log line's caller, a sheet's rolling row, a pod name) is output that moves, not a setting someone changed.
_CHURN_PENALTY = 1.5
#: Old values a record keeps (the newest): one is what an update is asked about; more only cost room.
_KEPT_BEFORE = 2
#: No record renders in fewer tokens than this: below it the render stops looking.
_MIN_LINE_TOKENS = 12


class Superseded(msgspec.Struct, kw_only=True):
    """A value a record held before it was updated, and when that was valid."""

    value: str
    since: int
    until: int


class FactRecord(msgspec.Struct, kw_only=True):
    """One slot of the agent's facts: the current value, when it became valid, what it replaced."""

    value: str
    shape: str
    text: str
    subject: list[str]
    anchors: list[str]
    salience: float
    since: int
    #: the key that binds the value (a setting's key, a flag, a column), if a structure names one
    attribute: str = ""
    #: how many statements repeated it (a value the history keeps saying is no news)
    seen: int = 1
    before: list[Superseded] = []
    #: how many times its value changed (``before`` keeps only the last few of them)
    changed: int = 0
    #: the last change was said as one ("moved to", "from X to Y", "now"): a new value in a sheet's row is not
    announced: bool = False

    def as_fact(self) -> Fact:
        """The record as a :class:`Fact`, to compare slots."""
        return Fact(value=self.value, shape=self.shape, text=self.text, subject=tuple(self.subject),
                    anchors=tuple(self.anchors), salience=self.salience, ts=self.since, attribute=self.attribute)

    @property
    def weight(self) -> float:
        """Salience, less for a value said over and over, more for a value that changed once (a stale one misleads),
        less for one that keeps changing (churn)."""
        changed = max(self.changed, len(self.before))
        if changed == 1:
            churn = _UPDATED_BONUS if self.announced else 0.0
        else:
            churn = -_CHURN_PENALTY * math.log2(changed) if changed else 0.0
        return self.salience - 0.75 * math.log2(self.seen) + churn


def _record(fact: Fact) -> FactRecord:
    return FactRecord(value=fact.value, shape=fact.shape, text=unclocked(fact), subject=list(fact.subject),
                      anchors=list(fact.anchors), salience=fact.salience, since=fact.ts, attribute=fact.attribute)


def merge_facts(records: list[FactRecord], facts: Sequence[Fact], max_records: int) -> list[FactRecord]:
    """Fold ``facts`` (oldest first) into ``records``: updates supersede, repeats are counted."""
    by_value = {record.value: record for record in records}
    by_slot: dict[tuple[str, tuple[str, ...]], list[FactRecord]] = {}
    for record in records:
        by_slot.setdefault((family(record.shape), tuple(record.subject)), []).append(record)
    frequency = None
    for fact in facts:
        match = by_value.get(fact.value)
        if match is not None:  # said again (maybe in other words): no news
            match.seen += 1
            continue
        slot = by_slot.setdefault((family(fact.shape), fact.subject), [])
        match = next((r for r in slot if same_slot(r.as_fact(), fact)), None)
        if match is None and fact.update:
            if frequency is None:
                frequency = word_frequency([*(r.as_fact() for r in records), *facts])
            shaped = [r for r in records if family(r.shape) == family(fact.shape)]
            target = update_target(fact, [r.as_fact() for r in shaped], frequency)
            match = shaped[target] if target is not None else None
        if match is None:
            record = _record(fact)
            records.append(record)
            slot.append(record)
            by_value[record.value] = record
            continue
        by_value.pop(match.value, None)
        by_value[fact.value] = match
        match.changed = max(match.changed, len(match.before)) + 1
        match.announced = fact.update or bool(fact.replaces)
        match.before = [*match.before, Superseded(value=match.value, since=match.since, until=fact.ts)][-_KEPT_BEFORE:]
        match.value, match.text, match.since = fact.value, unclocked(fact), fact.ts
        match.salience = max(match.salience, fact.salience)
        match.anchors = sorted(set(match.anchors) | set(fact.anchors))
    if len(records) > max_records:
        keep = sorted(records, key=lambda r: (r.weight, r.since), reverse=True)[:max_records]
        kept = {id(r) for r in keep}
        records = [r for r in records if id(r) in kept]
    return records


@functools.lru_cache(maxsize=4096)
def _day(ts: int) -> str:
    return datetime.fromtimestamp(ts / 1000, tz=timezone.utc).strftime("%Y-%m-%d")


def _line(record: FactRecord) -> str:
    """A record's line: its statement, and for an update the value it replaced (its end day only when not the line's)."""
    line = f"- {record.text}"
    if record.before:
        old = record.before[-1]
        if old.value not in record.text:  # a statement that names its old value ("from X to Y") says it already
            until = _day(old.until)
            line += f" (was {old.value})" if until == _day(record.since) else f" (was {old.value} until {until})"
    return line


#: Shapes whose value is the whole statement (:mod:`aptmem.memory.stances`).
_STATEMENT_SHAPES = frozenset({"preference", "decision"})


def _weights(records: Sequence[FactRecord]) -> list[float]:
    """Each record's weight, less the more records of the store were said in its form (:func:`~aptmem.memory.facts.form`).

    A word the store knows as a thing's name (a record's subject) varies from row to row of one template ("Re #12
    (api): can you look?", "Re #31 (web): ..."): it is no part of a form."""
    names = frozenset(word for r in records for name in r.subject for word in tokens(name))
    said = [form(r.shape, r.text, r.value, names) for r in records]
    forms = Counter(said)
    # A preference or a decision is its statement: one said in the words of another is still its own (as in
    # facts_of_entry's bulk rule), not a template a tool keeps printing.
    return [r.weight - (0.0 if r.shape in _STATEMENT_SHAPES else FORM_PENALTY * math.log2(forms[f]))
            for r, f in zip(records, said, strict=True)]


def render_records(records: Sequence[FactRecord], budget: int, count: Callable[[str], int], recent_share: float,
                   matched: Sequence[int] = ()) -> list[str]:
    """The lines of the records that fit ``budget`` tokens, grouped under the day each became valid.

    ``matched`` (the few records that best match the current turn or a question) go first, then ``recent_share`` to the newest records (of the more salient half),
    the rest to the most salient, so what the turn is about is shown, a fact just learned is
    shown, and an old one is not pushed out by a mere newer one.
    """
    chosen: dict[int, str] = {}
    shown: set[str] = set()
    days: set[str] = set()  # the day headings already paid for: each is rendered once, above its records
    left = budget

    def take(order: Sequence[int], limit: int) -> None:
        nonlocal left
        spent = 0
        for index in order:
            if left < _MIN_LINE_TOKENS or spent >= limit:
                return
            if index in chosen:
                continue
            line = _line(records[index])
            if line in shown:
                continue  # two values of one statement: its line once is enough

            day = _day(records[index].since)
            cost = count(line) + 1 + (0 if day in days else count(day) + 2)
            if cost > left:
                continue
            left -= cost
            spent += cost
            chosen[index] = line
            shown.add(line)
            days.add(day)

    indexes = range(len(records))
    take(matched, budget)
    weight = _weights(records)
    # The newest first, among the more salient half: a fresh line of noise is no reason to show it.
    weights = sorted(weight)
    floor = weights[len(weights) // 2] if weights else 0.0
    fresh = [i for i in indexes if weight[i] >= floor]
    take(sorted(fresh, key=lambda i: records[i].since, reverse=True), int(budget * recent_share))
    take(sorted(indexes, key=lambda i: (weight[i], records[i].since), reverse=True), budget)
    lines: list[str] = []
    day = ""
    for index in sorted(chosen, key=lambda i: (records[i].since, i)):
        if _day(records[index].since) != day:
            day = _day(records[index].since)
            lines.append(f"{day}:")
        lines.append(chosen[index])
    return lines


class KeyValueMemory:
    """Compaction plus structured facts in the working dict, rendered in the context."""

    name = "kv_dict"
    compacts = True

    def __init__(self, summarizer: Summarizer | None = None, *, share: float = 0.2, recent_share: float = 0.3,
                 query_records: int = 6, max_records: int = 2000, carry: Carry = "summary") -> None:
        if not 0 < share < 1 or not 0 <= recent_share <= 1 or query_records < 0 or max_records < 1:
            raise ValueError("share must be in (0, 1), recent_share in [0, 1], query_records at least 0 and max_records at least 1")
        self.recent_share = recent_share
        self.query_records = query_records
        self._index: tuple[tuple[str, ...], Ranker] | None = None
        self.summarizer = summarizer or SalientSummarizer(facts=False)
        self.share = share
        self.max_records = max_records
        self.carry = check_carry(carry)

    def _matching(self, records: Sequence[FactRecord], query: str) -> list[int]:
        """The ``query_records`` records that best match ``query`` by BM25 (the index is kept until the records change)."""
        if not query or not self.query_records:
            return []
        texts = tuple(" ".join([r.text, *r.subject, *(old.value for old in r.before)]) for r in records)
        if self._index is None or self._index[0] != texts:
            if self._index is not None:
                self._index[1].close()
            self._index = (texts, Ranker(texts))
        return self._index[1].rank(query, limit=self.query_records)

    def shown(self, view: Sequence[Entry], appended: Entry | None) -> list[Entry] | None:
        """Keep the view as it is."""
        return None

    def remember(self, summarized: Sequence[Entry], summary: str, memory: WorkingMemory | None,
                 *, count: Callable[[str], int]) -> None:
        """Fold the facts of the ``summarized`` entries into the sidecar's records."""
        if memory is None:
            raise MemoryStrategyError(f"{self.name} keeps its facts in the working dict: the session needs a WorkingMemory")
        facts = [fact for order, entry in enumerate(summarized) for fact in facts_of_entry(entry, order)]
        if not facts:
            return

        def fold(meta: SessionMeta) -> None:
            records = msgspec.convert(meta.working.get(FACTS_KEY, []), list[FactRecord])
            records = merge_facts(records, facts, self.max_records)
            meta.working[FACTS_KEY] = msgspec.to_builtins(records)

        memory.update(fold)

    def system_text(self, meta: SessionMeta | None, *, query: str, window: int, count: Callable[[str], int]) -> str:
        """The working memory, then the records that fit ``share`` of the window, oldest first: those matching
        ``query`` (the current turn or a question) first, then the newest, then the most salient."""
        base = render_working(meta)
        records = msgspec.convert(meta.working.get(FACTS_KEY, []), list[FactRecord]) if meta is not None else []
        if not records:
            return base
        head = "Known facts, under the day each became true (an update names the value it replaced, as \"was\"):"
        budget = int(window * self.share) - count(head) - (count(base) if base else 0)
        lines = render_records(records, budget, count, self.recent_share, self._matching(records, query))
        return "\n\n".join(part for part in (base, "\n".join([head, *lines]) if lines else "") if part)
