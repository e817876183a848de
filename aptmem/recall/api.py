"""``recall(question, k=..., budget=...)``: what the index finds, as text that fits a token budget.

The packet holds the best hits that fit, laid out in the order they happened (see
:func:`in_time_order`), each headed by its rank and evidence (level, session, entry, score) and
followed by its text. A hit whose text costs more than a sixteenth of the budget is shown as an
*excerpt* of at most a quarter of it (so that many hits fit): the lines (and pieces of long lines)
that hold the question's terms, most terms first, in their order in the record, each excerpt line
marked with ``…`` and headed by what it belongs to (:mod:`aptmem.recall.headings`: a YAML line by
its keys, a diff line by its file); of the rows of one form that hold the same terms only the
first is shown. A hit with no such line is shortened (with a visible marker); a text already
shown is not shown again. Hits that no longer fit at all are left out. Tokens are counted with the
``medium`` tier (script-aware, no tokenizer needed), which is what a caller would budget with.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import msgspec

from aptmem.errors import NotASessionError
from aptmem.recall.abstain import abstain
from aptmem.recall.analyze import query_tokens
from aptmem.recall.engines import DEFAULT_ENGINE
from aptmem.recall.headings import JOIN, headings, shape
from aptmem.recall.index import COMMIT_SECONDS, RecallIndex, file_token
from aptmem.recall.records import Hit
from aptmem.recall.schema import INDEX_NAME, previous_settings, remove_index
from aptmem.tokens import Estimator, get_estimator

__all__ = ["RecallResult", "excerpt", "in_time_order", "open_index", "pack", "recall"]

_CUT = " [...]"
#: A hit is not shown at all when fewer tokens than this are left for its text.
MIN_TEXT_TOKENS = 16
#: A hit's text is excerpted to at most this share of the packet's budget ...
HIT_SHARE = 0.25
#: ... when it costs more than this share: the lines that answer, not a whole chunk, so more hits fit.
WHOLE_SHARE = 0.0625
#: Long lines are cut into pieces of about this many characters before excerpting.
PIECE_CHARS = 240
_BREAK = re.compile(r"[\s,，。;；]")
_MARK = "… "


#: The parent of a flattened JSON line's path (``items[8]`` of ``items[8].ticket: PLAT-1``).
_PARENT = re.compile(r"^([^\s:]+)[.\[][^.\[\s:]*\]?: ")


def _pieces(text: str) -> list[tuple[str, str]]:
    """(heading, piece) for the lines of ``text``, a long line cut (at a space or punctuation) into pieces of about :data:`PIECE_CHARS`.

    A line's heading (:func:`aptmem.recall.headings.headings`: the diff's file, the TOML section,
    the YAML keys above it, the table's header) is shown before it, joined by ``›``, so an excerpt
    line still names its thing. Consecutive flattened JSON lines of one parent object
    (``items[8].component: x``, ``items[8].ticket: y``) are one piece, joined by ``; ``: a record's
    fields answer together.
    """
    out: list[tuple[str, str]] = []
    parent = None
    lines = text.splitlines()
    for line, heading in zip(lines, headings(lines), strict=True):
        line = line.strip()
        match = _PARENT.match(line)
        if match and match.group(1) == parent and len(out[-1][1]) + len(line) < 2 * PIECE_CHARS:
            out[-1] = (out[-1][0], out[-1][1] + "; " + line)
            continue
        parent = match.group(1) if match else None
        while len(line) > PIECE_CHARS:
            cut = max((m.end() for m in _BREAK.finditer(line, PIECE_CHARS // 2, PIECE_CHARS)), default=PIECE_CHARS)
            out.append((heading, line[:cut].strip()))
            line = line[cut:].strip()
            parent = None
        if line:
            out.append((heading, line))
    return out


def excerpt(text: str, terms: Sequence[str], tokens: int, estimator: Estimator) -> str:
    """The pieces of ``text`` holding the most of ``terms`` (lowercase), in text order, within ``tokens``; "" if none does.

    A term matches as a substring of the lowercased piece or its heading (so a stem matches its
    inflections: ``endpoint`` in ``endpoints``); terms shorter than 2 characters are ignored. Of
    the pieces of one :func:`~aptmem.recall.headings.shape` that hold the same terms (with their
    heading), only the first is shown (the rows of one listing that all name the subject say it once; the
    lines of one YAML block differ in form).
    """
    pieces = _pieces(text)
    wanted = [t for t in terms if len(t) >= 2]
    scored = []
    said: set[tuple[frozenset[str], str]] = set()
    for position, (heading, piece) in enumerate(pieces):
        low = f"{heading}\n{piece}".lower()
        held = frozenset(t for t in wanted if t in low)
        if not held:
            continue
        row = (held, shape(piece))
        if row in said:
            continue
        said.add(row)
        scored.append((-len(held), position))
    shown = [_MARK + (f"{h}{JOIN}{p}" if h else p) for h, p in pieces]
    chosen: list[int] = []
    left = tokens
    for _, position in sorted(scored):
        cost = estimator.count(shown[position]) + 1
        if cost <= left:
            chosen.append(position)
            left -= cost
    return "\n".join(shown[p] for p in sorted(chosen))


class RecallResult(msgspec.Struct, kw_only=True):
    """The answer of :func:`recall`: the hits shown (best first; the text lays them out in time order), the packet text and its token count."""

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
    terms = query_tokens(question)
    share = max(MIN_TEXT_TOKENS, int(budget * HIT_SHARE))
    whole = max(MIN_TEXT_TOKENS, int(budget * WHOLE_SHARE))
    said: set[str] = set()  # texts shown: the same text again (a tool call's arguments, repeated) says nothing new
    head = f"Recalled for: {question}"
    parts = [head]
    used = estimator.count(head)
    shown: list[Hit] = []
    for n, hit in enumerate(hits, start=1):
        header = _header(n, hit)
        room = budget - used - estimator.count(header) - 2  # two line breaks
        if room < MIN_TEXT_TOKENS:
            break
        block = ""
        while room >= MIN_TEXT_TOKENS:
            text = hit.text
            if estimator.count(text) > min(room, whole):  # longer than a few lines: the lines that answer
                text = excerpt(text, terms, min(room, share), estimator) or _shorten(text, min(room, share), estimator)
            block = f"{header}\n{text}" if text else ""
            # Token counts of joined texts are not exactly the sum of their parts: check the whole.
            over = estimator.count("\n".join([*parts, block])) - budget if block else 0
            if over <= 0:
                break
            room -= over + 1
            block = ""
        if not block:
            break
        if text in said:
            continue
        said.add(text)
        parts.append(block)
        used = estimator.count("\n".join(parts))
        shown.append(hit)
    blocks = dict(zip(map(id, shown), parts[1:]))
    while shown:  # laid out in time order; joins count a little differently, so check the whole again
        text = "\n".join([head, *(blocks[id(h)] for h in in_time_order(shown))])
        if estimator.count(text) <= budget:
            break
        shown.pop()  # the lowest ranked
    else:
        text = ""
    return RecallResult(question=question, hits=shown, text=text, tokens=estimator.count(text) if text else 0, budget=budget)


def in_time_order(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` as they happened: records without a time first (session records), then by time, then as indexed.

    The packet is read like a history: a value set later follows the one it replaced, and steps
    come in the order they were taken, whatever their scores. On the memory-quality benchmark
    (planted, l3_keyword, 8k and 128k), laid out best first, 36% of the update questions were
    not answerable although both values were in the packet: the stale value came after the
    current one.
    """
    return sorted(hits, key=lambda h: (h.ts is not None, h.ts or 0, h.doc_id))


