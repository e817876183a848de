"""Facts in a history: statements that bind a subject and an attribute to a value worth keeping.

A fact is found by its value, not by its verb: "Service atlas-rpc listens on port 31234",
"项目atlas的负责人是王伟芳", ``# deploy key: dk_9f2c...`` and a JSON field ``"port": 31234``
all state one. Preferences and decisions with a reason are facts whose value is the statement itself.

What a coding agent handles, written down before the rules (from config and log formats, not
from any workload), and what recognises each:

Shapes of values (:mod:`aptmem.memory.values`; each has unit tests of its own examples in ``tests/test_fact_shapes.py``):

* identifiers of every form (snake_case parts may be joined by runs of underscores: Flyway's
  ``V42__add_users``; a pytest node id ``tests/test_a.py::test_b``; an image pinned by digest
  ``python:3.12-slim@sha256:...``): secrets and keys with a prefix (``sk_live_...``, ``ghp-...``),
  ticket ids (``OPS-4821``), codes of capitals glued to digits (a service-desk ``INC0042718``, a changelist
  ``CL40211``, a model ``T480``), UUIDs, ARNs, multi-part names with a digit (hosts, topics, buckets,
  queues: ``pg-ledger-7.db8.internal``, ``acme.prod.v2``), digit-led ones (a migration
  ``20240511_0930_add_invoices``), snake_case and CamelCase ones with a digit
  (``checkout_v2_enabled``, ``WebFrontendV2``), git branches, container image refs, handles and
  channels, cloud regions, command-line flags;
* quantities with units: sizes (``25MB``, ``2944Mi``), durations (``45s``, ``1500ms``, ``30d``),
  rates (``600 req/min``, ``200rps``), percentages (``0.5%``), k8s resource units (``750m``,
  ``2Gi``). A quantity a key, a flag or a setting word binds (``timeout: 45s``, ``limit to
  25MB``, ``a 512Mi memory limit``), or that a thing weighs (``the bundle weighs 148 MB``, ``fait 3.2 GB``)
  is a setting, kept; one merely reported (``took 45s``,
  ``p99 480ms``, ``dropped to 61%``, ``257 MB compressed``) is a measurement of the moment, not kept;
* numbers: ports, ids, account numbers (four digits or more), and a shorter number only when a
  key binds it (``replicas: 5``, ``--workers 12``, ``pool size is now 40``);
* paths and URLs: absolute, home (``~/``), relative with a file extension or three parts
  without a leading slash (``secret/data/payments/stripe``), Windows (``C:\\build\\out``),
  URLs of any scheme, scp-style git remotes (``git@host:org/repo.git``), Perforce depot paths (``//depot/main``);
* versions and ranges: ``v2.1``, ``1.4.2``, calendar versions, pins (``fastapi==0.110.2``),
  ranges and constraints (``^18.2.0``, ``~1.4``, ``>=18.17.0 <21``);
* hashes: hex ids of 7-64 digits (commits, short SHAs), C literals (``0x7ffd3a2c91b0``), digests (``sha256:...``);
* hosts and ports: IPv4 with a port, ``host.domain:5432``, ``localhost:8080``, a bare ``:8443``;
* e-mail addresses;
* dates and times: ISO dates and time stamps (with a zone or an offset), ``2025/03/14``,
  ``March 14, 2025``, ``14 Mar 2025``, a clock time with a zone (``18:00 UTC``);
* money;
* members: a name of capitalised words put into a set ("added Kai Osei to the reviewers", "Firefox ESR is on
  the support matrix", "ajouté Safari 17 aux navigateurs"): each adds one, it updates none;
* enum-like words in key positions: a setting's literal is its value whatever its shape
  (``log_level: debug``, ``strategy: RollingUpdate``, ``LOG_FORMAT=json``).

Ways a value is stated (:mod:`aptmem.memory.statements` cuts them into statements): ``key:
value``, ``key=value``, YAML/TOML/env/INI lines (about their section or block key), Markdown and
CSV tables with a header and column-aligned listings (``kubectl get``, ``docker ps``: each
cell about the row's first, named by its column), ``--flag value``, log lines (logfmt pairs,
a ``[component]``), JSON fields, "X is now Y", "moved X to Y", "X -> Y", "from X to Y" (a counted noun or a short
label beside the values: "from CL 40211 to CL 40388"; Chinese "从 X 调到了 Y"), "X became Y", "X is superseded", and
sentences with no key word ("ledger talks to postgres on 6543"), in English and Chinese; unified
diffs (:mod:`aptmem.memory.diffs`: a setting line an added line replaces is ``key: old -> new``
about the file's folder), nested YAML (a setting about the innermost key that names a thing, its
key path kept; a scalar list item a value of its key), a line of values alone (CODEOWNERS,
hosts: the first names what the others are about), a table row of plain words as one record
(a decision log's choice and reason together), an instruction word that opens a line (``FROM``).

Each fact carries what a keeper needs to rank and to update it:

* ``salience``: how likely it is needed again and found nowhere else. A distinctive shape ranks
  high, a quantity (a number with a unit: "2345 ms", "12 次") lowest; a value bound by a copula,
  a colon or an ``=`` ranks higher than one merely mentioned; the user's word counts more.
* ``attribute``: the key that binds the value (a setting's key, a flag's name, a table's column,
  the words before "is"), normalised; ``anchors``: the statement's content words and
  identifiers, without its values. A later fact of the same value family about the same
  subject and the same attribute updates it (:func:`same_slot`); with no attribute on either
  side, one whose anchors mostly agree does; whatever verb either used.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

import msgspec

from aptmem.entries import Assistant, Entry, User
from aptmem.memory.snippets import CHAT_CLOCK, snippet
from aptmem.memory.stances import stance as _stance
from aptmem.memory.statements import Statement, entry_text, statements
from aptmem.memory.values import BOUND_BY_DEFINITION as _BOUND_BY_DEFINITION
from aptmem.memory.values import INSTRUCTION as _INSTRUCTION
from aptmem.memory.values import KEY_AFTER as _KEY_AFTER
from aptmem.memory.values import KEY_BEFORE as _KEY_BEFORE
from aptmem.memory.values import SHAPE_WEIGHTS as _SHAPE_WEIGHT
from aptmem.memory.values import STOP_WORDS as _STOP
from aptmem.memory.values import attribute as _attribute
from aptmem.memory.values import changed_from as _changed_from
from aptmem.memory.values import values as _values

__all__ = ["FORM_PENALTY", "Fact", "family", "facts_of", "facts_of_entry", "form", "same_slot", "snippet", "tokens", "update_target",
           "word_frequency"]

_COPULA_EN = re.compile(r"\b(?:is|are|was|were|be|equals|to|now|becomes|became|at|on)\s*$|\]\($"
                        # the copula in German, Spanish, French and Chinese binds as "is" does
                        r"|\b(?:ist|sind|beträgt|es|son|est|sont)\s*$|(?:是|为|為)\s*$"
                        # Japanese binds with a particle: the topic, the subject or the object ("キーは X", "ラグが N")
                        r"|[はがを]\s*$"
                        r"|[:=：]\s*$", re.IGNORECASE)
_OLD_MARK = re.compile(r"(?:\b(?:nicht mehr|statt|anstatt|en lugar de|en vez de|ya no|au lieu de|from|was|were|instead of|previously|formerly|not|replacing|replaces|supersedes|superseding|in place of|rather than|old|used to be|off|out|swap|retire|drop|forget|ignore|scrap|abandon|discard|stop using|no more|past|beyond|newer than|ahead of)\s*$|(?:从|原来是|原为|不是|以前是|而非|由)\s*$)",
                       re.IGNORECASE)
#: What marks the value just before it as the old one: "5375 → 7750", "v2beta1 is deprecated".
_OLD_AFTER = re.compile(r"\s*(?:→|->|=>|\bis (?:deprecated|retired|out|gone|dead|no longer used|off|away|on leave|unavailable)\b"
                        r"|\bwas replaced\b|\bno longer\b|\b(?:is|was|has been) (?:superseded|obsolete|withdrawn|revoked|rolled back)\b"
                        r"|不要了|不用了|弃用|废弃|作废|已下线)", re.IGNORECASE)
#: A logfmt or query pair whose key names what the line is about (service=umber): a subject, not a value.
_NAMING_PAIR = re.compile(r"(?<![\w.-])(?:service|svc|app|application|component|job|name|project|repo|host|deployment|deploy|"
                          r"statefulset|daemonset|pod|container|namespace|cluster)=([\w.-]+)", re.ASCII)
_IDENT = re.compile(r"(?<![A-Za-z0-9_./])[A-Za-z][A-Za-z0-9]*(?:[-_.][A-Za-z0-9]+)+(?![A-Za-z0-9_/])"
                    r"|(?<![A-Za-z0-9_./])[a-z]+[A-Z][A-Za-z0-9]+\b")
#: Nouns that name what kind of thing the next (or previous) word is: "project atlas", "the atlas service".
_KIND_NOUN = re.compile(
    r"\b(?:project|service|team|repo|repository|database|db|host|server|app|cluster|package|module|bucket|queue|"
    r"library|crate|user|customer|tenant|environment|env|region|namespace|component|job|pipeline|topic|table)\s+"
    r"([A-Za-z][A-Za-z0-9_-]*)|\b([A-Za-z][A-Za-z0-9_-]*)\s+(?:project|service|team|repo|database|cluster|package|"
    r"module|library|app|server|job|pipeline)\b", re.IGNORECASE)
_KIND_WORDS = frozenset("project service team repo repository database db host server app cluster package module "
                         "bucket queue library crate user customer tenant environment env region namespace component job "
                         "pipeline topic table".split())
#: A name right after "for" or "of" that a verb, a preposition or a pause follows ("the memory limit of ledgerd from",
#: "Credentials for sorrel come out of", "Wartungsfenster für paygate ist"): what the attribute before it belongs to.
_NAMED_AFTER = re.compile(r"\b(?:for|of|von|für|de|del|du|para)\s+([a-z][a-z0-9]*(?:[-_][a-z0-9]+)*)(?=\s*(?:[,.:;!?)]|$)|\s+(?:is|are|was|were|"
                          r"has|have|had|ist|sind|es|est|looks?|comes?|come|uses?|runs?|will|should|must|pages|keeps?|fires?|to|from|on|"
                          r"at|in|now|stays?|goes|went|lives?|points?|talks?|listens?)\b)")
#: A chat-ops slash command and the thing it acts on, its first argument ("/deploy ledger --memory 2Gi").
_SLASH_COMMAND = re.compile(r"^/[a-z][\w-]*\s+([A-Za-z][\w.-]*)(?=\s|$)")
_NOT_NAMES = frozenset("now example instance course all each both everyone everything anyone something nothing them us "  # not names
                       "me him it one two three some any more most less time today tomorrow yesterday week month year".split())
_PROPER = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+[A-Za-z0-9]*\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+|[\u4e00-\u9fff]+|[A-Za-z]")
_LABEL = re.compile(r"([A-Za-z][A-Za-z_-]+)\s+$|[\u4e00-\u9fff]$|[\u30a0-\u30ff]$")  # a word, a Han or katakana one
#: What a fact loses when its output states three or more of its kind in the same words, and more per doubling
#: past three: a row of a 100-line listing (``docker ps``, a metrics CSV) says less than one of three.
_BULK_PENALTY = 1.5
_BULK_PER_DOUBLING = 1.0
#: Paths that hold nothing for long: scratch files are no facts to keep.
_TRANSIENT = re.compile(r"/(?:tmp|var/tmp|dev/shm|private/tmp)/")
#: A statement that adds one more of something: another ticket is no update of the first.
_ADDITIVE = re.compile(r"\b(?:also|as well|another|too|additionally|one more|in addition)\b|又|也|另一个|另外|再",
                       re.IGNORECASE)
#: A statement that says a value changed: it supersedes the older statement it is most like.
_UPDATE = re.compile(
    # the same cues in German, Spanish and French ("verschoben", "ahora", "désormais")
    r"\b(?:verschoben|geändert|umgestellt|jetzt|ab sofort|nicht mehr|cambiado|cambió|movido|ahora|ya no|changé|déplacé|désormais|"
    r"maintenant|remplacé|erhöht|gesenkt|gewechselt|ersetzt|aktualisiert|subimos|bajamos|cambiamos|actualizad[oa]|reemplazad[oa]|"
    r"relevé|abaissé|augmenté|réduit|mis à jour|agora|mudou|mudamos|alterad[oa]|trocad[oa]|atualizad[oa]|substituíd[oa])\b|"
    r"(?<!ing\s)(?<!ing\sit\s)(?<!ing\sthem\s)\b(?:now|moved|move[sd]? (?:to|off|from)|changed|switched|bumped?|upgraded|downgraded|rotated|replaced|migrated|no longer|from now on|"
    r"instead|updated|new|rebased|retired|renamed|from \S+ to|raised?|lowered?|swap(?:ped)?|failed over|deprecated|"
    r"reassigned|handed over|going forward|is out|used to be)\b|改为|改成|现在|换成|更新为|迁移|不再|切换|升到|降到"
    # Japanese and Korean: changed, switched, moved, raised, lowered, replaced, from now on
    r"|変更|変え|変わ|切り替え|切替|移行|移し|引き上げ|引き下げ|差し替え|置き換え|今後は|これからは"
    r"|변경|바꿨|바꾸었|바뀌|바꿈|교체|옮겼|이전했|올렸|내렸|앞으로는|이제부터|이제는",
    re.IGNORECASE)
_CJK_STOP = frozenset("的了是为在和与及把被将从已于也都就还这那个现".strip())
_SPACE = re.compile(r"\s+")
#: A word with a digit in it (an id, a count, a hash: 4ceac7de): what varies from line to line of one template.
_VARYING = re.compile(r"[^\s=:,;]*\d[^\s=:,;]*|\(\w[\w.-]*\)")  # ... and a one-word label in parentheses ("(billing)")
#: A cheap first look: a sentence with none of these can hold no value, preference or decision.
_MAYBE = re.compile(r"[\d/@=:：$€£¥#]|--|[A-Z]{2}|是|为|喜欢|偏好|请|不要|一律|决定|选择|采用|改用|定下|由|归|负责|只用|坚持|统一|习惯|选定|拍板|決め|決定|採用|選|정했|결정|선택|채택|하기로|必ず|常に|いつも|好み|希望|항상|반드시|선호"
                    r"|\b(?:is|are|was|were)\s+[A-Z]|prefer|always|never|don't|please|decid|chose|choose|settled|"
                    r"switch|opted|picked|going with|we will|we'll|stick|stay|only use|use only|nothing|convention|standardi|"
                    r"\bby [A-Z]|won|wins|selected|adopted|agreed|landed on|went with|outcome|resolution|verdict|conclusion|beschlossen|"
                    r"entschieden|vereinbart|decid|acord|elegimos|décid|retenu|choisi|bevorzug|bitte|prefier|préf|merci de|por favor|prefiro|"
                    r"sempre|siempre|nunca|jamais|toujours|immer", re.IGNORECASE)
_HAN = re.compile(r"[\u4e00-\u9fff]")
#: A pasted chat line's time and speaker ("14:17: jonas: ...", "[09:02] <kim> ..."): who said it and when, not the form
#: of what was said (one person's lines are no template).
_SPEAKER = re.compile(CHAT_CLOCK + r"(?:<[\w.@-]{1,32}>|@?[\w.-]{1,32}:)\s+")
#: What is left of a line of values alone once its values are taken out: spaces and separators.
_VALUES_ONLY = re.compile(r"[\s,;|+-]*")
#: The literal of a setting line (``key = "value"``, ``key: value``), after its key.
_SETTING_VALUE = re.compile(r"""[\w.-]+["']?\s*[=:]\s*("[^"]*"|'[^']*'|\d+(?:[.,]\d+)?\s[A-Za-zµΩ°%][\w/µΩ°]{0,7}|[^\s(){}\[\],;#]+)"""
                            r"""\s*(?:(?:#|//).*)?$""")  # (a number and its unit spaced apart, "48 kHz", is one literal)
