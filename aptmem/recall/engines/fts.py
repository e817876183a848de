"""Keyword search with SQLite FTS5, ranked by BM25: no dependency beyond Python's ``sqlite3``.

Two tokenizations, both measured by ``benchmarks/recall_bench.py``:

* :func:`fts_bigram` (the default, ``fts``): our own analysis (:mod:`aptmem.recall.analyze`:
  lowercase words, split identifiers, CJK bigrams) fed to FTS5's ``unicode61`` tokenizer as
  space-separated tokens. A question becomes an OR of its tokens, stop words dropped, scored on the
  records holding one of its terms that not a quarter of the records hold, and of the relation
  words :mod:`aptmem.recall.lexicon` adds (a second ranking, fused; see :func:`_keyword_match`),
  Porter-stemmed. ``fts_plain`` is the same table searched
  without the lexicon.
* :func:`fts_trigram` (``fts_trigram``): FTS5's built-in ``trigram`` tokenizer over the raw search
  text; every query word of 3 or more characters (a CJK run counts as one word) is one substring
  term, ORed. It finds substrings (``5432`` inside ``db:5432``) but cannot match words shorter than
  3 characters, and its index is several times larger.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence

import msgspec

from aptmem.recall.analyze import index_tokens, is_cjk, query_tokens
from aptmem.recall.answer_type import asked_types, marked, marker
from aptmem.recall.engines.base import Filter
from aptmem.recall.engines.hybrid import DEPTH
from aptmem.recall.lexicon import expansions
from aptmem.recall.question import names
from aptmem.recall.records import Doc
from aptmem.recall.rerank import RERANK_DEPTH, rerank

__all__ = ["Fts5Engine", "Query", "fts_bigram", "fts_plain", "fts_trigram", "fts_untyped"]

#: At most this many query terms are searched (the rarest are the ones that matter; a pasted log
#: as a question must not build a query of thousands of ORs).
MAX_TERMS = 64


class Query(msgspec.Struct, frozen=True):
    """One FTS5 query of a question: ``match``, and ``wider`` when ``match`` prunes it (``""`` when not).

    A pruned query scores only the records likely to rank (see :func:`_keyword_match`); when it
    finds fewer records than were asked for, among the records the search allows, the pruning
    cut records that would have ranked, and ``wider`` is scored instead.
    """

    match: str
    wider: str = ""


def _quote(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


#: The shortest term that may restrict a query to its records (see :func:`_keyword_match`).
MIN_RARE_CHARS = 3

#: A query term found in more than this share of the records is "common": the expanded query ORs
#: only terms held by fewer (see :func:`_keyword_match`).
COMMON_SHARE = 0.02

#: A query term found in more than this share of the records is "broad": it still scores, but only
#: records that also hold a narrower term are scored (see :func:`_keyword_match`).
BROAD_SHARE = 0.25


class _Counts:
    """How many records hold a term, counted by FTS5 only up to the broad threshold, remembered per index size.

    A count is kept until the table has grown by an eighth since it was taken: whether a term is
    rare changes slowly, and the same relation words come back question after question.
    """

    def __init__(self) -> None:
        self.records = -1
        self.counts: dict[str, int] = {}

    def held(self, db: sqlite3.Connection, phrases: list[str]) -> tuple[dict[str, int], int, int]:
        """``phrases`` (FTS5 phrase strings, unquoted) -> records holding each, capped at the broad threshold + 1;
        and the common and broad thresholds (records)."""
        records = db.execute("SELECT COALESCE(MAX(rowid), 0) FROM fts_bigram").fetchone()[0]
        if not (self.records <= records <= self.records + self.records // 8):
            self.records, self.counts = records, {}
        common, broad = int(COMMON_SHARE * self.records), int(BROAD_SHARE * self.records)
        out: dict[str, int] = {}
        for phrase in phrases:
            if phrase not in self.counts:
                self.counts[phrase] = db.execute(
                    "SELECT count(*) FROM (SELECT 1 FROM fts_bigram WHERE fts_bigram MATCH ? LIMIT ?)",
                    (_quote(phrase), broad + 1)).fetchone()[0]
            out[phrase] = self.counts[phrase]
        return out, common, broad


def _bigram_match(db: sqlite3.Connection, question: str, counts: _Counts) -> list[Query]:
    """The question's own query and, when the lexicon adds relation words, the expanded one (fused by :func:`comb_sum`).

    The two rankings are fused rather than the words merged into one query: in one BM25 sum the
    added words weigh as much as the asked ones; as a second ranking the expansion lifts a
    paraphrased statement without burying an exact one. Measured on the tune half of the recall
    workload (recall@5 template / paraphrase / other language): the words merged into one query
    over all rare-term records 91.5 / 83.5 / 88.0 (plain: 97.5 / 76.0 / 66.5); a second ranking
    over the same records 95.5 / 82.0 / 80.5; a second ranking over the rarest term's records
    (this) 100 / 79.5 / 88.5; that ranking alone 99.0 / 81.0 / 96.5, not chosen: when the rarest
    term is not the subject it alone would decide (on the real transcripts it lost a question).
    """
    return _untyped_match(db, question, counts) + _typed_match(db, question, counts)


#: How many tokens apart a question's term and a value of the type it asks for may be (FTS5 ``NEAR``).
VALUE_NEAR = 12

#: How many of the question's terms (the rarest in the index) are looked for near a value of the type asked.
#: The subject is among them as a rule, and each term costs a ``NEAR`` group: 20k records of recall_latency's
#: workload, the typed query alone, mean / p95 over 561 questions: every term 4.19 / 17.4 ms, the three rarest
#: 1.45 / 9.6 ms.
TYPED_TERMS = 3


def _typed_match(db: sqlite3.Connection, question: str, counts: _Counts) -> list[Query]:
    """For a question asking for answer types (:func:`~aptmem.recall.answer_type.asked_types`), the query of its
    :data:`TYPED_TERMS` rarest terms each within :data:`VALUE_NEAR` tokens of a value of one of the types (its
    :func:`~aptmem.recall.answer_type.marker`); none else.

    A third ranking, fused with the others: where a question shares only its subject with the statement,
    and the subject is in many records, the few that state a value of the kind asked beside it
    (predictive annotation, :func:`~aptmem.recall.answer_type.marked`).
    """
    types = asked_types(question)
    terms = query_tokens(question)[:MAX_TERMS]
    if not types or not terms:
        return []
    held = counts.held(db, terms)[0]
    rarest = sorted((t for t in terms if held[t] > 0), key=lambda t: held[t])[:TYPED_TERMS]
    if not rarest:
        return []
    near = [f"NEAR({_quote(t)} {_quote(marker(kind))}, {VALUE_NEAR})" for kind in types for t in rarest]
    return [Query(" OR ".join(near))]


def _untyped_match(db: sqlite3.Connection, question: str, counts: _Counts) -> list[Query]:
    """The question's own query and the expanded one, without the ranking near a value of the type asked."""
    return _keyword_match(db, question, expansions(question), counts)


