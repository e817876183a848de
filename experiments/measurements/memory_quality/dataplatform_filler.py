"""The filler of the data-platform generator (:mod:`.dataplatform`): what surrounds the planted statements.

A data team's day with an agent: the user opens a turn with a request (English, Japanese or
French), often pasting a Slack thread; the agent runs ``dbt build``, reads Airflow task logs, opens
model SQL, runs ``terraform plan``, exports the Jira board as CSV, opens a Confluence runbook, reads
the warehouse settings YAML, describes Kafka consumer groups, reads an email thread, and pulls
NDJSON from the observability API; then replies. The filler has its own tables, DAGs, topics and
people, none of them a planted subject, and its numbers are drawn where no planted value is
(whole percents, seconds with one decimal, 192.168/16 addresses, offsets without separators,
timestamps in November and December 2026, email at another domain, dbt's own version with a minor
under 10), so a planted answer never occurs in it by chance.
"""

from __future__ import annotations

import json
import random

__all__ = ["DataFiller", "TOOL_FORMATS"]

_TABLES = ("scratch.web_sessions_rollup", "tmp.clickstream_dedup", "sandbox.cohort_grid", "legacy.orders_flat",
           "raw.app_installs", "raw.push_receipts", "lab.price_tests", "bi.kpi_tiles", "raw.fx_ticks")
_DAGS = ("tidy_temp_schemas", "vacuum_event_store", "warm_bi_cache", "pull_fx_ticks_hourly", "compact_iceberg_snapshots")
_TOPICS = ("audit.trail.v1", "sessions.heartbeat.v2", "search.queries.v1", "email.bounces.v1")
_GROUPS = ("connect-audit-s3", "connect-heartbeat-es", "search-analytics-flink", "bounce-counter")
_NAMES = ("jonas.eberhardt", "mei.tanaka", "rafael.souza", "oksana.melnyk", "baptiste.roux", "nadia.haddad")
_COLS = ("event_ts", "session_id", "user_agent", "country_code", "amount_cents", "is_test", "source_system", "loaded_at")
_TASKS = ("extract", "validate", "load_stage", "merge", "publish", "notify")
_SIZES = ("XSMALL", "SMALL", "MEDIUM", "LARGE", "XLARGE")
#: every tool format a statement can be planted in (the writer keys its tools on these)
TOOL_FORMATS = ("dbt_log", "airflow_log", "sql", "terraform", "csv", "runbook", "yaml", "kafka", "email", "json")

_ASKS = {
    "english": ("Can you figure out why last night's build left {t} half empty?",
                "I need a quick status of the nightly loads before standup.",
                "Please tidy up the staging models, we keep tripping over {t}.",
                "Check whether {d} actually ran after the deploy."),
    "japanese": ("{t} の件数が昨日から合わないので調べてもらえますか。", "{d} が失敗していないか確認お願いします。",
                 "今日のリリース前に夜間ロードの状況をまとめてください。"),
    "french": ("Tu peux regarder pourquoi {t} est vide ce matin ?", "Fais-moi un point rapide sur les chargements de la nuit.",
               "Vérifie que {d} a bien tourné après la mise en production."),
}
_THREAD = {
    "english": ("anyone else seeing the dashboard numbers jump?", "the {t} job is slow again today",
                "I'll look after lunch", "can we not deploy on Fridays please", "{d} retried twice then went green"),
    "japanese": ("{t} の行数が減っている気がします", "{d} はリトライ後に成功しました", "午後に確認します"),
    "french": ("quelqu'un a touché à {t} hier soir ?", "{d} a planté deux fois puis est repassé au vert", "je regarde ça après le déjeuner"),
}
_REPLIES = {
    "english": ("I went through the logs and the models you mentioned; here is what I found.",
                "The run finished; most of the time went into the merge step.",
                "Nothing is failing right now, but two models are close to their timeout."),
    "japanese": ("ログとモデルを確認しました。結果は以下のとおりです。", "実行は完了しました。時間の大半はマージ処理でした。"),
    "french": ("J'ai parcouru les journaux et les modèles concernés, voici ce que j'ai trouvé.",
               "Le run est terminé ; l'essentiel du temps est passé dans l'étape de fusion."),
}


def _lang(rng: random.Random) -> str:
    return rng.choices(("english", "japanese", "french"), weights=(0.6, 0.2, 0.2))[0]


