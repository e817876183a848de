"""``recall(question, k=..., budget=...)``: what the index finds, as text that fits a token budget.

The packet lists the hits best first, each headed by its evidence (level, session, entry, score)
and followed by its text; a hit's text is shortened (with a visible marker) when the budget would
not hold it whole, and hits that no longer fit at all are left out. Tokens are counted with the
``medium`` tier (script-aware, no tokenizer needed), which is what a caller would budget with.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import msgspec

from aptmem.errors import NotASessionError
from aptmem.recall.engines import DEFAULT_ENGINE
from aptmem.recall.index import RecallIndex, file_token
from aptmem.recall.records import Hit
from aptmem.recall.schema import INDEX_NAME, previous_settings, remove_index
from aptmem.tokens import Estimator, get_estimator

__all__ = ["RecallResult", "open_index", "pack", "recall"]

_CUT = " [...]"
#: A hit is not shown at all when fewer tokens than this are left for its text.
MIN_TEXT_TOKENS = 16


class RecallResult(msgspec.Struct, kw_only=True):
    """The answer of :func:`recall`: the hits shown, the packet text and its token count."""

    question: str
    hits: list[Hit]
    text: str
    tokens: int
    budget: int


def _header(n: int, hit: Hit) -> str:
    return f"[{n}] {hit.level} {hit.kind} session {hit.session_id} entry {hit.entry_id} score {hit.score:.4g}"


def _shorten(text: str, tokens: int, estimator: Estimator) -> str:
    """``text`` cut (at a line or word end when possible) to at most ``tokens`` tokens."""
    if estimator.count(text) <= tokens:
        return text
    low, high = 0, len(text)
    while low < high:  # the longest prefix that fits, by bisection on characters
        mid = (low + high + 1) // 2
        if estimator.count(text[:mid] + _CUT) <= tokens:
            low = mid
        else:
            high = mid - 1
    cut = text[:low]
    space = max(cut.rfind("\n"), cut.rfind(" "))
    if space > low // 2:
        cut = cut[:space]
    return cut + _CUT if cut else ""


def pack(question: str, hits: Sequence[Hit], budget: int, estimator: Estimator | None = None) -> RecallResult:
    """Lay ``hits`` out as one text of at most ``budget`` tokens (see the module docstring)."""
    estimator = estimator or get_estimator("medium")
    head = f"Recalled for: {question}"
    parts = [head]
    used = estimator.count(head)
    shown: list[Hit] = []
    for n, hit in enumerate(hits, start=1):
        header = _header(n, hit)
        room = budget - used - estimator.count(header) - 2  # two line breaks
        if room < MIN_TEXT_TOKENS:
            break
        text = _shorten(hit.text, room, estimator)
        if not text:
            break
        block = f"{header}\n{text}"
        parts.append(block)
        used += estimator.count(block) + 1
        shown.append(hit)
    text = "\n".join(parts) if shown else ""
    return RecallResult(question=question, hits=shown, text=text, tokens=estimator.count(text) if text else 0, budget=budget)


def open_index(root: str | os.PathLike[str], *, engines: Sequence[str] = (DEFAULT_ENGINE,), facts: bool | None = None,
               fresh: bool = False) -> RecallIndex:
    """The recall index of a folder of JSONL sessions (change tokens from the log files).

    ``fresh`` deletes the index file first (even a damaged one) and everything is indexed anew,
    with the engines and fact setting it had (when they can still be read) besides those asked for.
    """
    from aptmem.jsonl_store import JsonlStore

    if not os.path.isdir(root):  # the store would create it: a typo must not make an empty root
        raise NotASessionError(str(root), "not a folder of sessions")
    if fresh:
        path = Path(root) / INDEX_NAME
        kept_engines, kept_facts = previous_settings(path)
        engines = (*engines, *kept_engines)
        facts = kept_facts if facts is None else facts
        remove_index(path)
    store = JsonlStore(root)
    return RecallIndex(store, root, engines=engines, facts=facts, change_token=lambda sid: file_token(store.path(sid)))


def recall(question: str, *, root: str | os.PathLike[str] | None = None, index: RecallIndex | None = None, k: int = 5,
           budget: int = 1024, level: str = "all", l3: str = "chunks", engine: str | None = None,
           refresh: bool = True) -> RecallResult:
    """Find what the sessions know about ``question``; return it as text within ``budget`` tokens.

    Give ``index`` (an open :class:`RecallIndex`), or ``root`` (a folder of JSONL sessions, whose
    index is opened and closed here). ``refresh`` catches the index up first (cheap when nothing
    changed: one ``stat`` per log and sidecar). ``level``: ``l2``, ``l3`` or ``all``; ``l3``:
    ``chunks``, ``facts`` or ``both``; ``engine``: a registry name (default ``fts``).
    """
    if (root is None) == (index is None):
        raise ValueError("give exactly one of root and index")
    own = index is None
    if index is None:
        index = open_index(root, engines=(engine or DEFAULT_ENGINE,))  # type: ignore[arg-type]
    try:
        if refresh:
            index.refresh()
        hits = index.search(question, k=k, level=level, l3=l3, engine=engine)
    finally:
        if own:
            index.close()
            index.store.close()
    return pack(question, hits, budget)
