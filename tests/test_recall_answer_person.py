"""Answer types person and host name, and the recall section's after-abstention columns."""

from __future__ import annotations

import polars as pl

from aptmem.recall.answer_type import asked_types, holds_type
from experiments.measurements.memory_quality.recall_scoring import RECALL_SCHEMA, recall_summary


def test_who_asks_for_a_person_and_a_handle_or_full_name_is_one() -> None:
    assert "person" in asked_types("Who owns the tidepool migration?")
    assert "person" in asked_types("quasar 出了问题该去找哪位同事？")
    assert "person" not in asked_types("Which port does the gateway listen on?")
    assert holds_type(("person",), "| tidepool | Priya Raman | on call |")
    assert holds_type(("person",), "Assignee: @mkowalski59")
    assert not holds_type(("person",), "the tidepool migration is on call this week")
    assert not holds_type(("person",), "mail me at ops@example.com")  # an address's @ is no handle


def test_a_host_name_without_a_port_is_an_address() -> None:
    assert holds_type(("address",), "the primary for lamplighter is pg-heron-38.apse1.internal now")
    assert holds_type(("address",), "connect to db.internal:5432")
    assert not holds_type(("address",), "see deploy/quasar/values.yaml and version 1.2.3")


def test_the_summary_reports_false_positives_after_abstention_beside_the_top_hit_ones() -> None:
    base = {c: None for c in RECALL_SCHEMA}
    rows = [
        {**base, "strategy": "l3_keyword", "window": 8000, "seed": 1, "item": "a", "type": "absent", "wording": "template",
         "false_positive": True, "false_positive_shown": False, "abstained": True, "answerable": True},
        {**base, "strategy": "l3_keyword", "window": 8000, "seed": 1, "item": "b", "type": "absent", "wording": "template",
         "false_positive": True, "false_positive_shown": True, "abstained": False, "answerable": False},
        {**base, "strategy": "l3_keyword", "window": 8000, "seed": 1, "item": "c", "type": "fact", "wording": "template",
         "false_positive": False, "false_positive_shown": None, "abstained": True, "answerable": False,
         "entry_recall@5": 1.0},
        {**base, "strategy": "l3_keyword", "window": 8000, "seed": 1, "item": "d", "type": "fact", "wording": "template",
         "false_positive": False, "false_positive_shown": None, "abstained": False, "answerable": True,
         "entry_recall@5": 1.0},
    ]
    summary = recall_summary(pl.DataFrame(rows, schema=RECALL_SCHEMA)).row(0, named=True)
    assert summary["false_positive_rate"] == 1.0
    assert summary["false_positive_shown_rate"] == 0.5
    assert summary["abstained_rate"] == 0.5 and summary["questions"] == 2
