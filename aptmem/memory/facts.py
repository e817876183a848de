"""Facts in a history: statements that bind a subject and an attribute to a value worth keeping.

A fact is found by its value, not by its verb: "Service atlas-rpc listens on port 31234",
"项目atlas的负责人是王伟芳", ``# deploy key: dk_9f2c...`` and a JSON field ``"port": 31234``
all state one. Preferences and decisions with a reason are facts whose value is the statement itself.

What a coding agent handles, written down before the rules (from config and log formats, not
from any workload), and what recognises each:

Shapes of values (:data:`_SHAPES`; each has unit tests of its own examples in ``tests/test_fact_shapes.py``):

* identifiers of every form: secrets and keys with a prefix (``sk_live_...``, ``ghp-...``),
  ticket ids (``OPS-4821``), UUIDs, ARNs, multi-part names with a digit (hosts, topics, buckets,
  queues: ``pg-ledger-7.db8.internal``, ``acme.prod.v2``), digit-led ones (a migration
  ``20240511_0930_add_invoices``), snake_case and CamelCase ones with a digit
  (``checkout_v2_enabled``, ``WebFrontendV2``), git branches, container image refs, handles and
  channels, cloud regions, command-line flags;
* quantities with units: sizes (``25MB``, ``2944Mi``), durations (``45s``, ``1500ms``, ``30d``),
  rates (``600 req/min``, ``200rps``), percentages (``0.5%``), k8s resource units (``750m``,
  ``2Gi``). A quantity a key, a flag or a setting word binds (``timeout: 45s``, ``limit to
  25MB``) is a setting, kept; one merely reported (``took 45s``, ``p99 480ms``) is a measurement
  of the moment, not kept;
* numbers: ports, ids, account numbers (four digits or more), and a shorter number only when a
  key binds it (``replicas: 5``, ``--workers 12``, ``pool size is now 40``);
* paths and URLs: absolute, home (``~/``), relative with a file extension or three parts
  without a leading slash (``secret/data/payments/stripe``), Windows (``C:\\build\\out``),
  URLs of any scheme, scp-style git remotes (``git@host:org/repo.git``);
* versions and ranges: ``v2.1``, ``1.4.2``, calendar versions, pins (``fastapi==0.110.2``),
  ranges and constraints (``^18.2.0``, ``~1.4``, ``>=18.17.0 <21``);
* hashes: hex ids of 7-64 digits (commits, short SHAs), digests (``sha256:...``);
* hosts and ports: IPv4 with a port, ``host.domain:5432``, ``localhost:8080``, a bare ``:8443``;
* e-mail addresses;
* dates and times: ISO dates and time stamps (with a zone or an offset), ``2025/03/14``,
  ``March 14, 2025``, ``14 Mar 2025``, a clock time with a zone (``18:00 UTC``);
* money;
* enum-like words in key positions: a setting's literal is its value whatever its shape
  (``log_level: debug``, ``strategy: RollingUpdate``, ``LOG_FORMAT=json``).

Ways a value is stated (:mod:`aptmem.memory.statements` cuts them into statements): ``key:
value``, ``key=value``, YAML/TOML/env/INI lines (about their section or block key), Markdown and
CSV tables with a header and column-aligned listings (``kubectl get``, ``docker ps``: each
cell about the row's first, named by its column), ``--flag value``, log lines (logfmt pairs,
a ``[component]``), JSON fields, "X is now Y", "moved X to Y", "X -> Y", "from X to Y", and
sentences with no key word ("ledger talks to postgres on 6543"), in English and Chinese.

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
from collections.abc import Iterable, Iterator, Mapping, Sequence

import msgspec

from aptmem.entries import Entry, User
from aptmem.memory.statements import Statement, entry_text, statements

__all__ = ["FORM_PENALTY", "Fact", "family", "facts_of", "facts_of_entry", "form", "same_slot", "snippet", "tokens", "update_target",
           "word_frequency"]

#: Value shapes, most distinctive first, with the weight of a value of that shape.
_SHAPES: tuple[tuple[str, re.Pattern[str], float], ...] = (
    # A URL of any scheme, and an scp-style remote (git@host:org/repo.git).
    ("url", re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s\"'<>)\]，。]+|\b[\w.-]+@[\w-]+(?:\.[\w-]+)+:[\w~][\w./~-]*", re.ASCII), 3.0),
    ("arn", re.compile(r"\barn:[\w-]+:[\w-]*:[\w-]*:\d*:[\w/:.+=@-]*\w", re.ASCII), 3.0),
    ("digest", re.compile(r"\b(?:sha1|sha224|sha256|sha384|sha512|md5|blake2b?):[0-9a-fA-F]{16,128}\b", re.ASCII), 3.0),
    ("uuid", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", re.ASCII), 3.0),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b", re.ASCII), 3.0),
    ("assign", re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+=[^\s,;'\"]+", re.ASCII), 3.0),
    ("key", re.compile(r"\b[a-z]{1,10}_[A-Za-z0-9]{8,}\b|\b[a-z]{2,10}-[A-Za-z0-9]{16,}\b", re.ASCII), 3.0),
    ("pin", re.compile(r"\b[\w.-]+(?:==|~=|>=|@)\d+(?:\.\w+){1,3}\b", re.ASCII), 3.0),
    ("ticket", re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b", re.ASCII), 3.0),
    # A host with a port (db-1.internal:5432, localhost:8080) or a bare listening port (:8443): not a clock time.
    ("hostport", re.compile(r"(?<![\w.:/@-])(?:localhost|[A-Za-z][\w-]*(?:\.[\w-]+)+)?:\d{2,5}(?![\w.:])", re.ASCII), 3.0),
    # Absolute and home paths; relative ones with an extension, or of three parts or more; Windows paths.
    ("path", re.compile(r"(?<![\w@:/.])(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?|(?<![\w/])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b"
                        r"|(?<![\w/:.@-])[A-Za-z_][\w.-]*(?:/[\w.@+-]+){2,}/?|\b[A-Za-z]:\\(?:[\w. -]+\\)*[\w.-]+", re.ASCII), 2.5),
    ("branch", re.compile(r"\b(?:feature|fix|hotfix|release|bugfix|chore|feat|topic|dev)/[\w./-]+", re.ASCII), 3.0),
    # A container image reference (python:3.12-slim, ghcr.io/acme/api:2.4.1): a name, a colon, a tag with a digit.
    ("image", re.compile(r"(?<![\w.:/-])[a-z][a-z0-9.-]*(?:/[a-z0-9._-]+)*:(?=[\w.-]*\d)[A-Za-z0-9][\w.-]*(?<![.-])(?![\w:/])", re.ASCII), 3.0),
    # A cron schedule: five fields of digits, stars, steps and ranges, one of them a star.
    ("cron", re.compile(r"(?<![\w*/,-])(?=[^\n]*\*)(?:[\d*][\d*/,-]*\s){4}[\d*][\d*/,-]*(?![\w*/,-])", re.ASCII), 3.0),
    # Dates and times: ISO (with a zone or an offset), slashed, month names, a clock time with a zone or am/pm.
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w:])"
                        r"|\b\d{4}/\d{2}/\d{2}\b|\b\d{1,2}/\d{1,2}/\d{4}\b"
                        r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}\b"
                        r"|\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* \d{4}\b"
                        r"|(?<![\w:.])\d{1,2}:\d{2}(?::\d{2})?\s?(?:UTC|GMT|Z|[AP]M|am|pm|[A-Z][SD]T)\b", re.ASCII), 2.0),
    ("hex", re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b", re.ASCII), 3.0),
    ("ip", re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{2,5})?\b", re.ASCII), 2.5),
    # A version range or constraint (^18.2.0, ~1.4, >=18.17.0 <21): its parts together are the value.
    ("range", re.compile(r"(?<![\w<>=~^!-])(?:\^|~>?|[<>]=?|!=)\s?v?\d+(?:\.[\w*]+){0,3}(?:,?\s*(?:[<>]=?|!=)\s?\d+(?:\.[\w*]+){0,3})*", re.ASCII), 2.5),
    # A version has a v, three parts or a suffix (v2.1, 1.4.2, 16.6-jammy, v3beta2): a bare "94.0" is a number.
    ("version", re.compile(r"\bv\d+\.\d+(?:\.\d+){0,2}(?:-[\w.]+)?\b|\b\d+\.\d+(?:\.\d+){1,2}(?:-[\w.]+)?\b"
                           r"|\b\d+\.\d+-[\w.]+\b|\bv\d+(?:alpha|beta|rc|preview)\d*\b", re.ASCII), 2.0),
    ("money", re.compile(r"[$€£¥]\s?\d[\d,.]*\b|\b\d[\d,.]*\s?(?:USD|EUR|GBP|CNY|RMB|元)", re.ASCII), 2.5),
    # A number with a unit: a size, a duration, a rate, a percentage, a k8s resource quantity (2944Mi, 750m).
    # A setting when a key or a setting word binds it, else a measurement (see _values).
    ("amount", re.compile(r"(?<![\w.,/-])\d+(?:\.\d+)?(?:\s?(?:%|percent\b)|(?:[KMGTPE]i|[kKMGTPE]B|[kMG]b|ms|us|µs|ns|s|sec|m|min|h|hr|d|w|"
                          r"B|rps|qps|tps|x)(?![\w%])|\s(?:ms|MB|GB|KB|TB|MiB|GiB|KiB|seconds?|minutes?|hours?|days?|weeks?)\b)"
                          r"(?:\s?/\s?(?:s|sec|second|min|minute|h|hour|day)\b|\s(?:per|a) (?:second|minute|hour|day)\b)?"
                          r"|(?<![\w.,/-])\d+(?:\.\d+)?\s?(?:毫秒|秒|分钟|小时|天|周|兆|字节)"
                          r"|(?<![\w.,/-])\d+(?:\.\d+)?\s(?:req|requests|calls|msgs|messages|events|ops|jobs)\s?(?:/\s?|per )(?:s|sec|second|min|minute|h|hour|day)\b",
                          re.ASCII), 2.5),
    # A name made of parts, one with a digit (pg-ledger-7.db8.internal, orders.events.v3, app-artifacts-5f1c09):
    # a host, topic, bucket or queue; digit-led (20240511_0930_add_invoices), snake_case (checkout_v2_enabled)
    # or CamelCase (WebFrontendV2) names with a digit. After the other shapes, so a URL, path, version or key keeps its own.
    ("ident", re.compile(r"(?<![\w./:@#-])(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z]{2})[A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)*"
                         r"(?:[.-][A-Za-z0-9]+)(?![\w/@]|[.-]\w)"
                         r"|(?<![\w./:@#-])(?=\w*[A-Za-z]{2})(?=\w*\d)[A-Za-z0-9]+(?:_[A-Za-z0-9]+){2,}(?![\w/@]|[.-]\w)"
                         r"|(?<![\w./:@#-])(?=\w*[A-Za-z]{2})\d+(?:_[A-Za-z0-9]+)+(?![\w/@]|[.-]\w)"
                         r"|(?<![\w./:@#-])(?=[A-Za-z]*\d)[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+\d*(?![\w/@]|[.-]\w)"
                         # a dotted name of three parts or more (acme.prod.assets, com.acme.billing): a bucket, a package, a host
                         r"|(?<![\w./:@#-])[a-z][a-z0-9-]+(?:\.[a-z][a-z0-9-]*){2,}(?![\w/@(]|[.-]\w)", re.ASCII), 2.5),
    ("number", re.compile(r"(?<![\w.,-])\d+(?:[.,]\d+)?(?![\w.-]*\w)", re.ASCII), 2.0),
    # Cloud regions (us-east-1, eu-central-2), a command-line flag (--no-cache), a channel or handle
    # (#ops-alerts, @release-team), and a log line's key=value pair (its value).
    ("region", re.compile(r"\b[a-z]{2}-(?:north|south|east|west|central)(?:east|west)?-\d{1,2}\b", re.ASCII), 3.0),
    ("flag", re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*\b", re.ASCII), 3.0),
    ("handle", re.compile(r"(?<![\w&#/@])[#@][A-Za-z][\w.-]*[A-Za-z0-9]", re.ASCII), 3.0),
    ("kv", re.compile(r"(?<![\w.-])[a-z][a-z0-9_.]*=(?P<v>[^\s,;'\"&=]{2,})", re.ASCII), 2.5),
)
_SHAPE_WEIGHT = {name: weight for name, _, weight in _SHAPES}
#: A short number a key binds ("replicas: 5"): kept, but below every distinctive shape (such settings are many).
_SHAPE_WEIGHT["count"] = 1.5
#: An enum-like word a key binds ("quorum", "debug"): kept, below every distinctive shape.
_SHAPE_WEIGHT["word"] = 1.0
#: Shapes that are values only because a key binds them: the binding earns them nothing more.
_BOUND_BY_DEFINITION = frozenset({"count", "word"})
#: A number followed by a unit or a counted noun is a measurement of the moment, not a value to keep.
_UNIT = re.compile(
    r"\s?(?:ms|s|sec|secs|seconds?|minutes?|min|hours?|h|days?|%|percent|[kKMGT]i?B|bytes?|kb|mb|gb|x|times|"
    r"per\b|次|毫秒|秒|分钟|小时|天|个|行|条|倍|字节|项|人|台)"
    r"|\s(?!(?:as|is|its|this|was|has|does|us|yes|thus|plus)\b)(?:[a-z]+\s)?[a-z]+s\b",
)
#: A label that says the number after it is a measurement ("p99_ms:", "error count =") or a place in a file
#: ("line 1914" of a traceback or a compiler message: it moves with every edit).
_UNIT_KEY = re.compile(r"(?:[_\s]|\b)(?:ms|s|sec|secs|seconds|bytes|kb|mb|gb|pct|percent|ratio|count|total|size|errors|"
                       r"hits|misses|latency|duration|elapsed|p\d\d|line|lineno|col|column|offset)\s*[:=]?\s*$", re.IGNORECASE)
#: Words just before a number with a unit that make it a setting, not a measurement ("limit to 3250 per minute",
#: "throttle at 5375 requests per minute", "--per-minute 900", "timeout=30s").
_SETS = re.compile(r"(?:\b(?:to|at|is|be|of|now|limit|limited|cap|capped|throttle[sd]?)|[=:：]|->|→|=>|--[a-z][\w-]*|为|是|到|成)\s*$", re.IGNORECASE)
#: What binds a short number or a quantity to a key right before it ("replicas: 5", "--workers 12", "pool size is now 40",
#: "set it to 3"): a setting, not a count said in passing ("3 retries", "step 2").
_BOUND = re.compile(r"(?:[=:：]|->|→|=>|--[a-z][\w-]*|\b(?:to|is|are|now|becomes|became|set|of)\b|为|是|到|成)\s*[\"']?$", re.IGNORECASE)
#: The key that binds the value after it, in a structured statement: ``key: value``, ``key = value``, ``--flag value``.
_KEY_BEFORE = re.compile(r"(?:--([a-z][\w-]*)[\s=]|([A-Za-z_][\w.-]*)[\"']?\s*[:=：])\s*[\"']?$")
#: A measurement named before its copula ("the error rate is 8%", "p99 latency was 480ms", "错误率是8%"): reported, not set.
_MEASURED = re.compile(r"(?:\b(?:rate|usage|utili[sz]ation|latency|p\d\d|duration|elapsed|took|load|throughput|hit ratio)\b|率|耗时|延迟|占用|用时)"
                       r"[^.;,，。]{0,24}?(?:\b(?:is|was|are|were)\b|是|为|[:=：])\s*$", re.IGNORECASE)
#: An enum-like word a key or a setting verb binds at the end of a clause ("the log level is now debug", "set the
#: consistency to quorum", "mode: strict"): a value when nothing of a distinctive shape is there. A state word
#: ("the build is green", "it is running") says how something is, not what it is set to.
_WORD_VALUE = re.compile(r"(?:\b(?:is|are)\s+(?:now\s+|set\s+to\s+)?|\b(?:set|switched|changed|moved|defaults?)\s+(?:[\w'-]+\s+){0,6}?to\s+|[:=]\s*)"
                         r"([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?=\s*(?:[.,;!?)]|$))", re.IGNORECASE)
_STATE_WORD = re.compile(r"(?:ing|ed|ly|ful|less|able|ible)$|^(?:done|ready|green|red|yellow|fine|ok|okay|good|bad|broken|up|down|live|"
                         r"open|closed|fixed|flaky|slow|fast|true|false|yes|no|on|off|none|null|empty|same|different|new|old|"
                         r"correct|wrong|right|fine|clean|dirty|stale|current|unknown|here|there|back|out|in|gone|high|low)$")
#: An instruction word that opens a line and binds what follows (Dockerfile ``FROM``, ``EXPOSE``, ``USER``; an HTTP verb).
_INSTRUCTION = re.compile(r"[A-Z]{3,12}\s+$")
_KEY_AFTER = re.compile(r"[\"']?\s*[:=：]\s*\S")
_FLAG_BEFORE = re.compile(r"--[a-z][\w-]*[\s=]$")
_COPULA_EN = re.compile(r"\b(?:is|are|was|were|be|equals|to|now|becomes|became|at|on)\s*$"
                        r"|[:=：]\s*$", re.IGNORECASE)
_NAME_AFTER = re.compile(r"(?:\b(?:is|are|was|were)\b|[:：])\s+((?:[A-Z][a-z]+|[A-Z]{2,})(?:[ -](?:[A-Z][a-z]+|[A-Z]{2,})){0,2})\b")
#: A name that a role binds: "owned by Dana Wu", "maintained by QA", "由王伟负责", "归李娜管".
_NAME_BY = re.compile(r"\b(?:owned|maintained|run|led|managed|handled|reviewed|approved|assigned to|owner(?:ship)? (?:is|goes to)) (?:by )?"
                      r"((?:[A-Z][a-z]+|[A-Z]{2,})(?:[ -](?:[A-Z][a-z]+|[A-Z]{2,})){0,2})\b"
                      r"|(?:由|归|交给|找)\s*([\u4e00-\u9fff]{2,4}?)\s*(?:负责|维护|管理|主管|牵头|管|跟进|对接|处理|审批|拍板|说了算|盯着|把关|签字)")
_CJK_VALUE = re.compile(r"(?:是|(?<![因认作成以])为|改为|改成|设为|设置为|换成|变为|定为|更新为|：|:\s*(?=[\u4e00-\u9fff]))\s*([^\s，。；、,;:：！？!?的了]{2,16})(?=$|[，。；、,;！？!?\s])")
_OLD_MARK = re.compile(r"(?:\b(?:from|was|were|instead of|previously|formerly|not|replacing|replaces|supersedes|superseding|in place of|rather than|old|used to be|off|out|swap|retire|drop|forget|ignore|scrap|abandon|discard|stop using|no more)\s*$|(?:从|原来是|原为|不是|以前是|而非|由)\s*$)",
                       re.IGNORECASE)
#: What marks the value just before it as the old one: "5375 → 7750", "v2beta1 is deprecated".
_OLD_AFTER = re.compile(r"\s*(?:→|->|=>|\bis (?:deprecated|retired|out|gone)\b|\bwas replaced\b)", re.IGNORECASE)
#: A logfmt or query pair whose key names what the line is about (service=umber): a subject, not a value.
_NAMING_PAIR = re.compile(r"(?<![\w.-])(?:service|svc|app|application|component|job|name|project|repo|host)=([\w.-]+)", re.ASCII)
_PREFERENCE = re.compile(
    r"\b(?:i|we) (?:prefer|like to|want|always|never)\b|\bplease (?:always|never|use|don't|do not|avoid|keep)\b"
    r"|\b(?:always|never) (?:use|run|commit|push|write|add|put)\b|\bdon't (?:ever )?(?:use|run|commit|push)\b"
    r"|\b(?:stick|stay) (?:with|to)\b|\b(?:only|just) use\b|\buse only\b|\bnothing (?:else|but)\b|\bmy (?:preference|choice)\b"
    r"|\b(?:our|the team's) (?:convention|standard|default) is\b|\bstandardi[sz]e on\b|\bgo-to\b"
    r"|我(?:更)?(?:喜欢|偏好|希望|习惯)|请(?:总是|始终|不要|务必|使用|用)|不要(?:使用|用)|一律|坚持用|只用|统一用|别用",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decided|decide|we will|we'll|let's go with|going with|went with|chose|choose|chosen|settled on|switch(?:ed)? to|"
    r"opted for|picked|won|wins|selected|adopted|agreed on|landed on|the call is|the winner is)\b"
    r"|决定|选择了|选定|采用|改用|定下|定了|拍板|胜出|最终用",
    re.IGNORECASE,
)
#: A reason: a causal word, or the explanation a colon or a dash sets after the choice ("X won: it is faster").
_REASON = re.compile(r"\b(?:because|since|so that|as it|due to|given that|to avoid|thanks to|which means)\b|[:：;；—–]\s*\S"
                     r"|因为|由于|为了|以免|以便|原因是", re.IGNORECASE)
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
_PROPER = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+[A-Za-z0-9]*\b")
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]+|[\u4e00-\u9fff]+|[A-Za-z]")
_STOP = frozenset(
    "a an the of for to in on at by with from and or is are was were be been it its this that these those as into "
    "we i you our your they he she his her their there here now currently new changed change moved updated update "
    "set then than so not no yes also please just still will would should can could do does did has have had "
    "listen listens which what where when who whom why how value".split()
)
_LABEL = re.compile(r"([A-Za-z][A-Za-z_-]+)\s+$|[\u4e00-\u9fff]$")
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
    r"\b(?:now|moved|move[sd]? (?:to|off|from)|changed|switched|bumped?|upgraded|downgraded|rotated|replaced|migrated|no longer|from now on|"
    r"instead|updated|new|rebased|retired|renamed|from \S+ to|raised?|lowered?|swap(?:ped)?|failed over|deprecated|"
    r"reassigned|handed over|going forward|is out|used to be)\b|改为|改成|现在|换成|更新为|迁移|不再|切换|升到|降到",
    re.IGNORECASE)
_CJK_STOP = frozenset("的了是为在和与及把被将从已于也都就还这那个现".strip())
_SPACE = re.compile(r"\s+")
#: A cheap first look: a sentence with none of these can hold no value, preference or decision.
_MAYBE = re.compile(r"[\d/@=:：$€£¥#]|--|[A-Z]{2}|是|为|喜欢|偏好|请|不要|一律|决定|选择|采用|改用|定下|由|归|负责|只用|坚持|统一|习惯|选定|拍板"
                    r"|\b(?:is|are|was|were)\s+[A-Z]|prefer|always|never|don't|please|decid|chose|choose|settled|"
                    r"switch|opted|picked|going with|we will|we'll|stick|stay|only use|use only|nothing|convention|standardi|"
                    r"\bby [A-Z]|won|wins|selected|adopted|agreed|landed on|went with", re.IGNORECASE)
_HAN = re.compile(r"[\u4e00-\u9fff]")
#: A person a role binds, named before it: "Dana Wu will own the migration", "Li Na is the maintainer".
_NAME_ROLE = re.compile(r"\b([A-Z][a-z]+(?: [A-Z][a-z]+){1,2}) (?:(?:will|now|also) )?(?:owns?|leads?|maintains?|runs?|"
                        r"(?:is|are) (?:the |our )?(?:owner|lead|maintainer|contact|point of contact|on-call|DRI|approver|reviewer|assignee|"
                        r"sponsor|decider|responsible person|tech lead))\b")
#: The literal of a setting line (``key = "value"``, ``key: value``), after its key.
_SETTING_VALUE = re.compile(r"""[\w.-]+["']?\s*[=:]\s*("[^"]*"|'[^']*'|[^\s(){}\[\],;#]+)\s*(?:(?:#|//).*)?$""")
#: Literals that say no more than on or off.
_PLAIN_LITERALS = frozenset("true false yes no on off none null auto default enabled disabled".split())


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


def _values(sentence: str, setting: re.Match[str] | None = None) -> list[tuple[str, str, int, int]]:
    """(shape, value, start, end) of the values of a sentence, most distinctive shape first, no overlaps.

    ``setting`` is the match of :data:`_SETTING_VALUE` when the sentence is a setting line.
    """
    taken = bytearray(len(sentence))  # 1 where a value already stands: a later shape may not overlap it
    found: list[tuple[str, str, int, int]] = []
    for shape, pattern, _ in _SHAPES:
        for match in pattern.finditer(sentence):
            group = "v" if "v" in pattern.groupindex else 0  # a shape may name where in its match the value is
            start, end = match.span(group)
            value = match.group(group).rstrip(".,;:")
            end = start + len(value)
            if not value or 1 in taken[start:end]:
                continue
            before = max(0, start - 64)  # what binds a value or names it a measurement stands just before it
            if shape == "ident" and _KEY_AFTER.match(sentence, end):
                continue  # a dotted or snake_case key before its value ("resources.requests.cpu: 750m") names, it is no value
            # "--batch-size 250" sets it, and so does a config file's line (pool_size = 20), whatever its key's words
            flagged = setting is not None or _FLAG_BEFORE.search(sentence, before, start) is not None
            if shape == "number" and flagged:
                shape = "count" if len(value) < 4 else shape  # set by a flag or a config line: kept, short ones low
            elif shape == "number":
                if _UNIT_KEY.search(sentence, before, start) or (_UNIT.match(sentence, end) and not _SETS.search(sentence, before, start)):
                    shape = "quantity"  # a measurement: "2345 ms", "12 次", "p99_ms: 480", "errors: 27"
                elif len(value) < 4:  # a short number is a setting only when a key binds it ("replicas: 5")
                    shape = "count" if _BOUND.search(sentence, before, start) and not _UNIT.match(sentence, end) else "quantity"
                    if shape == "quantity" and len(value) == 1:
                        continue  # a lone digit in passing ("step 1", "3 of them") is nothing, not even a measurement
            elif shape == "amount" and not flagged and (_UNIT_KEY.search(sentence, before, start) or _MEASURED.search(sentence, before, start)
                                                        or not _SETS.search(sentence, before, start)):
                shape = "quantity"  # "took 45s", "p99 480ms": reported, not set
            taken[start:end] = b"\x01" * (end - start)
            found.append((shape, value, start, end))
    if not found:
        for match in _NAME_AFTER.finditer(sentence):
            found.append(("name", match.group(1), match.start(1), match.end(1)))
        for match in _CJK_VALUE.finditer(sentence):
            if not match.group(1)[0].isdigit():  # "错误率是8%" binds a measurement, not a name
                found.append(("name", match.group(1), match.start(1), match.end(1)))
        for match in _NAME_BY.finditer(sentence):
            group = 1 if match.group(1) else 2
            found.append(("name", match.group(group), match.start(group), match.end(group)))
        for match in _NAME_ROLE.finditer(sentence):
            found.append(("name", match.group(1), match.start(1), match.end(1)))
    if not found:
        for match in _WORD_VALUE.finditer(sentence):
            word = match.group(1)
            if word.lower() not in _STOP and not _STATE_WORD.search(word.lower()) and len(word) >= 3:
                found.append(("word", word, match.start(1), match.end(1)))
    if not found and setting is not None:  # a setting's literal is its value, whatever its shape
        literal = setting.group(1).strip("\"'")
        if len(literal) >= 2 and literal.lower() not in _PLAIN_LITERALS:
            start = sentence.find(literal, setting.start(1))
            found.append(("setting", literal, start, start + len(literal)))
    return found


def _subject(sentence: str, values: set[str]) -> tuple[str, ...]:
    """What a sentence is about: its identifiers, words a kind noun names, proper nouns, latin words in CJK."""
    found = {m.group(0).lower() for m in _IDENT.finditer(sentence)}
    for match in _KIND_NOUN.finditer(sentence):
        word = (match.group(1) or match.group(2)).lower()
        if match.group(1) and _KEY_AFTER.match(sentence, match.end()):
            continue  # "db port: 5432": the word before the colon is the key, not what the line is about
        if word not in _STOP and word not in _KIND_WORDS:
            found.add(word)
    found.update(m.group(0).lower() for m in _PROPER.finditer(sentence))
    if _HAN.search(sentence):
        found.update(w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9_-]*", sentence))
    return tuple(sorted(w for w in found - values if w not in _STOP and not any(w in v for v in values)))


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
    anchors = tuple(sorted(set(tokens(stripped)) - set(subject)))
    user_bonus = 0.5 if by_user else 0.0
    stance = "preference" if _PREFERENCE.search(sentence) else ""
    if not stance and _DECISION.search(sentence) and _REASON.search(sentence):
        stance = "decision"
    if stance:  # its value is the whole statement (what was chosen, and why)
        return (Fact(value=text, shape=stance, text=text, subject=subject, anchors=anchors, salience=3.5 + user_bonus),)
    if not subject and not anchors and not any(sh == "assign" or _KEY_BEFORE.search(sentence, max(0, s - 64), s)
                                               for sh, _, s, _ in values):
        return ()  # a bare value: nothing says what it is (a key before it would)
    # A sentence that reports a measurement ("build 3f9a took 12 minutes") names its other values in passing.
    measured = any(shape == "quantity" for shape, _, _, _ in values)
    # A value marked old ("from X", "was X", "not X") is the old value of an update only when the
    # statement names a new value of its family beside it: "loaded settings from /srv/x.toml" names one value, and it is current.
    marked = [(start, value, shape) for shape, value, start, end in values
              if shape != "quantity" and (_OLD_MARK.search(sentence[:start]) or _OLD_AFTER.match(sentence, end))]
    current = {family(shape) for shape, value, start, _ in values
               if shape != "quantity" and (start, value, shape) not in marked}
    old = [(start, value, shape) for start, value, shape in marked if family(shape) in current]
    out: list[Fact] = []
    for shape, value, start, _ in values:
        if shape == "quantity" or (start, value, shape) in old:
            continue  # a measurement, or the old value an update names
        # The old value this one replaces is the nearest one of its family the statement names as old.
        replaced = [v for s, v, sh in old if family(sh) == family(shape) and s < start] or \
                   [v for _, v, sh in old if family(sh) == family(shape)]
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
                        attribute=value.split("=", 1)[0].lower().replace("_", "-") if shape == "assign" else _attribute(sentence, start, subject),
                        update=_UPDATE.search(sentence) is not None or bool(replaced),
                        adds=_ADDITIVE.search(sentence) is not None, replaces=replaced[-1] if replaced else ""))
    return tuple(out)


