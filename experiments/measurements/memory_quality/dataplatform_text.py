"""What the data-platform generator (:mod:`.dataplatform`) plants: its subjects, kinds of facts, phrasings and questions.

The subjects are a data team's own nouns: warehouse tables (``analytics.fct_invoices``), Airflow
DAG ids, source connectors, Kafka topics and the packages of the dbt project. A kind's value has
the shape people write it in (an email address, a partition date, a Jira key, a null budget in
percent, a column name, a wiki URL, a cron expression, an SLA as ``3h15m``, a dollar cap, a Slack
channel, a Snowflake warehouse with its size, a CIDR, an ``s3://`` or ``gs://`` URI, a consumer group, a lag threshold with a thousands
separator, a semver pin, a decision with its reason, a preference).

A kind's ``said`` is (carrier, format, template) in English, Japanese or French; templates are
filled by plain replacement of ``{s}`` (subject), ``{v}`` (value), ``{old}`` (the value replaced)
and ``{why}`` (a decision's reason), so YAML and JSON braces need no escaping. Japanese templates
put spaces around a value, as engineers do around code in Japanese prose (a regular expression's
word boundary then still finds it).
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from dataclasses import dataclass

from experiments.measurements.memory_quality.planting import DrawnKind

__all__ = ["AGGREGATES", "KINDS", "ORDER_EVENTS", "ORDER_QUESTIONS", "PlatformKind", "fill", "in_words", "language_of", "rough"]

MODELS = ("analytics.fct_invoices", "analytics.fct_shipments", "marts.dim_merchants", "marts.dim_couriers",
          "staging.stg_stripe_charges", "staging.stg_zendesk_tickets", "finance.fct_revenue_daily",
          "growth.fct_signups_weekly", "ops.fct_parcel_scans", "core.dim_currency_rates", "risk.fct_chargebacks",
          "marketing.fct_ad_spend")
PIPELINES = ("ingest_netsuite_gl", "sync_hubspot_deals", "export_partner_feeds", "refresh_exec_dashboards",
             "load_courier_pings", "rebuild_search_facets", "reconcile_psp_payouts", "snapshot_inventory_levels",
             "score_churn_risk", "archive_cold_events")
SOURCES = ("billing_pg_replica", "zendesk_connector", "segment_webhooks", "netsuite_odbc", "salesforce_bulk",
           "psp_sftp_drop", "braze_currents", "shopify_admin_api")
TOPICS = ("orders.placed.v3", "payments.settled.v2", "parcels.scanned.v1", "carts.abandoned.v1", "refunds.issued.v2",
          "couriers.location.v4")
PACKAGES = ("dbt-snowflake", "dbt_utils", "dbt_expectations", "sqlfluff", "dagster-dbt", "elementary-data",
            "snowflake-connector-python", "confluent-kafka", "apache-airflow-providers-snowflake", "great-expectations")
#: what the team decided about: the options it weighed and the reasons it could give
_DECIDED = {
    "the CDC path for the billing replica": (("Debezium into Kafka", "Fivetran's log-based replication"),
                                             ("trigger-based capture doubled the write latency on the primary",
                                              "the connector bill tripled after the last renewal")),
    "late-arriving events": (("a 72-hour lookback window on every incremental", "nightly full refreshes of the event models"),
                             ("a tenth of the mobile events arrive a day late", "rebuilding from scratch takes six hours every night")),
    "PII masking in the marts": (("masking policies on tag columns", "views with hashed emails"),
                                 ("legal wants the raw emails readable by the fraud team only",
                                  "hashing in views broke every join on email")),
    "the metrics layer": (("MetricFlow definitions in the dbt repo", "a hand-written metrics schema"),
                          ("three dashboards disagreed on what active means", "the BI tool could not read the semantic manifest")),
    "dev sandboxes in the warehouse": (("zero-copy clones refreshed every Monday", "one schema per developer built by CI"),
                                       ("analysts kept overwriting each other's tables in the shared schema",
                                        "cloning production took minutes instead of hours")),
    "schema changes on the event topics": (("a schema registry in backward mode", "versioned topic names for every breaking change"),
                                           ("a renamed field silently nulled a column for two days",
                                            "consumers could not upgrade in the same week as producers")),
}
_LIKES = {"SQL formatting": ("leading commas and lowercase keywords", "one CTE per source, named after the table"),
          "model naming": ("the layer prefix first, then the business noun in plural", "no abbreviations in model names"),
          "PR descriptions": ("a row-count diff pasted under the summary", "the dbt selector used to test it"),
          "query results in chat": ("at most ten rows and the total below", "a markdown table with the SQL folded above it")}
_PEOPLE = ("ines.carvalho", "kenji.morimoto", "aurelie.fontaine", "tomas.havel", "priya.raman", "sune.bergqvist",
           "yaw.mensah", "chloe.marchetti", "haruka.sato", "dmitri.volkov", "amara.nwosu", "lucas.pereira")
_WORDS = ("larkspur", "moraine", "quillon", "fennel", "tundra", "corvina", "sextant", "bollard", "wicket", "gantry",
          "halyard", "marram", "skerry", "tamarack")
_COLUMNS = ("merchant", "invoice_line", "parcel", "tenant", "shipment_leg", "voucher", "ledger_entry", "payout_batch")
_SUFFIX = ("_sk", "_uid", "_hash_key")


def fill(template: str, subject: str, value: str = "", old: str = "", why: str = "") -> str:
    """``template`` with its fields replaced (plain replacement, so YAML and JSON braces stay)."""
    return template.replace("{s}", subject).replace("{v}", value).replace("{old}", old).replace("{why}", why)


#: words French sentences of this generator use and its English never does
_FRENCH = frozenset(("le", "la", "les", "des", "du", "est", "quel", "quelle", "quels", "quelles", "pour", "avant", "qui",
                     "sur", "dans", "était", "passe", "ont", "été", "merci", "arrivent", "fichiers", "de", "partent",
                     "lit", "groupe", "retenu", "parce", "que", "plafond", "seuil", "délai", "toléré", "au", "elle",
                     "désormais", "écrivez", "toute", "repart", "mergée", "annulées", "pendant", "requêtes", "relancé",
                     "cadre", "qu'est", "ce", "attend", "utilisateur", "déclenchait", "retard", "arrivaient", "où",
                     "monté", "utilisait", "élimine", "colonne", "doublons", "numéro", "quand", "plus", "entrepôt",
                     "tourne", "tournait"))


def language_of(text: str) -> str:
    """The language a statement or question is in: japanese (any kana), french or english."""
    if re.search(r"[\u3040-\u30ff]", text):
        return "japanese"
    tokens = set(re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", text.casefold()))
    return "french" if len(tokens & _FRENCH) >= 2 else "english"


_UNITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")


def in_words(n: int) -> str:
    """``n`` (0-999) in English words: ``forty-two``, ``three hundred and five``."""
    if n >= 100:
        hundreds, rest = divmod(n, 100)
        return f"{_UNITS[hundreds]} hundred" + (f" and {in_words(rest)}" if rest else "")
    if n < 20:
        return _UNITS[n]
    tens, units = divmod(n, 10)
    return _TENS[tens] + (f"-{_UNITS[units]}" if units else "")


def rough(kind: str, value: str) -> str | None:
    """How someone says ``value`` of ``kind`` from memory, rounded and in words (None: it is never said so).

    Never the exact value and no digits: a remark like this is a distractor beside the exact statement.
    """
    if kind == "dp_lag_threshold":
        thousands = round(int(value.replace(",", "")) / 50_000) * 50
        return f"somewhere around {in_words(thousands)} thousand messages"
    if kind == "dp_monthly_budget":
        return f"roughly {in_words(round(int(value[1:].replace(',', '')) / 1000))} grand a month"
    if kind == "dp_sla":
        hours, minutes = int(value.split("h")[0]), int(value.split("h")[1][:-1])
        return f"a bit {'over' if minutes < 30 else 'under'} {in_words(hours if minutes < 30 else hours + 1)} hours"
    if kind == "dp_null_budget":
        percent = float(value[:-1])
        if percent < 0.5:
            return "well under one percent of nulls"
        return f"{'just under' if percent % 1 >= 0.5 else 'a little over'} {in_words(round(percent))} percent of nulls"
    return None


@dataclass(frozen=True)
class PlatformKind(DrawnKind):
    """One relation of the data platform: subject and value drawn, how it is said, updated and asked."""

    #: a decision's reason for a subject (the second part of its answer)
    why: Callable[[random.Random, str], str] | None = None


def _of(names: tuple[str, ...]) -> Callable[[random.Random], str]:
    return lambda rng: rng.choice(names)


_model, _pipeline, _source, _topic, _package = (_of(MODELS), _of(PIPELINES), _of(SOURCES), _of(TOPICS), _of(PACKAGES))


def _email(rng: random.Random, _: str) -> str:
    return f"{rng.choice(_PEOPLE)}@dataco.io"


def _date(rng: random.Random, _: str) -> str:
    return f"{rng.randrange(2023, 2026)}-{rng.randrange(1, 13):02d}-{rng.randrange(1, 29):02d}"


def _ticket(rng: random.Random, _: str) -> str:
    return f"{rng.choice(('DQ', 'ANLT', 'DATA'))}-{rng.randrange(100, 9999)}"


def _percent(rng: random.Random, _: str) -> str:
    return f"{rng.randrange(0, 10)}.{rng.randrange(1, 100):02d}%"


def _column(rng: random.Random, _: str) -> str:
    return rng.choice(_COLUMNS) + rng.choice(_SUFFIX)


def _wiki(rng: random.Random, _: str) -> str:
    return f"https://wiki.dataco.io/display/DATA/{rng.choice(_WORDS).title()}+Recovery+{rng.randrange(10, 999)}"


def _cron(rng: random.Random, _: str) -> str:
    hour = str(rng.randrange(0, 24)) if rng.random() < 0.7 else f"{rng.randrange(0, 12)},{rng.randrange(12, 24)}"
    return f"{rng.randrange(1, 60)} {hour} * * {rng.choice(('*', '1-5', '0', '6', '1-6'))}"


def _sla(rng: random.Random, _: str) -> str:
    return f"{rng.randrange(1, 13)}h{rng.randrange(1, 12) * 5:02d}m"


def _dollars(rng: random.Random, _: str) -> str:
    return f"${rng.randrange(1, 60)},{rng.randrange(0, 1000):03d}"


def _channel(rng: random.Random, _: str) -> str:
    return f"#dq-{rng.choice(_WORDS)}-{rng.choice(('alerts', 'pager', 'oncall', 'noise'))}"


def _warehouse(rng: random.Random, _: str) -> str:
    return f"{rng.choice(_WORDS).upper()}_WH_{rng.choice(('XS', 'S', 'M', 'L', 'XL', '2XL', '3XL', '4XL'))}"


def _cidr(rng: random.Random, _: str) -> str:
    return f"10.{rng.randrange(16, 250)}.{rng.randrange(0, 64) * 4}.0/{rng.choice((22, 24, 26, 27))}"


def _uri(rng: random.Random, subject: str) -> str:
    scheme = rng.choice(("s3", "gs"))
    return f"{scheme}://dataco-landing-{rng.choice(_WORDS)}/{subject}/v{rng.randrange(2, 9)}/"


def _group(rng: random.Random, _: str) -> str:
    return f"cg.{rng.choice(_WORDS)}-sink.{rng.randrange(10, 99)}"


def _lag(rng: random.Random, _: str) -> str:
    return f"{rng.randrange(100, 900)},{rng.randrange(0, 1000):03d}"


def _semver(rng: random.Random, _: str) -> str:
    return f"{rng.randrange(0, 3)}.{rng.randrange(10, 40)}.{rng.randrange(0, 15)}"


#: The question pair in English is never asked in the other language's words: the third wording is the other language.
KINDS: tuple[PlatformKind, ...] = (
    PlatformKind("dp_model_owner", _model, _email,
                 (("user", "chat", "ping {v} about anything in {s}, she took it over from the finance squad"),
                  ("assistant", "prose", "`{s}` のオーナーは {v} さんです（dbt の meta に書いてありました）。"),
                  ("tool", "yaml", "      meta: {owner: {v}, model: {s}}"),
                  ("tool", "email", "> Pour toute question sur {s}, écrivez à {v}, c'est elle qui gère le modèle désormais.")),
                 ("Who is the owner of {s}?", "If the numbers in {s} look wrong, whose inbox do I write to?",
                  "{s} の担当者は誰ですか？"),
                 pattern=r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
                 update=("{s} changed hands this sprint: {old} passed it to {v}.", "{s} の担当が {old} さんから {v} さんに変わりました。"),
                 ask_before=("Who owned {s} before the handover?", "Whose inbox did questions about {s} go to earlier?",
                             "Qui s'occupait de {s} avant le changement ?")),
    PlatformKind("dp_backfill_start", _model, _date,
                 (("user", "chat", "the backfill of {s} has to start at partition {v}, anything older is already correct"),
                  ("tool", "airflow_log", "INFO - Backfilling {s} from ds={v} onwards (older partitions verified)"),
                  ("tool", "sql", "-- {s}: rebuild from {v}; the earlier partitions were reconciled by hand"),
                  ("assistant", "prose", "Pour {s}, on repart de la partition du {v} : avant cette date tout est déjà juste.")),
                 ("From which partition does the backfill of {s} start?", "How far back do I need to rerun {s}?",
                  "{s} はどの日付から再処理すればいいですか？"),
                 pattern=r"(?<!\d)20\d\d-[01]\d-[0-3]\d(?!\d)"),
    PlatformKind("dp_quality_ticket", _model, _ticket,
                 (("tool", "csv", "{v},Bug,Data quality,{s}: duplicated rows after the late load,In Progress,3"),
                  ("user", "chat", "opened {v} for the duplicate rows in {s}, can you link it in the PR"),
                  ("assistant", "prose", "{s} の重複行については {v} で追跡しています。"),
                  ("tool", "json", '{"issue_key": "{v}", "affected_table": "{s}", "labels": ["data-quality"]}')),
                 ("Which ticket tracks the data-quality issue in {s}?", "Where is the problem with duplicated rows in {s} written up?",
                  "Quel est le numéro du ticket pour les doublons de {s} ?"),
                 pattern=r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]{1,9}-\d{2,6}(?!\d)"),
    PlatformKind("dp_null_budget", _model, _percent,
                 (("tool", "yaml", "      # {s}: the test fails once nulls exceed {v} of rows"),
                  ("tool", "dbt_log", "WARN  null budget for {s} is {v}; current batch within tolerance"),
                  ("user", "prose", "For {s} we tolerate up to {v} nulls in the join key, beyond that the test should fail."),
                  ("assistant", "prose", "Dans {s}, le seuil de valeurs nulles toléré est de {v} ; au-delà le test échoue.")),
                 ("What is the null budget of {s}?", "How many empty values can {s} have before its test goes red?",
                  "{s} で許容される NULL の割合はいくつですか？"),
                 pattern=r"(?<![\d.])\d{1,2}\.\d{2}%",
                 update=("We loosened the null budget of {s} from {old} to {v} after the vendor outage.",
                         "{s} の NULL 許容率を {old} から {v} に変更しました。"),
                 ask_before=("What was the null budget of {s} before it was loosened?",
                             "How many empty values did {s} allow earlier?", "Quel était le seuil de nulls de {s} avant ?")),
    PlatformKind("dp_unique_key", _model, _column,
                 (("tool", "sql", "{{ config(materialized='incremental', unique_key='{v}') }}  -- model {s}"),
                  ("user", "chat", "{s} dedupes on {v}, not on the natural id, that bit us last quarter"),
                  ("assistant", "prose", "{s} の重複排除キーは {v} です。")),
                 ("Which column is the unique key of {s}?", "What does {s} collapse duplicate rows on?",
                  "Sur quelle colonne {s} élimine-t-il les doublons ?")),
    PlatformKind("dp_runbook", _model, _wiki,
                 (("tool", "runbook", "If {s} fails its freshness check, follow {v} step by step."),
                  ("assistant", "prose", "Le runbook de {s} est ici : {v}"),
                  ("user", "chat", "runbook for {s} lives at {v} btw"),
                  ("tool", "json", '{"table": "{s}", "runbook_url": "{v}"}')),
                 ("Where is the runbook for {s}?", "What page do I follow when {s} goes stale?", "{s} の手順書はどこにありますか？"),
                 pattern=r"https://wiki\.\S+"),
    PlatformKind("dp_schedule", _pipeline, _cron,
                 (("tool", "yaml", '{s}: {schedule: "{v}", catchup: false}'),
                  ("tool", "airflow_log", "INFO - DAG {s} parsed, schedule_interval={v}, next run queued"),
                  ("user", "chat", "{s} should fire at `{v}`, the vendor drops files just before"),
                  ("assistant", "prose", "{s} は cron `{v}` で起動します。")),
                 ("What is the cron schedule of {s}?", "When does {s} kick off?", "{s} は何時に起動しますか？"),
                 pattern=r"(?<![\d*/,-])(?:\d{1,2}|\*) (?:\d{1,2}(?:,\d{1,2})*|\*) \* \* (?:\*|\d(?:-\d)?)(?![\d*/-]|,\d)",
                 update=("Moved {s} from `{old}` to `{v}` so it stops colliding with the ledger export.",
                         "{s} のスケジュールを `{old}` から `{v}` に変更しました。",
                         "On a déplacé {s} : `{old}` devient `{v}`, pour ne plus gêner l'export du grand livre."),
                 ask_before=("What was the schedule of {s} before it was moved?", "When did {s} use to kick off?",
                             "{s} は以前いつ起動していましたか？")),
    PlatformKind("dp_sla", _pipeline, _sla,
                 (("tool", "yaml", '{s}: {sla: "{v}", severity: sev2}'),
                  ("tool", "runbook", "The SLA for {s} is {v} after the upstream files land; past that, page the data on-call."),
                  ("user", "prose", "Business expects {s} done within {v} of the file drop, that's the SLA we signed."),
                  ("assistant", "prose", "{s} doit finir en moins de {v} après l'arrivée des fichiers, c'est l'engagement pris.")),
                 ("What is the SLA of {s}?", "How long after the files arrive must {s} be finished?",
                  "Quel est le délai maximal pour {s} ?"),
                 pattern=r"(?<![\w.])\d{1,2}h\d{2}m(?!\w)",
                 update=("The SLA of {s} went from {old} to {v} with the new contract.", "{s} の SLA は {old} から {v} に短縮されました。"),
                 ask_before=("What was the SLA of {s} under the old contract?", "How long was {s} allowed to take earlier?",
                             "{s} の以前の SLA はどれくらいでしたか？")),
    PlatformKind("dp_monthly_budget", _pipeline, _dollars,
                 (("tool", "json", '{"dag_id": "{s}", "monthly_credit_budget_usd": "{v}"}'),
                  ("user", "chat", "finance capped {s} at {v} a month in warehouse spend"),
                  ("assistant", "prose", "{s} の月間予算は {v} です。"),
                  ("tool", "email", "> Le budget mensuel de {s} est plafonné à {v}, merci de ne pas le dépasser.")),
                 ("What is the monthly budget of {s}?", "How much may {s} burn in warehouse credits each month?",
                  "{s} の月額上限はいくらですか？"),
                 pattern=r"\$\d{1,2},\d{3}(?!\d)",
                 update=("Finance raised the cap of {s} from {old} to {v} per month.",
                         "Le plafond de {s} passe de {old} à {v} par mois."),
                 ask_before=("What was the monthly budget of {s} before the raise?", "How much could {s} spend per month earlier?",
                             "Quel était le plafond mensuel de {s} avant ?")),
    PlatformKind("dp_alert_channel", _pipeline, _channel,
                 (("tool", "yaml", '{s}: {on_failure: slack, channel: "{v}"}'),
                  ("user", "chat", "failures of {s} go to {v}, not to the general channel"),
                  ("assistant", "prose", "Les alertes de {s} partent sur {v}.")),
                 ("Which Slack channel gets the alerts of {s}?", "Where do I see it when {s} breaks?",
                  "{s} のアラートはどこに流れますか？"),
                 pattern=r"(?<![\w#])#[a-z][a-z0-9-]{3,}"),
    PlatformKind("dp_warehouse", _pipeline, _warehouse,
                 (("tool", "terraform", '      ~ warehouse = "{v}"  # the warehouse {s} runs its queries on'),
                  ("tool", "airflow_log", "INFO - Using connection snowflake_default, warehouse={v}, dag={s}"),
                  ("user", "chat", "{s} runs on {v}, don't point it at the BI warehouse"),
                  ("assistant", "prose", "{s} のクエリはウェアハウス {v} で実行されています。")),
                 ("Which Snowflake warehouse does {s} run on?", "Where does the compute for {s} come from?",
                  "Sur quel entrepôt Snowflake tourne {s} ?"),
                 pattern=r"(?<![\w])[A-Z]+_WH_(?:XS|S|M|L|XL|\dXL)(?!\w)",
                 update=("Resized {s}: it moved from {old} to {v} for the month-end close.",
                         "{s} は {old} から {v} に切り替えました。"),
                 ask_before=("Which warehouse did {s} run on before the resize?", "Where did the compute for {s} come from earlier?",
                             "Sur quel entrepôt tournait {s} avant ?")),
    PlatformKind("dp_allowlist", _source, _cidr,
                 (("tool", "terraform", '      + cidr_blocks = ["{v}"]  # egress for {s}'),
                  ("user", "chat", "{s} only accepts connections from {v}, ask netops before touching it"),
                  ("assistant", "prose", "{s} の接続元は {v} に限定されています。"),
                  ("tool", "runbook", "Allowlist for {s}: {v} (the NAT range of the loader subnet).")),
                 ("Which CIDR is allowlisted for {s}?", "From what address range can we reach {s}?",
                  "{s} に接続できるアドレス範囲は？"),
                 pattern=r"(?<![\d.])\d{1,3}(?:\.\d{1,3}){3}/\d{1,2}(?!\d)",
                 update=("The allowlist of {s} moved from {old} to {v} with the new NAT gateway.",
                         "L'allowlist de {s} est passée de {old} à {v} avec la nouvelle passerelle."),
                 ask_before=("Which CIDR was allowlisted for {s} before the NAT change?", "From what range did we reach {s} earlier?",
                             "Quelle plage d'adresses était autorisée pour {s} avant ?")),
    PlatformKind("dp_landing_uri", _source, _uri,
                 (("tool", "terraform", '      + bucket_uri = "{v}"  # landing zone of {s}'),
                  ("tool", "dbt_log", "Stage for {s} points at {v}"),
                  ("user", "prose", "Files from {s} land in {v}, the stage reads from there."),
                  ("assistant", "prose", "Les fichiers de {s} arrivent dans {v}.")),
                 ("Where does {s} land its files?", "Which bucket path holds the raw drops of {s}?",
                  "{s} のファイルはどこに置かれますか？"),
                 pattern=r"(?:s3|gs)://\S+",
                 update=("{s} lands in {v} now; {old} stays read-only for a month.", "{s} の着地先を {old} から {v} に移しました。"),
                 ask_before=("Where did {s} land its files before the move?", "Which bucket path held the raw drops of {s} earlier?",
                             "Où arrivaient les fichiers de {s} avant ?")),
    PlatformKind("dp_consumer_group", _topic, _group,
                 (("tool", "kafka", "[kafka] {v} subscribed to {s}, assignment strategy cooperative-sticky"),
                  ("user", "chat", "the warehouse sink on {s} runs as {v}, reset that group if you replay"),
                  ("assistant", "prose", "{s} を読んでいるコンシューマーグループは {v} です。")),
                 ("Which consumer group reads {s}?", "If I replay {s}, whose offsets do I reset?",
                  "Quel groupe de consommateurs lit {s} ?"),
                 pattern=r"(?<![\w.])cg\.[a-z]+-sink\.\d+"),
    PlatformKind("dp_lag_threshold", _topic, _lag,
                 (("tool", "yaml", "  - alert: lag on {s} above {v} messages for ten minutes"),
                  ("user", "prose", "Page us when the lag on {s} passes {v} messages; below that it catches up by itself."),
                  ("assistant", "prose", "{s} のラグが {v} 件を超えたらページします。")),
                 ("At what lag does {s} page us?", "How far behind can the consumers of {s} fall before someone gets woken up?",
                  "{s} は何件遅れたらアラートになりますか？"),
                 pattern=r"(?<![\d,])\d{2,3},\d{3}(?![\d,])",
                 update=("We raised the lag alarm of {s} from {old} to {v} messages.", "Le seuil de lag de {s} passe de {old} à {v} messages."),
                 ask_before=("At what lag did {s} page us before the change?", "How far behind could consumers of {s} fall earlier?",
                             "Avant, à partir de quel retard {s} déclenchait-il une alerte ?")),
    PlatformKind("dp_package_pin", _package, _semver,
                 (("tool", "yaml", '  - {package: {s}, version: "{v}"}'),
                  ("tool", "dbt_log", "  Installing {s}@{v} (pinned, up to date)"),
                  ("user", "chat", "keep {s} on {v}, the next minor changed the macro signatures"),
                  ("assistant", "prose", "{s} は {v} に固定しています。")),
                 ("What version is {s} pinned at in the project?", "If I reinstall {s}, which exact release should I ask for?",
                  "{s} はどのバージョンに固定されていますか？"),
                 pattern=r"(?<![\w.])\d+\.\d+\.\d+(?![\w.])",
                 update=("Bumped {s} from {old} to {v} once the macro fix shipped.", "{s} を {old} から {v} に上げました。",
                         "On a monté {s} de {old} à {v} quand le correctif est sorti."),
                 ask_before=("What version was {s} pinned at before the bump?", "Which {s} release did the project install earlier?",
                             "Quelle version de {s} utilisait-on avant ?")),
    PlatformKind("dp_decision", _of(tuple(_DECIDED)), lambda rng, s: rng.choice(_DECIDED[s][0]),
                 (("user", "chat", "we're going with {v} for {s}: {why}"),
                  ("assistant", "prose", "{s} は {v} に決めました。理由: {why}。"),
                  ("tool", "email", "> Decision for {s}: {v}. Rationale: {why}.")),
                 ("What was the decision on {s} and its rationale?", "Which way did the team go on {s}, and what tipped it?",
                  "{s} について何を選び、その理由は何でしたか？"),
                 why=lambda rng, s: rng.choice(_DECIDED[s][1])),
    PlatformKind("dp_preference", _of(tuple(_LIKES)), lambda rng, s: rng.choice(_LIKES[s]),
                 (("user", "prose", "When it comes to {s}, I want {v}, please remember that."),
                  ("user", "chat", "note for the bot re {s}: {v}, every time"),
                  ("user", "prose", "{s} は {v} でお願いします。")),
                 ("What does the user want for {s}?", "How should I do {s} so the user is happy?",
                  "Qu'est-ce que l'utilisateur attend pour {s} ?")),
)

#: Sets gathered one value per session: (kind, value maker, said, questions with ``{t}`` the incident).
AGGREGATES: tuple[tuple[str, Callable[[random.Random], str], tuple[tuple[str, str, str], ...], tuple[str, str, str]], ...] = (
    ("dp_merged_prs", lambda rng: f"#{rng.randrange(1000, 99999)}",
     (("user", "chat", "merged {v} for {t}, one more to go"), ("assistant", "prose", "{t} 向けに {v} をマージしました。"),
      ("tool", "email", "> La PR {v} est mergée pour {t}.")),
     ("Which pull requests were merged for {t}?", "List every change that went in as part of {t}.",
      "{t} でマージされた PR をすべて挙げてください。")),
    ("dp_cleared_runs", lambda rng: (f"manual__2026-{rng.choice((11, 12))}-{rng.randrange(1, 29):02d}T"
                                     f"{rng.randrange(0, 24):02d}:{rng.randrange(0, 60):02d}:{rng.randrange(0, 60):02d}"),
     (("tool", "airflow_log", "INFO - Cleared run {v} for {t}; tasks set to None"), ("user", "chat", "I cleared {v} too, part of {t}"),
      ("assistant", "prose", "Dans le cadre de {t}, j'ai relancé {v}.")),
     ("Which DAG runs were cleared during {t}?", "What runs did we have to redo because of {t}?", "{t} の対応で再実行した run は？")),
    ("dp_cancelled_queries", lambda rng: (f"01{rng.getrandbits(24):06x}-0000-{rng.getrandbits(16):04x}-0000-"
                                          f"{rng.getrandbits(48):012x}"),
     (("tool", "json", '{"query_id": "{v}", "action": "cancel", "reason": "{t}"}'),
      ("user", "chat", "killed {v} as well, it was part of {t}"), ("assistant", "prose", "{t} の一環でクエリ {v} を停止しました。")),
     ("Which warehouse queries did we cancel during {t}?", "What got killed while we handled {t}?",
      "Quelles requêtes ont été annulées pendant {t} ?")),
)
#: what the sets are about
INCIDENTS = ("the Redshift cutover", "the GDPR erasure sweep", "the late orders incident", "the currency rounding bug",
             "the Black Friday freeze", "the warehouse rename")

#: Two events asked in time order: (value maker, (carrier, format, template)); the first of a model, the second of a DAG.
ORDER_EVENTS: tuple[tuple[Callable[[random.Random], str], tuple[str, str, str]], ...] = (
    (lambda rng: f"snap_{rng.getrandbits(32):08x}", ("assistant", "prose", "Snapshot taken: the schema of {s} is frozen at {v}.")),
    (lambda rng: f"sa-key-{rng.getrandbits(40):010x}", ("user", "chat", "rotated the service-account key of {s}, new key id is {v}")),
)
ORDER_QUESTIONS = ("Which came first: freezing the schema of {a} or rotating the key of {b}?",
                   "Was {a} pinned in time before the secret of {b} was swapped, or after?",
                   "{a} のスナップショットと {b} の鍵ローテーション、どちらが先でしたか？")
