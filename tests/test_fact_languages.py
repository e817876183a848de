"""The fact finder's rules of issue 14's third pass, each on examples of its own (not from any memory-quality
workload): compound durations, names stamped with a time, thresholds, the copulas and "from X to Y" of French and
Japanese, two-part snake_case names a word binds, Japanese decisions, YAML flow mappings and keyword literals in code."""

from __future__ import annotations

import pytest

from aptmem.memory.facts import Fact, facts_of
from aptmem.memory.kv_dict import FactRecord, _weights
from aptmem.memory.statements import Statement, statements
from aptmem.memory.values import values


def _facts(text: str) -> list[Fact]:
    return facts_of(Statement(text, "prose"), by_user=False)


def _kept(text: str) -> dict[str, Fact]:
    return {fact.value: fact for fact in _facts(text)}


@pytest.mark.parametrize(("text", "value"), [
    ("The nightly export must finish within 2h30m of midnight.", "2h30m"),
    ("Alert when the queue depth passes 12,000 messages.", "12,000"),
    ("Page the owner if the backlog stays above 40,000 rows.", "40,000"),
    ("Le délai d'expiration de l'API est de 30s.", "30s"),
    ("Die Wartezeit ist auf 45s gestellt.", "45s"),
    ("I re-ran scheduled__2025-01-03T04:00:00+00:00 after the fix.", "scheduled__2025-01-03T04:00:00+00:00"),
    ("The orders table is partitioned on created_at, not on the id.", "created_at"),
    ("注文テーブルの主キーは order_uid です。", "order_uid"),
    ("バッチの上限は 40m です。", "40m"),
])
def test_a_bound_value_is_kept(text: str, value: str) -> None:
    assert value in _kept(text)


@pytest.mark.parametrize("text", [
    "The build took over 45s today.",
    "The error_rate and latency_ms panels were noisy.",
    "We saw 12,000 messages in the queue this morning.",
])
def test_a_reading_or_a_name_in_passing_is_not_kept(text: str) -> None:
    shapes = {fact.value: fact.shape for fact in _facts(text)}
    assert not {v for v in shapes if v in ("45s", "error_rate", "latency_ms", "12,000")}, shapes


@pytest.mark.parametrize(("text", "new", "old"), [
    ("La limite de débit de l'API passe de 1,200 à 1,500 requêtes.", "1,500", "1,200"),
    ("バッチの上限は 40m から 55m に延長しました。", "55m", "40m"),
    ("The retention goes from 7d to 14d for the audit log.", "14d", "7d"),
])
def test_from_x_to_y_in_any_order_names_the_old_value(text: str, new: str, old: str) -> None:
    kept = _kept(text)
    assert old not in kept and kept[new].replaces == old and kept[new].update


def test_a_stamped_name_is_one_value_not_a_date() -> None:
    found = {value: shape for shape, value, _, _ in values("cleared backup-2024-05-01T02:00:00Z and reran it")}
    assert found == {"backup-2024-05-01T02:00:00Z": "stamped"}


def test_a_word_with_no_digit_or_capital_after_a_prefix_is_no_secret_key() -> None:
    assert not [v for v in values("the dim_customers table is rebuilt nightly") if v[0] == "key"]
    assert [v for v in values("use the token sk_4eC39HqLyjWDarjtT1zdp7dc") if v[0] == "key"]


def test_a_japanese_decision_with_its_reason_is_a_decision() -> None:
    (fact,) = _facts("キャッシュは Redis に決めました。 理由: 既に運用しているため。")
    assert fact.shape == "decision" and "Redis" in fact.value


def test_a_yaml_flow_mapping_is_a_record_about_its_name() -> None:
    said = list(statements("- {name: pg-primary, port: 6432, pool: transaction}\n"))
    assert [s.text for s in said] == ["pg-primary port: 6432", "pg-primary pool: transaction"]
    assert {s.subject for s in said} == {"pg-primary"}


def test_keyword_literals_in_code_are_settings_about_the_trailing_comment() -> None:
    said = list(statements("cache = Cache(backend='redis', ttl='300s')  # sessions.store\n"))
    assert [s.text for s in said] == ["sessions.store backend: redis", "sessions.store ttl: 300s"]
    assert all(s.carrier == "config" and s.subject == "sessions.store" for s in said)
    ttl = facts_of(said[1], by_user=False)
    assert [f.value for f in ttl] == ["300s"]


def test_a_decision_said_in_the_form_of_others_keeps_its_weight_and_a_setting_does_not() -> None:
    def record(shape: str, text: str, subject: str) -> FactRecord:
        return FactRecord(value=text if shape == "decision" else text.rsplit(" ", 1)[-1], shape=shape, text=text,
                          subject=[subject], anchors=[], salience=4.0, since=0)
    decisions = [record("decision", f"for {name} we went with {choice}: it is simpler", name)
                 for name, choice in (("alpha", "kafka"), ("beta", "redis"), ("gamma", "nats"))]
    settings = [record("amount", f"the {name} timeout is {value}", name) for name, value in (("alpha", "30s"), ("beta", "45s"), ("gamma", "60s"))]
    weights = _weights([*decisions, *settings])
    assert weights[:3] == [r.weight for r in decisions]
    assert all(w < r.weight for w, r in zip(weights[3:], settings, strict=True))


def test_a_japanese_particle_binds_a_value_as_a_copula_does() -> None:
    bound = _kept("orders.events.v2 のラグが 120,000 件を超えたらページします。")["120,000"]
    loose = _kept("orders.events.v2 で 120,000 件を超えたらページします。")["120,000"]
    assert bound.salience > loose.salience


def test_a_reading_named_at_a_moment_or_far_from_its_measured_word_is_a_measurement() -> None:
    assert "78%" not in _kept("Cache hit ratio on the nightly_fx_refresh job is 78% this week.")
    assert "78%" not in _kept("The hit ratio of the warehouse cache for analysts is 78%.")


def test_a_flow_mapping_after_a_key_is_about_that_key() -> None:
    said = list(statements("nightly_export: {timeout: 2h15m, owner: data-team}\n"))
    assert [s.text for s in said] == ["nightly_export timeout: 2h15m", "nightly_export owner: data-team"]


def test_a_plan_line_changed_in_place_and_a_list_literal_are_settings_and_the_literal_beats_its_comment() -> None:
    said = list(statements('resource "db" {\n  ~ instance_class = "DB_M5_LARGE"  # what orders_api_primary runs on\n'
                           '  + allowed_cidrs = ["172.20.0.0/16"]\n}\n'))
    assert [s.carrier for s in said] == ["config", "config"]
    assert "DB_M5_LARGE" in {f.value for f in facts_of(said[0], by_user=False)}
    assert "172.20.0.0/16" in {f.value for f in facts_of(said[1], by_user=False)}


def test_a_french_or_spanish_limit_binds_its_quantity() -> None:
    assert "1h30m" in _kept("L'export doit finir en moins de 1h30m après minuit.")
    assert "250ms" in _kept("La respuesta debe llegar en menos de 250ms para el checkout.")
