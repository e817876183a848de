"""The pair-programming workload generator (``memory_quality.workload.generator=pairing``), written blind.

It must be seeded, registered, plant every item type with its evidence and exact answers, keep
its absent facts absent beside their near misses, and share no phrasing or kind with the others.
"""

from __future__ import annotations

import importlib

import pytest

from aptmem.entries import encode_line
from aptmem.tokens import render_entry
from experiments.measurements.memory_quality.generators import GENERATORS
from experiments.measurements.memory_quality.kinds import KINDS
from experiments.measurements.memory_quality.pairing import _KINDS, build_pairing
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape
from workload_checks import check_absent, check_items

SHAPE = WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4)
SEEDS = (13, 200, 4242)


def _cjk(text: str) -> bool:
    return any("\u4e00" <= c <= "\u9fff" for c in text)


def _build(seed: int) -> tuple[Workload, dict[str, str], str]:
    workload = build_pairing(SHAPE, seed)
    texts = {e.id or "": render_entry(e) for s in workload.sessions for e in s}
    return workload, texts, "\n".join(texts.values())


def test_the_pairing_generator_is_registered_and_seeded() -> None:
    assert GENERATORS["pairing"] is build_pairing
    one, two, other = build_pairing(SHAPE, 13), build_pairing(SHAPE, 13), build_pairing(SHAPE, 14)
    encoded = [b"".join(map(encode_line, s)) for s in one.sessions]
    assert encoded == [b"".join(map(encode_line, s)) for s in two.sessions]
    assert one.items == two.items and one.distractors == two.distractors
    assert encoded != [b"".join(map(encode_line, s)) for s in other.sessions], "seeds 13 and 14 wrote the same sessions"


@pytest.mark.parametrize("seed", SEEDS)
def test_every_item_type_is_planted_and_every_answer_is_found_only_in_its_evidence(seed: int) -> None:
    # The third wording is in the other language: Chinese where the template is English, and back.
    check_items(build_pairing(SHAPE, seed), SHAPE, f"seed {seed}", lambda first, third: _cjk(first) != _cjk(third))


@pytest.mark.parametrize("seed", SEEDS)
def test_absent_facts_are_never_said_but_their_subject_and_kind_are(seed: int) -> None:
    assert check_absent(build_pairing(SHAPE, seed), f"seed {seed}"), f"seed {seed}"


@pytest.mark.parametrize("seed", SEEDS)
def test_facts_come_in_many_kinds_carriers_formats_and_both_languages_among_distractors(seed: int) -> None:
    workload, _, _ = _build(seed)
    facts = [i for i in workload.items if i.type == "fact"]
    assert len({i.kind for i in facts}) >= 8, f"seed {seed}"
    assert {i.carrier for i in facts} == {"user", "assistant", "tool"}, f"seed {seed}"
    assert {i.lang for i in workload.items if i.type in ("fact", "update")} == {"english", "chinese"}, f"seed {seed}"
    assert len({i.format for i in workload.items if i.type in ("fact", "update", "aggregate", "order")}) >= 5, f"seed {seed}"
    decisions = [i for i in facts if i.kind == "pair_decision"]
    assert all(len(i.answers) == 2 for i in decisions), "a decision is answered with its reason"
    # At least one noise statement per turn, plus the near misses of the facts.
    assert workload.distractors > SHAPE.sessions * SHAPE.turns, f"seed {seed}"


def test_it_shares_no_phrasing_and_no_kind_with_the_other_generators() -> None:
    mine = {t for kind in _KINDS for t in (*(x[2] for x in kind.said), *kind.update)}
    planted = {t for kind in KINDS for w in (kind.dev, kind.heldout) for t in (*w.prose, *w.update, *w.comment, *w.log)}
    names = {k.name for k in KINDS}
    assert not mine & planted
    for other in ("independent", "fieldnotes", "tracker"):
        module = importlib.import_module(f"experiments.measurements.memory_quality.{other}")
        theirs = {t for kind in module._KINDS for t in (*(x[2] for x in kind.said), *kind.update)}
        assert not mine & theirs, other
        names |= {k.name for k in module._KINDS}
    assert not {k.name for k in _KINDS} & names
