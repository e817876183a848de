"""Values in a sentence: where each stands, its shape, and whether a key binds it.

The shapes and the ways of stating a value that the fact finder recognises are listed, with
why, in :mod:`aptmem.memory.facts`; this module holds the patterns. :func:`values` finds the
values of one sentence, most distinctive shape first and never overlapping; a number or a
quantity with a unit is a setting when a key, a flag or a setting word binds it and a
measurement (shape ``quantity``, which no keeper stores) when it is merely reported.
:func:`attribute` names the key that binds a value in a structured statement. Issue 14's second pass added
time windows (``Sat 02:00-04:00 UTC``), merge/pull request numbers (``!123``, ``#456``, ``PR 789``), snake_case
symbols of three parts, "from X to Y" (the old value takes the new one's shape), readings over a span ("5x over the
last hour") and peaks as measurements, setting nouns after a measured word (a rate *limit* is set). The third pass added
compound durations (``5h45m``), names stamped with a time (``manual__2026-12-11T08:37:07``), CIDR networks, thresholds
("passes N", "above N", "within N", "en moins de N"), the copulas of French, German and Spanish and the particles of
Japanese as binders, "from X to Y" in either language order (``X から Y に``), and two-part snake_case names a word binds.
The fourth pass added codes of capitals glued to digits (``INC0042718``), ``0x`` hashes, Perforce depot paths, the verbs
of size as binders ("weighs", French "fait", German "wiegt"), "from X to Y" with a verb before 到/成 and a closing 了, a
label or a counted noun beside the values, "X became Y", and names put into a set (shape ``member``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from aptmem.memory.compound import compounds

__all__ = ["BOUND_BY_DEFINITION", "changed_from", "INSTRUCTION", "KEY_AFTER", "KEY_BEFORE", "SHAPE_WEIGHTS", "STOP_WORDS", "attribute", "values"]

#: Value shapes, most distinctive first, with the weight of a value of that shape.
_SHAPES: tuple[tuple[str, re.Pattern[str], float], ...] = (
    # A URL of any scheme, and an scp-style remote (git@host:org/repo.git).
    ("url", re.compile(r"\b[a-z][a-z0-9+.-]{1,15}://[^\s\"'<>)\]，。]+|\b[\w.-]+@[\w-]+(?:\.[\w-]+)+:[\w~][\w./~-]*", re.ASCII), 3.0),
    ("arn", re.compile(r"\barn:[\w-]+:[\w-]*:[\w-]*:\d*:[\w/:.+=@-]*\w", re.ASCII), 3.0),
    # An image pinned by its digest (python:3.12-slim@sha256:...): one reference, the tag and the digest together.
    ("image", re.compile(r"(?<![\w.:/-])[a-z][a-z0-9.-]*(?:/[a-z0-9._-]+)*(?::[\w][\w.-]*)?@sha(?:256|512):[0-9a-fA-F]{16,128}\b", re.ASCII), 3.0),
    ("digest", re.compile(r"\b(?:sha1|sha224|sha256|sha384|sha512|md5|blake2b?):[0-9a-fA-F]{16,128}\b", re.ASCII), 3.0),
    ("uuid", re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b", re.ASCII), 3.0),
    ("email", re.compile(r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}\b", re.ASCII), 3.0),
    ("assign", re.compile(r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+=[^\s,;'\"]+", re.ASCII), 3.0),
    ("key", re.compile(r"\b[a-z]{1,10}_(?=[a-z]*[0-9A-Z])[A-Za-z0-9]{8,}\b|\b[a-z]{2,10}-[A-Za-z0-9]{16,}\b", re.ASCII), 3.0),
    ("pin", re.compile(r"\b[\w.-]+(?:==|~=|>=|@)\d+(?:\.\w+){1,3}\b", re.ASCII), 3.0),
    ("ticket", re.compile(r"\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b", re.ASCII), 3.0),
    # A code of capitals glued to digits (INC0012345, KB5034441, CL2997925, A770): a ticket, a changelist, a product or a
    # model code. A short one (one capital, three digits) is a model name; fewer digits (P99, Q3) are no code.
    ("code", re.compile(r"(?<![\w.-])(?:[A-Z]{2,6}\d{4,12}|[A-Z]{1,2}\d{3})(?![\w.-]*\w)", re.ASCII), 2.5),
    # A merge or pull request, an issue by its number: GitLab's !123, GitHub's #456, "PR 789", "MR #12".
    ("ref", re.compile(r"(?<![\w!&#])[!#]\d{2,7}\b|\b(?:PR|MR)\s?#?\d{1,7}\b", re.ASCII), 3.0),
    # A time window (02:00-04:00 UTC, Sat 01:00–03:00, Mi 00:30-02:30 UTC): its day (an abbreviation, a weekday, 周三)
    # and its zone are part of it. Before the clock times of ``date``, which would take its end alone.
    ("window", re.compile(r"(?:(?<![\w:])(?:[A-Z][a-z]{1,2}\.?|[A-Z][a-z]+day|周[一二三四五六日天]|星期[一二三四五六日天])"
                          r"(?:\s?[-–]\s?[A-Z][a-z]{1,2}\.?)?\s?)?(?<![\w:])\d{1,2}:\d{2}\s?(?:[-–]|to|bis|a|至|到)\s?\d{1,2}:\d{2}(?![\d:])"
                          r"(?:\s?(?:UTC|GMT|Z|[AP]M|am|pm|[A-Z]{2,4}T|CET|CEST|MEZ)\b)?"), 3.0),
    # A host with a port (db-1.internal:5432, localhost:8080) or a bare listening port (:8443): not a clock time.
    ("hostport", re.compile(r"(?<![\w.:/@-])(?:localhost|[A-Za-z][\w-]*(?:\.[\w-]+)+)?:\d{2,5}(?![\w.:])", re.ASCII), 3.0),
    # Absolute and home paths; relative ones with an extension (a pytest node id's ::test names with it), or of three
    # parts or more; Windows paths.
    ("path", re.compile(r"(?<![\w@:/.])(?:~|\.{1,2})?(?:/[\w.@+-]+){2,}/?"
                        # a Perforce depot or stream path (//depot/main/...), a share (//fileserver/builds)
                        r"|(?<![\w@:/.])//[A-Za-z0-9_][\w.@+-]*(?:/[\w.@+-]+)+/?|(?<![\w/])(?:[\w.-]+/)+[\w.-]+\.[A-Za-z0-9]{1,8}\b(?:::[\w\[\].-]+)*"
                        r"|(?<![\w/:.@-])[A-Za-z_][\w.-]*(?:/[\w.@+-]+){2,}/?|\b[A-Za-z]:\\(?:[\w. -]+\\)*[\w.-]+", re.ASCII), 2.5),
    ("branch", re.compile(r"\b(?:feature|fix|hotfix|release|bugfix|chore|feat|topic|dev)/[\w./-]+", re.ASCII), 3.0),
    # A container image reference (python:3.12-slim, ghcr.io/acme/api:2.4.1): a name, a colon, a tag with a digit.
    ("image", re.compile(r"(?<![\w.:/-])[a-z][a-z0-9.-]*(?:/[a-z0-9._-]+)*:(?=[\w.-]*\d)[A-Za-z0-9][\w.-]*(?<![.-])(?![\w:/])", re.ASCII), 3.0),
    # A cron schedule: five fields of digits, stars, steps and ranges, one of them a star.
    ("cron", re.compile(r"(?<![\w*/,-])(?=[^\n]*\*)(?:[\d*][\d*/,-]*\s){4}[\d*][\d*/,-]*(?![\w*/,-])", re.ASCII), 3.0),
    # A name stamped with its time (an Airflow run id manual__2026-12-11T08:37:07, backup-2024-05-01T02:00:00Z): one id,
    # before the dates, which would take its stamp alone.
    ("stamped", re.compile(r"(?<![\w./:@#-])[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*(?:__|[_-])\d{4}-\d{2}-\d{2}"
                           r"(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w:.-]*\w)", re.ASCII), 3.0),
    # Dates and times: ISO (with a zone or an offset), slashed, month names, a clock time with a zone or am/pm.
    ("date", re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w:])"
                        r"|\b\d{4}/\d{2}/\d{2}\b|\b\d{1,2}/\d{1,2}/\d{4}\b"
                        r"|\b(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*\.? \d{1,2}(?:st|nd|rd|th)?,? \d{4}\b"
                        r"|\b\d{1,2} (?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]* \d{4}\b"
                        r"|(?<![\w:.])\d{1,2}:\d{2}(?::\d{2})?\s?(?:UTC|GMT|Z|[AP]M|am|pm|[A-Z][SD]T)\b", re.ASCII), 2.0),
    # A hash standing alone: one inside a dashed name (a pod's parcel-router-1d8e0ac3f-7fe55, silence-4828c134) is part of it.
    # ... and one written as a C literal (0x8badf00d1234): a permutation key, a crash address, a build hash.
    ("hex", re.compile(r"(?<![\w.-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64}(?![\w-]|\.\w)"
                       r"|(?<![\w.-])0[xX][0-9a-fA-F]{1,32}\b", re.ASCII), 3.0),
    # An address with a port, or a network in CIDR notation (10.93.76.0/24): its prefix length is part of it.
    ("ip", re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{2,5}|/\d{1,2}(?![\d./]))?\b", re.ASCII), 2.5),
    # A version range or constraint (^18.2.0, ~1.4, >=18.17.0 <21): its parts together are the value.
    ("range", re.compile(r"(?<![\w<>=~^!-])(?:\^|~>?|[<>]=?|!=)\s?v?\d+(?:\.[\w*]+){0,3}(?:,?\s*(?:[<>]=?|!=)\s?\d+(?:\.[\w*]+){0,3})*", re.ASCII), 2.5),
    # A version has a v, three parts or a suffix (v2.1, 1.4.2, 16.6-jammy, v3beta2): a bare "94.0" is a number.
    ("version", re.compile(r"\bv\d+\.\d+(?:\.\d+){0,2}(?:-[\w.]+)?\b|\b\d+\.\d+(?:\.\d+){1,2}(?:-[\w.]+)?\b"
                           r"|\b\d+\.\d+-[\w.]+\b|\bv\d+(?:alpha|beta|rc|preview)\d*\b", re.ASCII), 2.0),
    ("money", re.compile(r"[$€£¥]\s?\d[\d,.]*\b|\b\d[\d,.]*\s?(?:USD|EUR|GBP|CNY|RMB|元)", re.ASCII), 2.5),
    # A number with a unit: a size, a duration, a rate, a percentage, a k8s resource quantity (2944Mi, 750m).
    # A setting when a key or a setting word binds it, else a measurement (see _values).
    ("amount", re.compile(r"(?<![\w.,/-])\d+[dhm](?:\d+(?:h|ms|m|s))+(?![\w%])|(?<![\w.,/-])\d+(?:[.,]\d+)?(?:\s?(?:%|percent\b)|(?:[KMGTPE]i|[kKMGTPE]B|[kMG]b|ms|us|µs|ns|s|sec|m|min|h|hr|d|w|"
                          r"B|rps|qps|tps|x|[kMG]?Hz|[kMG]?bps|[kM]bit/s|[mk]?V|m[AW]|[kM]?Ω|[µunp]F|dBm|°C)(?![\w%])"
                          r"|\s(?:ms|MB|GB|KB|TB|MiB|GiB|KiB|seconds?|minutes?|hours?|days?|weeks?)\b"
                          # physical quantities a setting or a part is given in, spaced as data sheets write them
                          r"|\s(?:[kMG]?Hz|[kMG]?bps|[kM]bit/s|[mk]?V|[mµu]A|m?W|[kM]?Ω|[µunp]F|dBm|°C)(?![\w/]))"
                          r"(?:\s?/\s?(?:s|sec|second|min|minute|h|hour|day)\b|\s(?:per|a) (?:second|minute|hour|day)\b)?"
                          r"|(?<![\w.,/-])\d+(?:\.\d+)?\s?(?:毫秒|秒|分钟|小时|天|周|兆|字节)"
                          r"|(?<![\w.,/-])\d+(?:\.\d+)?\s(?:req|requests|calls|msgs|messages|events|ops|jobs)\s?(?:/\s?|per )(?:s|sec|second|min|minute|h|hour|day)\b",
                          re.ASCII), 2.5),
    # A name made of parts, one with a digit (pg-ledger-7.db8.internal, orders.events.v3, app-artifacts-5f1c09):
    # a host, topic, bucket or queue; digit-led (20240511_0930_add_invoices), snake_case (checkout_v2_enabled)
    # or CamelCase (WebFrontendV2) names with a digit; snake_case parts may be joined by a run of underscores (a Flyway
    # migration V42__add_users, a BEM class). After the other shapes, so a URL, path, version or key keeps its own.
    ("ident", re.compile(r"(?<![\w./:@#-])(?=[\w.-]*\d)(?=[\w.-]*[A-Za-z]{2})[A-Za-z][A-Za-z0-9]*(?:[._-][A-Za-z0-9]+)*"
                         r"(?:[.-][A-Za-z0-9]+)(?![\w/@]|[.-]\w)"
                         r"|(?<![\w./:@#-])(?=\w*[A-Za-z]{2})(?=\w*\d)[A-Za-z0-9]+(?:_+[A-Za-z0-9]+){2,}(?![\w/@]|[.-]\w)"
                         r"|(?<![\w./:@#-])(?=\w*[A-Za-z]{2})\d+(?:_+[A-Za-z0-9]+)+(?![\w/@]|[.-]\w)"
                         r"|(?<![\w./:@#-])(?=[A-Za-z]*\d)[A-Z][a-z]+(?:[A-Z][a-z0-9]*)+\d*(?![\w/@]|[.-]\w)"
                         # a dotted name of three parts or more (acme.prod.assets, com.acme.billing): a bucket, a package, a host
                         r"|(?<![\w./:@#-])[a-z][a-z0-9-]+(?:\.[a-z][a-z0-9-]*){2,}(?![\w/@(]|[.-]\w)", re.ASCII), 2.5),
    # A snake_case symbol of three parts or more, no digit needed (kill_sorrel_quartz, enable_new_checkout): a flag,
    # a switch, a function, a table; two parts (error_rate) are too often a key or a metric's name.
    ("symbol", re.compile(r"(?<![\w./:@#-])[a-z][a-z0-9]*(?:_[a-z0-9]+){2,}(?![\w/@(]|[.-]\w)", re.ASCII), 2.5),
    # (not a part of a clock time: the 18 of [00:18:35])
    ("number", re.compile(r"(?<![\w.,-])(?<!\d\d:)(?!\d{1,2}:\d{2}\b)\d+(?:[.,]\d+)?(?![\w.-]*\w)", re.ASCII), 2.0),
    # Cloud regions (us-east-1, eu-central-2), a command-line flag (--no-cache), a channel or handle
    # (#ops-alerts, @release-team), and a log line's key=value pair (its value).
    ("region", re.compile(r"\b[a-z]{2}-(?:north|south|east|west|central)(?:east|west)?-\d{1,2}\b", re.ASCII), 3.0),
    ("flag", re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*\b", re.ASCII), 3.0),
    ("handle", re.compile(r"(?<![\w&#/@])[#@][A-Za-z][\w.-]*[A-Za-z0-9]", re.ASCII), 3.0),
    ("kv", re.compile(r"(?<![\w.-])[a-z][a-z0-9_.]*=(?P<v>[^\s,;'\"&=]{2,})", re.ASCII), 2.5),
)
_SHAPE_WEIGHT = {name: weight for name, _, weight in _SHAPES}
#: A token of no known shape, found by its build (:mod:`aptmem.memory.compound`): below the shapes that name what it is.
_SHAPE_WEIGHT["compound"] = 2.5
#: A short number a key binds ("replicas: 5"): kept, but below every distinctive shape (such settings are many).
_SHAPE_WEIGHT["count"] = 1.5
#: An enum-like word a key binds ("quorum", "debug"): kept, below every distinctive shape.
_SHAPE_WEIGHT["word"] = 1.0
#: Shapes that are values only because a key binds them: the binding earns them nothing more.
_BOUND_BY_DEFINITION = frozenset({"count", "word"})
#: Nouns a short C literal is the value of ("at offset 0x8000", "address 0x3c", "mask 0xFF"), just before it.
_C_LITERAL_NOUN = re.compile(r"\b(?:offset|address|addr|register|reg|mask|base|vector|id|code|opcode|flags?|magic)\s*$", re.IGNORECASE)
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
_SETS = re.compile(r"(?:\b(?:to|at|is|be|of|now|limit|limited|cap|capped|throttle[sd]?)|\b(?:is|are|be)\s+(?:only|just|still|currently)|[=:：]|->|→|=>|--[a-z][\w-]*|为|是|(?:到|成)了?"
                   # a value something became, or weighs (a build's, a package's size: "the patch weighs 6.61 GB")
                   r"|\b(?:became|becomes|weighs|weighed|weigh)"
                   # the copula and "to" of French, German and Spanish ("est de 1.52%", "passe à 30s", "auf 45s", "es de 5%")
                   r"|\b(?:est|sont|sera|ist|sind|beträgt|auf|es|son|será)(?:\s+(?:de|d'|von|à))?|\bà"
                   # ... and their verbs of size ("le patch fait 1.55 GB", "pèse 3 Go", "wiegt 2 GB", "pesa 4 GB", "ocupa 9 GB")
                   r"|\b(?:fait|font|pèse|pèsent|wiegt|wiegen|pesa|pesan|ocupa|ocupan)"
                   # a Japanese topic, object or "from" particle before the value ("SLA は 5h45m", "11h05m から 5h45m に")
                   r"|[はをが]|から"
                   # a threshold: the line a reading must not cross is set ("passes 584,477 messages", "above 2%", "within 11h05m");
                   # a reading that went past one ("took over 45s") is a measurement
                   r"|(?<!took )(?<!ran )(?<!went )(?<!was )(?<!lasted )\b(?:above|below|over|under|exceeds?|exceeding|passes|crosses|beyond|within|"
                   r"more than|less than|at least|at most|no more than|dépasse|au-delà de|au-dessus de|en dessous de|en moins de|moins de|plus de|"
                   r"jusqu'à|über|unter|innerhalb von|en menos de|más de|menos de))\s*$", re.IGNORECASE)
#: A setting noun just after a quantity names it a setting ("a 2407Mi memory limit", "a 30s timeout", "a 25MB upload cap"):
#: the words a config or a runbook uses for what is set, not for what was seen.
_SET_NOUN_AFTER = re.compile(r"\s+(?:[a-z][\w-]*\s+){0,2}?(?:limits?|caps?|quotas?|timeouts?|budgets?|ceilings?|thresholds?|"
                             r"requests?|reservations?|ttl|retention|max(?:imum)?|min(?:imum)?|deadlines?|window)\b"
                             r"|\s*(?:上限|限制|配额|超时)"
                             # Japanese states what is set after it: the copula, "to" before a verb of setting, "from", a bound
                             # ("5h45m に短縮", "merchant_uid です", "11h05m から", "584,477 件を超えたら")
                             r"|\s*(?:です|でした|である|に(?=[\u3040-\u30ff\u4e00-\u9fff])|へ|から|まで|以上|以下|未満|を超)"
                             # Korean too: the particle of a value set or moved to, the one it came from, a copula
                             # ("13.9% 로 넓혔습니다", "38.9% 에서", "v2 입니다")
                             r"|\s*(?:으로|로|에서|부터|입니다|이에요|예요)(?=[\s.,]|$)"
                             # a value said to come in or go out ("615 req/s is out, 3604 req/s is in"): one that is set
                             r"|\s+(?:is|are|was)\s+(?:in|out|now|new|live|current|gone|retired|replaced)\b", re.IGNORECASE)
#: What binds a short number or a quantity to a key right before it ("replicas: 5", "--workers 12", "pool size is now 40",
#: "set it to 3"): a setting, not a count said in passing ("3 retries", "step 2").
_BOUND = re.compile(r"(?:[=:：]|->|→|=>|--[a-z][\w-]*|\b(?:to|is|are|now|becomes|became|set|of)\b|为|是|(?:到|成)了?)\s*[\"']?$", re.IGNORECASE)
#: The key that binds the value after it, in a structured statement: ``key: value``, ``key = value``, ``--flag value``.
_KEY_BEFORE = re.compile(r"(?:--([a-z][\w-]*)[\s=]|([A-Za-z_][\w.-]*)[\"']?\s*[:=：])\s*[\"']?$")
#: A measurement named before its copula ("the error rate is 8%", "p99 latency was 480ms", "错误率是8%"): reported, not set.
_MEASURED = re.compile(r"(?:\b(?:rate|usage|utili[sz]ation|latency|p\d\d|duration|elapsed|took|load|throughput|hit ratio|coverage)\b"
                       # ... unless a setting noun follows it: a rate limit, a latency budget, a usage cap are set
                       r"(?!\s+(?:limits?|caps?|budgets?|thresholds?|targets?|quotas?|ceilings?|objectives?|slos?|slas?)\b)"
                       r"|率|耗时|延迟|占用|用时|覆盖率)"
                       r"[^.;,，。]{0,40}?(?:\b(?:is|was|are|were)\b|是|为|[:=：])\s*$"
                       # a reading that moved ("coverage dropped to 79%", "p99 rose by 20ms"): where it stands now, not a setting
                       r"|\b(?:dropped|fell|rose|climbed|grew|jumped|spiked|increased|decreased|went (?:up|down))\s+(?:to|by)\s*$"
                       # a peak or a level reached ("peaked at 71568 messages", "hit 95%", "topped out at 3s")
                       r"|\b(?:peaked|peaks|topped out|maxed out|hit|reached|averaged|hovered|sat|sits|stood|stands)\s+(?:at\s+|around\s+)?$"
                       r"|(?:涨到|掉到)了?\s*$", re.IGNORECASE)
#: "from" before a value and "to" after it: the old and the new value of one change.
#: (a short label may stand between "from" and the value: "从 CL 3788597", "from build 812")
_FROM = re.compile(r"(?:\b(?:from|von|de|desde)\s+|从\s*)(?:[A-Za-z]{1,5}\s)?$", re.IGNORECASE)
#: (Chinese puts the verb of the change before 到 or 成, and may close it with 了: "压到了", "换成了", "调到")
#: (a counted noun may follow the old value: "from 3 replicas to 5", "从 13130 permutations 降到了 51286")
_TO = re.compile(r"(?:\s[a-z]{2,20}(?=\s|[\u4e00-\u9fff]))?\s*(?:\bto\b|\bauf\b|\ba\b|à|->|→|=>|改为|改成|[\u4e00-\u9fff]?(?:到|成)了?)\s*(?:[A-Za-z]{1,5}\s)?", re.IGNORECASE)
#: Japanese says "from" after the old value: "11h05m から 5h45m に".
#: ... and so does Korean ("38.9% 에서 13.9% 로").
#: English says it with a verb of becoming ("1705 MiB became 1508 MiB", "v3 gave way to v4").
_FROM_AFTER = re.compile(r"\s*(?:から|에서|부터)\s*|\s+(?:became|becomes|turned into|gave way to|was replaced by|is replaced by)\s+")
#: A word after a quantity that says it is a reading of the moment ("257 MB compressed", "3.1GiB used", "12 GB free").
_READING_AFTER = re.compile(r"\s+(?:compressed|uncompressed|on disk|used|free|left|remaining|in use|allocated|resident)\b"
                            # a reading over a span of time ("5.5x over the last hour", "3% in the past day")
                            r"|\s+(?:over|in|during|for|across) the (?:last|past|previous)\b"
                            # ... or at a moment named ("78% this week", "3.1s today", "40% right now")
                            r"|\s+(?:this|last) (?:morning|afternoon|evening|week|month|quarter|sprint|run)\b|\s+(?:today|yesterday|tonight|right now|at the moment|so far)\b",
                            re.IGNORECASE)
#: An enum-like word a key or a setting verb binds at the end of a clause ("the log level is now debug", "set the
#: consistency to quorum", "mode: strict"): a value when nothing of a distinctive shape is there. A state word
#: ("the build is green", "it is running") says how something is, not what it is set to.
_WORD_VALUE = re.compile(r"(?:\b(?:is|are)\s+(?:now\s+|set\s+to\s+)?|\b(?:set|switched|changed|moved|defaults?)\s+(?:[\w'-]+\s+){0,6}?to\s+|[:=]\s*"
                         # "steht auf debug", "est sur debug", "está en debug"; Japanese "は debug に設定", "が debug です"
                         r"|\b(?:steht|stehen|ist|sind)\s+(?:jetzt\s+)?auf\s+|\b(?:est|sont)\s+(?:à|sur)\s+|\bestá\s+(?:en|em)\s+|[はが]\s*)"
                         r"([a-z][a-z0-9]*(?:-[a-z0-9]+)*)(?=\s*(?:[.,;!?)。、]|$|に(?:設定|変更|し)|です))", re.IGNORECASE)
_STATE_WORD = re.compile(r"(?:ing|ed|ly|ful|less|able|ible)$|^(?:done|ready|green|red|yellow|fine|ok|okay|good|bad|broken|up|down|live|"
                         r"open|closed|fixed|flaky|slow|fast|true|false|yes|no|on|off|none|null|empty|same|different|new|old|"
                         r"correct|wrong|right|clean|dirty|stale|current|unknown|here|there|back|out|in|gone|high|low)$")
#: An instruction word that opens a line and binds what follows (Dockerfile ``FROM``, ``EXPOSE``, ``USER``; an HTTP verb).
_INSTRUCTION = re.compile(r"[A-Z]{3,12}\s+$")
_KEY_AFTER = re.compile(r"[\"']?\s*[:=：]\s*\S")
#: Where a key stands: at the start of a line or clause, after at most one word (a setting's owner: "ledger pool_size: 20").
#: An identifier deep in a sentence before a colon ("... go past V42__add_users: V43 is next") is a value, not a key.
_CLAUSE_START = re.compile(r"(?:^|[,;(\[{]\s*|^\S+\s+)[\"']?$")
_FLAG_BEFORE = re.compile(r"--[a-z][\w-]*[\s=]$")
_NAME_AFTER = re.compile(r"(?:\b(?:is|are|was|were)\b|[:：])\s+((?:[A-Z][a-z]+|[A-Z]{2,})(?:[ -](?:[A-Z][a-z]+|[A-Z]{2,})){0,2})\b")
#: A name that a role binds: "owned by Dana Wu", "maintained by QA", "由王伟负责", "归李娜管".
_NAME_BY = re.compile(r"\b(?:owned|maintained|run|led|managed|handled|reviewed|approved|assigned to|owner(?:ship)? (?:is|goes to)) (?:by )?"
                      r"((?:[A-Z][a-z]+|[A-Z]{2,})(?:[ -](?:[A-Z][a-z]+|[A-Z]{2,})){0,2})\b"
                      r"|(?:由|归|交给|找)\s*([\u4e00-\u9fff]{2,4}?)\s*(?:负责|维护|管理|主管|牵头|管|跟进|对接|处理|审批|拍板|说了算|盯着|把关|签字)"
                      # the person one is sent to ("请找端木明哲，", "要南宫沐阳 approve"): a name, then a pause or a latin verb
                      r"|(?:请找|找|联系|请教|问|(?<![需只还也就])要|让)\s*([\u4e00-\u9fff]{2,4})(?=\s*(?:[，。；,;！!（(]|$|[A-Za-z]))")
_CJK_VALUE = re.compile(r"(?:是|(?<![因认作成以])为|改为|改成|设为|设置为|换成|变为|定为|更新为|：|:\s*(?=[\u4e00-\u9fff]))\s*([^\s，。；、,;:：！？!?的了]{2,16})(?=$|[，。；、,;！？!?\s])")
#: A name of capitalised words (a digit group may be one of them: "Xbox Series S", "Switch 2") put into a set: added to
#: one (in English, French, German, Spanish), or said to be on a list, a roster, a matrix.
#: (a pronoun or an article opening the sentence names nothing: "It is on the list", "The job is in scope")
_MEMBER_NAME = r"(?!(?:It|This|That|The|These|Those|He|She|They|We|You|There|Everything|Nothing|Everyone)\b)[A-Z][\w-]*(?:\s(?:[A-Z][\w-]*|\d{1,4}(?![\w.,])))*"
_MEMBER = re.compile(r"\b(?:added|adding|adds|ajouté|ajoutée|ajoutons|hinzugefügt|añadido|añadimos|agregado|agregamos)\s+"
                     rf"(?P<v>{_MEMBER_NAME})\s+(?:to|into|aux?|à|dans|zu[rm]?|a|al)\b"
                     rf"|(?<![\w-])(?P<w>{_MEMBER_NAME})\s+(?:is|are|was|were)\s+(?:now\s+|also\s+)?(?:on|in|part of)\s+the\s+"
                     r"(?:[\w-]+\s+){0,3}?(?:list|set|roster|rota|matrix|lineup|line-up|scope)\b")
#: A person a role binds, named before it: "Dana Wu will own the migration", "Li Na is the maintainer".
_NAME_ROLE = re.compile(r"\b([A-Z][a-z]+(?: [A-Z][a-z]+){1,2}) (?:(?:will|now|also) )?(?:owns?|leads?|maintains?|runs?|"
                        # a rota's words: who holds the pager or the shift, who covers or takes over
                        r"covers|takes? over|steps? in|(?:has|holds|carries|took|takes) the (?:pager|rota|rotation|shift)|"
                        r"(?:is|are) (?:the |our )?(?:owner|lead|maintainer|contact|point of contact|on-call|DRI|approver|reviewer|assignee|"
                        r"sponsor|decider|responsible person|tech lead))\b")
#: A snake_case name of two parts (tenant_uid, loaded_at): a column's, a field's or a table's name, a value only when a
#: word binds it ("dedupes on tenant_uid", "the key is merchant_uid", "キーは merchant_uid です"): too often a key itself.
_PAIRED_SYMBOL = re.compile(r"(?<![\w./:@#-])[a-z][a-z0-9]*_[a-z0-9]+(?![\w/@(]|[.-]\w)", re.ASCII)
_BINDS_BEFORE = re.compile(r"(?:\b(?:is|are|was|on|by|to|as|be|est|ist|es|sur|par|auf|en)|[=:：]|[はをが])\s*[\"'`]?$", re.IGNORECASE)
_BINDS_AFTER = re.compile(r"[\"'`]?\s*(?:です|でした|である|に(?=[\u3040-\u30ff\u4e00-\u9fff]))")
#: Literals that say no more than on or off.
_PLAIN_LITERALS = frozenset("true false yes no on off none null auto default enabled disabled".split())


_STOP = frozenset(
    "a an the of for to in on at by with from and or is are was were be been it its this that these those as into "
    "we i you our your they he she his her their there here now currently new changed change moved updated update "
    "set then than so not no yes also please just still will would should can could do does did has have had "
    "listen listens which what where when who whom why how value".split()
)


def values(sentence: str, setting: re.Match[str] | None = None) -> list[tuple[str, str, int, int]]:
    """(shape, value, start, end) of the values of a sentence, most distinctive shape first, no overlaps.

    ``setting`` is the match of :data:`_SETTING_VALUE` when the sentence is a setting line.
    """
    taken = bytearray(len(sentence))  # 1 where a value already stands: a later shape may not overlap it
    found: list[tuple[str, str, int, int]] = []
    for name, pattern, _ in _SHAPES:
        for match in pattern.finditer(sentence):
            shape = name  # each match starts from its pattern's shape (one judged a measurement leaves the next alone)
            group = "v" if "v" in pattern.groupindex else 0  # a shape may name where in its match the value is
            start, end = match.span(group)
            value = match.group(group).rstrip(".,;:")
            end = start + len(value)
            if not value or 1 in taken[start:end]:
                continue
            before = max(0, start - 64)  # what binds a value or names it a measurement stands just before it
            if shape in ("ident", "symbol", "key") and _KEY_AFTER.match(sentence, end) and _CLAUSE_START.search(sentence, before, start):
                continue  # a dotted or snake_case key before its value ("resources.requests.cpu: 750m") names, it is no value
            # "--batch-size 250" sets it, and so does a config file's line (pool_size = 20), whatever its key's words
            flagged = setting is not None or _FLAG_BEFORE.search(sentence, before, start) is not None
            if shape == "hex" and len(value) < 8 and value[:2] in ("0x", "0X") and not (flagged or _BOUND.search(sentence, before, start)
                                                                                      or _C_LITERAL_NOUN.search(sentence, before, start)):
                continue  # a short C literal (0x3c, 0x1F00: a register, an address) is a value only when a key binds it
            if shape == "number" and flagged:
                shape = "count" if len(value) < 4 else shape  # set by a flag or a config line: kept, short ones low
            elif shape == "number":
                if _UNIT_KEY.search(sentence, before, start) or _MEASURED.search(sentence, before, start) \
                        or (_UNIT.match(sentence, end) and not _SETS.search(sentence, before, start)):
                    shape = "quantity"  # a measurement: "2345 ms", "12 次", "p99_ms: 480", "errors: 27"
                elif len(value) < 4:  # a short number is a setting only when a key binds it ("replicas: 5")
                    shape = "count" if _BOUND.search(sentence, before, start) and not _UNIT.match(sentence, end) else "quantity"
                    if shape == "quantity" and len(value) == 1:
                        continue  # a lone digit in passing ("step 1", "3 of them") is nothing, not even a measurement
            elif shape == "amount" and not flagged and (_UNIT_KEY.search(sentence, before, start) or _MEASURED.search(sentence, before, start)
                                                        or _READING_AFTER.match(sentence, end)
                                                        or not (_SETS.search(sentence, before, start) or _SET_NOUN_AFTER.match(sentence, end))):
                shape = "quantity"  # "took 45s", "p99 480ms": reported, not set
            taken[start:end] = b"\x01" * (end - start)
            found.append((shape, value, start, end))
    for start, end in compounds(sentence):
        # A token no shape explained whole (the shapes matched pieces of it, or nothing): one value of its own build.
        inside = [v for v in found if v[2] < end and start < v[3]]
        if any(v[2] < start or v[3] > end or (v[2], v[3]) == (start, end) for v in inside) or _KEY_AFTER.match(sentence, end):
            continue
        found[:] = [v for v in found if v not in inside]
        taken[start:end] = b"\x01" * (end - start)
        found.append(("compound", sentence[start:end], start, end))
    for match in _PAIRED_SYMBOL.finditer(sentence):
        start, end = match.span()
        if 1 in taken[start:end] or _KEY_AFTER.match(sentence, end):
            continue
        if _BINDS_BEFORE.search(sentence, max(0, start - 16), start) or _BINDS_AFTER.match(sentence, end):
            found.append(("symbol", match.group(0), start, end))
    _from_to(sentence, found)
    for match in _MEMBER.finditer(sentence):
        # A name put into a set ("added Dana Wu to the rota", "nous avons ajouté Switch 2 aux plateformes"): a member, whole,
        # even where a piece of it has a shape of its own (the "2" of a product's name is no count).
        group = "v" if match.group("v") else "w"
        start, end = match.span(group)
        if not any(s < start or e > end for _, _, s, e in found if s < end and start < e):
            found[:] = [v for v in found if not (v[2] < end and start < v[3])]
            taken[start:end] = b"\x01" * (end - start)
            found.append(("member", match.group(group), start, end))
    if not found:
        for match in _NAME_AFTER.finditer(sentence):
            found.append(("name", match.group(1), match.start(1), match.end(1)))
        for match in _CJK_VALUE.finditer(sentence):
            if not match.group(1)[0].isdigit():  # "错误率是8%" binds a measurement, not a name
                found.append(("name", match.group(1), match.start(1), match.end(1)))
        for match in _NAME_BY.finditer(sentence):
            group = next(g for g in (1, 2, 3) if match.group(g))
            found.append(("name", match.group(group), match.start(group), match.end(group)))
        for match in _NAME_ROLE.finditer(sentence):
            found.append(("name", match.group(1), match.start(1), match.end(1)))
    if not found:
        for match in _WORD_VALUE.finditer(sentence):
            word = match.group(1)
            if word.lower() not in _STOP and not _STATE_WORD.search(word.lower()) and len(word) >= 3:
                found.append(("word", word, match.start(1), match.end(1)))
    if setting is not None:  # a setting's literal is its value, whatever its shape (a value in its comment is no reason to drop it)
        literal = setting.group(1).strip("\"'")
        start = sentence.find(literal, setting.start(1))
        if len(literal) >= 2 and literal.lower() not in _PLAIN_LITERALS \
                and not any(s < start + len(literal) and start < e for _, _, s, e in found):
            found.append(("setting", literal, start, start + len(literal)))
    return found


def _pairs(sentence: str, found: Sequence[tuple[str, str, int, int]]) -> Iterator[tuple[int, int]]:
    """(old, new) indexes into ``found`` of each "from X to Y" the sentence says: "from 4.51Gi to 3.77Gi", "von 30s auf
    45s", "de 710,825 à 558,328", "11h05m から 5h45m に" (Japanese says "from" after the old value)."""
    starts = {start: index for index, (_, _, start, _) in enumerate(found)}
    for index, (_, _, start, end) in enumerate(found):
        after = _FROM_AFTER.match(sentence, end)
        if after is not None:
            new = starts.get(after.end())
        elif _FROM.search(sentence, max(0, start - 12), start):
            to = _TO.match(sentence, end)
            new = starts.get(to.end()) if to else None
        else:
            continue
        if new is not None:
            yield index, new


