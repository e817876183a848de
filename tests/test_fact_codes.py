"""Codes, C-style hashes, depot paths, sizes a thing weighs, changes said with a verb between their values, and names
put into a set: each on examples of its own (service desk, crash dump, Perforce, installer and rota wordings), none
taken from a memory-quality workload."""

from __future__ import annotations

import pytest

from aptmem.entries import ToolResult, User
from aptmem.memory.facts import facts_of, facts_of_entry, same_slot
from aptmem.memory.statements import statements
from aptmem.memory.stances import stance


def _facts(text: str):
    return [f for s in statements(text) for f in facts_of(s, by_user=False)]


@pytest.mark.parametrize(("text", "value", "shape"), [
    ("The outage is tracked as INC0042718 in the service desk.", "INC0042718", "code"),
    ("Windows update KB5034441 broke the VPN agent on the build hosts.", "KB5034441", "code"),
    ("The driver hang only shows on the T480 laptops of the QA lab.", "T480", "code"),
    ("Fault at address 0x7ffd3a2c91b0 in the renderer thread.", "0x7ffd3a2c91b0", "hex"),
    ("Integrate from //depot/main/engine into the release stream.", "//depot/main/engine", "path"),
    ("The Android bundle weighs 148 MB after the asset pass.", "148 MB", "amount"),
    ("L'archive du serveur fait 3.2 GB, sous la limite du store.", "3.2 GB", "amount"),
    ("Das Installationspaket wiegt 1.8 GB.", "1.8 GB", "amount"),
])
def test_codes_hashes_depot_paths_and_weighed_sizes_are_values(text: str, value: str, shape: str) -> None:
    found = [(f.value, f.shape) for f in facts_of_entry(ToolResult(ts=1, id="r", call_id="c", content=text))]
    assert (value, shape) in found, found


@pytest.mark.parametrize("text", [
    "The p99 was high in Q3 and P95 too.",  # two digits after a capital: a quarter, a percentile, no code
    "Pour 3 cups of flour in the bowl.",
])
def test_short_capital_digit_pairs_are_no_codes(text: str) -> None:
    assert not [f for f in _facts(text) if f.shape == "code"]


@pytest.mark.parametrize(("text", "new", "old"), [
    ("缓存上限从 512 MiB 调到了 768 MiB", "768 MiB", "512 MiB"),  # a verb before 到, closed by 了
    ("构建号从 CL 40211 换成了 CL 40388", "40388", "40211"),  # a short label before each value
    ("The index went from 1200 shards to 1800 shards.", "1800", "1200"),  # a counted noun after the old value
    ("Heap cap of the indexer: 900 MiB became 1200 MiB", "1200 MiB", "900 MiB"),
    ("Base image v4.2.0 is superseded, v4.3.1 is what ships.", "v4.3.1", "v4.2.0"),
])
def test_a_change_with_words_between_its_values_marks_the_old_one(text: str, new: str, old: str) -> None:
    facts = _facts(text)
    assert [(f.value, f.replaces) for f in facts] == [(new, old)], facts
    assert facts[0].update


@pytest.mark.parametrize(("text", "name"), [
    ("We added Kai Osei to the reviewers for the billing repo.", "Kai Osei"),
    ("Firefox ESR is on the support matrix from this release.", "Firefox ESR"),
    ("Nous avons ajouté Safari 17 aux navigateurs testés.", "Safari 17"),
])
def test_a_name_put_into_a_set_is_a_member_that_adds(text: str, name: str) -> None:
    members = [f for f in _facts(text) if f.shape == "member"]
    assert [f.value for f in members] == [name], _facts(text)
    assert members[0].adds  # one more member: it updates none of the others


def test_members_added_one_by_one_are_three_slots_not_one_updated() -> None:
    said = ["For the spring release, we added Chrome 126 to the test grid.",
            "For the spring release, we added Edge 125 to the test grid."]
    first, second = (next(f for f in _facts(t) if f.shape == "member") for t in said)
    assert not same_slot(first, second)


@pytest.mark.parametrize("text", [
    "It is on the list already, nothing to do.",  # a pronoun names nothing
    "We added 3 retries to the uploader.",  # a count, not a name
])
def test_no_member_without_a_name(text: str) -> None:
    assert not [f for f in _facts(text) if f.shape == "member"]


def test_settled_with_a_reason_is_a_decision_and_settling_in_is_not() -> None:
    assert stance("Settled the cache layer: Redis streams, since we already run Redis.") == "decision"
    assert stance("We settled in at the new office: the desks are fine.") == ""
    facts = list(facts_of_entry(User(ts=1, id="u", content="settled the export format: Parquet, since the readers want columns")))
    assert [f.shape for f in facts] == ["decision"]