class Fact(msgspec.Struct, frozen=True, kw_only=True):
    """A value a statement binds, with what it is about and how much it matters."""

    value: str
    #: the value's shape (url, path, key, hex, ticket, version, date, number, name, preference, decision, ...)
    shape: str
    #: the statement, clipped, exactly as said (the value is in it)
    text: str
    #: identifiers of the statement other than its values ("atlas-rpc"), sorted
    subject: tuple[str, ...]
    #: its content words without values, identifiers and stop words, sorted
    anchors: tuple[str, ...]
    salience: float
    #: the statement says the value changed (an update cue: "now", "moved to", "改为", ...)
    update: bool = False
    #: the statement adds to what was said before ("also", "another", "as well", "又"): it updates nothing
    adds: bool = False
    #: the key that binds the value in a structured statement (a setting's key, a flag's name, a table's column), normalised
    attribute: str = ""
    #: the old value the statement names as replaced ("from 7.4 to 7.5", "原来是 A"): exactly what it updates
    replaces: str = ""
    #: when it was said (the carrying entry's ts) and where (position in the history)
    ts: int = 0
    order: int = 0


def tokens(text: str) -> list[str]:
    """Lowercased content tokens: words, identifiers and CJK bigrams (single characters in short runs)."""
    return list(_tokens(text)) if len(text) > 4096 else list(_cached_tokens(text))


