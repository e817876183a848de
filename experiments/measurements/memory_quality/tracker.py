"""A fourth workload, held out from all tuning: an issue tracker and a chat-ops channel.

Written before the fact finder of issue 14 phase 4 was made general, and never tuned on: its
figures are reported apart (``memory_quality.workload.generator=tracker``). It shares no phrasing
with :mod:`.workload`, :mod:`.independent` or :mod:`.fieldnotes`, and plants other kinds: pod
memory limits, incident assignees, feature rollout percentages, Vault secret paths, schema
migrations, runbook links, Chinese-English review owners and dead-letter queues. They are said as
``.env`` lines, chat-ops slash commands and bot messages, issue-tracker fields (``Assignee:``),
Markdown links, ``logfmt`` log lines, and sentences with no key word at all ("Anything X cannot
process ends up in Y"). Its updates are written as arrows (``old → new``), "is now", "handed over
to", and some name no old value at all: they supersede only by subject and attribute.

Its filler is its own: issue comments with labels and reactions, chat-ops bot lines naming
builds and other handles, ``.env`` dumps of other keys (CPU limits, TTLs: near misses in shape),
and CI pipeline logs with job ids.

It builds the same :class:`~.workload.Workload` as the other generators, so every metric is
computed alike. Items whose answer occurs outside their evidence are dropped.
"""

from __future__ import annotations

import random

from experiments.measurements.memory_quality.planting import PlantKind, TurnWriter, build_planted, hex_digits
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape

__all__ = ["build_tracker"]

_SUBJECTS = ("kestrel", "mistral", "obsidian", "pylon", "quokka", "rhubarb", "sorrel", "tamarind", "vesper", "wombat",
             "yarrow", "alder", "bramble", "cobalt", "dunlin")
_HANDLES = ("mkowalski", "adebayo", "lfontaine", "rnakamura", "tpetrov", "sgupta", "jmwangi", "cdelacruz", "hbergstrom",
            "oyilmaz")
#: handles only the filler uses (same shape as an assignee, never an answer)
_BYSTANDERS = ("qa-rota", "ekim", "pwhite", "dnovak", "fsilva", "release-train")
_CN_NAMES = ("司徒", "宇文", "长孙", "端木", "西门", "南宫")
_CN_GIVEN = ("子墨", "一诺", "思远", "沐阳", "语桐", "明哲")
_WORDS = ("checkout", "ingest", "billing", "search", "thumbnails", "webhooks", "payouts", "exports", "sessions", "audit")
_LABELS = ("p1", "p2", "p3", "needs-triage", "regression", "infra", "flaky", "customer")


def _handle(r: random.Random) -> str:
    return f"@{r.choice(_HANDLES)}{r.randrange(2, 99)}"


