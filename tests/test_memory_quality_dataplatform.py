"""The data-platform workload generator (``memory_quality.workload.generator=dataplatform``), written blind in phase 9.

It must be seeded (the same bytes in another process), registered, plant every item type with its
evidence and exact answers, keep its absent facts absent beside their near misses, write near
misses of both sides (the same kind of another subject, another kind of the same subject), link
its days like the other generators (rising times, a night between days), speak three languages,
keep its subjects out of its filler, and share no phrasing or kind with the other generators.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import random
import re
import subprocess
import sys

import pytest

from aptmem.entries import encode_line
from experiments.measurements.memory_quality.dataplatform import build_dataplatform
from experiments.measurements.memory_quality.dataplatform_filler import TOOL_FORMATS, DataFiller
from experiments.measurements.memory_quality.dataplatform_text import (AGGREGATES, KINDS, MODELS, ORDER_QUESTIONS, PACKAGES,
                                                                       PIPELINES, SOURCES, TOPICS, in_words, language_of, rough)
from experiments.measurements.memory_quality.generators import GENERATORS
from experiments.measurements.memory_quality.kinds import KINDS as PLANTED_KINDS
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape
from workload_checks import check_absent, check_days, check_items, texts_of

SHAPE = WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4)
SEEDS = (13, 200, 4242)
_SUBJECTS = (*MODELS, *PIPELINES, *SOURCES, *TOPICS, *PACKAGES)


def _digest(workload: Workload) -> str:
    return hashlib.sha256(b"".join(encode_line(e) for s in workload.sessions for e in s)).hexdigest()


def test_the_generator_is_registered_and_seeded_across_processes() -> None:
    assert GENERATORS["dataplatform"] is build_dataplatform
    one, two, other = build_dataplatform(SHAPE, 13), build_dataplatform(SHAPE, 13), build_dataplatform(SHAPE, 14)
    assert _digest(one) == _digest(two) and one.items == two.items and one.distractors == two.distractors
    assert _digest(one) != _digest(other), "seeds 13 and 14 wrote the same sessions"
    code = ("import hashlib; from aptmem.entries import encode_line; "
            "from experiments.measurements.memory_quality.dataplatform import build_dataplatform; "
            "from experiments.measurements.memory_quality.workload import WorkloadShape; "
            "w = build_dataplatform(WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4), 13); "
            "print(hashlib.sha256(b''.join(encode_line(e) for s in w.sessions for e in s)).hexdigest(), len(w.items))")
    env = {**os.environ, "PYTHONHASHSEED": "4321"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == [_digest(one), str(len(one.items))], "seed 13 in a process with PYTHONHASHSEED=4321"


@pytest.mark.parametrize("seed", SEEDS)
def test_every_item_type_is_planted_and_every_answer_is_found_only_in_its_evidence(seed: int) -> None:
    workload = build_dataplatform(SHAPE, seed)
    texts, _ = texts_of(workload)
    by_type = check_items(workload, SHAPE, f"seed {seed}", lambda first, third: language_of(first) != language_of(third))
    assert workload.dropped <= len(workload.items) // 4, f"seed {seed}: {workload.dropped} items dropped as ambiguous"
    for item in workload.items:
        if item.type not in ("absent", "order", "aggregate"):
            assert item.subject in "\n".join(texts[e] for e in item.evidence), f"seed {seed} {item.id}"
    for item in by_type["update"]:  # the later statement names the old and the new value
        last = texts[item.evidence[-1]]
        assert item.answers[0] in last and item.stale in last, f"seed {seed} {item.id}"
    for item in by_type["aggregate"]:
        assert {workload.turn_of[e] // SHAPE.turns for e in item.evidence} == set(range(SHAPE.sessions)), f"seed {seed}"


@pytest.mark.parametrize("seed", SEEDS)
def test_absent_facts_are_never_said_but_their_subject_and_kind_are(seed: int) -> None:
    absent = check_absent(build_dataplatform(SHAPE, seed), f"seed {seed}")
    assert len(absent) >= 2 and len({i.kind for i in absent}) >= 2, f"seed {seed}"


@pytest.mark.parametrize("seed", SEEDS)
def test_near_misses_of_both_sides_are_said_outside_the_evidence(seed: int) -> None:
    workload = build_dataplatform(WorkloadShape(), seed)
    texts, _ = texts_of(workload)
    kinds = {k.name: k for k in KINDS}
    same_kind = same_subject = 0
    for item in (i for i in workload.items if i.type == "fact" and kinds[i.kind].pattern):
        kind = kinds[item.kind]
        family = _family(item.subject)
        siblings = [k for k in KINDS if k.subject is kind.subject and k is not kind and k.pattern]
        lines = [line for e, t in texts.items() if e not in item.evidence for line in t.splitlines()]
        same_kind += any(re.search(kind.pattern, line) and any(s in line for s in family if s != item.subject) for line in lines)
        same_subject += any(item.subject in line and any(re.search(k.pattern, line) for k in siblings) for line in lines)
    assert same_kind >= 5 and same_subject >= 3, f"seed {seed}: {same_kind} same-kind and {same_subject} same-subject near misses"
    assert workload.distractors > WorkloadShape().sessions * WorkloadShape().turns, f"seed {seed}: a remark per turn at least"


def _family(subject: str) -> tuple[str, ...]:
    return next(f for f in (MODELS, PIPELINES, SOURCES, TOPICS, PACKAGES) if subject in f)


@pytest.mark.parametrize("seed", SEEDS)
def test_days_are_linked_like_the_other_generators(seed: int) -> None:
    workload = build_dataplatform(SHAPE, seed)
    check_days(workload, SHAPE, f"seed {seed}")


@pytest.mark.parametrize("seed", SEEDS)
def test_facts_come_in_many_kinds_carriers_formats_and_three_languages(seed: int) -> None:
    workload = build_dataplatform(WorkloadShape(), seed)  # the default shape, as the measurement runs it
    facts = [i for i in workload.items if i.type == "fact"]
    assert len(facts) >= 20 and len({i.kind for i in facts}) >= 10, f"seed {seed}"
    assert {i.carrier for i in facts} == {"user", "assistant", "tool"}, f"seed {seed}"
    assert {i.lang for i in workload.items if i.type != "absent"} == {"english", "japanese", "french"}, f"seed {seed}"
    assert len({i.format for i in workload.items if i.type != "absent"}) >= 6, f"seed {seed}"
    for decision in (i for i in facts if i.kind == "dp_decision"):
        assert len(decision.answers) == 2, f"seed {seed} {decision.id}: a decision is answered with its reason"


def test_values_said_from_memory_are_rounded_words_near_the_exact_value() -> None:
    assert [in_words(n) for n in (0, 7, 19, 40, 42, 100, 305)] == ["zero", "seven", "nineteen", "forty", "forty-two",
                                                                   "one hundred", "three hundred and five"]
    assert rough("dp_lag_threshold", "579,821") == "somewhere around six hundred thousand messages"
    assert rough("dp_monthly_budget", "$32,518") == "roughly thirty-three grand a month"
    assert rough("dp_sla", "6h20m") == "a bit over six hours" and rough("dp_sla", "1h45m") == "a bit under two hours"
    assert rough("dp_null_budget", "4.13%") == "a little over four percent of nulls"
    assert rough("dp_null_budget", "0.12%") == "well under one percent of nulls"
    assert rough("dp_model_owner", "ines.carvalho@dataco.io") is None
    rng = random.Random(3)
    for kind in KINDS:
        for _ in range(100):
            said = rough(kind.name, kind.value(rng, kind.subject(rng)))
            assert said is None or not any(c.isdigit() for c in said), (kind.name, said)
    said = sum(texts_of(build_dataplatform(WorkloadShape(), seed))[1].count(m) for seed in SEEDS
               for m in ("more or less, last time I looked", "if I remember right"))
    assert said >= 3, f"{said} values said from memory over seeds {SEEDS}"


def test_every_question_asks_in_english_twice_then_in_japanese_or_french() -> None:
    triples = [t for kind in KINDS for t in (kind.ask, kind.ask_before) if any(t)]
    triples += [spec[3] for spec in AGGREGATES] + [ORDER_QUESTIONS]
    for triple in triples:
        assert language_of(triple[0]) == language_of(triple[1]) == "english" != language_of(triple[2]), triple
    assert {language_of(t[2]) for t in triples} == {"japanese", "french"}
    said = [x[2] for kind in KINDS for x in kind.said] + [u for kind in KINDS for u in kind.update]
    assert {language_of(t) for t in said} == {"english", "japanese", "french"}


def test_the_filler_never_names_a_planted_subject() -> None:
    filler = DataFiller(random.Random(7))
    texts = [filler.opening() for _ in range(200)] + [filler.reply() for _ in range(50)] + [filler.noise() for _ in range(400)]
    texts += [line for _ in range(100) for line in filler.thread(5)]
    texts += [line for fmt in TOOL_FORMATS for _ in range(30) for line in filler.tool(fmt, 30)[2]]
    everything = "\n".join(texts)
    assert not [s for s in _SUBJECTS if s in everything]
    # Nor a planted value: where the filler has a planted kind's shape (email headers, timestamps, its one Slack
    # channel, dbt's own version), it is drawn from another range (another domain, 2026, no "dq-", minor under 10).
    rng = random.Random(11)
    drawn = {kind.value(rng, kind.subject(rng)) for kind in KINDS for _ in range(200)}
    assert not [v for v in drawn if v in everything]


def test_it_shares_no_phrasing_and_no_kind_with_the_other_generators() -> None:
    mine = {t for kind in KINDS for t in (*(x[2] for x in kind.said), *kind.update)}
    planted = {t for kind in PLANTED_KINDS for w in (kind.dev, kind.heldout) for t in (*w.prose, *w.update, *w.comment, *w.log)}
    names = {k.name for k in PLANTED_KINDS}
    assert not mine & planted
    for other in ("independent", "fieldnotes", "tracker", "pairing", "oncall"):
        module = importlib.import_module(f"experiments.measurements.memory_quality.{other}")
        theirs = {t for kind in module._KINDS for t in (*(x[2] for x in kind.said), *kind.update)}
        assert not mine & theirs, other
        names |= {k.name for k in module._KINDS}
    assert not {k.name for k in KINDS} & names
