"""Reranking the keyword engine's best records by how many of the question's terms each one covers.

BM25 sums a record's term weights, so a record that repeats the question's rarest term (the
subject: a service name in a tool call, a log line, a title) can outscore the one record that
holds the subject *and* the relation asked about, once the question words the relation
differently from the statement. Coverage is the classic remedy (the "coordination factor" of
Lucene's classic similarity; the term-coverage features of learning-to-rank): among the best
:data:`RERANK_DEPTH` records of the fused ranking, the records that cover more of the question's
terms come first, and the fused score orders records of equal coverage.

A term of the question is one *concept*: a word (with the other words of its lexicon groups, so
a paraphrase's "sha" is covered by a record's "commit", and its translations by the CC-CEDICT
bridge, :mod:`aptmem.recall.bridge`), a Chinese word of the lexicon or of the dictionary found in
the question (with its groups' words and its English senses), or one of the question's other CJK
bigrams. A concept is covered when the record holds one of its words by Porter stem, as the index
stems it (:func:`~aptmem.recall.analyze.stems`; "installers" and "installation" are one, and a
British spelling its American one), a Chinese word when all of its bigrams are there.

Concepts weigh by what they are in the question (:mod:`aptmem.recall.question`): a name (an
identifier's part, a word no dictionary has: the subject, as a rule) counts :data:`NAME_WEIGHT`,
a word of a phrasal verb ("check out") :data:`PHRASAL_WEIGHT`, any other 1.

A *restatement* (a compaction summary: it repeats lines of the history it summarizes) is ranked
by what one of its passages covers, not the whole record: its lines come from different entries,
so a summary of twenty entries covers the subject in one line and the relation in another by
accident and outranks the one entry that states both. A passage (:func:`passages`) is a line read
under the record's first line and the line just before it (a heading, a ``# file`` comment, the key
a value nests under). And a rolling summary repeats the same lines compaction after compaction (at
an 8k window a session of 130 entries had 45 summaries, most of them near copies, filling the top
5): a restatement whose best line a better restatement already has counts :data:`RESTATED_PENALTY`
less. Counting every record's coverage by passage instead cost the recall benchmark's blind splits
10 points (a fact's record there names the relation in its code or other lines), and lowering every
summary (not only copies) lost a template question of the real transcripts, where a hand-written
question's evidence is any entry holding the answer, a summary too; so an entry keeps its
whole-record coverage, and a first summary its place.

The answer asked for is one concept more (:mod:`aptmem.recall.answer_type`): a question that asks
for a value of a type (an address, a route, a branch, a commit, a ticket, a version, a
preference, a reason) counts it covered by a record holding a value of that shape; a question
that names no type counts a value of any type as :data:`ANY_VALUE` of a concept (a record that
states a fact about the subject beats a tool call or a title that only names it). Measured on
the recall benchmark's development splits (20k records, seed 7; recall@5 of ``fts``, blind /
blind2 paraphrase and other language): 84.5 / 87.5 / 76.5 / 84.0 without either, 94.5 / 95.5 /
89.0 / 93.5 with both; tune paraphrase / other language 97.5 / 97.0 -> 99.0 / 99.0, held_out
paraphrase 99.0 -> 99.8, every template cell and fresh unchanged (100). The type counted as half a concept or one and a
half ranked the same at five; any value as a whole concept cost tune paraphrase questions
about preferences 6.5 points before preferences were a type.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from functools import lru_cache

from aptmem.recall.analyze import CJK_CHARS, cjk_bigrams, is_cjk, query_tokens, spelling_stems, spellings, stems
from aptmem.recall.answer_type import ANY_MARKERS, asked_types, holds_any, holds_type, marker, text_words
from aptmem.recall.bridge import chinese, chinese_words, english
from aptmem.recall.lexicon import GROUPS, synonyms
from aptmem.recall.question import names, phrasal

__all__ = ["ANY_VALUE", "DERIVED_WEIGHT", "NAME_WEIGHT", "PHRASAL_WEIGHT", "RERANK_DEPTH", "RESTATED_PENALTY", "Concept",
           "concepts", "covered", "passages", "rerank", "weighted_coverage"]

#: How many of the fused ranking's best records are reordered by coverage. The fused ranking
#: puts the evidence of nearly every question within its top 10 (recall@10 99.5% on the recall
#: benchmark's fresh split while recall@5 was 86%), but a long record (a block of log lines) can sit
#: lower: depth 20 -> 30 took fts's recall@5 on the blind split from 98.0 / 97.5 to 98.5 / 98.0
#: (paraphrase / other language; hybrid 99.5 / 98.0 -> 100 / 98.5), every other development cell at 100.
RERANK_DEPTH = 30

#: What a value of any answer type adds to a record's coverage for a question that asks for no
#: type (see the module docstring): half a concept, so it lifts a record over one of equal coverage
#: whose BM25 share (in (0, 1]) is less than half a point higher, and never outweighs a covered word.
ANY_VALUE = 0.5

#: What covering a name of the question (:func:`~aptmem.recall.question.names`: its subject, as a
#: rule) counts, where another concept counts 1: a record about another subject that shares the
#: asker's words ("runs", "tell") must not tie with the one about the subject.
#: On the development splits (fts, recall@5, blind paraphrase / other language) weight 1 / 2 / 3
#: gave 94.5 / 95.5, 96.5 / 96.0, 96.5 / 96.0 (before the expanded query was anchored on a name too).
NAME_WEIGHT = 2.0

#: What covering a word of a phrasal verb of the question counts (:func:`~aptmem.recall.question.phrasal`):
#: half a concept, as neither word alone says what the question means.
PHRASAL_WEIGHT = 0.5

#: What a record covering a concept only by a word of the same stem counts, where one holding the
#: word itself or an inflection of it counts 1: "installation" is about "installers" less surely
#: than "installer" is (the usual exact-over-stemmed preference of search engines). On the real
#: transcripts (benchmarks/recall_real.py) stems counted whole lost a template question (the record
#: saying "No Igniter installers" fell to 6th behind records about installing Igniter).
DERIVED_WEIGHT = 0.5

#: What a restatement that repeats the best line of a better one loses of its coverage (see the module
#: docstring): one concept. Memory-quality benchmark, l3_keyword, seeds 200-201, the 7 development
#: generators, mean recall@5 template / paraphrase / other at 8k: 73.1 / 45.9 / 61.4 on main, 80.2 /
#: 51.7 / 65.9 with summaries by passage alone, 84.3 / 53.6 / 66.6 with this; lowering every summary
#: by 1 gave 85.4 / 53.6 / 67.5 but lost the real transcripts' question (above).
RESTATED_PENALTY = 1.0

#: A concept: the words that cover it (English words and their inflections, Chinese words of one
#: bigram), the Chinese words of several bigrams, each covered when all of its bigrams are present,
#: the Porter stems of its English words, and what a record holding only one of these counts:
#: :data:`DERIVED_WEIGHT` for a word of the question, 1 for a Chinese word's translations (a
#: dictionary gives "infer" for 推断 where the record may say "inference": the form is the dictionary's).
Concept = tuple[frozenset[str], tuple[frozenset[str], ...], frozenset[str], float]

_CJK_RUN = re.compile(f"[{CJK_CHARS}]+")
_CJK_LEXICON = sorted({w for g in GROUPS for w in g if is_cjk(w[0])}, key=len, reverse=True)


def _forms(word: str) -> set[str]:
    """A word and its usual English inflections (and the base of an inflected word)."""
    out = {word, word + "s", word + "es", word + "ed", word + "d", word + "ing"}
    for suffix in ("ing", "es", "ed", "s", "d"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            out.update((base, base + "e"))
    return out


def _stemmed(words: frozenset[str]) -> frozenset[str]:
    """A record's words as stems (non-English words as they are)."""
    found = stems(words)
    return frozenset(found[w] for w in words)


