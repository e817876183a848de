"""Abstention: whether the best hit answers the question at all, or recall should return nothing.

A search always returns its best records, even for a question about something never said; BM25
scores do not tell (they are not comparable across questions). The test here is *coverage*: the
share of the question's distinct search terms (:func:`~aptmem.recall.analyze.query_tokens`:
stop words dropped, identifiers split and joined, CJK bigrams) that occur in the hit's text,
each term weighted by its length in characters as a cheap stand-in for its specificity (a
service name or a hash weighs more than "port"). A term matches as a lowercase substring, so a
stem finds its inflections. A question about a fact never planted typically shares the subject
with its best hit but not the relation ("metrics scrape endpoint" against a health-check line).

The threshold is not chosen here: ``benchmarks/recall_abstention.py`` fits it on the tune half of
the recall workload and reports false positives and false negatives on the held-out half.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from aptmem.recall.analyze import is_cjk, query_tokens
from aptmem.recall.lexicon import synonyms
from aptmem.recall.records import Hit

__all__ = ["DEPTH", "abstain", "best_coverage", "coverage"]

_SEPARATORS = re.compile(r"[._/:@-]+")

#: The test looks at this many of the best hits (the evidence is often second or third).
DEPTH = 3


def coverage(question: str, text: str) -> float:
    """The length-weighted share of ``question``'s search terms found in ``text`` (0 when it has none).

    A relation word also counts as found when a word of its lexicon group is
    (:func:`aptmem.recall.lexicon.synonyms`): "route" is answered by "endpoint", as the search
    itself treats them.
    """
    terms = [t for t in query_tokens(question) if len(t) >= 2]
    if not terms:
        return 0.0
    low = text.lower()
    joined = _SEPARATORS.sub("", low)  # a compound's joined term ("irisworker") matches its written form
    total = sum(len(t) for t in terms)

    def found(term: str) -> bool:
        # A 2-letter Latin synonym ("db") as a substring would be found almost anywhere.
        return term in low or term in joined or any(s in low for s in synonyms(term) if len(s) >= 3 or is_cjk(s[0]))

    return sum(len(t) for t in terms if found(t)) / total


def best_coverage(question: str, hits: Sequence[Hit]) -> float:
    """The highest :func:`coverage` of ``question`` among the first :data:`DEPTH` hits (0 for none)."""
    return max((coverage(question, h.text) for h in hits[:DEPTH]), default=0.0)


def abstain(question: str, hits: Sequence[Hit], min_coverage: float) -> list[Hit]:
    """``hits`` if one of the best covers at least ``min_coverage`` of the question; else none (recall abstains)."""
    if not hits or min_coverage <= 0:
        return list(hits)
    return list(hits) if best_coverage(question, hits) >= min_coverage else []