def _plain_match(db: sqlite3.Connection, question: str, counts: _Counts) -> list[Query]:
    """The query of the question's own terms only."""
    return _keyword_match(db, question, [], counts)


def _keyword_match(db: sqlite3.Connection, question: str, added: list[tuple[str, ...]], counts: _Counts) -> list[Query]:
    """FTS5 queries for the question: an OR of its analyzed tokens (stop words dropped), restricted to
    records holding one of its terms that is not broad; with ``added`` phrases, a second query that
    ORs them in too, restricted to the rarest term's records.

    BM25 in FTS5 scores every record that matches any term, so a question holding one very
    frequent word would score (and sort) a large share of the index: as in max-score style
    retrieval, records that hold none of the question's narrower terms cannot rank well, so the
    query is ``(narrow terms) AND (all terms)``: the same BM25 over fewer records. A term is
    narrow when at most :data:`BROAD_SHARE` of the records hold it. The restriction was once to
    *rare* terms (at most :data:`COMMON_SHARE`), but a question asked in the asker's words holds
    words the statement lacks, and often the only word the statement shares is the subject, which
    a busy history names in many records (a service in its log lines): that restriction dropped
    the statement and kept the records of the question's rarer words. Measured on the
    memory-quality benchmark (development seed 100, 8k window, five generators, post-hoc
    1,024-token packet of 20 hits), answerable of 552: rare terms 340, broad share 0.1 361, 0.25
    364, no restriction 368; query p50 / p95 at 20k records (recall_latency's workload, load 7, old
    and new alternating): rare terms 13.7 / 30.0 ms, 0.25 11.0 / 31.4 ms, no restriction 22.4 /
    110.8 ms; at 130k, rare terms 24.0 / 62.9 ms, 0.25 23.1 / 59.4 ms.

    Counts are taken by FTS5 itself (the term as the table tokenizes and stems it) and only up to
    the broad threshold: a broad term's records are never all read. (``fts5vocab`` gives exact
    counts but reads a term's whole list: 20 ms a question at 130k records.) Only words of
    :data:`MIN_RARE_CHARS` or more characters that are not CJK may restrict: a restricting term
    stands in both halves of the query, so BM25 weighs it twice, and doubling a Chinese question's
    bigrams ranks Chinese near misses above the English statement it asks about (on the small
    recall benchmark, other-language recall@5 fell from 91% to 81%, held out).
    """
    terms = query_tokens(question)[:MAX_TERMS]
    if not terms:
        return []
    phrases = [" ".join(p) for p in added[:MAX_TERMS]]
    restricting = [t for t in terms if len(t) >= MIN_RARE_CHARS and not is_cjk(t[0])]
    held, threshold, broad = counts.held(db, restricting + (terms + phrases if phrases else []))
    # A term no record holds matches nothing: it must not restrict (it would leave nothing to score).
    narrow = [t for t in restricting if 0 < held[t] <= broad]
    plain = " OR ".join(map(_quote, terms))
    # Nothing to restrict by (every term broad, or none): score every match.
    restricted = bool(narrow) and len(narrow) < len(terms)
    queries = [Query(f"({' OR '.join(map(_quote, narrow))}) AND ({plain})", wider=plain) if restricted else Query(plain)]
    if not phrases:
        return queries
    rare = {t: held[t] for t in restricting if 0 < held[t] <= threshold}
    # The expanded query scores only records holding the question's rarest term (its subject, as
    # a rule): the added words then rank the subject's records, never another subject's near
    # miss that happens to be rich in relation words. Its OR holds only terms at most
    # COMMON_SHARE of the records hold: a common word weighs little in BM25 and costs the most
    # to read (the expanded query took 10 ms where the plain one took 2, 20k records, load 5).
    # The rarest name of the question, if it names anything (aptmem.recall.question: "runs" can be rarer than the subject).
    named = {t: n for t, n in rare.items() if t in names(question)} or rare
    anchor = [t for t, n in named.items() if n == min(named.values())] if named else []
    ored = [p for p in dict.fromkeys(terms + phrases) if 0 < held[p] <= threshold]
    if anchor and ored:
        queries.append(Query(f"({' OR '.join(map(_quote, anchor))}) AND ({' OR '.join(map(_quote, ored))})"))
    elif ored:
        queries.append(Query(" OR ".join(map(_quote, ored))))
    return queries


