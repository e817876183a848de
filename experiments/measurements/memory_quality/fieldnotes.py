"""A third workload: sessions written as an on-call engineer's field notes.

Written before the fact finder of issue 14 phase 3 was widened and held out from that tuning; the
fact finder was then tuned on it in phase 4 (its weak shapes: CSV rows, cron strings, "DRI"), so
it is a development set now and :mod:`.tracker` is the held-out one. Its figures are reported
apart (``memory_quality.workload.generator=fieldnotes``). It shares neither the
phrasings of :mod:`.workload` nor those of :mod:`.independent`, and plants other kinds of facts:
database hosts, base images, Kafka topics, artifact buckets, API versions, schedules, rate
limits and the person responsible ("the DRI"), said as CSV with a header, Markdown tables with a
header row, Dockerfile ``FROM`` lines, ``curl -I`` headers, ``key=value`` log lines, INI and YAML
files, shell commands with ``--flag value``, back-quoted code in chat, and Chinese notes.

Its filler is its own too: ``docker ps`` tables (image tags and container ids: near misses in shape of the base images), HTTP access logs with request ids, ``df -h``, CSV metrics, and stand-up notes.

It plants facts and updates (asked for the current value and the one before), like
:mod:`.independent`, and builds the same :class:`~.workload.Workload`, so every metric is
computed alike. Items whose answer occurs outside their evidence are dropped.
"""

from __future__ import annotations

import random

from experiments.measurements.memory_quality.planting import PlantKind, TurnWriter, build_planted, hex_digits
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape

__all__ = ["build_fieldnotes"]

_SUBJECTS = ("ledger", "beacon", "otter", "prism", "saffron", "walrus", "zephyr", "copper", "juniper", "meadow",
             "raven", "sable", "topaz", "umber", "vireo")
_FIRST = ("Noor", "Sven", "Chidi", "Paloma", "Kofi", "Yuki", "Dmitri", "Aisha", "Bram", "Ines", "Tariq", "Liesel")
_LAST = ("Haddad", "Lindqvist", "Eze", "Ruiz", "Mensah", "Tanaka", "Volkov", "Karimi", "Okafor", "Brandt", "Sousa")
_CN_SURNAMES = ("钟", "欧阳", "夏侯", "闻人", "公孙", "尉迟", "濮")
_CN_GIVEN = ("楚涵", "俊杰", "婉清", "嘉树", "若彤", "浩然", "书瑶", "景行")
_WORDS = ("vacuum", "autovacuum", "compaction", "eviction", "warmup", "retry", "backpressure", "gc pause", "fsync",
          "lag", "hot key", "connection pool", "cold start", "drift")