def _attribute(sentence: str, start: int, subject: Sequence[str]) -> str:
    """The key that binds the value at ``start`` ("pool_size: 40" -> "pool-size", "--batch-size 250" -> "batch-size"),
    lowercased, its parts joined by dashes, a part naming the subject left out; "" if no key binds it."""
    match = _KEY_BEFORE.search(sentence, max(0, start - 64), start)
    if match is None:
        return ""
    parts = [p for p in re.split(r"[._-]+", (match.group(1) or match.group(2)).lower()) if p and p not in subject]
    return "-".join(parts)


def _signature(fact: Fact, values: Sequence[str]) -> tuple[str, tuple[str, ...]]:
    """A fact's shape and the first words of its statement, its ``values`` and identifiers left out: the
    template it came from ("tests/a.py::test_x PASSED" and "tests/b.py::test_y PASSED" are one)."""
    text = fact.text
    for value in sorted(values, key=len, reverse=True):
        text = text.replace(value, " ")
    return fact.shape, tuple(tokens(_IDENT.sub(" ", text))[:3])


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
    signatures = [_signature(f, values[f.text]) for f in found]
    shapes = Counter(signatures)
    found = [msgspec.structs.replace(f, salience=f.salience - _BULK_PENALTY - _BULK_PER_DOUBLING * math.log2(shapes[sig] / 3))
             if shapes[sig] >= 3 else f
             for f, sig in zip(found, signatures, strict=True)]
    if len(found) > max_facts:
        keep = sorted(range(len(found)), key=lambda i: -found[i].salience)[:max_facts]
        found = [found[i] for i in sorted(keep)]
    ts = getattr(entry, "ts", 0) or 0
    for fact in found:
        yield msgspec.structs.replace(fact, ts=ts, order=order)