@functools.lru_cache(maxsize=1 << 17)
def _cached_tokens(text: str) -> tuple[str, ...]:
    """:func:`tokens` of a short text, remembered: contexts are rendered and ranked again and again."""
    return _tokens(text)


def _tokens(text: str) -> tuple[str, ...]:
    out: list[str] = []
    for word in _WORD.findall(text):
        if "\u4e00" <= word[0] <= "\u9fff":
            chars = [c for c in word if c not in _CJK_STOP]
            out.extend(chars[i] + chars[i + 1] for i in range(len(chars) - 1)) if len(chars) > 1 else out.extend(chars)
        else:
            low = word.lower()
            if low not in _STOP and len(low) > 1:
                out.append(low)
    return tuple(out)


def _clip(text: str, limit: int) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


#: A katakana word (ボーレート, タイムアウト): :func:`tokens` keeps none, so a Japanese statement in katakana had no content
#: words, and its value was dropped as bound to nothing. (Hangul words were tried too: they cost a development set's
#: salient summary one update at 32k and no Korean statement of the probes needed them.)
_KATAKANA = re.compile(r"[\u30a1-\u30fa\u30fc]{2,}")


def _kana_words(text: str) -> frozenset[str]:
    """The katakana words of ``text`` (content words of a statement's anchors)."""
    return frozenset(_KATAKANA.findall(text))


