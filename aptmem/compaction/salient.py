"""An extractive summarizer that keeps the facts that matter, however they were said.

It writes the same sections as :class:`~aptmem.compaction.extractive.ExtractiveSummarizer`, and
removes each cause that made that one lose facts over repeated compactions:

* facts are found by their value (:mod:`aptmem.memory.facts`), not by a verb that "states a
  value": a port after "listens on", a Chinese name after 是, a field inside minified JSON, a
  value in a code comment or a log line all count;
* when the budget is short, the least salient facts go first (a quantity such as "2345 ms", a
  value the history repeats in many sentences, a path merely mentioned), not the oldest; a
  share of the budget (``recent_share``) goes first to the facts this compaction takes out of
  the context, so each is kept at least once;
* a repeated sentence keeps the place it was first said: it does not jump back to the front;
* items of the previous summary keep their order and their salience: being older is no reason
  to be dropped first. A Facts line this summarizer wrote comes back with the fact and the score
  it had when it was read from its entry (remembered by the line's text): read again from the
  clipped line alone it lost the user's bonus, its key, its binding or its subject (seeds 200,
  salient 8k: half of the carried lines came back with another score, by up to 4 points). A
  summary written elsewhere (another process) is read from its text;
* a fact a later statement updates (the same slot: :func:`aptmem.memory.facts.same_slot`, or an
  update cue: :func:`aptmem.memory.facts.update_target`) is replaced by it, and the update's line
  names the value it replaced, so the summary never shows a stale value as if it were current.

With ``facts=False`` the Facts section is left out: a memory strategy that keeps facts
elsewhere (``kv_dict``, in the working dict) spends the summary on the rest (facts are still
found, so an update still removes a request line that states the value it replaced).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from aptmem.compaction.extractive import (HEADER, PATH, SECTIONS, classify_sentence, clip, memoized, parse_summary,
                                          render_summary)
from aptmem.entries import Entry, User
from aptmem.memory.facts import (FORM_PENALTY, Fact, facts_of, facts_of_entry, family, form, same_slot, snippet, update_target,
                                 word_frequency)
from aptmem.memory.statements import Statement, entry_text, sentences

__all__ = ["SalientSummarizer"]

#: Scores of the items that are not facts (a fact scores its salience, about 2 to 5).
_SECTION_SCORE = {"Open to-dos": 4.2, "Decisions": 3.2, "Errors": 2.2, "Files": 1.0}
#: The newest user requests score this much, falling by ``_REQUEST_DECAY`` per older request.
_REQUEST_SCORE, _REQUEST_DECAY = 3.8, 0.35
#: The least score a fact needs to take the newest facts' share: a row of a long listing (scored below it by
#: the bulk penalty) is no fact "just said", and once in a summary it would come back at its full score.
_MIN_RECENT_SCORE = 1.0
#: A value said in n distinct sentences loses this much salience per doubling of n.
_REPEAT_PENALTY = 0.75


@dataclass
class _Item:
    section: str
    text: str
    order: int  # position in the history: previous-summary items first (negative), then entries
    score: float
    fact: Fact | None = None


class SalientSummarizer:
    """Keep, within the budget, the most salient facts, the open to-dos and the newest requests."""

    name = "salient"

    def __init__(self, *, facts: bool = True, recent_share: float = 0.25, max_item_chars: int = 240,
                 max_files: int = 20, max_items_per_entry: int = 12) -> None:
        if not 0 <= recent_share <= 1:
            raise ValueError("recent_share must be in [0, 1]")
        self.facts = facts
        self.recent_share = recent_share
        self._counted: dict[tuple[int, str], int] = {}
        self._entries: dict[tuple[str, int, str], tuple[list[str], list[tuple[str, str, float, Fact | None]]]] = {}
        #: the fact and the score (before the repeat and form penalties, which depend on the other items) of
        #: each Facts line written, by its text: a carried line keeps them
        self._carried: dict[str, tuple[float, Fact | None]] = {}
        self.max_item_chars = max_item_chars
        self.max_files = max_files
        self.max_items_per_entry = max_items_per_entry

    def summarize(self, entries: Sequence[Entry], *, previous: str | None, budget: int, count: Callable[[str], int]) -> str:
        """Return a sectioned summary of ``entries`` and ``previous`` that fits ``budget`` tokens."""
        items = [*self._from_previous(previous), *self._from_entries(entries)]
        items = _supersede(_dedupe(items))
        if not self.facts:  # found all the same: an update still removes the lines that state the stale value
            items = [it for it in items if it.section != "Facts"]
        if len(self._carried) > 50_000:
            self._carried.clear()
        self._carried.update((it.text, (it.score, it.fact)) for it in items if it.section == "Facts")
        _penalize_repeats(items)
        return _fit(items, budget, memoized(count, self._counted), len(entries), self.recent_share)

    def _from_previous(self, previous: str | None) -> Iterator[_Item]:
        if not previous:
            return
        parsed = parse_summary(previous)
        start = -len(parsed) - 1
        for offset, (section, text) in enumerate(parsed):
            order = start + offset
            if section == "Facts":
                if not self.facts:
                    continue
                carried = self._carried.get(text)
                if carried is not None:  # a line this summarizer wrote: its score and fact as they were
                    yield _Item(section, text, order, carried[0], carried[1])
                    continue
                found = facts_of(Statement(text, "summary"), by_user=False)
                fact = max(found, key=lambda f: f.salience) if found else None
                yield _Item(section, text, order, fact.salience if fact else 2.0, fact)
            elif section == "User requests":
                yield _Item(section, text, order, 0.0)  # scored by recency in _fit
            elif section in SECTIONS:
                yield _Item(section, text, order, _SECTION_SCORE.get(section, 1.0))

    def _from_entries(self, entries: Sequence[Entry]) -> Iterator[_Item]:
        files: dict[str, int] = {}
        for order, entry in enumerate(entries):
            paths, items = self._read(entry)
            for path in paths:
                files[path] = order
            for section, text, score, fact in items:
                yield _Item(section, text, order, score, fact)
        for path, order in sorted(files.items(), key=lambda kv: kv[1])[-self.max_files:]:
            yield _Item("Files", path, order, _SECTION_SCORE["Files"])

    def _read(self, entry: Entry) -> tuple[list[str], list[tuple[str, str, float, Fact | None]]]:
        """The paths and the candidate items of one entry, remembered: entries never change, and the
        same ones are read again (by a leaf summary, at a hand-over)."""
        key = (entry.id, entry.ts, type(entry).__name__) if entry.id is not None else None
        if key is not None and key in self._entries:
            return self._entries[key]
        text = entry_text(entry)
        paths: list[str] = PATH.findall(text[:32_000]) if text else []
        items: list[tuple[str, str, float, Fact | None]] = []
        if text:
            if isinstance(entry, User):
                items.append(("User requests", clip(text, self.max_item_chars), 0.0, None))
            facts = list(facts_of_entry(entry, max_facts=self.max_items_per_entry))
            fact_texts = {fact.text for fact in facts}
            items += [("Facts", snippet(fact), fact.salience, fact) for fact in facts]
            found = 0
            for sentence in sentences(text[:16_000]):
                if found == 4 or len(sentence) < 8:
                    continue
                section = classify_sentence(sentence, entry, facts=False)
                if section is not None and clip(sentence, self.max_item_chars) not in fact_texts:
                    found += 1
                    items.append((section, clip(sentence, self.max_item_chars), _SECTION_SCORE.get(section, 1.0), None))
        if key is not None:
            if len(self._entries) > 20_000:
                self._entries.clear()
            self._entries[key] = (paths, items)
        return paths, items


def _dedupe(items: list[_Item]) -> list[_Item]:
    """Drop repeats (same section and text): the first occurrence keeps its place and the best score."""
    first: dict[tuple[str, str], _Item] = {}
    for item in items:
        key = (item.section, item.text.casefold())
        kept = first.get(key)
        if kept is None:
            first[key] = item
        elif item.score > kept.score:
            kept.score, kept.fact = item.score, item.fact
    return list(first.values())


def _supersede(items: list[_Item]) -> list[_Item]:
    """Drop every fact a later fact of the same slot, with another value, updates; the later one names it."""
    slots: dict[tuple[str, tuple[str, ...]], list[_Item]] = {}
    for item in sorted((it for it in items if it.fact is not None and it.fact.subject), key=lambda it: it.order):
        slots.setdefault((family(item.fact.shape), item.fact.subject), []).append(item)  # type: ignore[union-attr]
    stale: set[int] = set()
    replaced: list[tuple[str, str, int]] = []  # (stale value, the value that replaced it, when the update was said)
    for facts in slots.values():  # only facts of one shape and subject can be one slot
        for index, newer in enumerate(facts):
            for older in facts[:index]:
                if id(older) in stale or older.fact.value == newer.fact.value:  # type: ignore[union-attr]
                    continue
                if same_slot(older.fact, newer.fact):  # type: ignore[arg-type]
                    stale.add(id(older))
                    replaced.append((older.fact.value, newer.fact.value, newer.order))  # type: ignore[union-attr]
                    _name_before(newer, older)
    # A statement that says its value changed updates the older fact it is most like, in whatever words.
    facts = sorted((it for it in items if it.fact is not None and id(it) not in stale), key=lambda it: it.order)
    frequency = word_frequency(it.fact for it in facts)  # type: ignore[misc]
    for index, newer in enumerate(facts):
        if newer.fact.update:  # type: ignore[union-attr]
            older = [it for it in facts[:index] if id(it) not in stale]
            target = update_target(newer.fact, [it.fact for it in older], frequency)  # type: ignore[arg-type, misc]
            if target is not None:
                stale.add(id(older[target]))
                replaced.append((older[target].fact.value, newer.fact.value, newer.order))  # type: ignore[union-attr]
                _name_before(newer, older[target])
    # An update that names the value it replaces ("it was 39823, it is 30647") replaces it whether or not
    # the fact it updates is among these items (it may have left for the working dict, or the summary).
    replaced += [(it.fact.replaces, it.fact.value, it.order) for it in items if it.fact is not None and it.fact.replaces]
    # A line of another section said before the update (a request that stated it) would still show the stale
    # value; so would the update's own request clipped before the new value ("it was 39823,…").
    for item in items:
        if item.fact is None and any(value in item.text and (item.order < order or new not in item.text)
                                     for value, new, order in replaced):
            stale.add(id(item))
    return [it for it in items if id(it) not in stale]


def _name_before(newer: _Item, older: _Item) -> None:
    """Say in the update's line which value it replaced, so the previous value is not lost."""
    value = older.fact.value  # type: ignore[union-attr]
    if value not in newer.text:
        newer.text = f"{newer.text} (before: {value})"


