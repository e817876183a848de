"""Value shapes and statement forms of issue 14's second pass (time windows, merge/pull request numbers, snake_case
symbols, "from X to Y" settings, tab-separated and key-value sheets, metric samples, decisions in other languages)
and kv_dict's churn penalty and compact render, each on examples written for this file from the formats, not taken
from any memory-quality workload."""

from __future__ import annotations

import pytest

from aptmem.memory.facts import Fact, facts_of, same_slot
from aptmem.memory.kv_dict import FactRecord, Superseded, merge_facts, render_records
from aptmem.memory.statements import sentences, statements
from aptmem.memory.values import values


def _facts(text: str) -> list[Fact]:
    return [f for s in statements(text) for f in facts_of(s, by_user=False)]


@pytest.mark.parametrize(("text", "shape", "value"), [
    ("the deploy freeze is Thu 22:00-23:30 UTC this week", "window", "Thu 22:00-23:30 UTC"),
    ("backups run 01:15-02:45 CET", "window", "01:15-02:45 CET"),
    ("the fix went in with !4821 yesterday", "ref", "!4821"),
    ("see #3307 for the discussion", "ref", "#3307"),
    ("PR 915 reverts it", "ref", "PR 915"),
    ("to stop it, turn off disable_bulk_export_path", "symbol", "disable_bulk_export_path"),
])
def test_new_value_shapes(text: str, shape: str, value: str) -> None:
    assert (shape, value) in [(s, v) for s, v, _, _ in values(text)]


def test_a_measured_quantity_does_not_make_the_next_one_of_its_sentence_a_measurement() -> None:
    found = {v: s for s, v, _, _ in values("Raised the heap of the indexer from 1536Mi to 2048Mi after the OOM")}
    assert found == {"1536Mi": "amount", "2048Mi": "amount"}  # the old and the new setting of one change


def test_clock_digits_are_no_numbers_and_port_pairs_still_are() -> None:
    assert values("[07:41:09] <kim> restarting it") == []
    assert ("number", "9090") in [(s, v) for s, v, _, _ in values("ports: 9090:80")]


def test_a_reading_over_a_span_or_a_peak_is_a_measurement() -> None:
    assert all(s == "quantity" for s, _, _, _ in values("the burn rate for billing is 3.2x over the last hour"))
    assert all(s == "quantity" for s, _, _, _ in values("the backlog of billing peaked at 90211 messages"))


def test_a_rate_limit_is_a_setting_and_an_error_rate_a_reading() -> None:
    assert [s for s, _, _, _ in values("gateway rate limit: 450 req/s")] == ["amount"]
    assert [s for s, _, _, _ in values("the error rate is 4%")] == ["quantity"]


def test_from_x_to_y_names_the_old_setting() -> None:
    fact = next(f for f in _facts("Changed the heap limit of indexer from 1536Mi to 2048Mi; rollout done.") if f.value == "2048Mi")
    assert fact.replaces == "1536Mi" and "indexer" in fact.subject


def test_a_tab_separated_key_value_sheet_reads_subject_key_value() -> None:
    sheet = "team\tsetting\tvalue\tcomment\nbilling\tdisk quota\t750Gi\tagreed\nsearch\ton-call lead\tMara Quint\tweekdays\n"
    texts = [s.text for s in statements(sheet)]
    assert "billing disk quota: 750Gi" in texts and "search on-call lead: Mara Quint" in texts
    quota = next(f for f in _facts(sheet) if f.value == "750Gi")
    assert quota.subject == ("billing",)


def test_a_listing_stays_a_listing_across_a_foreign_line_and_a_headerless_row_is_skipped() -> None:
    listing = ("NAME          STATUS    AGE    NODE\napi-7f9c      Running   4m     n1\n"
               "  retention: 14d   # the api's log retention\nweb-2b1a      Running   9m     n2\n")
    texts = [s.text for s in statements(listing)]
    assert "web-2b1a STATUS: Running" in texts
    assert not any(t.startswith("api-7f9c      ") for t in texts)
    assert list(statements("web-2b1a      Running   9m     n2")) == []


def test_a_metric_sample_is_read_by_its_labels() -> None:
    texts = [s.text for s in statements('up{job="ledger",instance="db-4.prod.internal:9187"} 1')]
    assert texts == ["up: job=ledger instance=db-4.prod.internal:9187"]


def test_a_shortened_views_marker_and_torn_lines_are_no_statements() -> None:
    text = "first line is whole\nhalf a li\n[... 900 characters cut by aptmem compaction ...]\nne torn\nlast line is whole"
    assert [s.text for s in statements(text)] == ["first line is whole", "last line is whole"]


def test_a_reason_sentence_joins_its_decision_and_other_languages_decide() -> None:
    assert list(sentences("We settled on Kafka for the feed. Reason: it replays.")) == ["We settled on Kafka for the feed. Reason: it replays."]
    assert [f.shape for f in _facts("Entschieden für den Export: nightly parquet, weil die Analysten es so lesen.")] == ["decision"]


