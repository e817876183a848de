"""Text analysis for keyword search: the same tokens for what is indexed and for what is asked.

FTS5's ``unicode61`` tokenizer splits on anything that is not a letter or digit and keeps a run of
Chinese characters as one token, so "数据库迁移方案" would only match itself whole. We therefore
analyze text ourselves and hand FTS5 space-separated tokens it keeps as they are:

* Latin letters and digits: lowercased runs (``DATABASE_URL`` -> ``database``, ``url``); camelCase
  is split too (``retryBackoff`` -> ``retry``, ``backoff``, ``retrybackoff``).
* Compound identifiers (``feature/pay-1234``, ``v2.14.3``, ``PAY-1234``) also give the run with its
  separators removed (``featurepay1234``), so an exact identifier in a question scores higher than
  its parts scattered across a chunk.
* CJK runs: overlapping bigrams (a single character stays a unigram), the usual approach of
  CJK-aware search engines without a dictionary.

Query analysis drops stop words (English function words, Chinese function characters), so that
"what is the ..." does not match every chunk.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Iterable

__all__ = ["CJK_CHARS", "cjk_bigrams", "ANALYSIS_VERSION", "EN_STOP_WORDS", "index_tokens", "query_tokens", "is_cjk",
           "IDENTIFIER", "spelling_stems", "spellings", "stems"]

#: Changes whenever indexing would produce other tokens for the same text: an index built with
#: another version is rebuilt when opened (its terms would no longer match the questions').
ANALYSIS_VERSION = "4"

_CJK = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
#: The CJK ranges, as a character class body (``f"[{CJK_CHARS}]"``).
CJK_CHARS = _CJK

# A compound: alphanumeric runs joined by . - / : _ @ (no spaces). Its runs are not CJK, so a name
# written flush against Chinese ("iris-worker的接口") is the compound "iris-worker", not one glued token.
# Possessive quantifiers and the look-behind keep this from backtracking inside every word.
_ALNUM = rf"[^\W_{_CJK}]"
_PIECE = re.compile(rf"[{_CJK}]+|{_ALNUM}+", re.UNICODE)
_COMPOUND = re.compile(rf"(?<!{_ALNUM}){_ALNUM}++(?:[._/:@-]++{_ALNUM}++)+", re.UNICODE)
_CAMEL = re.compile(r"[a-z]+|[A-Z][a-z]+|[A-Z]+(?![a-z])|\d+")
_CJK_RUN = re.compile(rf"^[{_CJK}]+$")
_CAMEL_WORD = re.compile(rf"(?<!{_ALNUM})(?={_ALNUM}*?[a-z][A-Z]){_ALNUM}++")
_CAMEL_HINT = re.compile(r"[a-z][A-Z]")

_EN_STOP = frozenset(
    """a an the is are was were be been being am do does did of to in on at by for with from as and or
    not no it its this that these those what which who whom whose when where why how i we you he she
    they me us our ours your my mine his her their them there here can could would should will shall
    may might must have has had about into over under again any all some such than then too very just
    so if but also please tell remember recall know did does again last ago week day time we're i'm
    one ones thing things use used using set value""".split()
)
# The function words of the other languages questions here come in (German, Spanish, French, Italian,
# Portuguese): articles, pronouns, prepositions, conjunctions, auxiliaries and interrogatives, the words a
# question in that language is made of, not what it is about (after the stop lists search engines ship per
# language, cut to the short function words). Not dropped, such a word is no English dictionary word and so
# reads as a *name*, the question's subject (aptmem.recall.question), and matches every line of that
# language in a history ("der", "von", "que", "les"). Words that are English content words too are left out,
# but for "die" and "war": in nearly every German question, rare English words in software.
_OTHER_STOP = frozenset(
    """der die das den dem des ein eine einer einem einen eines und oder aber nicht kein keine ist sind war
    waren wird werden wurde wurden hat haben hatte ich du er sie es wir ihr mich dich sich uns euch mein dein
    sein unser von vom zu zum zur mit bei nach aus auf für über unter vor durch gegen ohne um an am im als wie
    wo wer wann warum wieso welche welcher welches welchen welchem oft wem wen wessen dass ob noch schon auch nur sehr mal
    gerade jetzt denn doch ja nein bitte kannst können könnte soll sollen muss müssen darf dürfen gibt
    el la los las un una unos unas y o pero ni es son era fue fueron está están estaba ser estar ha han había
    de del al en con por para sobre entre hasta desde que qué quién quiénes cuál cuáles cuándo cuánto cuánta
    cuántos cuántas dónde adónde cómo porque se su sus mi mis tu tus nuestro lo le les me te nos este esta
    estos estas ese esa eso muy ya también sólo hay
    le les une des du et ou mais ne pas est sont était été être avoir ont au aux dans sur pour avec sans sous
    qui quoi quel quelle quels quelles quand où comment pourquoi combien ce cette ces sa ses leur leurs nous
    vous il elle ils elles je
    gli della dei delle degli che chi cosa dove perché quanto quanta quanti quante è sono
    ao do dos das em na nas um uma quem qual onde""".split()
)
# Chinese function characters and common question words: a bigram made only of these is noise.
_ZH_STOP_CHARS = frozenset("的了吗呢吧啊是在我你他她它们这那哪什么么怎样个和与及或就都也还又把被给对从向为以上下中之其所有没不要会能可请问记得讨论过时候")


#: English stop words (what questions are made of, not what they are about).
EN_STOP_WORDS = _EN_STOP


def is_cjk(ch: str) -> bool:
    """Tell whether ``ch`` is a CJK (Chinese, Japanese, Korean) character."""
    return bool(_CJK_RUN.match(ch))


def cjk_bigrams(run: str) -> list[str]:
    """The overlapping bigrams of a CJK run, as the index holds them (a single character stays a unigram)."""
    if len(run) == 1:
        return [run]
    return [run[i : i + 2] for i in range(len(run) - 1)]


def _word_tokens(word: str) -> list[str]:
    """Tokens of one alphanumeric run: its lowercase form and, for camelCase, its parts."""
    low = word.lower()
    if _CAMEL_WORD.fullmatch(word):  # as index_tokens does: only words with an inner capital
        return [low, *(p.lower() for p in _CAMEL.findall(word))]
    return [low]


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for match in _PIECE.finditer(text):
        piece = match.group()
        if _CJK_RUN.match(piece):
            out.extend(cjk_bigrams(piece))
        else:
            out.extend(_word_tokens(piece))
    for match in _COMPOUND.finditer(text):
        joined = re.sub(r"[._/:@-]+", "", match.group()).lower()
        if not _CJK_RUN.match(joined):
            out.append(joined)
    return out


_CJK_RUNS = re.compile(rf"[{_CJK}]+")
_SEPARATORS = str.maketrans("", "", "._/:@-")
# The same patterns for ASCII text, where a letter or digit is [A-Za-z0-9] and there is no CJK:
# a plain character range costs the regex engine half what the Unicode class does, and most
# indexed text (code, logs, JSON) is ASCII.
_ASCII_ALNUM = "[A-Za-z0-9]"
_ASCII_COMPOUND = re.compile(_COMPOUND.pattern.replace(_ALNUM, _ASCII_ALNUM))
_ASCII_CAMEL_WORD = re.compile(_CAMEL_WORD.pattern.replace(_ALNUM, _ASCII_ALNUM))


def _bigram_run(match: re.Match[str]) -> str:
    return " " + " ".join(cjk_bigrams(match.group())) + " "


def index_tokens(text: str) -> str:
    """The text FTS5 indexes for ``text`` (see the module docstring).

    The hot path of indexing, so it leaves to FTS5 what FTS5 does anyway: ``unicode61`` lowercases
    and splits Latin text itself. We only turn CJK runs into bigrams and append the extra tokens
    (camelCase parts, joined compounds); :func:`query_tokens` yields the same tokens for a question.
    """
    if text.isascii():
        out, compound, camel_word = text, _ASCII_COMPOUND, _ASCII_CAMEL_WORD
    else:
        out = _CJK_RUNS.sub(_bigram_run, text) if _CJK_RUNS.search(text) else text
        compound, camel_word = _COMPOUND, _CAMEL_WORD
    extras = [part for word in camel_word.findall(text) for part in _CAMEL.findall(word)] if _CAMEL_HINT.search(text) else []
    extras.extend(word.translate(_SEPARATORS) for word in compound.findall(text))
    return f"{out}\n{' '.join(extras)}" if extras else out


def query_tokens(question: str) -> list[str]:
    """The distinct search tokens of a question, stop words dropped, in order of appearance."""
    seen: dict[str, None] = {}
    for token in _tokens(question):
        if token in _EN_STOP or token in _OTHER_STOP:
            continue
        # Chinese function characters only, or Japanese kana of grammar only (particles, endings: a
        # technical question's content words are kanji and katakana): noise.
        if all(ch in _ZH_STOP_CHARS or "\u3040" <= ch <= "\u309f" for ch in token):
            continue
        seen.setdefault(token, None)
    return list(seen)


class _Stemmer:
    """The Porter stems of words, as the index's FTS5 ``porter`` tokenizer makes them, remembered.

    FTS5 has no function that stems a word, so the words are indexed in a table of an in-memory
    database and read back from its ``fts5vocab`` table (a token's stem and its position): the
    stems are then exactly the index's, which no stemmer written here again could promise.
    """

    #: Words remembered at most; the memory is cleared past this (a day's vocabulary, not a corpus's).
    LIMIT = 200_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._known: dict[str, str] = {}

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(":memory:", check_same_thread=False)
        db.execute("CREATE VIRTUAL TABLE words USING fts5(w, tokenize='porter ascii')")
        db.execute("CREATE VIRTUAL TABLE terms USING fts5vocab(words, 'instance')")
        return db

    def stems(self, words: Iterable[str]) -> dict[str, str]:
        """Each word -> its stem; a word that is not lowercase ASCII letters and digits is its own stem."""
        known = self._known
        unknown = [w for w in dict.fromkeys(words) if w not in known]
        if unknown:
            with self._lock:
                plain = [w for w in unknown if w.isascii() and w.isalnum()]
                if plain:
                    if self._db is None:
                        self._db = self._open()
                    if len(known) + len(plain) > self.LIMIT:
                        known.clear()
                    self._db.execute("DELETE FROM words")
                    self._db.execute("INSERT INTO words(rowid, w) VALUES (1, ?)", (" ".join(plain),))
                    for term, offset in self._db.execute("SELECT term, offset FROM terms"):
                        known[plain[offset]] = term
                for w in unknown:
                    known.setdefault(w, w)
        return known


_STEMMER = _Stemmer()


def stems(words: Iterable[str]) -> dict[str, str]:
    """A map holding each of ``words`` (lowercase) -> its Porter stem, as the index stems it (see :class:`_Stemmer`)."""
    return _STEMMER.stems(words)


# British spellings and their American forms (colour/color, organise/organize, centre/center,
# analyse/analyze, catalogue/catalog): the endings differ, the stems then differ too.
_SPELLINGS = ((re.compile(r"(?<=\w{3})our(s|ed|ing|ful|able|ite)?$"), r"or\1"),
              (re.compile(r"(?<=\w{2})is(e|ed|es|ing|ation|ations|er|ers)$"), r"iz\1"),
              (re.compile(r"(?<=\w{2})ys(e|ed|es|ing|er|ers)$"), r"yz\1"),
              (re.compile(r"(?<=\w{3})tre(s)?$"), r"ter\1"),
              (re.compile(r"(?<=\w{3})ogue(s)?$"), r"og\1"))


def spellings(word: str) -> tuple[str, ...]:
    """``word`` and its other spelling when it has a British ending (colours -> colors), for matching either."""
    out = [word]
    for pattern, american in _SPELLINGS:
        other = pattern.sub(american, word, count=1)
        if other != word:
            out.append(other)
    return tuple(out)


def spelling_stems(word: str) -> set[str]:
    """The Porter stems of an English word and of its other spelling (colour, color: one stem)."""
    variants = spellings(word)
    found = stems(variants)
    return {found[v] for v in variants}


#: An identifier in a question: letters and digits joined by separators (kestrel-api, db_1.internal), or a word
#: holding a digit or an inner capital (v2beta1, OrderService): a name, whose parts mean nothing on their own.
IDENTIFIER = re.compile(r"[^\W_]+(?:[-_./:@#][^\W_]+)+|\b\w*(?:\d|[a-z][A-Z])\w*")