_KINDS = (
    PlantKind("db_host", lambda r, s: f"pg-{s}-{r.randrange(2, 30)}.db{r.randrange(1, 9)}.internal",
          (("tool", "csv", "cluster,primary,port,replicas\n{s},{v},5432,2"),
           ("user", "prose", "For {s} the writer endpoint is {v}; never point batch jobs at a replica."),
           ("assistant", "ini", "I put this in the job config:\n[{s}]\nprimary_host = {v}\nsslmode = require")),
          ("{s} failed over overnight, its primary is {v} now (it used to be {old}).",
           "{s} 的主库由 {old} 切换到了 {v}。"),
          ("What is the primary database host of {s}?", "Where do writes for {s} land?", "{s} 的主库地址是什么？"),
          ("Which host was the primary of {s} before the failover?", "Where did {s} write earlier?",
           "{s} 之前的主库是哪台？")),
    PlantKind("base_image", lambda r, s: f"{r.choice(('python', 'node', 'golang', 'eclipse-temurin'))}:{r.randrange(11, 23)}.{r.randrange(0, 9)}-{r.choice(('slim', 'alpine', 'bookworm', 'jammy'))}",
          (("tool", "dockerfile", "# services/{s}/Dockerfile\nFROM {v} AS build\nWORKDIR /src\nCOPY . ."),
           ("assistant", "prose", "{s} builds on `{v}` since the musl DNS issue, so keep that base.")),
          ("Swap {old} out for {v} as the base of {s}.", "{s} 的基础镜像从 {old} 换成 {v} 了。"),
          ("Which base image does {s} build on?", "What does the Dockerfile of {s} start FROM?",
           "{s} 用的基础镜像是哪个？"),
          ("Which base image did {s} use before?", "What did {s} build FROM earlier?", "{s} 以前的基础镜像是什么？")),
    PlantKind("topic", lambda r, s: f"{s}.{r.choice(('events', 'changes', 'audit', 'outbox'))}.v{r.randrange(2, 9)}",
          (("tool", "log", "2024-06-03T08:14:55Z INFO producer ready service={s} topic={v} partitions=12 acks=all"),
           ("user", "prose", "Consumers of {s} must read {v}, the old topic is being drained.")),
          (),
          ("Which Kafka topic does {s} publish to?", "Where do {s}'s events get produced?", "{s} 的消息发到哪个 topic？")),
    PlantKind("bucket", lambda r, s: f"{s}-artifacts-{hex_digits(r, 6)}",
          (("tool", "table", "| Service | Bucket | Retention |\n|---|---|---|\n| {s} | {v} | 30d |"),
           ("user", "prose", "{s} 的构建产物都放在 {v} 这个桶里。")),
          (),
          ("Which bucket holds the build artifacts of {s}?", "Where are {s}'s build outputs stored?",
           "{s} 的构建产物存在哪个桶？")),
    PlantKind("api_version", lambda r, s: f"v{r.randrange(2, 7)}beta{r.randrange(1, 9)}",
          (("tool", "http", "HTTP/2 200\ncontent-type: application/json\nx-{s}-api-version: {v}\nx-request-id: req-{s}-77"),
           ("assistant", "prose", "We pin {s} clients to API {v} until the deprecation window ends.")),
          ("Clients of {s} move to API {v}; {old} is deprecated.",),
          ("Which API version are {s} clients pinned to?", "What API revision do we call {s} with?",
           "{s} 客户端固定用哪个 API 版本？"),
          ("Which API version did {s} clients use before?", "What API revision of {s} was deprecated?",
           "{s} 之前用的 API 版本是哪个？")),
    PlantKind("schedule", lambda r, s: f"{r.randrange(10, 59)} {r.randrange(0, 23)} * * {r.randrange(0, 6)}",
          (("tool", "yaml", "jobs:\n  {s}-reindex:\n    schedule: \"{v}\"\n    concurrency: Forbid"),
           ("user", "prose", "The {s} reindex runs on cron `{v}`, do not move it to business hours.")),
          (),
          ("What cron schedule does the {s} reindex run on?", "When does {s} reindex?", "{s} 的重建索引任务什么时候跑？")),
    PlantKind("rate_limit", lambda r, s: str(r.randrange(12, 79) * 125),
          (("tool", "shell", "$ ratelimit-admin set --service {s} --per-minute {v}\nok"),
           ("user", "prose", "Throttle {s} at {v} requests per minute per tenant.")),
          ("Raise the {s} limit to {v} per minute (was {old}).",),
          ("What is the rate limit of {s} per minute?", "How many calls a minute may a tenant make to {s}?",
           "{s} 每分钟限流多少次？"),
          ("What was the rate limit of {s} before?", "How many calls a minute did {s} allow earlier?",
           "{s} 之前每分钟限流多少？")),
    PlantKind("dri", lambda r, s: f"{r.choice(_FIRST)} {r.choice(_LAST)}",
          (("user", "prose", "{v} is the DRI for the {s} cutover, route questions there."),
           ("tool", "table", "| Area | DRI | Backup |\n|------|-----|--------|\n| {s} cutover | {v} | TBD |")),
          (),
          ("Who is the DRI for the {s} cutover?", "Who should I ask about cutting {s} over?", "{s} 切换谁负责？")),
    PlantKind("dri_cn", lambda r, s: r.choice(_CN_SURNAMES) + r.choice(_CN_GIVEN),
          (("user", "prose", "{s} 上线这件事，对接人是{v}。"), ("assistant", "prose", "记一下：{s} 的发布由{v}拍板。")),
          (),
          ("{s} 上线找谁对接？", "{s} 发布谁说了算？", "Who signs off the {s} release?"), lang="chinese"),
)



