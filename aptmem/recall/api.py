"""``recall(question, k=..., budget=...)``: what the index finds, as text that fits a token budget.

The packet holds the best hits that fit, laid out in the order they happened (see
:func:`in_time_order`): a ``session <id>`` line before each run of one session's hits, then each
hit headed by its rank and evidence (level, kind, entry, score) and followed by its text. (The
session id stands once per run rather than in every header: a UUID costs about 28 tokens, and
with ten hits the headers took 430 of the 1,024 tokens.) A hit whose text costs more than a
sixteenth of the budget is shown as an *excerpt* of at most a quarter of it: the lines (and
pieces of long lines) that hold the question's terms, the most (by length) first, in their order
in the record, each excerpt line marked with ``…`` and headed by what it belongs to
(:mod:`aptmem.recall.headings`: a YAML line by its keys, a diff line by its file; the line that
opens a block is not shown apart from the line after it, which names it); of the rows of one form
that hold the same terms only the first is shown. A hit with no such line is shortened (with a
visible marker). Lines are taken in rounds (every hit's best line, best ranked first, then every
hit's second, ...), so the budget first reaches as many hits as fit; a text or excerpt line
already shown is not shown again. Tokens are counted with the ``medium`` tier (script-aware, no
tokenizer needed), which is what a caller would budget with.
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
from aptmem.recall.answer_type import asked_types, holds_type
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


#: How many pieces before or after an excerpt line a line holding the asked value may be (see :func:`_ranked_pieces`).
VALUE_REACH = 3


def _value_near(pieces: Sequence[tuple[str, str]], position: int, types: tuple[str, ...]) -> int | None:
    """The position of the piece nearest ``position`` (within :data:`VALUE_REACH`, the earlier of two as near)
    that holds a value of one of ``types``; None when the piece itself holds one, or none near does."""
    if not types or holds_type(types, pieces[position][1]):
        return None
    for distance in range(1, VALUE_REACH + 1):
        for near in (position - distance, position + distance):
            if 0 <= near < len(pieces) and holds_type(types, pieces[near][1]):
                return near
    return None


def _ranked_pieces(text: str, terms: Sequence[str], types: tuple[str, ...] = ()) -> list[tuple[int, str]]:
    """(position, shown line) of the pieces of ``text`` that hold any of ``terms``, most terms first, then in text order.

    A term matches as a substring of the lowercased piece or its heading (so a stem matches its
    inflections: ``endpoint`` in ``endpoints``); terms shorter than 2 characters are ignored. Of
    the pieces of one :func:`~aptmem.recall.headings.shape` that hold the same terms (with their
    heading), only the first is kept (the rows of one listing that all name the subject say it
    once; the lines of one YAML block differ in form). A shown line is the piece after its
    heading, marked with ``…``.

    ``types`` (the answer types the question asks for, :func:`~aptmem.recall.answer_type.asked_types`):
    a line that holds the question's terms but no value of those types is shown with the nearest
    line that holds one (within :data:`VALUE_REACH` pieces), in text order: a statement often puts
    its value on a line of its own, a commit's hash above its message, a key's value below the key
    that names it (memory-quality independent workload, seeds 200-201 at 8k: 12 questions whose evidence
    was shown, its message line without the commit line above it).
    """
    pieces = _pieces(text)
    wanted = [t for t in terms if len(t) >= 2]
    scored = []
    said: set[tuple[frozenset[str], str]] = set()
    for position, (heading, piece) in enumerate(pieces):
        if position + 1 < len(pieces) and pieces[position + 1][0].rsplit(JOIN, 1)[-1] == piece:
            continue  # it opens a block: the next line shows it as its heading, and holds every term it does
        low = f"{heading}\n{piece}".lower()
        held = frozenset(t for t in wanted if t in low)
        if not held:
            continue
        row = (held, shape(piece))
        if row in said:
            continue
        said.add(row)
        # Terms weigh by their length, a cheap stand-in for specificity (as in abstain.coverage): a
        # line naming the subject goes before a listing's header that holds one relation word.
        shown = _MARK + (f"{heading}{JOIN}{piece}" if heading else piece)
        near = _value_near(pieces, position, types)
        if near is not None:
            value = _MARK + pieces[near][1]
            shown = f"{value}\n{shown}" if near < position else f"{shown}\n{value}"
        scored.append((-sum(map(len, held)), position, shown))
    return [(position, line) for _, position, line in sorted(scored)]


def excerpt(text: str, terms: Sequence[str], tokens: int, estimator: Estimator) -> str:
    """The pieces of ``text`` holding the most of ``terms`` (lowercase), in text order, within ``tokens``; "" if none does.

    Which pieces, and how they are shown: :func:`_ranked_pieces`; the best are taken while they fit.
    """
    chosen: list[tuple[int, str]] = []
    left = tokens
    for position, line in _ranked_pieces(text, terms):
        cost = estimator.count(line) + 1
        if cost <= left:
            chosen.append((position, line))
            left -= cost
    return "\n".join(line for _, line in sorted(chosen))


#: What a line says without its packet mark, its heading, a list / quote marker or spacing.
_MARKER = re.compile(r"^(?:[-*>+•]\s*|\d{1,3}[.)]\s+)+")
_SPACE = re.compile(r"\s+")
#: A repeated statement is recognised inside a longer line from this many characters on (a short
#: line, ``ok`` or a bare name, says too little to drop another line for).
MIN_REPEAT_CHARS = 24


def statement(line: str) -> str:
    """``line`` as what it states, for finding the same statement in two records: lowercased, spacing
    collapsed, without the packet's excerpt mark, its heading, and leading list or quote markers."""
    text = line[len(_MARK):] if line.startswith(_MARK) else line
    text = text.rsplit(JOIN, 1)[-1]
    return _SPACE.sub(" ", _MARKER.sub("", text.strip())).lower()


