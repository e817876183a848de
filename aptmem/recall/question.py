"""Question analysis: which of a question's words are names, the things it is about.

A question about a fact names its subject (a service, a tool, a file: "delzend", "dialyxir",
"kestrel-api") and words the rest in the asker's own voice ("someone asked me why delzend runs on
what it runs on"). Every word of that voice is an ordinary word of the language; a name is not:
it is an identifier (letters and digits joined by separators, a word holding a digit or an inner
capital, and each part of such a word), or a word no dictionary has. The dictionary is
CC-CEDICT's English side (:mod:`aptmem.recall.bridge`, about 34,000 words) and the shipped
lexicon's software words (:mod:`aptmem.recall.lexicon`), a word matched by its
Porter stem or its American spelling, so "installers", "readiness" and "colours" are words
("install", "ready", "color") and "zenlux" is not. Without the dictionary only identifiers are names.

Which terms are rare in the index says less: in a store whose records are mostly code and logs,
the asker's "runs" or "tell" can be rarer than the subject it asks about, and a ranking anchored
on them finds other subjects' records that happen to use the same verb.
"""

from __future__ import annotations

import re
from functools import lru_cache

from aptmem.recall.analyze import IDENTIFIER, query_tokens, spelling_stems, stems
from aptmem.recall.bridge import load
from aptmem.recall.lexicon import GROUPS

__all__ = ["PARTICLES", "is_word", "names", "phrasal"]

#: The adverb particles of English phrasal verbs: "check out", "look up", "turn down", "roll back".
#: Such a verb means something its words alone do not ("check out" a branch is no "health check"),
#: so neither word is a term of the question in its own right. Words that are prepositions as often
#: ("about", "over", "around": "filed about zenlux") are left out.
PARTICLES = frozenset("up out off down away back".split())

_LATIN = re.compile(r"[A-Za-z]{3,}")


@lru_cache(maxsize=1)
def _stemmed_vocabulary() -> frozenset[str]:
    """The Porter stems of the dictionary's English words and of the shipped lexicon's (the words of
    software a general dictionary lacks: "config", "hotfix", "dsn"); empty without the dictionary."""
    tables = load()
    if tables is None:
        return frozenset()
    words = tables.vocabulary | {w for group in GROUPS for w in group if w.isascii()}
    found = stems(words)
    return frozenset(found[w] for w in words)


def is_word(word: str) -> bool:
    """Whether an English word (any inflection or derivation sharing its stem, either spelling) is a dictionary word."""
    vocabulary = _stemmed_vocabulary()
    if not vocabulary:
        return False
    low = word.lower()
    # A comparative or superlative ("newer", "latest"): Porter keeps the ending, the dictionary lists the base.
    bases = [low, *(low[: -len(e)] for e in ("er", "est") if low.endswith(e) and len(low) - len(e) >= 3)]
    return any(not spelling_stems(base).isdisjoint(vocabulary) for base in bases)


@lru_cache(maxsize=4096)
def names(question: str) -> frozenset[str]:
    """The search tokens (:func:`~aptmem.recall.analyze.query_tokens`) of ``question`` that are names.

    Every token of an identifier is one (the parts of "kestrel-api", and "kestrelapi"); so is a word
    of three or more letters standing alone that is not a dictionary word (:func:`is_word`). Without
    the dictionary, only identifiers' tokens are names.
    """
    out: set[str] = set()
    for match in IDENTIFIER.finditer(question):
        # A number alone is a value the question mentions ("gets a 404"), not what it is about.
        out.update(t for t in query_tokens(match.group()) if not t.isdigit())
    rest = IDENTIFIER.sub(" ", question)
    if _stemmed_vocabulary():
        out.update(w.lower() for w in _LATIN.findall(rest) if not is_word(w))
    return frozenset(out & set(query_tokens(question)))


@lru_cache(maxsize=4096)
def phrasal(question: str) -> frozenset[str]:
    """The lowercase words of ``question`` that are part of a phrasal verb: a word and the particle after it."""
    out: set[str] = set()
    words = re.findall(r"[A-Za-z]+|[^A-Za-z\s]", question)
    for first, second in zip(words, words[1:]):
        if second.lower() in PARTICLES and first.isalpha() and first.lower() not in PARTICLES:
            out.update((first.lower(), second.lower()))
    return frozenset(out)