def _subject(sentence: str, values: set[str]) -> tuple[str, ...]:
    """What a sentence is about: its identifiers, words a kind noun names, proper nouns, latin words in CJK."""
    found = {m.group(0).lower() for m in _IDENT.finditer(sentence)}
    for match in _KIND_NOUN.finditer(sentence):
        word = (match.group(1) or match.group(2)).lower()
        if match.group(1) and _KEY_AFTER.match(sentence, match.end()):
            continue  # "db port: 5432": the word before the colon is the key, not what the line is about
        if sentence[max(0, match.start() - 2):match.start()] == "--":
            continue  # "--env prod": a flag and its value, not a kind noun naming a thing
        if word not in _STOP and word not in _KIND_WORDS:
            found.add(word)
    found.update(m.group(0).lower() for m in _PROPER.finditer(sentence))
    command = _SLASH_COMMAND.match(sentence)
    if command:  # a chat-ops command acts on its first argument ("/deploy ledger --memory 2Gi")
        found.add(command.group(1).lower())
    named = set()  # named as what an attribute belongs to: a subject even when a value holds it (secret/data/sorrel/...)
    for match in _NAMED_AFTER.finditer(sentence):
        word = match.group(1).lower()
        if word not in _STOP and word not in _KIND_WORDS and word not in _NOT_NAMES and word not in values:
            named.add(word)
    if _HAN.search(sentence):
        found.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_-]*", sentence))
    return tuple(sorted({*named, *(w for w in found - values if w not in _STOP and not any(w in v for v in values))}))