def open_index(root: str | os.PathLike[str], *, engines: Sequence[str] = (DEFAULT_ENGINE,), facts: bool | None = None,
               fresh: bool = False, commit_seconds: float = COMMIT_SECONDS) -> RecallIndex:
    """The recall index of a folder of JSONL sessions (change tokens from the log files).

    ``commit_seconds``: see :class:`RecallIndex`.
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
    return RecallIndex(store, root, engines=engines, facts=facts, change_token=lambda sid: file_token(store.path(sid)),
                       commit_seconds=commit_seconds)


def recall(question: str, *, root: str | os.PathLike[str] | None = None, index: RecallIndex | None = None, k: int = 5,
           budget: int = 1024, level: str = "all", l3: str = "chunks", engine: str | None = None,
           refresh: bool = True, min_coverage: float = 0.0) -> RecallResult:
    """Find what the sessions know about ``question``; return it as text within ``budget`` tokens.

    Give ``index`` (an open :class:`RecallIndex`), or ``root`` (a folder of JSONL sessions, whose
    index is opened and closed here). ``refresh`` catches the index up first (cheap when nothing
    changed: one ``stat`` per log and sidecar). ``level``: ``l2``, ``l3`` or ``all``; ``l3``:
    ``chunks``, ``facts`` or ``both``; ``engine``: a registry name (default ``fts``);
    ``min_coverage`` > 0 returns nothing when the best hits cover less of the question's terms
    (:func:`aptmem.recall.abstain.abstain`).
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
    return pack(question, abstain(question, hits, min_coverage), budget)
