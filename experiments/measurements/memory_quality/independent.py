"""A second, independent workload: sessions written differently from :mod:`.workload`, to check on.

:mod:`.workload` and :mod:`.kinds` were written while the memory strategies were tuned, so a
strategy may fit their phrasings and their filler. This generator shares neither: its own
filler (``kubectl`` tables, ``pytest`` runs, ``git log``, YAML and TOML files, chat about a
release), its own fact phrasings (config lines, ``export`` lines, Markdown table rows, commit
logs, chat in English and Chinese) and its own update phrasings. Nothing in ``aptmem`` was
tuned on it; its figures are reported apart (``memory_quality.workload.generator=independent``).

It plants facts (one statement each) and updates (an old and a new value, asked for the current
one and for the one before); it plants no absent facts, sets or orders. It builds the same :class:`~.workload.Workload`
the replay scores, so every metric is computed alike. Items whose answer occurs outside their
evidence are dropped, as in :mod:`.workload`.
"""

from __future__ import annotations

import random
import string

from experiments.measurements.memory_quality.planting import PlantKind, TurnWriter, build_planted, hex_digits
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape

__all__ = ["build_independent"]

_NAMES = ("Priya Raman", "Tomasz Zielinski", "Amara Okoye", "Keanu Silva", "Ingrid Holm", "Rafael Duarte",
          "Mei Lin", "Olusegun Bello", "Hana Sato", "Lucas Moreau")
_CN_NAMES = ("欧阳建华", "司马婷", "诸葛明轩", "上官雪", "东方文博", "慕容晓月", "令狐强", "皇甫丽娜")
_SERVICES = ("orchid", "basalt", "tidepool", "quasar", "lantern", "marmot", "fjord", "cinder", "pebble", "sequoia",
             "kiwi", "tundra2", "gazelle", "harbor", "nimbus")
_FILLER_WORDS = ("rollout", "canary", "latency", "shard", "replica", "cache", "quota", "rebalance", "drain", "probe",
                 "budget", "throttle", "backfill", "reindex", "snapshot", "failover", "lease", "heartbeat")


_KINDS = (
    PlantKind("image_tag", lambda r, s: f"{r.randrange(1, 40)}.{r.randrange(0, 99)}.{r.randrange(0, 99)}-r{r.randrange(1, 9)}",
          (("tool", "yaml", "  {s}:\n    replicas: 3\n    image_tag: {v}\n    pull: IfNotPresent"),
           ("user", "prose", "Ship {s} with tag {v} this time, the previous build had the OOM."),
           ("assistant", "prose", "I built {s} and pushed it as {v} to the registry.")),
          ("Rolled {s} forward: {old} is out, {v} is what runs now.", "{s} 的镜像从 {old} 升到了 {v}。"),
          ("What image tag does {s} run?", "Which build of {s} is deployed?", "{s} 现在跑的是哪个镜像版本？"),
          ("What tag did {s} run before?", "Which build of {s} did we replace?", "{s} 之前用的镜像版本是什么？")),
    PlantKind("timeout_env", lambda r, s: str(r.randrange(1000, 99000)),
          (("tool", "shell", "export {S}_TIMEOUT_MS={v}"),
           ("user", "prose", "Set {S}_TIMEOUT_MS={v} in the env file for {s}, nothing else changes.")),
          ("We raised it again: {S}_TIMEOUT_MS={v} (it was {old}).",),
          ("What is the timeout of {s} set to?", "How long does {s} wait before giving up?", "{s} 的超时设置是多少毫秒？"),
          ("What was the timeout of {s} before?", "How long did {s} wait previously?", "{s} 之前的超时是多少？")),
    PlantKind("commit", lambda r, s: hex_digits(r, 12),
          (("tool", "git", "commit {v}\nAuthor: ci-bot <ci@example.invalid>\n\n    {s}: stop retrying on 4xx responses"),
           ("assistant", "prose", "The retry fix for {s} is in {v}; cherry-pick that one.")),
          (),
          ("Which commit stops {s} retrying on 4xx?", "What revision has the retry fix of {s}?", "{s} 的重试修复是哪个提交？")),
    PlantKind("owner_en", lambda r, s: r.choice(_NAMES),
          (("user", "prose", "{v} will own the {s} migration from here on."),
           ("tool", "table", "| {s} | {v} | on call |")),
          (),
          ("Who owns the {s} migration?", "Whom do I ping about moving {s}?", "{s} 迁移谁负责？")),
    PlantKind("owner_cn", lambda r, s: r.choice(_CN_NAMES),
          (("user", "prose", "{s} 这块以后交给{v}盯着。"), ("assistant", "prose", "{s} 的值班联系人：{v}")),
          (),
          ("{s} 归谁管？", "{s} 出事了找谁？", "Who looks after {s}?"), lang="chinese"),
    PlantKind("region", lambda r, s: f"{r.choice(('ap', 'eu', 'us', 'sa'))}-{r.choice(('north', 'south', 'central'))}-{r.randrange(1, 9)}",
          (("tool", "toml", "[service.{s}]\nregion = \"{v}\"\ntier = \"standard\""),
           ("user", "prose", "Keep {s} in {v}; the data must not leave it.")),
          ("{s} moved off {old}; it lives in {v} going forward.",),
          ("Which region is {s} in?", "Where are the servers of {s}?", "{s} 部署在哪个区域？"),
          ("Which region was {s} in before?", "Where did {s} run earlier?", "{s} 之前在哪个区域？")),
    PlantKind("channel", lambda r, s: "#" + "-".join(r.sample(("ops", "pager", "alerts", "war", "room", "sev"), 2)) + str(r.randrange(10, 99)),
          (("assistant", "prose", "Alerts for {s} go to {v} now."), ("user", "prose", "{s} 的告警都发到 {v} 这个频道。")),
          (),
          ("Where do alerts of {s} go?", "Which channel pages for {s}?", "{s} 的告警发到哪里？")),
    PlantKind("quirk", lambda r, s: f"--{r.choice(('no', 'skip', 'force'))}-{''.join(r.choices(string.ascii_lowercase, k=6))}",
          (("user", "prose", "Heads up: the {s} tests only pass with {v} on the CI runners."),),
          (),
          ("Which flag do the {s} tests need on CI?", "What do I pass so {s}'s suite goes green on the runners?",
           "{s} 的测试在 CI 上要加什么参数？")),
)