def _penalize_repeats(items: list[_Item]) -> None:
    """A value stated in many distinct sentences is an entity the session keeps touching, not news; a
    form many facts are said in (:func:`~aptmem.memory.facts.form`) is output the tools keep printing."""
    texts = Counter(it.fact.value for it in items if it.fact is not None)
    forms = Counter(form(it.fact.shape, it.text, it.fact.value) for it in items if it.fact is not None)
    for item in items:
        if item.fact is not None and texts[item.fact.value] > 1:
            item.score -= _REPEAT_PENALTY * math.log2(texts[item.fact.value])
        if item.fact is not None:
            item.score -= FORM_PENALTY * math.log2(forms[form(item.fact.shape, item.text, item.fact.value)])


def _fit(items: list[_Item], budget: int, count: Callable[[str], int], n_entries: int, recent_share: float) -> str:
    """Choose items by score until the budget is spent (``recent_share`` of it first for the newest); render."""
    requests = sorted((it for it in items if it.section == "User requests"), key=lambda it: -it.order)
    for rank, item in enumerate(requests):
        item.score = _REQUEST_SCORE - _REQUEST_DECAY * rank
    header = f"{HEADER} ({n_entries} entries summarized):"
    used = count(header) + 2
    chosen: list[_Item] = []
    taken: set[int] = set()
    seen_sections: set[str] = set()

    def take(candidates: list[_Item], limit: int) -> None:
        nonlocal used
        spent = 0
        for item in sorted(candidates, key=lambda it: (-it.score, -it.order)):
            cost = count(f"- {item.text}") + 1 + (0 if item.section in seen_sections else count(item.section) + 2)
            if id(item) in taken or used + cost > budget or spent + cost > limit:
                continue
            used += cost
            spent += cost
            chosen.append(item)
            taken.add(id(item))
            seen_sections.add(item.section)

    # What this compaction takes out of the context gets a share first: a fact just said is kept
    # at least once; the rest goes by score, old and new alike.
    take([it for it in items if it.order >= 0 and it.section == "Facts" and it.score >= _MIN_RECENT_SCORE], int(budget * recent_share))
    take(items, budget)
    text = render_summary(header, [(it.section, it.text, it.order) for it in chosen])
    while chosen and count(text) > budget:  # the per-line costs are an estimate: make sure it fits
        chosen.remove(min(chosen, key=lambda it: (it.score, it.order)))
        text = render_summary(header, [(it.section, it.text, it.order) for it in chosen])
    return text
