"""A deterministic extractive summarizer: no model, only what an agent needs to go on.

It keeps, under a token budget: the user's requests, decisions taken, file paths, errors,
sentences that state facts with distinctive values (keys, paths, ports, dates, numbers), and
open to-dos, in English and Chinese. Items from the previous summary are candidates again, so
facts survive repeated compactions until the budget pushes them out. When the budget is short,
lower-priority items go first, older before newer within a priority.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from aptmem.entries import Assistant, Compaction, Entry, ToolCall, ToolResult, User

__all__ = ["ExtractiveSummarizer", "HEADER", "PATH", "SECTIONS", "classify_sentence", "clip", "memoized", "parse_summary",
           "render_summary"]

#: Section titles, in the order they are printed, with their priority (lower is kept first).
#: Facts rank above requests: a request is usually restated or done, while a key, a path or a
#: port said once is needed again much later and nowhere else to be found.
SECTIONS: dict[str, int] = {
    "Open to-dos": 0,
    "Facts": 1,
    "User requests": 2,
    "Decisions": 3,
    "Errors": 4,
    "Files": 5,
}
HEADER = "Summary of the conversation so far"

# A sentence ends at . ! ? followed by white space or the end (so "src/x.py:490" and "v8.15"
# stay whole), at CJK full stops, or at a line end.
_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|[.!?](?=\S))+(?:[.!?]+(?=\s|$)|[。！？]+|$)", re.MULTILINE)
# Lines of tool output that carry numbers but state nothing: grep hits and log stamps.
_NOT_A_FACT = re.compile(r"^\S*:\d+:|^\d{4}-\d{2}-\d{2}T|^\[?\d{2}:\d{2}:\d{2}")
_WORD = re.compile(r"[A-Za-z]{2,}")
_HAN = re.compile(r"[\u4e00-\u9fff]")
PATH = re.compile(r"(?<![\w@:/])(?:/[\w.@+-]+){2,}|(?<![\w/])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b")
_DISTINCT = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b[a-z]{1,6}_[0-9a-f]{8,}\b|\b\d{3,}\b|(?:/[\w.@+-]+){2,}|\b[0-9a-f]{12,}\b"
)
_STATES = re.compile(r"\b(?:is|are|was|=|equals|set to|lives|at)\b|[:：]|是|为|在", re.IGNORECASE)
_DECISION = re.compile(
    r"\b(?:decided|decide|we will|we'll|i will|i'll|let's|going to|chose|choose|switch(?:ed)? to|instead of|plan is)\b"
    r"|决定|计划|采用|改为|改成|我们将|我会",
    re.IGNORECASE,
)
_TODO = re.compile(r"\bTODO\b|\bnext step|\bstill need|\bneed to\b|\bremaining\b|\bnot yet\b|待办|下一步|还需要|尚未", re.IGNORECASE)
_ERROR = re.compile(r"\b(?:error|exception|traceback|failed|failure|panic|denied|refused)\b|错误|失败|异常", re.IGNORECASE)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class _Item:
    section: str
    text: str
    order: int  # position in the history: previous-summary items first (negative), then entries


def clip(text: str, limit: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _sentences(text: str) -> Iterator[str]:
    for match in _SENTENCE.finditer(text):
        sentence = match.group(0).strip()
        if sentence:
            yield sentence


class ExtractiveSummarizer:
    """Pick the sentences an agent needs from the old entries, within a token budget."""

    name = "extractive"

    def __init__(self, *, max_item_chars: int = 240, max_files: int = 40, max_items_per_entry: int = 4,
                 scan_chars: int = 16_000) -> None:
        self.max_item_chars = max_item_chars
        self.max_files = max_files
        # A summary holds a few hundred lines at most: taking every sentence of a 100 KB tool
        # output as a candidate only costs time. The first few per entry, from its first
        # ``scan_chars`` characters (and as many from its end), are plenty.
        self.max_items_per_entry = max_items_per_entry
        self.scan_chars = scan_chars
        self._counted: dict[tuple[int, str], int] = {}

    def summarize(self, entries: Sequence[Entry], *, previous: str | None, budget: int, count: Callable[[str], int]) -> str:
        """Return a sectioned summary of ``entries`` and ``previous`` that fits ``budget`` tokens."""
        items = list(self._from_previous(previous)) + list(self._from_entries(entries))
        items = _dedupe(items)
        return _fit(items, budget, self._memo(count), len(entries))

    def _memo(self, count: Callable[[str], int]) -> Callable[[str], int]:
        """``count`` remembering item costs: the previous summary's items come back every time."""
        return memoized(count, self._counted)

    # -- extraction ------------------------------------------------------------------------------

    def _from_previous(self, previous: str | None) -> Iterator[_Item]:
        """Turn the bullet lines of an earlier summary back into candidates."""
        if not previous:
            return
        for offset, (section, text) in enumerate(parse_summary(previous)):
            yield _Item(section, text, -1_000_000 + 1 + offset)

    def _from_entries(self, entries: Sequence[Entry]) -> Iterator[_Item]:
        files: dict[str, int] = {}
        for order, entry in enumerate(entries):
            text = _text_of(entry)
            if not text:
                continue
            if len(text) > 2 * self.scan_chars:
                text = text[: self.scan_chars] + "\n" + text[-self.scan_chars :]
            for path in PATH.findall(text):
                files[path] = order
            if isinstance(entry, User):
                yield _Item("User requests", clip(text, self.max_item_chars), order)
            found = 0
            for sentence in _sentences(text):
                if found == self.max_items_per_entry:
                    break
                if len(sentence) < 8:
                    continue
                section = classify_sentence(sentence, entry)
                if section is not None:
                    found += 1
                    yield _Item(section, clip(sentence, self.max_item_chars), order)
        newest = sorted(files.items(), key=lambda kv: kv[1])[-self.max_files :]
        for path, order in newest:
            yield _Item("Files", path, order)