#: What a fact loses per doubling of the facts said in its form (:func:`form`): a form the tools keep printing is output, not news.
FORM_PENALTY = 1.0


def form(shape: str, text: str, value: str) -> tuple[str, tuple[str, ...]]:
    """The form a fact was said in: its value's family and the first words of its statement, the value and
    identifiers left out ("Build 3ad9 of onyx-auth took ..." and "Build 94ce of lumen-api took ..." are one form)."""
    return family(shape), tuple(tokens(_IDENT.sub(" ", text.replace(value, " ")))[:2])


#: Shapes one slot's value may take in different statements ("0.0.0.0:31234" and "31234"; "fastapi==0.1.2" and "0.1.2";
#: a setting's literal and the same value said in prose, whose shape was found).
_FAMILY = {"ip": "number", "pin": "version", "range": "version", "kv": "setting", "count": "number", "hostport": "number"}


def family(shape: str) -> str:
    """The family of a value shape: an update may change a value from one shape of a family to another."""
    return _FAMILY.get(shape, shape)


def same_slot(old: Fact, new: Fact) -> bool:
    """Whether ``new`` states the same thing as ``old`` (so, if its value differs, updates it).

    Same value shape, the same identifiers (at least one), and anchors that mostly agree: a
    near miss about another service, or another attribute of the same one, is not an update.
    """
    if family(old.shape) != family(new.shape) or not old.subject or old.subject != new.subject:
        return False
    if old.shape in ("preference", "decision") or new.adds:
        return False  # a statement-valued fact accumulates; "another one" adds, it does not replace
    if old.attribute and new.attribute:  # both keyed: the same key is the same slot, another key another slot
        return old.attribute == new.attribute
    a, b = set(old.anchors), set(new.anchors)
    if not a and not b:
        return True
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
        if family(old.shape) != family(new.shape) or old.value == new.value \
                or (old.subject and new.subject and old.subject != new.subject):
            continue
        if old.attribute and new.attribute and old.attribute != new.attribute:
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