@lru_cache(maxsize=8192)
def _record_words(body: str) -> tuple[frozenset[str], frozenset[str]]:
    """A record's words (:func:`~aptmem.recall.answer_type.text_words`) and their stems, remembered: the
    same records come back question after question (a subject's records, for every question about it)."""
    words = text_words(body)
    return words, _stemmed(words)


@lru_cache(maxsize=4096)
def _concept(word: str, expand: bool) -> Concept:
    """The concept of one question word: the word and, with ``expand``, the other words of its lexicon
    groups and its translations (:mod:`aptmem.recall.bridge`: an English word's Chinese headwords, a
    Chinese word's English words)."""
    single: set[str] = set()
    stemmed: set[str] = set()
    several: list[frozenset[str]] = []
    bridged = (english(word) if is_cjk(word[0]) else chinese(word)) if expand else ()
    for alternative in (word, *synonyms(word), *bridged) if expand else (word,):
        if not is_cjk(alternative[0]):
            for variant in spellings(alternative):
                single.update(_forms(variant))
            stemmed.update(spelling_stems(alternative))
        elif len(alternative) <= 2:
            single.add(alternative)
        else:
            several.append(frozenset(cjk_bigrams(alternative)))
    return frozenset(single), tuple(several), frozenset(stemmed), 1.0 if is_cjk(word[0]) else DERIVED_WEIGHT