class _Notes:
    """The field notes' filler: stand-up notes, docker ps, access logs, df -h, a metrics CSV."""

    def opening(self, rng: random.Random) -> str:
        """The user picks a subject up again and pastes a stand-up note or two."""
        return "\n".join([f"Picking up {rng.choice(_SUBJECTS)} where we left it.", self.notes(rng, rng.randrange(1, 3))])

    def reply(self, rng: random.Random) -> str:
        """A few lines of notes."""
        return self.notes(rng, rng.randrange(2, 8))

    def notes(self, rng: random.Random, lines: int) -> str:
        """``lines`` stand-up notes."""
        out = []
        for _ in range(lines):
            out.append(f"Stand-up: {rng.choice(_SUBJECTS)} shows {rng.choice(_WORDS)} again around "
                       f"{rng.randrange(1, 12)}pm, {rng.choice(_FIRST)} thinks it is the {rng.choice(_WORDS)}.")
        return " ".join(out)

    def tool_text(self, rng: random.Random) -> tuple[str, dict[str, object], str]:
        """One of four outputs, drawn."""
        what = rng.randrange(4)
        if what == 0:
            rows = [f"{hex_digits(rng, 12)}   {rng.choice(('redis', 'nginx', 'mariadb', 'envoy'))}:{rng.randrange(3, 23)}."
                    f"{rng.randrange(0, 9)}-{rng.choice(('slim', 'alpine'))}   \"/entrypoint.sh\"   Up {rng.randrange(2, 50)} hours   "
                    f"{rng.choice(_SUBJECTS)}_{rng.randrange(1, 9)}" for _ in range(rng.randrange(30, 120))]
            return "bash", {"command": "docker ps"}, "CONTAINER ID   IMAGE   COMMAND   STATUS   NAMES\n" + "\n".join(rows)
        if what == 1:
            rows = [f"10.{rng.randrange(0, 255)}.{rng.randrange(0, 255)}.{rng.randrange(1, 254)} - - "
                    f"\"GET /{rng.choice(_SUBJECTS)}/items/{hex_digits(rng, 8)} HTTP/1.1\" {rng.choice((200, 200, 304, 404, 500))} "
                    f"{rng.randrange(100, 999)} rid={hex_digits(rng, 10)}" for _ in range(rng.randrange(30, 140))]
            return "bash", {"command": "tail -n 200 /var/log/nginx/access.log"}, "\n".join(rows)
        if what == 2:
            rows = [f"/dev/nvme{rng.randrange(0, 4)}n1p{rng.randrange(1, 5)}  {rng.randrange(20, 900)}G  {rng.randrange(1, 800)}G  "
                    f"{rng.randrange(1, 99)}%  /srv/{rng.choice(_SUBJECTS)}" for _ in range(rng.randrange(20, 80))]
            return "bash", {"command": "df -h"}, "Filesystem  Size  Used  Use%  Mounted on\n" + "\n".join(rows)
        rows = [f"{rng.choice(_SUBJECTS)},{rng.choice(_WORDS)},{rng.randrange(1, 999)},{rng.randrange(1, 99)}.{rng.randrange(0, 9)}"
                for _ in range(rng.randrange(30, 120))]
        return "read_file", {"path": "reports/weekly_metrics.csv"}, "service,signal,count,p95_ms\n" + "\n".join(rows)


def build_fieldnotes(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` sessions of ``shape.turns`` turns with ``shape.facts`` facts and ``shape.updates`` updates
    planted (the other fields of the shape do not apply to this generator)."""
    rng = random.Random(f"aptmem-memory-fieldnotes:{seed}")
    return build_planted(shape, rng, _KINDS, _SUBJECTS, item_prefix="fn_", spare=-1,
                         writer=lambda: TurnWriter(rng, _Notes(), prefix="f", model="sim-model-3", ts=1_735_000_000_000,
                                                   ticks=(60_000, 700, 900, 5_000)))