def facts_of(statement: Statement, *, by_user: bool, max_chars: int = 240) -> list[Fact]:
    """The facts one statement states (none if it binds no value worth keeping)."""
    return list(_facts_of(statement.text, by_user, max_chars, statement.carrier == "config", statement.subject))


@functools.lru_cache(maxsize=1 << 16)
def _facts_of(sentence: str, by_user: bool, max_chars: int, setting: bool = False, about: str = "") -> tuple[Fact, ...]:
    """:func:`facts_of`, remembered: histories repeat sentences, and summaries come back every compaction.

    ``setting``: the sentence is a setting line (its literal is a value); ``about``: what its
    structure says it is about (a table row's first cell, a config section), a subject.
    """
    if len(sentence) < 8 or not _MAYBE.search(sentence):
        return ()
    values = _values(sentence, _SETTING_VALUE.search(sentence) if setting else None)
    named = {m.group(1) for m in _NAMING_PAIR.finditer(sentence)}
    values = [v for v in values if v[1] not in named]
    subject = _subject(sentence, {v.lower() for _, v, _, _ in values})
    if named:
        subject = tuple(sorted({*subject, *(n.lower() for n in named)}))
    if about and about.lower() not in subject and not any(about.lower() in v.lower() for _, v, _, _ in values):
        subject = tuple(sorted({*subject, about.lower()}))
    text = _clip(sentence, max_chars)
    stripped = sentence
    for _, value, _, _ in values:
        stripped = stripped.replace(value, " ")
    anchors = tuple(sorted(set(tokens(stripped)) - set(subject) | _kana_words(stripped)))
    user_bonus = 0.5 if by_user else 0.0
    stance = _stance(sentence)
    if stance:  # its value is the whole statement (what was chosen, and why)
        return (Fact(value=text, shape=stance, text=text, subject=subject, anchors=anchors, salience=3.5 + user_bonus),)
    if not subject and not anchors and len(values) >= 2 and _VALUES_ONLY.fullmatch(stripped):
        # A line of values alone ("/services/api/  @dana", "10.0.0.7  db-1", a CODEOWNERS, hosts or
        # .gitattributes line): the first names what the others are about, as a table row's first cell does.
        head = min(values, key=lambda v: v[2])
        values = [v for v in values if v is not head]
        subject = (head[1].lower(),)
    if not subject and not anchors and not any(sh == "assign" or _KEY_BEFORE.search(sentence, max(0, s - 64), s)
                                               or _INSTRUCTION.match(sentence, 0, s) for sh, _, s, _ in values):
        return ()  # a bare value: nothing says what it is (a key or an instruction word before it would)
    # A sentence that reports a measurement ("build 3f9a took 12 minutes") names its other values in passing.
    measured = any(shape == "quantity" for shape, _, _, _ in values)
    # A value marked old ("from X", "was X", "not X") is the old value of an update only when the
    # statement names a new value of its family beside it: "loaded settings from /srv/x.toml" names one value, and it is current.
    origins = _changed_from(sentence, values)  # the X of "from X to Y", in any of the languages' orders
    # A quantity marked old is a setting's old value when the statement names a current setting quantity beside it:
    # "watchdog: 2500 ms (was 1500 ms)" reads "was 1500 ms" as a reading, but it is what 2500 ms replaced.
    marked = [(start, value, shape) for shape, value, start, end in values
              if (start in origins or _OLD_MARK.search(sentence[:start]) or _OLD_AFTER.match(sentence, end))]
    current = {family(shape) for shape, value, start, _ in values
               if shape != "quantity" and (start, value, shape) not in marked}
    old = [(start, value, shape) for start, value, shape in marked if _settled(shape) in current]
    out: list[Fact] = []
    for shape, value, start, _ in values:
        if shape == "quantity" or (start, value, shape) in old:
            continue  # a measurement, or the old value an update names
        # The old value this one replaces is the nearest one of its family the statement names as old.
        replaced = [v for s, v, sh in old if _settled(sh) == family(shape) and s < start] or \
                   [v for _, v, sh in old if _settled(sh) == family(shape)]
        if shape == "name" and not subject and not anchors:
            continue  # a name bound to nothing we could name
        before = sentence[max(0, start - 24):start]
        label = _LABEL.search(before)
        bound = 1.0 if _COPULA_EN.search(before) or shape == "name" or _INSTRUCTION.match(sentence, 0, start) \
            or (label is not None and (label.group(1) or "").lower() not in _STOP) else 0.0
        if shape in _BOUND_BY_DEFINITION:
            bound = 0.0  # a key is what made it a value at all: no bonus for it
        salience = _SHAPE_WEIGHT.get(shape, 2.5) + bound + user_bonus + (0.5 if subject else 0.0)
        if measured or (shape == "path" and _TRANSIENT.match(value)):
            salience -= 1.0
        out.append(Fact(value=value, shape=shape, text=text, subject=subject, anchors=anchors, salience=salience,
                        attribute=value.split("=", 1)[0].lower().replace("_", "-") if shape == "assign"
                        else _attribute(sentence, start, subject) or _instruction_key(sentence, start),
                        update=_UPDATE.search(sentence) is not None or bool(replaced),
                        adds=_ADDITIVE.search(sentence) is not None or shape == "member", replaces=replaced[-1] if replaced else ""))
    return tuple(out)