_KINDS = (
    PlantKind("mem_limit", lambda r, s: f"{r.randrange(5, 61) * 128}Mi",
          (("tool", "env", "{S}_MEMORY_LIMIT={v}"),
           ("user", "slash", "/deploy {s} --memory {v} --env prod"),
           ("assistant", "keyless", "Each {s} pod gets {v} after the OOM review; more than that starves the node.")),
          ("{s} memory: {old} → {v}", "{s} 的内存上限改成 {v} 了。"),
          ("How much memory may a {s} pod use?", "What ceiling did the OOM review give {s} pods?", "{s} 的内存上限是多少？"),
          ("How much memory did a {s} pod get before?", "What was the ceiling of {s} pods earlier?",
           "{s} 之前的内存上限是多少？")),
    PlantKind("assignee", lambda r, s: _handle(r),
          (("tool", "tracker", "Issue: {s} healthcheck flaps under load\nStatus: In progress\nAssignee: {v}\nLabels: infra, p2"),
           ("user", "keyless", "{v} picked up the {s} incident, leave it with them.")),
          ("Reassigned the {s} incident to {v}.", "{s} incident: {old} handed over to {v}."),
          ("Who is assigned the {s} incident?", "Whose plate is the {s} outage on?", "{s} 的故障现在谁在跟？"),
          ("Who had the {s} incident before?", "Whose was the {s} outage earlier?", "{s} 的故障之前是谁在跟？")),
    PlantKind("rollout", lambda r, s: f"{r.randrange(3, 97)}.{r.choice(('25', '5', '75'))}%",
          (("tool", "chatops", "[flagbot] {s}-new-flow rollout set to {v} by @release-train"),
           ("user", "mixed", "{s} 的新流程灰度现在是 {v}，先别动。")),
          ("bump {s} new-flow rollout {old} -> {v}", "{s} new-flow rollout is now {v}"),
          ("What share of traffic gets the new {s} flow?", "How far along is the {s} canary?", "{s} 新流程灰度到多少了？"),
          ("What share of traffic got the new {s} flow before?", "How far along was the {s} canary earlier?",
           "{s} 新流程之前灰度是多少？")),
    PlantKind("vault_path", lambda r, s: f"secret/data/{s}/{r.choice(_WORDS)}-{hex_digits(r, 4)}",
          (("tool", "yaml", "metadata:\n  annotations:\n    vault.hashicorp.com/agent-inject-secret-db: \"{v}\""),
           ("assistant", "keyless", "Credentials for {s} come out of {v} now, not from the env file.")),
          (),
          ("Where in Vault are the {s} credentials?", "Which secret does {s} read its password from?",
           "{s} 的凭据放在 Vault 哪个路径？")),
    PlantKind("migration", lambda r, s: f"2024{r.randrange(1, 13):02d}{r.randrange(1, 29):02d}_{r.randrange(0, 24):02d}"
                                         f"{r.randrange(0, 60):02d}_{r.choice(_WORDS)}",
          (("tool", "logfmt", "ts=2024-07-02T11:03:09Z level=info svc={s} msg=\"schema applied\" head={v} dirty=false"),
           ("user", "keyless", "{s} prod stops at {v}, do not run anything after it.")),
          ("Migrated {s} prod up to {v}.",),
          ("Which migration is the {s} prod schema at?", "How far has the {s} database been migrated?",
           "{s} 生产库迁移到哪一版了？"),
          ("Which migration was the {s} prod schema at before?", "Where did the {s} schema stop earlier?",
           "{s} 生产库之前迁移到哪一版？")),
    PlantKind("runbook", lambda r, s: f"https://wiki.corp.invalid/runbooks/{s}-{r.choice(_WORDS)}-{r.randrange(10, 99)}",
          (("tool", "tracker", "Issue: {s} pages at night\nRunbook: [{s} paging]({v})\nLabels: p1"),
           ("assistant", "keyless", "When {s} pages, follow {v} step by step.")),
          (),
          ("Which runbook covers {s} pages?", "What do I follow when {s} wakes me up?", "{s} 告警时按哪个手册处理？")),
    PlantKind("reviewer_cn", lambda r, s: r.choice(_CN_NAMES) + r.choice(_CN_GIVEN),
          (("user", "mixed", "{s} 的 code review 请找{v}，retry 那块只有他熟。"),
           ("assistant", "mixed", "PR 合并前要{v} approve（{s} 仓库）。")),
          (),
          ("{s} 的 PR 找谁 review？", "{s} 合并前谁要点 approve？", "Who reviews pull requests for {s}?"), lang="chinese"),
    PlantKind("dead_letter", lambda r, s: f"{s}-dlq-{hex_digits(r, 5)}",
          (("user", "keyless", "Anything {s} cannot process ends up in {v}."),
           ("tool", "shell", "$ aws sqs set-queue-attributes --queue {s}-main --dead-letter-queue {v}\n{{}}")),
          ("Point {s} at {v} for dead letters from today.",),
          ("Where do the messages {s} fails on go?", "Which queue collects what {s} rejects?", "{s} 处理失败的消息进哪个队列？"),
          ("Where did the messages {s} failed on go before?", "Which queue collected {s}'s rejects earlier?",
           "{s} 之前的死信队列是哪个？")),
)