class _ReleaseChat:
    """The independent workload's filler: chat about a release, kubectl, pytest, git log, values.yaml."""

    def opening(self, rng: random.Random) -> str:
        """The user names the next step and chats a little."""
        return "\n".join([f"Next: the {rng.choice(_FILLER_WORDS)} for {rng.choice(_SERVICES)}.", self.chat(rng, rng.randrange(1, 4))])

    def reply(self, rng: random.Random) -> str:
        """A few lines of chat."""
        return self.chat(rng, rng.randrange(3, 10))

    def chat(self, rng: random.Random, lines: int) -> str:
        """``lines`` sentences of release chat."""
        out = []
        for _ in range(lines):
            a, b = rng.sample(_FILLER_WORDS, 2)
            out.append(f"The {a} on {rng.choice(_SERVICES)}-{rng.randrange(100, 999)} looks fine, but the {b} "
                       f"step took {rng.randrange(2, 90)} seconds longer than last week.")
        return " ".join(out)

    def tool_text(self, rng: random.Random) -> tuple[str, dict[str, object], str]:
        """One of four outputs, drawn."""
        what = rng.randrange(4)
        if what == 0:
            rows = [f"{rng.choice(_SERVICES)}-{hex_digits(rng, 5)}-{hex_digits(rng, 5)}   1/1   Running   {rng.randrange(0, 9)}   "
                    f"{rng.randrange(1, 59)}m" for _ in range(rng.randrange(40, 160))]
            return "bash", {"command": "kubectl get pods -A"}, "NAME   READY   STATUS   RESTARTS   AGE\n" + "\n".join(rows)
        if what == 1:
            rows = [f"tests/test_{rng.choice(_FILLER_WORDS)}.py::test_{rng.choice(_FILLER_WORDS)}_{rng.randrange(99)} "
                    f"{rng.choice(('PASSED', 'PASSED', 'PASSED', 'SKIPPED'))}" for _ in range(rng.randrange(40, 160))]
            return "bash", {"command": "pytest -v"}, "\n".join(rows) + f"\n{len(rows)} passed"
        if what == 2:
            rows = [f"{hex_digits(rng, 7)} {rng.choice(_FILLER_WORDS)}: tidy the {rng.choice(_FILLER_WORDS)} path"
                    for _ in range(rng.randrange(40, 160))]
            return "bash", {"command": "git log --oneline -200"}, "\n".join(rows)
        rows = [f"  {rng.choice(_FILLER_WORDS)}_{i}: {rng.choice(('true', 'false', 'auto', 'off'))}" for i in range(rng.randrange(40, 160))]
        return "read_file", {"path": f"deploy/{rng.choice(_SERVICES)}/values.yaml"}, "settings:\n" + "\n".join(rows)


def build_independent(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` sessions of ``shape.turns`` turns, with ``shape.facts`` facts and ``shape.updates`` updates
    planted (the other fields of the shape do not apply to this generator)."""
    rng = random.Random(f"aptmem-memory-independent:{seed}")
    return build_planted(shape, rng, _KINDS, _SERVICES, item_prefix="ind_", spare=0,
                         writer=lambda: TurnWriter(rng, _ReleaseChat(), prefix="x", model="sim-model-2", ts=1_720_000_000_000,
                                                   ticks=(50_000, 500, 800, 6_000)))
