"""The on-call workload generator (``memory_quality.workload.generator=oncall``), written blind in phase 6.

It must be seeded (the same bytes in another process), registered, plant every item type with
its evidence and exact answers, keep its absent facts absent beside their near misses, say
values in words that match the exact ones, and share no phrasing or kind with the others.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import subprocess
import sys

import pytest

from aptmem.entries import encode_line
from aptmem.tokens import render_entry
from experiments.measurements.memory_quality.generators import GENERATORS
from experiments.measurements.memory_quality.kinds import KINDS
from experiments.measurements.memory_quality.oncall import build_oncall
from experiments.measurements.memory_quality.oncall_text import (_KINDS, _cron_words, _memory_words, _rate_words,
                                                                 language_of, words)
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape
from workload_checks import check_absent, check_items

SHAPE = WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4)
SEEDS = (13, 200, 4242)


def _build(seed: int, shape: WorkloadShape = SHAPE) -> tuple[Workload, dict[str, str], str]:
    workload = build_oncall(shape, seed)
    texts = {e.id or "": render_entry(e) for s in workload.sessions for e in s}
    return workload, texts, "\n".join(texts.values())


def _digest(workload: Workload) -> str:
    return hashlib.sha256(b"".join(encode_line(e) for s in workload.sessions for e in s)).hexdigest()


def test_the_oncall_generator_is_registered_and_seeded_across_processes() -> None:
    assert GENERATORS["oncall"] is build_oncall
    one, two, other = build_oncall(SHAPE, 13), build_oncall(SHAPE, 13), build_oncall(SHAPE, 14)
    assert _digest(one) == _digest(two) and one.items == two.items and one.distractors == two.distractors
    assert _digest(one) != _digest(other), "seeds 13 and 14 wrote the same sessions"
    # Another process with another string hash seed writes the same bytes (no set order leaks in).
    code = ("import hashlib; from aptmem.entries import encode_line; "
            "from experiments.measurements.memory_quality.oncall import build_oncall; "
            "from experiments.measurements.memory_quality.workload import WorkloadShape; "
            "w = build_oncall(WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4), 13); "
            "print(hashlib.sha256(b''.join(encode_line(e) for s in w.sessions for e in s)).hexdigest(), len(w.items))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == [_digest(one), str(len(one.items))], "seed 13 in a process with PYTHONHASHSEED=12345"


@pytest.mark.parametrize("seed", SEEDS)
def test_every_item_type_is_planted_and_every_answer_is_found_only_in_its_evidence(seed: int) -> None:
    workload, texts, _ = _build(seed)
    by_type = check_items(workload, SHAPE, f"seed {seed}", lambda first, third: language_of(first) != language_of(third))
    assert workload.dropped <= len(workload.items) // 4, f"seed {seed}: {workload.dropped} items dropped as ambiguous"
    for item in workload.items:
        if item.type not in ("absent", "order"):
            assert item.subject in "\n".join(texts[e] for e in item.evidence), f"seed {seed} {item.id}"
    for item in by_type["update"]:  # the later statement names both values, the new one as current
        last = texts[item.evidence[-1]]
        assert item.answers[0] in last and item.stale in last, f"seed {seed} {item.id}"
    for item in by_type["aggregate"]:
        sessions = {workload.turn_of[e] // SHAPE.turns for e in item.evidence}
        assert sessions == set(range(SHAPE.sessions)), f"seed {seed} {item.id}: one value per shift"


@pytest.mark.parametrize("seed", SEEDS)
def test_absent_facts_are_never_said_but_their_subject_and_kind_are(seed: int) -> None:
    assert len(check_absent(build_oncall(SHAPE, seed), f"seed {seed}")) >= 2, f"seed {seed}"


@pytest.mark.parametrize("seed", SEEDS)
def test_facts_come_in_many_kinds_carriers_formats_and_languages_among_distractors(seed: int) -> None:
    workload, _, _ = _build(seed, WorkloadShape())  # the default shape, as the measurement runs it
    facts = [i for i in workload.items if i.type == "fact"]
    assert len(facts) >= 20 and len({i.kind for i in facts}) >= 8, f"seed {seed}"
    assert {i.carrier for i in facts} == {"user", "assistant", "tool"}, f"seed {seed}"
    assert len({i.lang for i in workload.items if i.type != "absent"}) >= 3, f"seed {seed}"
    assert len({i.format for i in workload.items if i.type != "absent"}) >= 6, f"seed {seed}"
    for decision in (i for i in facts if i.kind == "oncall_postmortem_decision"):
        assert len(decision.answers) == 2, f"seed {seed} {decision.id}: a decision is answered with its reason"
    # At least one fact-shaped remark per turn, plus the near misses of the facts.
    assert workload.distractors > WorkloadShape().sessions * WorkloadShape().turns, f"seed {seed}"


def test_values_in_words_say_the_exact_value() -> None:
    assert [words(n) for n in (0, 7, 15, 20, 42, 99)] == ["zero", "seven", "fifteen", "twenty", "forty-two", "ninety-nine"]
    assert _memory_words("2.47Gi") == "about two and a half gigs"
    assert _memory_words("3.12Gi") == "about three gigs"
    assert _cron_words("15 */6 * * *") == "every six hours, at fifteen past"
    assert _rate_words("1250 req/s") == "roughly twelve hundred requests a second"


def test_every_question_triple_asks_the_third_time_in_another_language() -> None:
    from experiments.measurements.memory_quality.oncall_text import AGGREGATES, ORDER_QUESTIONS

    triples = [t for kind in _KINDS for t in (kind.ask, kind.ask_before) if any(t)]
    triples += [spec[3] for spec in AGGREGATES] + [ORDER_QUESTIONS]
    for triple in triples:
        assert language_of(triple[0]) == language_of(triple[1]) != language_of(triple[2]), triple
    assert {language_of(x[2]) for kind in _KINDS for x in kind.said} == {"english", "chinese", "german", "spanish"}


def test_it_shares_no_phrasing_and_no_kind_with_the_other_generators() -> None:
    mine = {t for kind in _KINDS for t in (*(x[2] for x in kind.said), *kind.update)}
    planted = {t for kind in KINDS for w in (kind.dev, kind.heldout) for t in (*w.prose, *w.update, *w.comment, *w.log)}
    names = {k.name for k in KINDS}
    assert not mine & planted
    for other in ("independent", "fieldnotes", "tracker", "pairing"):
        module = importlib.import_module(f"experiments.measurements.memory_quality.{other}")
        theirs = {t for kind in module._KINDS for t in (*(x[2] for x in kind.said), *kind.update)}
        assert not mine & theirs, other
        names |= {k.name for k in module._KINDS}
    assert not {k.name for k in _KINDS} & names