class DataFiller:
    """Seeded filler: openings, Slack lines, replies, fact-shaped noise and tool outputs of each format."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def _fmt(self, text: str) -> str:
        return text.replace("{t}", self.rng.choice(_TABLES)).replace("{d}", self.rng.choice(_DAGS))

    def _clock(self) -> str:
        return f"{self.rng.randrange(6, 23):02d}:{self.rng.randrange(0, 60):02d}"

    def _stamp(self) -> str:
        rng = self.rng
        return (f"2026-{rng.choice((11, 12))}-{rng.randrange(1, 31):02d} "
                f"{rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}")

    def opening(self) -> str:
        """The user's request that opens a turn."""
        return self._fmt(self.rng.choice(_ASKS[_lang(self.rng)]))

    def thread(self, n: int) -> list[str]:
        """``n`` lines of a pasted Slack thread (colleagues talking)."""
        rng = self.rng
        return [f"[{self._clock()}] {rng.choice(_NAMES).split('.')[0]}: {self._fmt(rng.choice(_THREAD[_lang(rng)]))}"
                for _ in range(n)]

    def colleague(self) -> str:
        """A colleague's Slack handle."""
        return self.rng.choice(_NAMES).split(".")[0]

    def reply(self) -> str:
        """The agent's reply before the remarks it plants."""
        return self.rng.choice(_REPLIES[_lang(self.rng)])

    def noise(self) -> str:
        """A fact-shaped remark about a filler table or DAG (never asked, never a planted shape)."""
        rng = self.rng
        t, d = rng.choice(_TABLES), rng.choice(_DAGS)
        return rng.choice((
            f"{t} took {rng.randrange(3, 900)}.{rng.randrange(10)}s and wrote {rng.randrange(1000, 9_000_000)} rows last run.",
            f"{d} ran {rng.randrange(2, 40)} tasks; the slowest was {rng.choice(_TASKS)} at {rng.randrange(20, 600)}.{rng.randrange(10)}s.",
            f"{t} の直近の実行は {rng.randrange(3, 900)}.{rng.randrange(10)} 秒でした。",
            f"La table {t} pèse {rng.randrange(2, 800)} Go depuis la dernière compaction.",
            f"Cache hit ratio on {d} is {rng.randrange(40, 99)}% this week.",
            f"{t} scanned {rng.randrange(2, 400)}.{rng.randrange(10)} GB for a query of {rng.choice(_NAMES)}.",
        ))

    def tool(self, fmt: str, lines: int) -> tuple[str, dict[str, object], list[str]]:
        """A tool call's name and arguments and about ``lines`` lines of its output in ``fmt``."""
        return getattr(self, f"_{fmt}")(max(3, lines))

    def _dbt_log(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng = self.rng
        out = [f"{self._clock()}:00  Running with dbt=1.7.19", f"{self._clock()}:01  Found {rng.randrange(80, 400)} models"]
        for i in range(1, n):
            t, secs = rng.choice(_TABLES), f"{rng.randrange(1, 300)}.{rng.randrange(10)}"
            status = rng.choice((f"OK created sql incremental model {t} [SUCCESS {rng.randrange(1, 90000)} in {secs}s]",
                                 f"PASS not_null_{t.split('.')[1]}_{rng.choice(_COLS)} [PASS in {secs}s]",
                                 f"OK created sql view model {t} [SUCCESS in {secs}s]"))
            out.append(f"{self._clock()}:{rng.randrange(10, 60)}  {i} of {n} {status}")
        return "bash", {"command": rng.choice(("dbt build --select tag:nightly", "dbt test -s state:modified+"))}, out

    def _airflow_log(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng = self.rng
        dag, out = rng.choice(_DAGS), []
        for _ in range(n):
            task = rng.choice(_TASKS)
            out.append(rng.choice((f"[{self._stamp()} UTC] {{taskinstance.py:1157}} INFO - Dependencies all met for {dag}.{task}",
                                   f"[{self._stamp()} UTC] {{taskinstance.py:1380}} INFO - Marking task as SUCCESS. dag_id={dag}, task_id={task}",
                                   f"[{self._stamp()} UTC] {{local_task_job.py:212}} INFO - Task exited with return code 0",
                                   f"[{self._stamp()} UTC] {{logging_mixin.py:188}} WARNING - retry {rng.randrange(1, 4)} of 3 for {task}")))
        return "read_task_log", {"dag_id": dag, "try_number": rng.randrange(1, 4)}, out

    def _sql(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng = self.rng
        src, cols = rng.choice(_TABLES), rng.sample(_COLS, 4)
        out = ["-- grain: one row per session and day", "with src as (", f"    select {', '.join(cols)}", f"    from {src}",
               f"    where {cols[0]} >= dateadd(day, -{rng.randrange(2, 30)}, current_date)", "),"]
        while len(out) < n:
            c = rng.choice(_COLS)
            out += [f"agg_{c} as (", f"    select {c}, count(*) as n_rows", "    from src", f"    group by {c}", "),"]
        out += ["select * from src", "-- keep this model cheap: it runs every hour"]
        return "read_file", {"path": f"models/{rng.choice(('staging', 'marts', 'intermediate'))}/{src.split('.')[1]}.sql"}, out

    def _terraform(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng, out = self.rng, ["Terraform will perform the following actions:", ""]
        while len(out) < n:
            name = rng.choice(("loading", "transforming", "reporting", "adhoc"))
            a, b = rng.sample(_SIZES, 2)
            out += [f"  # snowflake_warehouse.{name} will be updated in-place", f'  ~ resource "snowflake_warehouse" "{name}" {{',
                    f'      ~ warehouse_size = "{a}" -> "{b}"', f"        auto_suspend   = {rng.choice((60, 120, 300))}",
                    f'        subnet_hint    = "192.168.{rng.randrange(0, 256)}.{rng.randrange(1, 255)}"', "    }"]
        out.append(f"Plan: 0 to add, {rng.randrange(1, 5)} to change, 0 to destroy.")
        return "bash", {"command": "terraform plan -no-color"}, out

    def _csv(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng, out = self.rng, ["Issue key,Issue Type,Component,Summary,Status,Story Points"]
        for _ in range(n):
            out.append(f"{rng.choice(('PLAT', 'INFRA'))}-{rng.randrange(10000, 99999)},{rng.choice(('Task', 'Story', 'Bug'))},"
                       f"{rng.choice(('Ingestion', 'Modeling', 'BI'))},{rng.choice(('Speed up', 'Document', 'Retire'))} "
                       f"{rng.choice(_TABLES)},{rng.choice(('To Do', 'In Review', 'Done'))},{rng.choice((1, 2, 5, 8))}")
        return "jira_export", {"jql": "project in (PLAT, INFRA) AND sprint in openSprints()", "format": "csv"}, out

    def _runbook(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng = self.rng
        out = ["h1. Nightly loads: what to do when they break", "h2. Before you start",
               "Check the #data-platform topic for an ongoing incident first."]
        steps = ("Look at the last three runs in the Airflow grid.", "Compare row counts with the previous partition.",
                 "Si le volume a chuté de plus de moitié, ne relancez pas : prévenez l'équipe source.",
                 "再実行の前に上流のファイルが揃っているか確認してください。", "Clear only the failed task, never the whole DAG run.",
                 f"If {rng.choice(_TABLES)} is involved, warm the cache afterwards.")
        while len(out) < n:
            out.append(f"{len(out) - 2}. {rng.choice(steps)}")
        return "wiki_fetch", {"page": "Data Platform / Runbooks / Nightly loads"}, out

    def _yaml(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng, out = self.rng, ["# warehouse settings, applied by the platform CI", "warehouses:"]
        while len(out) < n:
            out += [f"  {rng.choice(('loading', 'transforming', 'reporting', 'adhoc'))}_wh:", f"    size: {rng.choice(_SIZES)}",
                    f"    auto_suspend: {rng.choice((60, 120, 300))}", f"    max_cluster_count: {rng.randrange(1, 6)}",
                    f"    statement_timeout_in_seconds: {rng.choice((1800, 3600, 7200))}"]
        return "read_file", {"path": "warehouse/settings.yml"}, out

    def _kafka(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng, out = self.rng, ["GROUP                    TOPIC                  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG"]
        for _ in range(n):
            end = rng.randrange(1_000_000, 90_000_000)
            lag = rng.randrange(0, 5000)
            out.append(f"{rng.choice(_GROUPS):<24} {rng.choice(_TOPICS):<22} {rng.randrange(0, 12):<10} {end - lag:<15} {end:<15} {lag}")
        return "bash", {"command": "kafka-consumer-groups --bootstrap-server broker-1:9092 --describe --all-groups"}, out

    def _email(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng = self.rng
        sender, to = rng.sample(_NAMES, 2)
        out = [f"From: {sender}@corp.example", f"To: {to}@corp.example", f"Subject: Re: {rng.choice(_TABLES)} numbers", ""]
        body = ("Thanks, that matches what finance saw.", "On a les mêmes chiffres de notre côté, à une ligne près.",
                "承知しました。明日の朝もう一度確認します。", "Could we move the review to Thursday?",
                "> The totals were off by a few rows after the late load.", "> Merci de garder ce fil pour la suite.")
        while len(out) < n:
            out.append(rng.choice(body))
        return "read_email", {"thread": f"<{rng.getrandbits(40):010x}@corp.example>"}, out

    def _json(self, n: int) -> tuple[str, dict[str, object], list[str]]:
        rng, out = self.rng, []
        for _ in range(n):
            out.append(json.dumps({"monitor": f"freshness:{rng.choice(_TABLES)}", "status": rng.choice(("ok", "warn")),
                                   "rows": rng.randrange(100, 900000), "checked_at": self._stamp()}))
        return "http_get", {"url": "https://observability.corp.example/api/v1/monitors?page=" + str(rng.randrange(1, 9))}, out
