"""Checks every held-out memory-quality generator's workload must pass (used by its own test file).

A workload plants every item type; each item is asked in three distinct wordings, the third in
another language; each answer occurs in its evidence and nowhere else; an update's later
statement is in a later session; a set has one value per session; an order's answers are in time
order in different sessions; an absent item's subject and kind are never said together, but each
is said with something else.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from aptmem.tokens import render_entry
from experiments.core.knowledge import units
from experiments.measurements.memory_quality.workload import DAY_MS, Item, Workload, WorkloadShape

__all__ = ["check_absent", "check_days", "check_items", "texts_of"]


def texts_of(workload: Workload) -> tuple[dict[str, str], str]:
    """Each entry's rendering by id, and all of them joined."""
    texts = {e.id or "": render_entry(e) for s in workload.sessions for e in s}
    return texts, "\n".join(texts.values())


def check_items(workload: Workload, shape: WorkloadShape, label: str,
                other_language: Callable[[str, str], bool]) -> dict[str, list[Item]]:
    """Assert the item checks of the module docstring (``label`` names the seed in failures); the items by type."""
    texts, everything = texts_of(workload)
    by_type: dict[str, list[Item]] = {}
    for item in workload.items:
        by_type.setdefault(item.type, []).append(item)
    assert set(by_type) == {"fact", "update", "update_before", "aggregate", "order", "absent"}, label
    for item in workload.items:
        assert len(set(item.questions)) == 3 and all(item.questions), f"{label} {item.id}"
        assert other_language(item.questions[0], item.questions[2]), f"{label} {item.id}: {item.questions}"
        if item.type == "absent":
            continue
        assert item.evidence and all(e in texts for e in item.evidence), f"{label} {item.id}"
        evidence = "\n".join(texts[e] for e in item.evidence)
        for answer in item.answers:
            assert everything.count(answer) == evidence.count(answer) > 0, f"{label} {item.id}: {answer!r}"
    for item in by_type["update"]:
        evidence = "\n".join(texts[e] for e in item.evidence)
        assert item.stale and item.stale in evidence and item.first_turn < item.turn, f"{label} {item.id}"
        assert item.first_turn // shape.turns < item.session, f"{label} {item.id}: the update is said in a later session"
    for item in by_type["aggregate"]:
        assert len(item.answers) == shape.sessions and len(item.evidence) == shape.sessions, f"{label} {item.id}"
    for item in by_type["order"]:
        first, second = (next(workload.turn_of[e] for e in item.evidence if a in texts[e]) for a in item.answers)
        assert first // shape.turns < second // shape.turns, f"{label} {item.id}: answers in time order, other sessions"
    return by_type


def check_absent(workload: Workload, label: str) -> list[Item]:
    """Assert every absent item is never said but its subject and its kind are (near misses); the absent items."""
    texts, everything = texts_of(workload)
    history = units([("history", text) for text in texts.values()])
    absent = [i for i in workload.items if i.type == "absent"]
    for item in absent:
        assert item.pattern and not item.answers and not item.evidence, f"{label} {item.id}"
        assert not any(item.subject.casefold() in u.text.casefold() and re.search(item.pattern, u.text) for u in history), \
            f"{label} {item.id}"
        assert item.subject in everything and re.search(item.pattern, everything), f"{label} {item.id}"
    return absent


def check_days(workload: Workload, shape: WorkloadShape, label: str) -> None:
    """The workload's sessions are the shape's days, linked like every generator's: unique entry ids each with a turn,
    times rising, a night between days, and every item asked later planted in an earlier day."""
    assert len(workload.sessions) == shape.sessions and all(workload.sessions), label
    ids = [e.id for s in workload.sessions for e in s]
    assert len(set(ids)) == len(ids) and set(workload.turn_of) == set(ids), label
    times = [e.ts for s in workload.sessions for e in s]
    assert times == sorted(times), f"{label}: times rise through the days"
    for day, after in zip(workload.sessions, workload.sessions[1:]):
        assert after[0].ts - day[-1].ts >= DAY_MS, f"{label}: a night between days"
    asked_later = [i for i in workload.items if i.type in ("update", "order", "aggregate")]
    assert asked_later and all(i.first_turn // shape.turns < i.session for i in asked_later), label