def memoized(count: Callable[[str], int], cache: dict[tuple[int, str], int]) -> Callable[[str], int]:
    """``count`` remembering what it counted in ``cache`` (cleared past 50,000 texts)."""
    if len(cache) > 50_000:
        cache.clear()
    key = id(count)

    def counted(text: str) -> int:
        n = cache.get((key, text))
        if n is None:
            n = cache[(key, text)] = count(text)
        return n

    return counted


def parse_summary(summary: str) -> list[tuple[str, str]]:
    """The (section, text) of every bullet line of a summary this module (or one like it) wrote.

    Bullets before any known section title count as Facts.
    """
    section = "Facts"
    items: list[tuple[str, str]] = []
    for line in summary.splitlines():
        stripped = line.strip()
        if stripped.endswith(":") and stripped[:-1] in SECTIONS:
            section = stripped[:-1]
        elif stripped.startswith("- "):
            items.append((section, stripped[2:]))
    return items


def classify_sentence(sentence: str, entry: Entry, *, facts: bool = True) -> str | None:
    """The section a sentence belongs in, or None if it is not worth keeping (``facts=False``: never Facts)."""
    if _TODO.search(sentence):
        return "Open to-dos"
    if facts and _DISTINCT.search(sentence) and _STATES.search(sentence) and _reads_as_prose(sentence):
        return "Facts"
    if isinstance(entry, Assistant) and _DECISION.search(sentence):
        return "Decisions"
    if _ERROR.search(sentence) and (isinstance(entry, ToolResult) or len(sentence) < 200):
        return "Errors"
    return None


def _text_of(entry: Entry) -> str:
    """The text of an entry worth summarizing (tool arguments are mostly paths and commands)."""
    if isinstance(entry, (User, Assistant)):
        return entry.content
    if isinstance(entry, ToolResult):
        return entry.content
    if isinstance(entry, ToolCall):
        args = " ".join(str(v) for v in entry.args.values() if isinstance(v, (str, int, float)))
        return f"{entry.name} {args} {entry.result or ''}".strip()
    if isinstance(entry, Compaction):
        return ""  # an earlier summary arrives as ``previous``
    return ""


def _reads_as_prose(sentence: str) -> bool:
    """Whether a 'sentence' says something in words, rather than being code, JSON, a grep hit or a log line."""
    if _NOT_A_FACT.match(sentence):
        return False
    symbols = sum(sentence.count(c) for c in "{}[]();=<>\"")
    if symbols > max(4, len(sentence) // 12):
        return False
    return len(_WORD.findall(sentence)) >= 4 or len(_HAN.findall(sentence)) >= 4


def _dedupe(items: list[_Item]) -> list[_Item]:
    """Drop repeats (same text), keeping the newest occurrence's position."""
    latest: dict[str, _Item] = {}
    for item in items:
        key = item.text.casefold()
        if key not in latest or latest[key].order < item.order:
            latest[key] = item
    return list(latest.values())


def _fit(items: list[_Item], budget: int, count: Callable[[str], int], n_entries: int) -> str:
    """Choose items by priority (newest first within one) until the budget is spent; render."""
    header = f"{HEADER} ({n_entries} entries summarized):"
    used = count(header) + 2
    chosen: list[_Item] = []
    ranked = sorted(items, key=lambda it: (SECTIONS[it.section], -it.order))
    seen_sections: set[str] = set()
    for item in ranked:
        cost = count(f"- {item.text}") + 1 + (0 if item.section in seen_sections else count(item.section) + 2)
        if used + cost > budget:
            continue
        used += cost
        chosen.append(item)
        seen_sections.add(item.section)
    text = _render(header, chosen)
    # The per-line costs are an estimate of the joined text's cost; make sure it really fits.
    while chosen and count(text) > budget:
        chosen.remove(max(chosen, key=lambda it: (SECTIONS[it.section], -it.order)))
        text = _render(header, chosen)
    return text


def _render(header: str, chosen: list[_Item]) -> str:
    return render_summary(header, [(it.section, it.text, it.order) for it in chosen])


def render_summary(header: str, chosen: Sequence[tuple[str, str, int]]) -> str:
    """The summary text: ``header``, then each section's (section, text, order) items, oldest first."""
    lines = [header]
    for section in SECTIONS:
        part = sorted((it for it in chosen if it[0] == section), key=lambda it: it[2])
        if part:
            lines.append(f"{section}:")
            lines.extend(f"- {text}" for _, text, _ in part)
    return "\n".join(lines)