def _lexicon_words(question: str) -> tuple[list[str], set[int]]:
    """The Chinese words of the lexicon in ``question``, longest first, none inside another; the positions they take."""
    found: list[str] = []
    taken: set[int] = set()
    for word in _CJK_LEXICON:
        start = question.find(word)
        while start >= 0:
            span = range(start, start + len(word))
            if not taken.issuperset(span):
                if word not in found:
                    found.append(word)
                taken.update(span)
            start = question.find(word, start + 1)
    return found, taken


def _free_parts(start: int, text: str, taken: set[int]) -> list[tuple[int, str]]:
    """The parts of a CJK run (at ``start`` of the question) no position of ``taken`` is in, as (start, text)."""
    parts: list[tuple[int, str]] = []
    begin = None
    for i in range(len(text) + 1):
        free = i < len(text) and start + i not in taken
        if free and begin is None:
            begin = i
        elif not free and begin is not None:
            parts.append((start + begin, text[begin:i]))
            begin = None
    return parts


def _dictionary_words(question: str, taken: set[int]) -> list[str]:
    """The dictionary's Chinese words (:func:`~aptmem.recall.bridge.chinese_words`) in what the lexicon left
    of the question's CJK runs; their positions are added to ``taken``. A word made of function
    characters or translated only by function words ("哪个": which) takes its place but is no concept."""
    found: list[str] = []
    for run in _CJK_RUN.finditer(question):
        for start, part in _free_parts(run.start(), run.group(), taken):
            for offset, word in chinese_words(part):
                taken.update(range(start + offset, start + offset + len(word)))
                if english(word) and query_tokens(word) and word not in found:
                    found.append(word)
    return found


def concepts(question: str) -> list[Concept]:
    """The concepts of a question (see the module docstring).

    A CJK bigram that shares a character with a lexicon or dictionary word is not a concept of its
    own: it is an artifact of cutting the text into bigrams (of "的健康检查接口", 的健 and 查接 are no terms).
    """
    return list(_weighted_concepts(question)[0])


@lru_cache(maxsize=1024)
def _weighted_concepts(question: str) -> tuple[tuple[Concept, ...], tuple[float, ...]]:
    """The concepts of a question (:func:`concepts`) and their weights: :data:`NAME_WEIGHT` for a name, else 1."""
    found, taken = _lexicon_words(question)
    found.extend(_dictionary_words(question, taken))
    out: list[Concept] = [_concept(w, True) for w in found]
    named = names(question)
    english_tokens = [t for t in query_tokens(question) if not is_cjk(t[0])]
    verbs = phrasal(question)
    weights = [1.0] * len(out) + [NAME_WEIGHT if t in named else PHRASAL_WEIGHT if t in verbs else 1.0
                                  for t in english_tokens]
    out.extend(_concept(t, True) for t in english_tokens)
    for run in _CJK_RUN.finditer(question):
        start, text = run.start(), run.group()
        spans = [(i, i + 2) for i in range(len(text) - 1)] if len(text) > 1 else [(0, 1)]
        for i, j in spans:
            if taken.isdisjoint(range(start + i, start + j)) and query_tokens(text[i:j]):
                out.append(_concept(text[i:j], False))
                weights.append(1.0)
    return tuple(out), tuple(weights)


def covered(concept_list: Sequence[Concept], body: str) -> int:
    """How many of the concepts ``body`` (a record's indexed text) covers (by a word, an inflection or a stem)."""
    words, stemmed = _record_words(body)
    return sum(1 for concept in concept_list if _match(concept, words, stemmed) > 0)


def weighted_coverage(question: str, body: str) -> float:
    """The question's concepts ``body`` covers, each by its weight and how it is covered (see :func:`_match`)."""
    concept_list, weights = _weighted_concepts(question)
    return _weighted(concept_list, weights, *_record_words(body))


def _weighted(concept_list: Sequence[Concept], weights: Sequence[float], words: frozenset[str], stemmed: frozenset[str]) -> float:
    """The concepts a record of these ``words`` (and their stems) covers, each by its weight and how it is covered."""
    return sum(w * _match(concept, words, stemmed) for concept, w in zip(concept_list, weights, strict=True))


def _match(concept: Concept, words: frozenset[str], stemmed: frozenset[str]) -> float:
    """1 when a record of these ``words`` (and their stems) holds one of the concept's words or inflections, or
    all bigrams of one of its Chinese words; the concept's derived weight when it holds a word of the same stem only; else 0."""
    single, several, stems_of, derived = concept
    if not single.isdisjoint(words) or (several and any(bigrams <= words for bigrams in several)):
        return 1.0
    return derived if not stems_of.isdisjoint(stemmed) else 0.0