def _from_to(sentence: str, found: list[tuple[str, str, int, int]]) -> None:
    """The two values of one change are of one kind: a quantity said as where a setting came from or went to ("from
    4.51Gi to 3.77Gi", "de 710,825 à 558,328 messages") takes the setting's shape, as a reading would not be changed."""
    for old, new in list(_pairs(sentence, found)):
        (old_shape, *_), (new_shape, *_) = found[old], found[new]
        if (old_shape == "quantity") != (new_shape == "quantity"):
            shape = new_shape if old_shape == "quantity" else old_shape
            for index in (old, new):
                _, value, start, end = found[index]
                found[index] = (shape, value, start, end)


def changed_from(sentence: str, found: Sequence[tuple[str, str, int, int]]) -> set[int]:
    """The starts of the values the sentence names as where a change came from (the X of "from X to Y")."""
    return {found[old][2] for old, _ in _pairs(sentence, found)}


def attribute(sentence: str, start: int, subject: Sequence[str]) -> str:
    """The key that binds the value at ``start`` ("pool_size: 40" -> "pool-size", "--batch-size 250" -> "batch-size"),
    lowercased, its parts joined by dashes, a part naming the subject left out; "" if no key binds it."""
    match = _KEY_BEFORE.search(sentence, max(0, start - 64), start)
    if match is None:
        return ""
    parts = [p for p in re.split(r"[._-]+", (match.group(1) or match.group(2)).lower()) if p and p not in subject]
    return "-".join(parts)


#: The public names of what :mod:`aptmem.memory.facts` uses.
SHAPE_WEIGHTS = _SHAPE_WEIGHT
BOUND_BY_DEFINITION = _BOUND_BY_DEFINITION
KEY_BEFORE = _KEY_BEFORE
KEY_AFTER = _KEY_AFTER
INSTRUCTION = _INSTRUCTION
STOP_WORDS = _STOP