def _settled(shape: str) -> str:
    """The family of a value as the old side of a change: a quantity said as replaced was a setting's amount."""
    return "amount" if shape == "quantity" else family(shape)


def _instruction_key(sentence: str, start: int) -> str:
    """The instruction word that opens the line and binds the value at ``start`` (``FROM``, ``EXPOSE``), lowercased, or ""."""
    match = _INSTRUCTION.match(sentence, 0, start)
    return sentence[:start].strip().lower() if match else ""


def _frame_words(text: str, values: Iterable[str], subject: Collection[str]) -> list[str]:
    """The words of a statement, its ``values``, identifiers, words with digits and ``subject`` left out: what the
    rows of one template share (a row's subject differs from row to row of it: it is no part of the template)."""
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, " ")
    return [t for t in tokens(_VARYING.sub(" ", _IDENT.sub(" ", text))) if t not in subject]


def _signature(fact: Fact, words: Sequence[str], common: frozenset[str] = frozenset()) -> tuple[str, tuple[str, ...]]:
    """A fact's shape and the first of its statement's template ``words``: the template it came from
    ("tests/a.py::test_x PASSED" and "tests/b.py::test_y PASSED" are one). With ``common`` (the words most statements
    of the output use), only those: "[ci] api build 51 green by @kim" and "[ci] web build 52 queued by @lee" are one."""
    frame = [w for w in words if w in common] if common else []
    return fact.shape, tuple((frame or list(words))[:3])