@lru_cache(maxsize=8192)
def passages(body: str) -> tuple[str, ...]:
    """The passages of a record's text (see the module docstring): each of its non-blank lines after the
    first, with the line before it and the first line; the whole text when it has at most three lines."""
    lines = [line for line in body.split("\n") if line.strip()]
    if len(lines) <= 3:
        return (body,)
    return tuple("\n".join(dict.fromkeys((lines[0], lines[i - 1], lines[i]))) for i in range(1, len(lines)))


def rerank(question: str, ranked: Sequence[tuple[int, float]], bodies: Mapping[int, str],
           restated: frozenset[int] = frozenset(), marked: bool = False) -> list[tuple[int, float]]:
    """``ranked`` (best first, positive scores) with its top :data:`RERANK_DEPTH` reordered by coverage, then by score.

    ``bodies`` maps a record to its indexed text, ``restated`` names the records that restate others
    (compaction summaries). A record's coverage is the weighted count of the question's concepts
    it covers, plus one when it holds a value of an answer type the question asks for, or
    :data:`ANY_VALUE` when the question asks for none and it holds a value of any type (see the
    module docstring); a restatement's is that of its best passage (:func:`passages`), less
    :data:`RESTATED_PENALTY` when a better restatement has the same best line. ``marked``: the bodies carry
    the index's value markers (:func:`~aptmem.recall.answer_type.marked`), which then say which types a text
    holds a value of (a set look-up of its words, where the shapes' regular expressions would read it). Its new score is its coverage plus its score over the best score (in (0, 1]),
    below the reordered ones for the rest, so scores still fall with the rank.
    """
    concept_list, weights = _weighted_concepts(question)
    types = asked_types(question)
    top = max((score for _, score in ranked), default=0.0)
    if len(ranked) < 2 or not (concept_list or types) or top <= 0:
        return list(ranked)

    bonus = 1.0 if types else ANY_VALUE

    wanted = frozenset(marker(t) for t in types) if types else ANY_MARKERS

    def valued(text: str, words: frozenset[str]) -> bool:
        if marked:
            return not wanted.isdisjoint(words)
        return holds_type(types, text, words) if types else holds_any(text, words)

    def coverage(body: str, derived: bool) -> float:
        if not derived:
            words, stemmed = _record_words(body)
            return _weighted(concept_list, weights, words, stemmed) + (bonus if valued(body, words) else 0.0)
        counted = sorted(((_weighted(concept_list, weights, *_record_words(p)), p) for p in passages(body)),
                         key=lambda item: -item[0])
        best, where = 0.0, ""
        for count, passage in counted:  # the value test (regular expressions) only where it can change the best
            if count + bonus <= best:
                break
            value = count + (bonus if valued(passage, _record_words(passage)[0]) else 0.0)
            if value > best:
                best, where = value, passage
        best_passage[body] = where
        return best

    best_passage: dict[str, str] = {}
    head = [(doc_id, coverage(bodies.get(doc_id, ""), doc_id in restated) + score / top)
            for doc_id, score in ranked[:RERANK_DEPTH]]
    head.sort(key=lambda item: -item[1])
    lines = {d: best_passage.get(bodies.get(d, ""), "") for d in restated}
    floors = {doc_id: score / top for doc_id, score in ranked[:RERANK_DEPTH]}
    return _copies_down(head, restated, lines, floors) + [(doc_id, score / top) for doc_id, score in ranked[RERANK_DEPTH:]]


def _copies_down(head: list[tuple[int, float]], restated: frozenset[int], lines: Mapping[int, str],
                 floors: Mapping[int, float]) -> list[tuple[int, float]]:
    """``head`` (best first) with every restatement whose best line (the last of its best passage, list
    marks and spacing aside) a better restatement already has lowered by :data:`RESTATED_PENALTY`, re-sorted.

    A lowered score stays at least its ``floors`` value (its score over the best score), so the head's
    scores stay above the rest's."""
    seen: set[str] = set()
    out: list[tuple[int, float]] = []
    for doc_id, value in head:
        if doc_id in restated:
            line = " ".join(lines.get(doc_id, "").split("\n")[-1].lstrip("-* ").split())
            if line in seen:
                value = max(value - RESTATED_PENALTY, floors.get(doc_id, 0.0))
            seen.add(line)
        out.append((doc_id, value))
    out.sort(key=lambda item: -item[1])
    return out