class _Tracker:
    """The tracker workload's filler: issue comments, chat-ops bot lines, ``.env`` dumps, CI logs."""

    def opening(self, rng: random.Random) -> str:
        """The user points at an issue and quotes a comment or two."""
        return "\n".join([f"Re #{rng.randrange(1000, 9999)} ({rng.choice(_SUBJECTS)}): can you look?", self.comments(rng, rng.randrange(1, 3))])

    def reply(self, rng: random.Random) -> str:
        """A few comments' worth of reply."""
        return self.comments(rng, rng.randrange(2, 7))

    def comments(self, rng: random.Random, n: int) -> str:
        """``n`` issue comments."""
        out = []
        for _ in range(n):
            out.append(f"**@{rng.choice(_BYSTANDERS)}** commented {rng.randrange(2, 40)} minutes ago: the {rng.choice(_WORDS)} "
                       f"path of {rng.choice(_SUBJECTS)} looks {rng.choice(('slow', 'fine', 'odd', 'stuck'))} again "
                       f"(label {rng.choice(_LABELS)}, {rng.randrange(1, 9)} thumbs up).")
        return " ".join(out)

    def tool_text(self, rng: random.Random) -> tuple[str, dict[str, object], str]:
        """One of four outputs, drawn."""
        what = rng.randrange(4)
        if what == 0:
            rows = [f"[{rng.choice(('deploybot', 'pagerbot', 'ci'))}] {rng.choice(_SUBJECTS)} build {rng.randrange(1000, 9999)} "
                    f"{rng.choice(('promoted to staging', 'rolled back', 'queued', 'green'))} by @{rng.choice(_BYSTANDERS)}"
                    for _ in range(rng.randrange(30, 120))]
            return "slack_history", {"channel": "#ops"}, "\n".join(rows)
        if what == 1:
            rows = []
            for subject in rng.sample(_SUBJECTS, rng.randrange(4, 12)):
                rows += [f"{subject.upper()}_CPU_LIMIT={rng.randrange(1, 40) * 50}m", f"{subject.upper()}_LOG_LEVEL={rng.choice(('info', 'debug', 'warn'))}",
                         f"{subject.upper()}_CACHE_TTL={rng.randrange(5, 900)}s"]
            return "bash", {"command": "cat deploy/prod.env"}, "\n".join(rows)
        if what == 2:
            rows = [f"job={hex_digits(rng, 8)} stage={rng.choice(('lint', 'test', 'build', 'deploy'))} svc={rng.choice(_SUBJECTS)} "
                    f"status={rng.choice(('ok', 'ok', 'ok', 'retry'))} took={rng.randrange(3, 600)}s"
                    for _ in range(rng.randrange(30, 140))]
            return "bash", {"command": "ci logs --last 200"}, "\n".join(rows)
        rows = [f"- [{rng.choice((' ', 'x'))}] {rng.choice(_SUBJECTS)}: {rng.choice(_WORDS)} {rng.choice(('cleanup', 'alerts', 'docs', 'retry budget'))} "
                f"({rng.choice(_LABELS)})" for _ in range(rng.randrange(20, 90))]
        return "read_file", {"path": "ROADMAP.md"}, "## Open items\n" + "\n".join(rows)


def build_tracker(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` sessions of ``shape.turns`` turns with ``shape.facts`` facts and ``shape.updates`` updates
    planted (the other fields of the shape do not apply to this generator)."""
    rng = random.Random(f"aptmem-memory-tracker:{seed}")
    return build_planted(shape, rng, _KINDS, _SUBJECTS, item_prefix="tr_", spare=1,
                         writer=lambda: TurnWriter(rng, _Tracker(), prefix="t", model="sim-model-4", ts=1_745_000_000_000,
                                                   ticks=(40_000, 600, 1_200, 4_000)))