#: What a record gets from a ranking that cannot tell its records apart (see :func:`comb_sum`).
FLAT_SHARE = 1e-6


def comb_sum(rankings: Sequence[Sequence[tuple[int, float]]], k: int, depth: int | None = None) -> list[tuple[int, float]]:
    """Fuse rankings of positive scores by CombSUM over max-normalized scores (Fox and Shaw, 1994; Lee, 1997).

    A record's fused score is the sum over the rankings of its score divided by that ranking's
    best (0 where it is absent). Unlike RRF, the sizes of score gaps count: a record that only the
    expanded query ranks first, far ahead, is not tied with records the question's own query
    cannot tell apart (a run of short records that merely name the subject, all at one score).

    A ranking cut at ``depth`` whose scores are all one (a question whose only term in common with the
    history is a subject half the records name: BM25 gives it no weight) adds only :data:`FLAT_SHARE` to
    each of its records: at full weight it adds the same to every record it holds and nothing to the
    records as good that it cut, so it would only push out the records another ranking found (its records
    stay candidates, after those).
    """
    scores: dict[int, float] = {}
    for ranking in rankings:
        top = max((score for _, score in ranking), default=0.0)
        if top <= 0:
            continue
        flat = depth is not None and len(ranking) >= depth and min(score for _, score in ranking) >= top * (1 - 1e-9)
        for doc_id, score in ranking:
            scores[doc_id] = scores.get(doc_id, 0.0) + (FLAT_SHARE if flat else score / top)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