#: A tool output of this many statements or more is read for its common words (those a third of its statements use).
_COMMON_AT = 8


def facts_of_entry(entry: Entry, order: int = 0, *, max_facts: int = 12) -> Iterator[Fact]:
    """The facts of one entry, at most ``max_facts`` (the most salient), stamped with its ts and ``order``."""
    text = entry_text(entry)
    if not text:
        return
    by_user = isinstance(entry, User)
    found: list[Fact] = []
    for statement in statements(text):
        found.extend(facts_of(statement, by_user=by_user))
    # Lines of one shape repeated through an output (a listing, a run of warnings) are bulk, not news.
    values: dict[str, list[str]] = {}
    for fact in found:
        values.setdefault(fact.text, []).append(fact.value)
    words = [_frame_words(f.text, values[f.text], set(f.subject)) for f in found]
    common: frozenset[str] = frozenset()
    if len(values) >= _COMMON_AT and not isinstance(entry, (User, Assistant)):
        # a tool's long output: its templates are the words many of its statements share (people do not repeat so)
        seen: dict[str, set[str]] = {}
        for fact, said in zip(found, words, strict=True):
            for word in said:
                seen.setdefault(word, set()).add(fact.text)
        common = frozenset(w for w, texts in seen.items() if len(texts) >= max(3, len(values) // 3))
    signatures = [_signature(f, w, common) for f, w in zip(found, words, strict=True)]
    shapes = Counter(signatures)
    # A preference or a decision is its statement: it has no template to repeat (each row of a decision log is its own).
    found = [msgspec.structs.replace(f, salience=f.salience - _BULK_PENALTY - _BULK_PER_DOUBLING * math.log2(shapes[sig] / 3))
             if shapes[sig] >= 3 and f.shape not in ("preference", "decision") else f
             for f, sig in zip(found, signatures, strict=True)]
    # A value the output says again and again takes one place among its facts, not many: its repeats would push out
    # the one line that says something once.
    best: dict[str, int] = {}
    for index, fact in enumerate(found):
        if fact.value not in best or fact.salience > found[best[fact.value]].salience:
            best[fact.value] = index
    found = [found[i] for i in sorted(best.values())]
    if len(found) > max_facts:
        keep = sorted(range(len(found)), key=lambda i: -found[i].salience)[:max_facts]
        found = [found[i] for i in sorted(keep)]
    ts = getattr(entry, "ts", 0) or 0
    for fact in found:
        yield msgspec.structs.replace(fact, ts=ts, order=order)


#: What a fact loses per doubling of the facts said in its form (:func:`form`): a form the tools keep printing is output, not news.
FORM_PENALTY = 1.0


def form(shape: str, text: str, value: str, subject: Collection[str] = ()) -> tuple[str, tuple[str, ...]]:
    """The form a fact was said in: its value's family and the first words of its statement, the value,
    identifiers, words with digits and its ``subject`` left out ("Build 3ad9 of onyx-auth took ..." and "Build 94ce
    of lumen-api took ..." are one form; so are the rows "sundial owner check: AI-4" and "corvid owner check: AI-7")."""
    return family(shape), tuple(_frame_words(_SPEAKER.sub("", text), (value,), subject)[:2])


#: Shapes one slot's value may take in different statements ("0.0.0.0:31234" and "31234"; "fastapi==0.1.2" and "0.1.2";
#: a setting's literal and the same value said in prose, whose shape was found; an image pinned by digest and the digest).
_FAMILY = {"ip": "number", "pin": "version", "range": "version", "kv": "setting", "count": "number", "hostport": "number",
           "digest": "image"}


def family(shape: str) -> str:
    """The family of a value shape: an update may change a value from one shape of a family to another."""
    return _FAMILY.get(shape, shape)


def same_slot(old: Fact, new: Fact) -> bool:
    """Whether ``new`` states the same thing as ``old`` (so, if its value differs, updates it).

    Same value shape, the same identifiers (at least one), and anchors that mostly agree: a
    near miss about another service, or another attribute of the same one, is not an update.
    """
    if family(old.shape) != family(new.shape) or old.subject != new.subject:
        return False
    if not old.subject:
        # Nothing names what either is about: only a key of its own binds them, a setting's name of several parts
        # ("CONFIG_MAIN_STACK_SIZE=4096", "max-retries: 5"), which names one thing wherever it is said; a one-word key
        # ("port", "status") is said of many things.
        return bool(old.attribute) and old.attribute == new.attribute and "-" in old.attribute.strip("-") \
            and not new.adds and old.shape not in ("preference", "decision")
    if old.shape in ("preference", "decision") or new.adds:
        return False  # a statement-valued fact accumulates; "another one" adds, it does not replace
    if old.attribute and new.attribute:  # both keyed: the same key is the same slot, another key another slot
        return old.attribute == new.attribute
    a, b = set(old.anchors), set(new.anchors)
    if not a and not b:
        return True
    if _one_word_apart(old, new):
        return False  # "quokka rollout is now 9%" beside "dunlin rollout is now 4%": one form, two things
    if a != b and not new.update:
        # The same words but one, and nothing says a value changed: another thing said in the same form (a near
        # miss, "the beacon backup fires on X" beside "the ledgerd backup fires on Y"), not an update of it.
        return False
    return len(a & b) / len(a | b) >= 0.34


def update_target(new: Fact, older: Sequence[Fact], frequency: Mapping[str, int]) -> int | None:
    """For a statement that says a value changed: the index of the older fact it most likely updates.

    A statement that names the old value ("from 7.4 to 7.5") updates the fact holding exactly that
    value, or none. Otherwise the older fact has the same shape and another value, names no other subject (and ``new``
    names its subject, if it has one), and shares with ``new`` a word that at most two facts use (``frequency``: in how many facts each word is);
    among those, the one whose words agree most. None if no fact qualifies.
    """
    if not new.update or new.adds or new.shape in ("preference", "decision"):
        return None
    if new.replaces:  # it names the value it replaces: that fact, and no other, whatever words either uses
        return next((i for i, old in enumerate(older) if family(old.shape) == family(new.shape) and _holds(old.value, new.replaces)), None)
    mine = set(new.subject) | set(new.anchors)
    best, best_score = None, 0.0
    for index, old in enumerate(older):
        # Another subject is another thing; a subject one statement found and the other only says as a word ("osprey
        # toolchain bumped to gcc-arm 13.2" beside "the toolchain for osprey is gcc-arm 12.3") is the same one.
        if family(old.shape) != family(new.shape) or old.value == new.value \
                or (old.subject and new.subject and not (set(old.subject) - set(new.subject) <= set(new.anchors)
                                                         and set(new.subject) - set(old.subject) <= set(old.anchors))):
            continue
        if (old.attribute and new.attribute and old.attribute != new.attribute) or _one_word_apart(old, new):
            continue  # another key of the same thing ("max-conns" is no update of "timeout")
        theirs = set(old.subject) | set(old.anchors)
        shared = mine & theirs
        if old.subject and not shared & set(old.subject):
            continue  # an update is about the same thing: it names the old fact's subject
        if not any(frequency.get(word, 0) <= 2 for word in shared):
            continue
        score = len(shared) / len(mine | theirs)
        if score > best_score:
            best, best_score = index, score
    return best


def _one_word_apart(old: Fact, new: Fact) -> bool:
    """Whether two statements say the same words, their values left out, but one word in the same place: that word
    names what each is about (a near miss of the same form), so neither updates the other."""
    a = tokens(old.text.replace(old.value, " "))
    b = tokens(new.text.replace(new.value, " "))
    return len(a) == len(b) > 2 and sum(x != y for x, y in zip(a, b, strict=True)) == 1


def _holds(value: str, old: str) -> bool:
    """Whether a stored ``value`` is the ``old`` value an update names ("fastapi==0.1.2" holds "0.1.2")."""
    return value == old or (value.endswith(old) and not value[-len(old) - 1].isalnum() and value[-len(old) - 1] != ".")


def word_frequency(facts: Iterable[Fact]) -> Counter[str]:
    """In how many of ``facts`` each subject or anchor word occurs."""
    return Counter(word for fact in facts for word in set(fact.subject) | set(fact.anchors))
