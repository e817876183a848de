"""The bookkeeping every generator that draws its own kinds shares (:mod:`.oncall`, :mod:`.dataplatform`,
:mod:`.dayworld`): fresh values, (kind, subject) pairs said once, numbered items and placed statements.

Each generator's planner subclasses :class:`Planner` and adds what it plants (facts, updates, sets,
orders, absent items, distractors) in its own voice; the draws here consume the generator's random
stream in one fixed order, so a workload stays the same for a seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from experiments.measurements.memory_quality.planting import DrawnKind, PlacedStatement
from experiments.measurements.memory_quality.workload import WorkloadShape

__all__ = ["Planner"]

#: how many draws a fresh value or an unused (kind, subject) pair gets before the planner gives up
_TRIES = 300


class Planner:
    """Draws values and pairs and records the items and statements of one generator's workload.

    ``prefix`` opens every item id (``oc`` gives ``oc_000``); ``fill(template, subject, value, why=...)``
    writes a kind's template; ``name`` names the generator in the error raised when values run out.
    """

    def __init__(self, shape: WorkloadShape, rng: random.Random, *, prefix: str, name: str,
                 fill: Callable[..., str]) -> None:
        self.shape, self.rng = shape, rng
        self.turns = shape.sessions * shape.turns
        self.taken: set[tuple[str, str]] = set()  # (kind, subject) said together
        self.values: set[str] = set()
        self.said: list[PlacedStatement] = []
        self.items: list[dict[str, object]] = []
        self._prefix, self._name, self._fill = prefix, name, fill

    def _value(self, make: Callable[..., str], *args: object) -> str | None:
        """A value of ``make(rng, *args)`` that holds no other value and is held by none (None: none left)."""
        for _ in range(_TRIES):
            value = make(self.rng, *args)
            # A value inside another would let one item's answer be found in another's evidence.
            if all(value not in v and v not in value for v in self.values):
                self.values.add(value)
                return value
        return None

    def _fresh(self, make: Callable[..., str], *args: object) -> str:
        """:meth:`_value`, raising ValueError when no fresh value is left."""
        value = self._value(make, *args)
        if value is None:
            raise ValueError(f"the {self._name} generator ran out of distinct values: plant fewer items")
        return value

    def _pair(self, kinds: Sequence[DrawnKind], subject: str | None = None) -> tuple[DrawnKind, str] | None:
        """A kind of ``kinds`` and a subject (``subject`` if given) not yet planted together (None: none found)."""
        for _ in range(_TRIES):
            kind = self.rng.choice(kinds)
            candidate = subject or kind.subject(self.rng)
            if (kind.name, candidate) not in self.taken:
                self.taken.add((kind.name, candidate))
                return kind, candidate
        return None

    def _add(self, **fields: object) -> str:
        """Record an item; its id."""
        ident = f"{self._prefix}_{len(self.items):03d}"
        self.items.append({"id": ident, **fields})
        return ident

    def _say(self, turn: int, carrier: str, fmt: str, text: str, *items: str) -> None:
        """Place ``text`` in ``turn``, as evidence of ``items``."""
        self.said.append(PlacedStatement(turn, carrier, fmt, text, items))

    def _voice(self) -> tuple[str, str]:
        """A carrier and format for a remark: the user's message, or the agent's reply."""
        return ("user", "chat") if self.rng.random() < 0.5 else ("assistant", "prose")

    def _turn(self, low: int = 0, high: int | None = None) -> int:
        """A turn drawn in [low, high), the whole run by default."""
        return self.rng.randrange(low, self.turns if high is None else high)

    def _state(self, kind: DrawnKind, subject: str, value: str, turn: int, *items: str, why: str = "") -> None:
        """Say ``value`` of ``subject`` in one of ``kind``'s templates, as evidence of ``items``."""
        carrier, fmt, template = self.rng.choice(kind.said)
        self._say(turn, carrier, fmt, self._fill(template, subject, value, why=why), *items)

    def _plant_update(self, kind: DrawnKind, subject: str) -> None:
        """An update of ``subject``'s ``kind``: the old value said in any day but the last, the new one in a later day
        in passing (one of ``kind.update``), and the two items that ask for the current and the previous value."""
        old, new = self._fresh(kind.value, subject), self._fresh(kind.value, subject)
        first = self._turn(0, self.turns - self.shape.turns)
        later = self._turn((first // self.shape.turns + 1) * self.shape.turns)
        current = self._add(type="update", kind=kind, subject=subject, answers=(new,), stale=old, ask=kind.ask)
        before = self._add(type="update_before", kind=kind, subject=subject, answers=(old,), ask=kind.ask_before)
        self._state(kind, subject, old, first, current, before)
        self._say(later, *self._voice(), self._fill(self.rng.choice(kind.update), subject, new, old), current, before)

    def _aggregate(self, spec: tuple, topic: str) -> None:
        """A set of one value per session, all about ``topic``: ``spec`` is its kind, how a member is drawn, how a
        member is said ((carrier, format, template) with ``{t}`` and ``{v}``) and the question's wordings (``{t}``)."""
        kind, make, said, questions = spec
        values = tuple(self._fresh(make) for _ in range(self.shape.sessions))
        ident = self._add(type="aggregate", kind=kind, subject=topic, answers=values,
                          questions=tuple(q.replace("{t}", topic) for q in questions))
        for session, value in enumerate(values):
            carrier, fmt, template = self.rng.choice(said)
            turn = self._turn(session * self.shape.turns, (session + 1) * self.shape.turns)
            self._say(turn, carrier, fmt, template.replace("{t}", topic).replace("{v}", value), ident)
