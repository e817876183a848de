"""What the on-call generator (:mod:`.oncall`) says: its kinds of facts, their phrasings, and its filler.

The sessions are the shifts of an on-call engineer working an incident with an agent: the
incident channel pasted with its timestamps, ``kubectl`` output, PromQL results, Alertmanager and
PagerDuty JSON, runbook pages, the postmortem's email thread with quoted replies and its
action-item sheet (TSV). Remarks come in English, Chinese, German and Spanish; some values are
also given in words ("about two and a half gigs") in another turn than the exact one.

A kind's ``said`` is (carrier, format, template); templates are filled by plain replacement of
``{s}`` (subject), ``{S}`` (subject in capitals), ``{v}`` (value), ``{old}`` (the value it
replaces) and ``{why}`` (a decision's reason), so JSON braces need no escaping.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from experiments.measurements.memory_quality.planting import DrawnKind

__all__ = ["AGGREGATES", "ORDER_EVENTS", "SERVICES", "IncidentKind", "OncallFiller", "_KINDS", "fill", "language_of",
           "noise_statement"]

#: Services of the fictional platform (none is a substring of another, so a subject is found exactly).
SERVICES = ("ledgerd", "paygate", "quokka-api", "tollbooth", "hermes-mq", "sundial", "parcel-router", "vaultkeeper",
            "beacon", "inkwell", "corvid", "switchyard", "mosaic-search", "driftwood", "lamplighter", "ferryman")
_PEOPLE = ("Marisol Etxeberria", "Declan Fairweather", "Oluwaseun Adeyemi", "Birte Lindqvist", "Rohan Venkataraman",
           "Giedre Paulauskaite", "Thiago Albuquerque", "Noor Haddad", "Casimir Wojcik", "Ximena Quispe",
           "Leilani Kahale", "Anselm Brandt", "Yusuf Demirci", "Saoirse Mulcahy")
_PEOPLE_ZH = ("欧阳慧敏", "公孙志远", "夏侯婉清", "尉迟国栋", "端木晨曦", "长孙若兰", "宇文浩然", "司徒嘉怡",
              "南宫立诚", "澹台秋月")
_CORPS = ("northwind", "acmecorp", "initech", "globex")
_SLUGS = ("restart-safely", "drain-and-replace", "shed-load", "rebuild-index", "rotate-creds", "flush-queue")
_WORDS = ("heron", "cobalt", "juniper", "quartz", "tamarind", "obsidian", "meadow", "sorrel", "bramble", "zephyr",
          "lichen", "marigold", "pewter", "thistle", "walnut", "azure")
_REGIONS = ("euw3", "use2", "apse1", "sae1")
_DAYS = ("Mo", "Di", "Mi", "Do", "Fr", "Sa", "So")
#: postmortem topics, the options a decision picks, and the reasons given
_TOPICS = ("the paging policy", "the retry budget", "the failover drill", "the log pipeline", "the status page",
           "the canary gate", "the on-call handover")
_OPTIONS = ("page only on fast SLO burn", "a shared token bucket per tenant", "a monthly game day in staging",
            "Vector agents on every node", "a self-hosted Cachet instance", "automatic rollback at two percent errors",
            "a written handover at every shift change", "a per-region circuit breaker")
_REASONS = ("the night pages dropped by two thirds in the trial", "retries amplified the outage fourfold",
            "nobody had practised the manual failover", "Fluentd lost lines under backpressure",
            "customers could not tell the incident was acknowledged", "the bad build reached every pod in four minutes",
            "context got lost between the Berlin and Lima shifts", "one region's latency took the others down")
#: what the user wants the agent to do their way, and the ways
_LIKES = {"incident timestamps": ("UTC with seconds", "Unix epoch milliseconds", "local time plus offset"),
          "status updates": ("one line per update, newest first", "a bulleted summary every half hour"),
          "graph links": ("short Grafana URLs with a fixed time range", "PNG snapshots pasted inline"),
          "postmortem drafts": ("blameless wording in the passive voice", "a five-whys section before the timeline"),
          "shell commands": ("kubectl with --context spelled out", "k9s instead of raw kubectl")}

_ONES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
         "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def words(n: int) -> str:
    """``n`` (0-99) in English words."""
    if n < 20:
        return _ONES[n]
    tens, ones = divmod(n, 10)
    return _TENS[tens] + (f"-{_ONES[ones]}" if ones else "")


def fill(template: str, subject: str, value: str = "", old: str = "", why: str = "") -> str:
    """``template`` with its fields replaced (plain replacement: JSON braces stay as they are)."""
    return (template.replace("{S}", subject.upper().replace("-", "_")).replace("{s}", subject)
            .replace("{v}", value).replace("{old}", old).replace("{why}", why))


#: words only the German and Spanish remarks of this generator use (its English never does)
_GERMAN = frozenset(("ist", "bitte", "wurde", "nicht", "für", "wann", "nach", "von", "vorher", "läuft", "lief", "dürfen",
                     "wir", "war", "weil", "sondern", "beschlossen", "mir", "wichtig", "immer", "als", "hat", "gerade",
                     "ich", "schau", "das", "sieht", "gut", "kannst", "du", "dir", "wie", "hoch"))
_SPANISH = frozenset(("para", "el", "es", "lo", "dejé", "añadí", "la", "de", "del", "vale", "reviso", "subió", "te"))


def language_of(text: str) -> str:
    """The language a statement or question is in: chinese, german, spanish or english."""
    if sum("\u4e00" <= c <= "\u9fff" for c in text) > 2:
        return "chinese"
    tokens = set(re.findall(r"[^\W\d_]+", text.casefold()))
    german, spanish = len(tokens & _GERMAN), len(tokens & _SPANISH)
    if german >= 2 and german >= spanish:
        return "german"
    return "spanish" if spanish >= 2 else "english"


@dataclass(frozen=True)
class IncidentKind(DrawnKind):
    """One relation the on-call sessions plant: subject and value drawn, how it is said, updated, glossed and asked."""

    #: the value in words, said in another turn than the exact value (None: never glossed)
    gloss: Callable[[str], str] | None = None
    #: a decision's reason (the second part of its answer)
    why: Callable[[random.Random], str] | None = None


def _service(rng: random.Random) -> str:
    return rng.choice(SERVICES)


def _hex(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def _memory(rng: random.Random, _: str) -> str:
    return f"{rng.randrange(1, 8)}.{rng.choice([b for b in range(1, 100) if b not in (25, 50, 75)]):02d}Gi"


def _memory_words(value: str) -> str:
    halves = round(float(value[:-2]) * 2)
    whole, half = divmod(halves, 2)
    return f"about {words(whole)}{' and a half' if half else ''} gigs"


def _cron(rng: random.Random, _: str) -> str:
    return f"{rng.randrange(1, 60)} */{rng.choice((2, 3, 4, 6, 8, 12))} * * *"


def _cron_words(value: str) -> str:
    minute, hours = value.split()[:2]
    return f"every {words(int(hours[2:]))} hours, at {words(int(minute))} past"


def _rate(rng: random.Random, _: str) -> str:
    return f"{rng.randrange(300, 4000)} req/s"


def _rate_words(value: str) -> str:
    return f"roughly {words(max(1, round(int(value.split()[0]) / 100)))} hundred requests a second"


def _window(rng: random.Random, _: str) -> str:
    start = rng.randrange(0, 5)
    minute = rng.choice(("00", "15", "30", "45"))
    return f"{rng.choice(_DAYS)} {start:02d}:{minute}-{start + rng.randrange(1, 4):02d}:{minute} UTC"


_KINDS: tuple[IncidentKind, ...] = (
    IncidentKind(
        "oncall_runbook", _service,
        lambda r, s: f"https://runbooks.{r.choice(_CORPS)}.net/{s}/{r.choice(_SLUGS)}-{r.randrange(10, 99)}",
        (("tool", "runbook", "**Runbook of record:** {v} (linked from every {s} page)"),
         ("tool", "json", '{"labels":{"alertname":"{S}_Unavailable","service":"{s}","severity":"page"},'
                          '"annotations":{"runbook_url":"{v}"}}'),
         ("assistant", "prose", "When {s} pages, open {v} first; its fourth step covers the safe restart.")),
        ("Which runbook covers {s}?", "Where are the step-by-step recovery instructions when {s} pages?",
         "{s} 的运行手册链接是什么？"),
        pattern=r"https://runbooks\.\S+",
        update=("The {s} runbook moved: {old} now just redirects to {v}.",),
        ask_before=("Which runbook covered {s} before it moved?", "Where did the recovery instructions for {s} live earlier?",
                    "{s} 的运行手册以前在哪个链接？")),
    IncidentKind(
        "oncall_image_digest", _service, lambda r, s: f"sha256:{_hex(r, 24)}",
        (("tool", "kubectl", "    Image ID:       registry.internal/{s}@{v}"),
         ("tool", "log", 'level=info component=rollout msg="rollout complete" deployment={s} digest={v}'),
         ("assistant", "prose", "Right now the {s} pods all report {v}, which is Monday's build.")),
        ("Which image digest is {s} running?", "What exact build is live for {s} at the moment?",
         "{s} 现在运行的镜像摘要是哪个？"),
        pattern=r"sha256:[0-9a-f]{24}",
        update=("Rolled {s} back: {old} is gone from the ReplicaSet, the pods run {v} again.",),
        ask_before=("Which image digest did {s} run before the rollback?", "What build was live for {s} earlier?",
                    "{s} 回滚之前运行的是哪个镜像摘要？")),
    IncidentKind(
        "oncall_memory_limit", _service, _memory,
        (("tool", "kubectl", "      memory:  {v}        # limits, container {s}"),
         ("user", "chat", "{s} keeps getting OOMKilled and its limit is only {v}"),
         ("tool", "table", "{s}\tmemory limit\t{v}\tfrom the HPA review")),
        ("What is the memory limit of {s}?", "How much RAM may one {s} pod take before the kernel kills it?",
         "Wie hoch ist das Speicherlimit von {s}?"),
        pattern=r"\b\d\.\d{2}Gi\b",
        update=("Changed the memory limit of {s} from {old} to {v}; kubectl apply went through.",),
        ask_before=("What was the memory limit of {s} before the change?", "How much RAM could a {s} pod take earlier?",
                    "Wie hoch war das Speicherlimit von {s} vorher?"),
        gloss=_memory_words),
    IncidentKind(
        "oncall_db_primary", _service,
        lambda r, s: f"pg-{r.choice(_WORDS)}-{r.randrange(10, 99)}.{r.choice(_REGIONS)}.internal",
        (("tool", "log", "patroni: promoted {v} to leader of cluster {s}-db"),
         ("tool", "promql", 'pg_replication_is_primary{cluster="{s}-db",instance="{v}:5432"} 1'),
         ("user", "chat", "fyi the primary for {s} is {v}, the others are read replicas"),
         ("assistant", "prose", "切换完成以后，{s} 的写入都走 {v} 这台。")),
        ("Which host is the primary database of {s}?", "Where do the writes of {s} land?", "{s} 的主库是哪台机器？"),
        pattern=r"\bpg-[a-z]+-\d+\.[a-z0-9]+\.internal\b",
        update=("Patroni failed {s} over: {old} is a replica now, the leader is {v}.",),
        ask_before=("Which host was the primary database of {s} before the failover?", "Where did the writes of {s} land earlier?",
                    "{s} 切换之前的主库是哪台？")),
    IncidentKind(
        "oncall_kill_switch", _service, lambda r, s: f"kill_{r.choice(_WORDS)}_{r.choice(_WORDS)}",
        (("tool", "runbook", "3. If {s} keeps failing, flip `{v}` in the flag console and wait two minutes."),
         ("assistant", "prose", "Para {s} el interruptor de emergencia es {v}, lo dejé anotado en el canal."),
         ("tool", "json", '{"flag":"{v}","owner_service":"{s}","default":false,"type":"kill-switch"}')),
        ("Which feature flag is the kill switch of {s}?", "What do I toggle to turn {s} off in an emergency?",
         "{s} 的紧急开关是哪个开关名？"),
        pattern=r"\bkill_[a-z]+_[a-z]+\b"),
    IncidentKind(
        "oncall_pager_primary", _service, lambda r, s: r.choice(_PEOPLE),
        (("tool", "json", '{"escalation_policy":{"summary":"{s} primary"},"user":{"summary":"{v}"},"escalation_level":1}'),
         ("user", "chat", "{v} has the pager for {s} this week"),
         ("tool", "table", "{s}\tprimary on call\t{v}\tMon-Sun")),
        ("Who is primary on call for {s}?", "Who gets woken up tonight if {s} breaks?", "这周 {s} 的主值班是谁？"),
        update=("Swapped the {s} pager: {old} is off sick, {v} covers the rest of the week.",),
        ask_before=("Who was primary on call for {s} before the swap?", "Who would have been woken up for {s} earlier this week?",
                    "{s} 换班之前的主值班是谁？")),
    IncidentKind(
        "oncall_owner_zh", _service, lambda r, s: r.choice(_PEOPLE_ZH),
        (("user", "chat", "{s} 这个服务归{v}管，凌晨出事也找他。"),
         ("assistant", "prose", "已经确认过了：{s} 的负责人是{v}。"),
         ("tool", "email", "> {s} 的 owner 是 {v}，复盘会请他一定参加。")),
        ("{s} 的负责人是谁？", "{s} 出了问题该去找哪位同事？", "Who is responsible for {s}?")),
    IncidentKind(
        "oncall_backup_cron", _service, _cron,
        (("tool", "kubectl", '  schedule: "{v}"      # cronjob {s}-backup'),
         ("user", "chat", "Das Backup von {s} läuft nach dem Plan {v}, bitte nicht anfassen."),
         ("assistant", "prose", "The {s} backup CronJob fires on `{v}` according to the manifest.")),
        ("What is the backup schedule of {s}?", "How often, and at what minute, does {s} get dumped to storage?",
         "Nach welchem Zeitplan läuft das Backup von {s}?"),
        update=("Moved the {s} backup schedule from `{old}` to `{v}` because of the IO spikes.",),
        ask_before=("What was the backup schedule of {s} before it was moved?", "How often did {s} get dumped earlier?",
                    "Nach welchem Zeitplan lief das Backup von {s} vorher?"),
        gloss=_cron_words),
    IncidentKind(
        "oncall_rate_limit", _service, _rate,
        (("tool", "log", 'envoy ratelimit: domain={s} descriptor=global limit="{v}"'),
         ("user", "chat", "the ingress caps {s} at {v}, anything above that gets a 429"),
         ("tool", "table", "{s}\tglobal rate limit\t{v}\tenvoy"),
         ("user", "chat", "{s} 在网关上的限流是 {v}，超过就直接返回 429")),
        ("What is the rate limit of {s}?", "How much traffic does the ingress let through to {s} before it answers 429?",
         "{s} 的限流阈值是多少？"),
        pattern=r"\b\d{3,4} req/s\b",
        update=("Retuned the {s} rate limit after the retry storm: {old} is out, {v} is in.",),
        ask_before=("What was the rate limit of {s} before it was retuned?", "How much traffic reached {s} earlier before 429s?",
                    "{s} 之前的限流阈值是多少？"),
        gloss=_rate_words),
    IncidentKind(
        "oncall_release_pin", _service, lambda r, s: f"v{r.randrange(1, 6)}.{r.randrange(0, 40)}.{r.randrange(0, 30)}",
        (("tool", "log", "Rollback was a success! Happy Helming! release={s} chart_version={v}"),
         ("tool", "email", "> We pinned {s} to {v} until the fix ships, please do not let the bot bump it."),
         ("user", "chat", "{s} stays on {v}, renovate is paused for it"),
         ("assistant", "prose", "{s} 先锁定在 {v}，等上游修复发布了再升级。")),
        ("Which release tag is {s} pinned to?", "What version of {s} has to stay deployed for now?",
         "{s} 现在固定在哪个版本标签？"),
        pattern=r"\bv\d+\.\d+\.\d+\b",
        update=("Unpinned {s} from {old}; the hotfix release {v} is what we run from now on.",),
        ask_before=("Which release tag was {s} pinned to before the hotfix?", "What version of {s} did we hold earlier?",
                    "{s} 之前固定在哪个版本标签？")),
    IncidentKind(
        "oncall_maintenance_window", _service, _window,
        (("user", "chat", "Das Wartungsfenster für {s} ist {v}, vorher bitte nichts neu starten."),
         ("tool", "email", "> Maintenance for {s} is booked for {v} (change ticket to follow)."),
         ("tool", "table", "{s}\twartung\t{v}\tgenehmigt")),
        ("Wann ist das Wartungsfenster von {s}?", "Wann dürfen wir an {s} schrauben, ohne jemanden zu stören?",
         "When is the maintenance window of {s}?"),
        pattern=r"\b(?:Mo|Di|Mi|Do|Fr|Sa|So) \d{2}:\d{2}-\d{2}:\d{2} UTC\b",
        update=("Wartungsfenster für {s} verschoben: nicht mehr {old}, sondern {v}.",),
        ask_before=("Wann war das Wartungsfenster von {s} vor der Verschiebung?", "Wann durften wir vorher an {s} arbeiten?",
                    "When was the maintenance window of {s} before it moved?")),
    IncidentKind(
        "oncall_postmortem_decision", lambda r: r.choice(_TOPICS), lambda r, s: r.choice(_OPTIONS),
        (("assistant", "prose", "Postmortem outcome for {s}: {v}, because {why}."),
         ("user", "chat", "Beschlossen für {s}: {v}, weil {why}."),
         ("tool", "email", "> > Agreed in the review: {s} becomes {v}. Reason: {why}.")),
        ("What did the postmortem decide about {s}, and why?", "Where did we land on {s}, and what was the argument?",
         "复盘会上关于{s}定了什么，理由是什么？"),
        why=lambda r: r.choice(_REASONS)),
    IncidentKind(
        "oncall_user_preference", lambda r: r.choice(list(_LIKES)), lambda r, s: r.choice(_LIKES[s]),
        (("user", "chat", "For {s} I want {v}, every single time."),
         ("user", "chat", "Mir ist wichtig: {s} bitte immer als {v}."),
         ("user", "chat", "以后{s}一律按这个来：{v}。")),
        ("How does the user want {s} done?", "What style should I follow for {s} so the user is happy?",
         "用户希望{s}怎么处理？")),
)

#: Sets gathered across shifts: (kind, value maker, statement templates with {t} the incident and {v}, questions)
AGGREGATES: tuple[tuple[str, Callable[[random.Random], str], tuple[tuple[str, str, str], ...], tuple[str, str, str]], ...] = (
    ("oncall_cordoned_nodes", lambda r: f"gke-prod-{r.choice(_WORDS)}-{_hex(r, 8)}",
     (("user", "chat", "cordoned {v} as part of the {t}, draining it now"),
      ("tool", "kubectl", "node/{v} cordoned   # {t}"),
      ("assistant", "prose", "Añadí {v} a la lista de nodos acordonados del {t}.")),
     ("Which nodes did we cordon during the {t}?", "List every machine we took out of scheduling while handling the {t}.",
      "{t}期间我们封锁了哪些节点？")),
    ("oncall_hotfix_mrs", lambda r: f"!{r.randrange(10000, 99999)}",
     (("user", "chat", "merged hotfix {v} for the {t}"),
      ("tool", "log", "gitlab: merge request {v} merged into main (label: {t})"),
      ("assistant", "prose", "The hotfix merge request {v} belongs to the {t} as well.")),
     ("Which hotfix merge requests went in for the {t}?", "Name every emergency change we merged while fighting the {t}.",
      "{t}一共合入了哪些热修复 MR？")),
)
#: the incidents sets are gathered for
INCIDENTS = ("disk-pressure incident", "DNS flap", "TLS expiry outage", "queue backlog", "cert rotation mishap",
             "noisy-neighbour slowdown")
#: Two events asked in time order: statement templates ({s} service, {v} the value naming the event)
ORDER_EVENTS = (
    (lambda r: f"silence-{_hex(r, 8)}", ("user", "chat", "silenced the {s} alerts for two hours, silence id {v}")),
    (lambda r: f"snap-{_hex(r, 10)}", ("tool", "log", 'velero: restore of {s} from {v} completed phase=Completed')),
)
ORDER_QUESTIONS = ("Which came first: silencing the alerts of {a} or restoring {b} from a snapshot?",
                   "Did {a} go quiet before or after {b} came back from its backup?",
                   "{a} 告警静音和 {b} 从快照恢复，哪个在先？")

_NICKS = ("dmitri_k", "sam.o", "fatou", "jlr", "noemi", "bpk", "ayaan", "tess-w", "hugo_m", "rin")


def noise_statement(rng: random.Random) -> str:
    """A unique fact-shaped remark about a service that no question asks about."""
    svc = _service(rng)
    return rng.choice((
        f"error budget burn for {svc} is {rng.randrange(2, 30)}.{rng.randrange(10)}x over the last hour",
        f"{svc} has {rng.randrange(2, 40)} pods in CrashLoopBackOff on node pool {rng.choice(_WORDS)}",
        f"queue depth behind {svc} peaked at {rng.randrange(1000, 90000)} messages",
        f"{svc} hat gerade {rng.randrange(3, 60)} Restarts in zehn Minuten gehabt",
        f"{svc} 的 5xx 比例刚涨到 {rng.randrange(2, 40)}%",
        f"el p95 de {svc} subió a {rng.randrange(300, 2000)} milisegundos",
    ))


class OncallFiller:
    """The filler of the on-call sessions: channel lines, requests, replies and tool outputs by format."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def clock(self, ts_ms: int) -> str:
        """A channel timestamp (HH:MM:SS) for ``ts_ms``."""
        seconds = ts_ms // 1000
        return f"{seconds // 3600 % 24:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"

    def chat_line(self, ts_ms: int) -> str:
        """One line of the incident channel."""
        rng = self.rng
        svc, other = rng.sample(SERVICES, 2)
        text = rng.choice((
            f"anyone else seeing 502s from {svc}?", f"ack, looking at {svc} now",
            f"{svc} dashboards look flat again, keeping an eye on it", f"is {other} downstream of {svc}? the graph says so",
            f"ich schau mir {svc} gleich an", f"vale, reviso {svc} y te cuento", f"{svc} 那边我先看一下日志",
            f"rolling restart of {svc} started", f"status page updated, next update in thirty minutes",
            f"who has context on {other}? it started alerting too", "+1", "brb, coffee",
        ))
        return f"[{self.clock(ts_ms)}] <{rng.choice(_NICKS)}> {text}"

    def opening(self, ts_ms: int) -> str:
        """The user's message: some channel lines pasted, then what to do."""
        rng = self.rng
        # Channel lines from a few minutes back, oldest first, ending a minute before the request.
        offsets = sorted((rng.randrange(60, 900) for _ in range(rng.randrange(2, 7))), reverse=True)
        lines = [self.chat_line(ts_ms - 1000 * offset) for offset in offsets]
        ask = rng.choice((
            f"Can you check what {_service(rng)} is doing? Pasting the channel:",
            f"Draft the next status update for {_service(rng)}, here is what people said:",
            f"Help me write the postmortem timeline for {_service(rng)}, channel excerpt below.",
            f"Kannst du dir {_service(rng)} anschauen? Auszug aus dem Channel:",
            f"帮我看看 {_service(rng)} 现在什么情况，频道记录如下：",
        ))
        return "\n".join([ask, *lines])

    def reply(self) -> str:
        """The assistant's reply before the statements it plants."""
        rng = self.rng
        parts = []
        for _ in range(rng.randrange(2, 6)):
            svc = _service(rng)
            parts.append(rng.choice((
                f"I checked {svc}: the pods restarted {rng.randrange(2, 20)} times in the last hour, mostly during the deploy window.",
                f"The error rate of {svc} is back under the alert threshold, but I would keep the incident open for another hour.",
                f"Timeline entry: {svc} started returning 5xx, the on-call acknowledged the page, mitigation began.",
                f"Next step for {svc}: compare the last two deploys and check whether the readiness probe changed.",
                f"Zusammenfassung: {svc} ist stabil, die Latenz ist wieder normal.",
                f"{svc} 目前恢复正常，建议继续观察半小时。",
            )))
        return " ".join(parts)

    def tool(self, fmt: str, size: int) -> tuple[str, dict[str, object], list[str]]:
        """A tool call's name and arguments and its output's lines, of about ``size`` bytes, in format ``fmt``."""
        rng = self.rng
        make = {"kubectl": self._kubectl, "log": self._log, "promql": self._promql, "json": self._json,
                "runbook": self._runbook, "email": self._email, "table": self._table}[fmt]
        name, args, line = make()
        lines: list[str] = []
        total = 0
        while total < size:
            lines.append(line())
            total += len(lines[-1]) + 1
        if fmt == "json":  # one minified document: the records are joined by the writer
            return name, args, lines
        header = {"kubectl": "NAME                                   READY   STATUS    RESTARTS   AGE",
                  "table": "service\tsetting\tvalue\tnote", "promql": f"# query at {rng.randrange(1, 28):02d}/11 step=30s"}
        return name, args, ([header[fmt]] if fmt in header else []) + lines

    def _kubectl(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        namespace = rng.choice(("prod", "payments", "edge"))

        def line() -> str:
            status = rng.choice(("Running", "Running", "Running", "Pending", "CrashLoopBackOff"))
            return (f"{_service(rng)}-{_hex(rng, 9)}-{_hex(rng, 5)}".ljust(39) +
                    f"1/1     {status:<9} {rng.randrange(0, 30):<10} {rng.randrange(1, 59)}m")
        return "bash", {"command": f"kubectl get pods -n {namespace} -o wide"}, line

    def _log(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        svc = _service(rng)

        def line() -> str:
            return (f"level={rng.choice(('info', 'warn', 'error'))} caller={rng.choice(_WORDS)}.go:{rng.randrange(10, 900)} "
                    f'msg="{rng.choice(("upstream timeout", "retrying request", "connection reset", "slow query"))}" '
                    f"service={_service(rng)} attempt={rng.randrange(1, 6)}")
        return "bash", {"command": f"kubectl logs -n prod deploy/{svc} --since=30m"}, line

    def _promql(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        metric = rng.choice(("http_requests_total", "container_restarts", "queue_lag_seconds"))

        def line() -> str:
            return (f'{metric}{{service="{_service(rng)}",code="{rng.choice(("200", "500", "503"))}",'
                    f'pod="p{_hex(rng, 5)}"}} {rng.randrange(0, 50000)}')
        return "promql_query", {"query": f"sum by (service) (rate({metric}[5m]))"}, line

    def _json(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng

        def line() -> str:
            return ('{"status":"%s","labels":{"alertname":"%s","service":"%s","severity":"%s"},"fingerprint":"%s"}'
                    % (rng.choice(("firing", "resolved")), rng.choice(("HighErrorRate", "PodNotReady", "DiskFilling")),
                       _service(rng), rng.choice(("page", "ticket")), _hex(rng, 16)))
        return "http_get", {"url": "https://alertmanager.internal/api/v2/alerts?active=true"}, line

    def _runbook(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        svc = _service(rng)

        def line() -> str:
            return rng.choice((
                f"## Symptoms\nLatency alerts from {_service(rng)} and a rising queue behind it.",
                f"- Check the {rng.choice(('ingress', 'database', 'cache'))} dashboard before restarting anything.",
                "- Do not scale down during business hours without asking in the channel.",
                f"- Escalate to the {rng.choice(('platform', 'data', 'payments'))} team after fifteen minutes.",
                "1. Confirm the alert is not a scrape gap (compare with the blackbox probe).",
            ))
        return "web_fetch", {"url": f"https://wiki.internal/oncall/{svc}"}, line

    def _email(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng
        svc = _service(rng)

        def line() -> str:
            return rng.choice((
                f"> On {rng.choice(('Tue', 'Wed', 'Thu'))}, {rng.choice(_NICKS)} wrote:",
                f"> > I still think the {svc} alert fired too late, the graphs show the dip ten minutes earlier.",
                "> Agreed, let's add that to the timeline.",
                f"Thanks all, I will circulate the {svc} draft by Friday.",
                "> > > Can we keep the action items short this time?",
                f"> Der Entwurf zu {svc} sieht gut aus, nur die Zeitleiste fehlt noch.",
            ))
        return "read_email", {"thread": f"Re: [postmortem] {svc} degradation"}, line

    def _table(self) -> tuple[str, dict[str, object], Callable[[], str]]:
        rng = self.rng

        def line() -> str:
            return (f"{_service(rng)}\t{rng.choice(('action item', 'follow-up', 'owner check'))}\t"
                    f"{rng.choice(('open', 'done', 'blocked'))}\tAI-{rng.randrange(100, 999)}")
        return "sheets_export", {"sheet": "postmortem action items", "format": "tsv"}, line