def _unsaid(text: str, sources: set[str]) -> str:
    """The lines of ``text`` (a summary record's candidate) that state none of ``sources`` and hold none of them."""
    return "\n".join(part for part in text.splitlines() if part.strip() and not (
        (key := statement(part)) in sources or any(len(src) >= MIN_REPEAT_CHARS and src in key for src in sources)))


class RecallResult(msgspec.Struct, kw_only=True):
    """The answer of :func:`recall`: the hits shown (best first; the text lays them out in time order), the packet text and its token count."""

    question: str
    hits: list[Hit]
    text: str
    tokens: int
    budget: int


def _header(n: int, hit: Hit) -> str:
    return f"[{n}] {hit.level} {hit.kind} entry {hit.entry_id} score {hit.score:.4g}"


def _session_line(session_id: str) -> str:
    return f"session {session_id}"


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


class _Block:
    """One hit as the packet shows it: its rank, the pieces it may show (best first) and the ones taken."""

    def __init__(self, rank: int, hit: Hit, candidates: list[tuple[int, str]]) -> None:
        self.rank, self.hit, self.candidates = rank, hit, candidates
        self.taken: list[tuple[int, str]] = []
        self.tokens = 0  # of the pieces taken

    def lines(self) -> list[str]:
        return [_header(self.rank, self.hit), *(line for _, line in sorted(self.taken))]


def _layout(head: str, blocks: Sequence[_Block]) -> str:
    """The packet's text: ``head``, then the blocks in time order, a session line before each run of one session's."""
    by_hit = {id(b.hit): b for b in blocks}
    lines = [head]
    session = None
    for hit in in_time_order([b.hit for b in blocks]):
        if hit.session_id != session:
            session = hit.session_id
            lines.append(_session_line(session))
        lines.extend(by_hit[id(hit)].lines())
    return "\n".join(lines)


def pack(question: str, hits: Sequence[Hit], budget: int, estimator: Estimator | None = None) -> RecallResult:
    """Lay ``hits`` out as one text of at most ``budget`` tokens (see the module docstring).

    Pieces are taken in rounds: first the best piece of every hit, best ranked first, then each
    hit's second best, and so on, each hit up to its share of the budget: the evidence a packet
    can hold is first spread over as many hits as fit (the fact asked is often in the fifth or
    tenth hit, and one line of it answers), then deepened.
    """
    estimator = estimator or get_estimator("medium")
    terms = query_tokens(question)
    types = asked_types(question)
    share = max(MIN_TEXT_TOKENS, int(budget * HIT_SHARE))
    whole = max(MIN_TEXT_TOKENS, int(budget * WHOLE_SHARE))
    head = f"Recalled for: {question}"
    used = estimator.count(head)
    blocks: list[_Block] = []
    texts: set[str] = set()  # a text shown again (a tool call's arguments, repeated) says nothing new
    for rank, hit in enumerate(hits, start=1):
        if hit.text in texts:
            continue
        texts.add(hit.text)
        if estimator.count(hit.text) <= whole:  # a few lines: shown whole
            candidates = [(0, hit.text)]
        else:  # the lines that answer, or the start of the text when none does
            candidates = _ranked_pieces(hit.text, terms, types) or [(0, _shorten(hit.text, share, estimator))]
        blocks.append(_Block(rank, hit, [c for c in candidates if c[1]]))
    # A summary restates its history (a rolling summary carries old statements forward) and stands
    # at the time it was written: shown there, a value it repeats reads as said after the entries
    # that replaced it. A summary line that only restates lines a history record of the packet may
    # show is left to that record, which stands at the time the statement was made.
    sources = {statement(part) for b in blocks if b.hit.kind != "summary"
               for _, line in b.candidates for part in line.splitlines() if part.strip()}
    for block in blocks:
        if block.hit.kind == "summary":
            block.candidates = [(pos, rest) for pos, line in block.candidates if (rest := _unsaid(line, sources))]
    blocks = [b for b in blocks if b.candidates]
    shown: list[_Block] = []  # blocks with a piece taken, in the order their first piece was
    sessions: set[str] = set()
    order: list[_Block] = []  # the block of every piece taken, in the order taken
    said: set[str] = set()
    depth = 0
    while any(depth < len(b.candidates) for b in blocks):
        for block in blocks:
            if depth >= len(block.candidates):
                continue
            position, line = block.candidates[depth]
            if line in said:  # another hit's excerpt showed this line (a summary repeats its history's)
                continue
            cost = estimator.count(line) + 1
            extra = 0
            if not block.taken:
                extra = estimator.count(_header(block.rank, block.hit)) + 1
                if block.hit.session_id not in sessions:
                    extra += estimator.count(_session_line(block.hit.session_id)) + 1
            if block.tokens + cost > share or used + cost + extra > budget:  # a hit's share (a whole text is below it)
                continue
            if not block.taken:
                shown.append(block)
                sessions.add(block.hit.session_id)
            block.taken.append((position, line))
            block.tokens += cost
            used += cost + extra
            said.add(line)
            order.append(block)
        depth += 1
    # Token counts of joined texts are not exactly the sum of their parts: check the whole, and
    # give back the pieces taken last until it fits.
    text = _layout(head, shown)
    while shown and estimator.count(text) > budget:
        block = order.pop()
        block.taken.pop()
        if not block.taken:
            shown.remove(block)
        text = _layout(head, shown)
    if not shown:
        text = ""
    shown.sort(key=lambda b: b.rank)
    return RecallResult(question=question, hits=[b.hit for b in shown], text=text,
                        tokens=estimator.count(text) if text else 0, budget=budget)


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