_WORD = re.compile(r"[^\s\"'`,;:!?()\[\]{}<>。，、；：！？（）【】「」“”]+")


def _trigram_match(db: sqlite3.Connection, question: str, counts: _Counts) -> list[Query]:
    """An OR of the question's words of 3 or more characters (substring terms), stop words dropped."""
    terms: dict[str, None] = {}
    for word in _WORD.findall(question.lower()):
        if len(word) >= 3 and query_tokens(word):
            terms.setdefault(word, None)
    return [Query(" OR ".join(_quote(t) for t in list(terms)[:MAX_TERMS]))] if terms else []


#: The filter of a search over the whole index (both levels, every kind of record but extracted facts).
_EVERY_RECORD = Filter()


class Fts5Engine:
    """One FTS5 table (rowid = ``doc_id``), BM25-ranked search with a level/kind filter.

    ``body`` turns a record into the text FTS5 indexes, ``match`` a question into FTS5 queries (none,
    one, or several whose rankings are fused);
    ``components`` names the engine whose table it searches when that is another's (``fts_plain``);
    ``rerank``: the best records are reordered by how many of the question's terms they cover
    (:mod:`aptmem.recall.rerank`).
    """

    requires: tuple[str, ...] = ()
    extra = ""

    def __init__(self, name: str, table: str, tokenize: str, body: Callable[[Doc], str],
                 match: Callable[[sqlite3.Connection, str, _Counts], list[Query]], components: tuple[str, ...] = (),
                 rerank: bool = False) -> None:
        self.name = name
        self.rerank = rerank
        self.components = components or (name,)
        self._counts = _Counts()
        self.table = table
        self.tokenize = tokenize
        self._body = body
        self._match = match

    def prepare(self, db: sqlite3.Connection) -> None:
        """Create the FTS5 table if it is missing."""
        db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {self.table} USING fts5(body, tokenize='{self.tokenize}')")

    def add(self, db: sqlite3.Connection, docs: Sequence[tuple[int, Doc]]) -> None:
        """Index records inside the caller's transaction."""
        db.executemany(f"INSERT INTO {self.table}(rowid, body) VALUES (?, ?)", [(i, self._body(d)) for i, d in docs])

    def remove(self, db: sqlite3.Connection, doc_ids: Sequence[int]) -> None:
        """Forget records inside the caller's transaction."""
        db.executemany(f"DELETE FROM {self.table} WHERE rowid = ?", [(i,) for i in doc_ids])

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """BM25-ranked matches of the question's terms among the records ``where`` allows.

        When ``match`` gives several queries (the question as asked and expanded), each ranks its
        top :data:`~aptmem.recall.engines.hybrid.DEPTH` and the rankings are fused by :func:`comb_sum`;
        with ``rerank``, the best are then reordered by coverage (:meth:`reranked`).
        """
        wanted = max(k, RERANK_DEPTH) if self.rerank else k
        return self.reranked(db, question, self.candidates(db, question, wanted, where))[:k]

    def candidates(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """The ``k`` best records by BM25 (the queries' rankings fused), before any rerank."""
        queries = self._match(db, question, self._counts)
        if len(queries) == 1:
            return self._scored(db, queries[0], k, where, k)
        depth = max(k, DEPTH)
        return comb_sum([self._scored(db, q, depth, where, k) for q in queries], k, depth)

    def reranked(self, db: sqlite3.Connection, question: str, ranked: list[tuple[int, float]]) -> list[tuple[int, float]]:
        """``ranked`` (best first) with its head reordered by coverage (:func:`~aptmem.recall.rerank.rerank`)
        when this engine reranks; as it is otherwise."""
        if not self.rerank or len(ranked) < 2:
            return ranked
        head = [doc_id for doc_id, _ in ranked[:RERANK_DEPTH]]
        rows = db.execute(f"SELECT f.rowid, f.body, d.kind FROM {self.table} f JOIN docs d ON d.doc_id = f.rowid "
                          f"WHERE f.rowid IN ({','.join('?' * len(head))})", head).fetchall()
        # A compaction summary restates the history (rerank.RESTATED_PENALTY).
        return rerank(question, ranked, {r[0]: r[1] for r in rows}, frozenset(r[0] for r in rows if r[2] == "summary"),
                      marked=True)

    def _scored(self, db: sqlite3.Connection, query: Query, k: int, where: Filter, enough: int) -> list[tuple[int, float]]:
        """The best ``k`` records of ``query`` that ``where`` allows; of its wider query when pruning left
        fewer than ``enough`` (the records the search returns).

        Pruning is judged on the whole index, the search on the records ``where`` allows (the L2
        records alone, say): there the records holding a narrow term may be few or none, and
        the records it skipped are then the best the search has (an L2-only strategy lost a
        session summary naming the subject only by broad words; a pruned query found nothing).
        """
        ranked = self._ranked(db, query.match, k, where)
        # Over every record the pruning is sound (a record holding only broad terms cannot rank well),
        # and widening there would read the broad terms' long lists (p95 3.5 -> 19 ms at 20k records).
        if query.wider and where != _EVERY_RECORD and len(ranked) < enough:
            return self._ranked(db, query.wider, k, where)
        return ranked

    def _ranked(self, db: sqlite3.Connection, match: str, k: int, where: Filter) -> list[tuple[int, float]]:
        levels = ",".join("?" * len(where.levels))
        kinds = ",".join("?" * len(where.kinds))
        rows = db.execute(
            f"SELECT f.rowid, bm25({self.table}) AS rank FROM {self.table} f JOIN docs d ON d.doc_id = f.rowid "
            f"WHERE {self.table} MATCH ? AND d.level IN ({levels}) AND d.kind IN ({kinds}) ORDER BY rank LIMIT ?",
            (match, *where.levels, *where.kinds, k),
        ).fetchall()
        # bm25() is lower-is-better (negative); flip it so every engine's score is higher-is-better.
        return [(int(rowid), -float(rank)) for rowid, rank in rows]


_BIGRAM_TOKENIZE = "porter unicode61 remove_diacritics 2"


def _marked_body(doc: Doc) -> str:
    """What the bigram table indexes of a record: its search text's tokens, each line holding a value of an
    answer type followed by that type's marker (:func:`~aptmem.recall.answer_type.marked`)."""
    return index_tokens(marked(doc.search))


def fts_bigram() -> Fts5Engine:
    """The default engine: FTS5 over our analysis (words, identifier parts, CJK bigrams)."""
    return Fts5Engine("fts", "fts_bigram", _BIGRAM_TOKENIZE, _marked_body, _bigram_match, rerank=True)


def fts_plain() -> Fts5Engine:
    """The default engine's table searched without the lexicon's expansion (for comparison)."""
    return Fts5Engine("fts_plain", "fts_bigram", _BIGRAM_TOKENIZE, _marked_body, _plain_match,
                      components=("fts",))


def fts_untyped() -> Fts5Engine:
    """The default engine without the ranking of the question's terms near a value of the type it asks for
    (:func:`_typed_match`): its table, expansion and rerank (for comparison, and to time that ranking)."""
    return Fts5Engine("fts_untyped", "fts_bigram", _BIGRAM_TOKENIZE, _marked_body, _untyped_match, components=("fts",),
                      rerank=True)


def fts_trigram() -> Fts5Engine:
    """FTS5's ``trigram`` tokenizer over the raw search text."""
    return Fts5Engine("fts_trigram", "fts_trigram", "trigram", lambda d: d.search, _trigram_match)