def _holds(value: str, old: str) -> bool:
    """Whether a stored ``value`` is the ``old`` value an update names ("fastapi==0.1.2" holds "0.1.2")."""
    return value == old or (value.endswith(old) and not value[-len(old) - 1].isalnum() and value[-len(old) - 1] != ".")


def word_frequency(facts: Iterable[Fact]) -> Counter[str]:
    """In how many of ``facts`` each subject or anchor word occurs."""
    return Counter(word for fact in facts for word in set(fact.subject) | set(fact.anchors))


#: A fact's statement up to this long is kept whole; a longer one is cut to the words around the value.
SNIPPET_CHARS = 72


def snippet(fact: Fact) -> str:
    """The fact in few words: its statement if short, else the words around its value, the subject first.

    Preferences and decisions are their statement (their value is the whole of it).
    """
    text = fact.text
    if len(text) <= SNIPPET_CHARS or fact.shape in ("preference", "decision"):
        return text
    at = text.find(fact.value)
    if at < 0:
        return text
    start = max(0, at - 44)
    end = min(len(text), at + len(fact.value) + 16)
    if start > 0:
        space = text.find(" ", start)
        start = space + 1 if 0 <= space < at else start
    if end < len(text):
        space = text.rfind(" ", at + len(fact.value), end)
        end = space if space > 0 else end
    core = text[start:end].strip(" ,;:")
    missing = [s for s in fact.subject if s not in core.casefold()]
    head = (" ".join(missing[:2]) + ": ") if missing else ""
    return f"{head}{'…' if start > 0 else ''}{core}{'…' if end < len(text) else ''}"