def test_a_name_after_for_or_of_is_a_subject_even_inside_a_value() -> None:
    fact = next(f for f in _facts("Tokens for orrery come out of secret/data/orrery/api-7c now") if f.shape == "path")
    assert "orrery" in fact.subject


def _fact(value: str, text: str, anchors: tuple[str, ...], *, update: bool = False) -> Fact:
    return Fact(value=value, shape="cron", text=text, subject=("cronjob",), anchors=anchors, salience=4.0, update=update)


def test_the_same_form_with_another_content_word_and_no_change_cue_is_another_slot() -> None:
    old = _fact("5 * * * *", "the alpha CronJob fires on 5 * * * *", ("alpha", "fires"))
    other = _fact("7 * * * *", "the beta CronJob fires on 7 * * * *", ("beta", "fires"))
    moved = _fact("9 * * * *", "the alpha CronJob now fires on 9 * * * *", ("alpha", "fires"), update=True)
    assert not same_slot(old, other)
    assert same_slot(old, moved)


def _record(value: str, changed: int, announced: bool) -> FactRecord:
    before = [Superseded(value=f"old{i}", since=0, until=86_400_000) for i in range(min(changed, 2))]
    return FactRecord(value=value, shape="ticket", text=f"row {value}", subject=["x"], anchors=[], salience=4.0, since=0,
                      before=before, changed=changed, announced=announced)


def test_churn_costs_weight_and_only_a_change_said_as_one_earns_the_bonus() -> None:
    announced, silent, churned = _record("A-1", 1, True), _record("A-2", 1, False), _record("A-3", 4, False)
    assert announced.weight > silent.weight > churned.weight


def test_merge_keeps_the_last_old_values_and_counts_every_change() -> None:
    facts = [Fact(value=f"{n}s", shape="amount", text=f"api timeout: {n}s", subject=("api",), anchors=("timeout",),
                  salience=4.0, attribute="timeout", ts=n) for n in (10, 20, 30, 40)]
    records = merge_facts([], facts, 100)
    assert len(records) == 1 and records[0].changed == 3 and [b.value for b in records[0].before] == ["20s", "30s"]


def test_the_render_pays_a_day_heading_once_and_names_the_old_value_as_was() -> None:
    day = 86_400_000
    records = [FactRecord(value="45s", shape="amount", text="api timeout: 45s", subject=["api"], anchors=[], salience=4.0,
                          since=day, before=[Superseded(value="30s", since=0, until=day)], changed=1, announced=True),
               FactRecord(value="v2", shape="version", text="web runs v2", subject=["web"], anchors=[], salience=4.0, since=day)]
    lines = render_records(records, 500, lambda t: len(t.split()), 0.3)
    assert lines == ["1970-01-02:", "- api timeout: 45s (was 30s)", "- web runs v2"]


def test_a_card_titles_its_field_lines() -> None:
    card = "Issue: exports time out after midnight\nAssignee: @rvega\nPriority: P2\nthe build log follows"
    texts = [s.text for s in statements(card)]
    assert "exports time out after midnight — Assignee: @rvega" in texts
    assert "the build log follows" in texts  # a line that is no field ends the card


def test_a_long_tool_outputs_repeated_template_is_bulk_even_when_its_rows_name_different_things() -> None:
    from aptmem.entries import ToolResult
    from aptmem.memory.facts import facts_of_entry

    pairs = [(name, verb) for name in ("ash", "elm", "fir", "oak", "yew") for verb in ("queued", "green", "rolled back")]
    rows = [f"[bot{n % 3}] {name} build {4100 + n} {verb} by @dev{n % 4}" for n, (name, verb) in enumerate(pairs)]
    text = "\n".join([*rows[:7], "The deploy token for ash lives at secret/data/ash/deploy-9f2", *rows[7:]])
    kept = list(facts_of_entry(ToolResult(content=text, call_id="c1", ts=1), max_facts=100))
    token = next(f for f in kept if f.value == "secret/data/ash/deploy-9f2")
    assert all(f.salience < token.salience - 1.5 for f in kept if "build" in f.text)  # the rows are bulk, the token is not


def test_a_slash_command_acts_on_its_first_argument_and_a_flags_value_names_nothing() -> None:
    fact = next(f for f in _facts("/scale ledger --replicas 6 --env staging") if f.attribute == "replicas")
    assert fact.subject == ("ledger",)


def test_a_one_word_label_in_parentheses_is_a_slot_of_the_form() -> None:
    from aptmem.memory.facts import form

    assert form("ref", "Re #12 (billing): can you look?", "#12") == form("ref", "Re #31 (search): can you look?", "#31")


def test_two_statements_one_word_apart_are_two_things_even_with_a_change_cue() -> None:
    old = Fact(value="40%", shape="amount", text="alpha canary share is now 40%", subject=("rollout",),
               anchors=("alpha", "canary", "share"), salience=4.0, update=True)
    new = Fact(value="15%", shape="amount", text="gamma canary share is now 15%", subject=("rollout",),
               anchors=("canary", "gamma", "share"), salience=4.0, update=True)
    assert not same_slot(old, new)
