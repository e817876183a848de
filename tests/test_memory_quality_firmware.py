"""The firmware workload generator (``memory_quality.workload.generator=firmware``), written blind in phase 11.

It must be seeded (the same bytes in another process), registered, plant every item type with its
evidence and exact answers, keep its absent facts absent beside their near misses, write near
misses of both sides (the same kind of another subject, another kind of the same subject), link
its days like the other generators (rising times, a night between days), speak English, German and
Japanese, say some facts indirectly, and keep its subjects out of its filler.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import random
import re
import subprocess
import sys

import pytest

from aptmem.entries import ToolResult, encode_line
from experiments.measurements.memory_quality.generators import GENERATORS
from experiments.measurements.memory_quality.firmware import _Plan, build_firmware
from experiments.measurements.memory_quality.firmware_filler import TOOL_FORMATS, FirmwareFiller
from experiments.measurements.memory_quality.firmware_text import (AGGREGATES, BOARDS, FAULTS, FRAMES, KINDS, PARTS,
                                                                   ORDER_QUESTIONS, RELEASES, RUNS, SET_TOPICS,
                                                                   TEAM_TOPICS, fill, language_of)
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape
from workload_checks import check_absent, check_days, check_items, texts_of

SHAPE = WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4)
SEEDS = (13, 200, 4242)
_SUBJECTS = (*BOARDS, *FRAMES, *FAULTS, *PARTS, *RUNS, *RELEASES, *TEAM_TOPICS, *SET_TOPICS)


def _digest(workload: Workload) -> str:
    return hashlib.sha256(b"".join(encode_line(e) for s in workload.sessions for e in s)).hexdigest()


def test_the_generator_is_registered_and_seeded_across_processes() -> None:
    assert GENERATORS["firmware"] is build_firmware
    one, two, other = build_firmware(SHAPE, 13), build_firmware(SHAPE, 13), build_firmware(SHAPE, 14)
    assert _digest(one) == _digest(two) and one.items == two.items and one.distractors == two.distractors
    assert _digest(one) != _digest(other), "seeds 13 and 14 wrote the same sessions"
    code = ("import hashlib; from aptmem.entries import encode_line; "
            "from experiments.measurements.memory_quality.firmware import _Plan, build_firmware; "
            "from experiments.measurements.memory_quality.workload import WorkloadShape; "
            "w = build_firmware(WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4), 13); "
            "print(hashlib.sha256(b''.join(encode_line(e) for s in w.sessions for e in s)).hexdigest(), len(w.items))")
    env = {**os.environ, "PYTHONHASHSEED": "987"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == [_digest(one), str(len(one.items))], "seed 13 in a process with PYTHONHASHSEED=987"


@pytest.mark.parametrize("seed", SEEDS)
def test_every_item_type_is_planted_and_every_answer_is_found_only_in_its_evidence(seed: int) -> None:
    workload = build_firmware(SHAPE, seed)
    texts, _ = texts_of(workload)
    by_type = check_items(workload, SHAPE, f"seed {seed}", lambda first, third: language_of(first) != language_of(third))
    assert workload.dropped <= len(workload.items) // 4, f"seed {seed}: {workload.dropped} items dropped as ambiguous"
    for item in workload.items:
        if item.type not in ("absent", "order"):
            assert item.subject in "\n".join(texts[e] for e in item.evidence), f"seed {seed} {item.id}"
    for item in by_type["update"]:  # the later statement names the old and the new value
        last = texts[item.evidence[-1]]
        assert item.answers[0] in last and item.stale in last, f"seed {seed} {item.id}"
    for item in by_type["aggregate"]:
        assert {workload.turn_of[e] // SHAPE.turns for e in item.evidence} == set(range(SHAPE.sessions)), f"seed {seed}"


@pytest.mark.parametrize("seed", SEEDS)
def test_absent_facts_are_never_said_but_their_subject_and_kind_are(seed: int) -> None:
    absent = check_absent(build_firmware(SHAPE, seed), f"seed {seed}")
    assert len(absent) >= 3 and len({i.kind for i in absent}) >= 2, f"seed {seed}"


@pytest.mark.parametrize("seed", SEEDS)
def test_near_misses_of_both_sides_are_said_outside_the_evidence(seed: int) -> None:
    workload = build_firmware(WorkloadShape(), seed)
    texts, _ = texts_of(workload)
    kinds = {k.name: k for k in KINDS}
    same_kind = same_subject = 0
    for item in (i for i in workload.items if i.type == "fact" and kinds[i.kind].pattern):
        kind = kinds[item.kind]
        siblings = [k for k in KINDS if k.family is kind.family and k is not kind and k.pattern]
        lines = [line for e, t in texts.items() if e not in item.evidence for line in t.splitlines()]
        same_kind += any(re.search(kind.pattern, line) and any(s in line for s in kind.family if s != item.subject)
                         for line in lines)
        same_subject += any(item.subject in line and any(re.search(k.pattern, line) for k in siblings) for line in lines)
    assert same_kind >= 5 and same_subject >= 3, f"seed {seed}: {same_kind} same-kind and {same_subject} same-subject near misses"
    assert workload.distractors > WorkloadShape().sessions * WorkloadShape().turns, f"seed {seed}: a remark per turn at least"


def test_the_patterns_of_a_family_never_match_a_sibling_value_or_template() -> None:
    rng = random.Random(5)
    for kind in KINDS:
        for other in (k for k in KINDS if k.family is kind.family and k is not kind and kind.pattern):
            for _ in range(50):
                subject = other.subject(rng)
                value = other.value(rng, subject)
                for _, _, template in other.said:
                    line = fill(template, subject, value, why="because")
                    assert not re.search(kind.pattern, line), (kind.name, other.name, line)
        for _ in range(50):  # and every value of the kind matches its own pattern
            value = kind.value(rng, kind.subject(rng))
            assert not kind.pattern or re.search(kind.pattern, value), (kind.name, value)


@pytest.mark.parametrize("seed", SEEDS)
def test_days_are_linked_like_the_other_generators(seed: int) -> None:
    workload = build_firmware(SHAPE, seed)
    check_days(workload, SHAPE, f"seed {seed}")


@pytest.mark.parametrize("seed", SEEDS)
def test_facts_come_in_many_kinds_carriers_formats_and_three_languages(seed: int) -> None:
    workload = build_firmware(WorkloadShape(), seed)  # the default shape, as the measurement runs it
    facts = [i for i in workload.items if i.type == "fact"]
    assert len(facts) >= 20 and len({i.kind for i in facts}) >= 10, f"seed {seed}"
    assert {i.carrier for i in facts} == {"user", "assistant", "tool"}, f"seed {seed}"
    assert {i.lang for i in workload.items if i.type != "absent"} == {"english", "german", "japanese"}, f"seed {seed}"
    assert len({i.format for i in workload.items if i.type != "absent"}) >= 6, f"seed {seed}"
    for decision in (i for i in facts if i.kind == "fw_decision"):
        assert len(decision.answers) == 2, f"seed {seed} {decision.id}: a decision is answered with its reason"


def test_some_facts_are_said_away_from_their_subject() -> None:
    """A devicetree property below its node comment, a fault pc above its addr2line: the value's line does not name the subject, its block does."""
    indirect = 0
    for seed in SEEDS:
        workload = build_firmware(WorkloadShape(), seed)
        texts, _ = texts_of(workload)
        for item in (i for i in workload.items if i.type == "fact"):
            lines = [line for e in item.evidence for line in texts[e].splitlines() if item.answers[0] in line]
            indirect += all(item.subject not in line for line in lines)
    assert indirect >= 2, f"{indirect} facts said away from their subject over seeds {SEEDS}"


def test_every_question_asks_in_english_twice_then_in_german_or_japanese() -> None:
    triples = [t for kind in KINDS for t in (kind.ask, kind.ask_before) if any(t)]
    triples += [spec[3] for spec in AGGREGATES] + [ORDER_QUESTIONS]
    for triple in triples:
        assert language_of(triple[0]) == language_of(triple[1]) == "english" != language_of(triple[2]), triple
        assert len(set(triple)) == 3, triple
    assert {language_of(t[2]) for t in triples} == {"german", "japanese"}
    said = [x[2] for kind in KINDS for x in kind.said] + [u for kind in KINDS for u in kind.update]
    assert {language_of(t) for t in said} == {"english", "german", "japanese"}


def test_the_filler_names_no_subject() -> None:
    filler = FirmwareFiller(random.Random(9))
    text = "\n".join([*(filler.assemble(f, filler.tool(f, 4000)[2]) for f in TOOL_FORMATS for _ in range(5)),
                      *(filler.reply() for _ in range(50)), *("\n".join(filler.opening(2)) for _ in range(50))])
    named = [s for s in _SUBJECTS if s in text]
    assert not named, f"the filler names {named}"


def _strings(value: object) -> set[str]:
    """Every string in a kind's phrasings (nested tuples and dicts of templates)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {s for v in value.values() for s in _strings(v)}
    if isinstance(value, (tuple, list)):
        return {s for v in value for s in _strings(v)}
    return {s for name in ("prose", "comment", "log", "json", "update", "said") for s in _strings(getattr(value, name, ()))}


def test_no_kind_or_phrasing_is_shared_with_the_other_generators() -> None:
    modules = ("kinds", "independent", "fieldnotes", "tracker", "pairing", "oncall_text", "dataplatform_text",
               "mobilerelease_text", "gamestudio_text")
    others = [k for m in modules for attr in ("KINDS", "_KINDS")
              for k in getattr(importlib.import_module(f"experiments.measurements.memory_quality.{m}"), attr, ())]
    assert len(others) > 30, "the other generators' kinds were found"
    mine = {s for kind in KINDS for s in _strings(kind.said) | _strings(kind.update)}
    theirs = {s for kind in others for s in _strings(kind) | _strings(getattr(kind, "dev", ())) | _strings(getattr(kind, "heldout", ()))}
    assert not {k.name for k in KINDS} & {k.name for k in others}
    assert not {s for s in mine if len(s) > 12} & theirs


@pytest.mark.parametrize("seed", SEEDS)
def test_every_distractor_is_said_once(seed: int) -> None:
    plan = _Plan(WorkloadShape(), random.Random(seed))
    plan.plan()
    distractors = [s.text for s in plan.said if not s.items]
    assert len(distractors) > WorkloadShape().sessions * WorkloadShape().turns
    assert len(set(distractors)) == len(distractors), f"seed {seed}: a distractor said twice"


@pytest.mark.parametrize("seed", SEEDS)
def test_the_ota_manifest_is_minified_json_with_its_planted_members(seed: int) -> None:
    """The OTA manifest is one line of JSON that parses, and a digest planted in it is a member under its board."""
    workload = build_firmware(WorkloadShape(), seed)
    manifests = {e.id: e.content for s in workload.sessions for e in s
                 if isinstance(e, ToolResult) and e.content.startswith('{"ota":')}
    assert manifests, f"seed {seed}: no manifest was read"
    for content in manifests.values():
        assert "\n" not in content, "a manifest is minified"
        json.loads(content)
    for item in (i for i in workload.items if i.type == "fact" and i.format == "json"):
        members = [json.loads(manifests[e]) for e in item.evidence if e in manifests]
        assert any(m["ota"].get(item.subject, {}).get("digest") == item.answers[0] for m in members), item.id


def test_the_tool_formats_are_the_firmware_teams() -> None:
    """Every format a kind is said in by a tool is one the filler writes, and the kinds use at least ten of the twelve."""
    used = {fmt for kind in KINDS for carrier, fmt, _ in kind.said if carrier == "tool"}
    used |= {fmt for spec in AGGREGATES for carrier, fmt, _ in spec[2] if carrier == "tool"}
    assert used <= set(TOOL_FORMATS) and len(used) >= 10, sorted(used)
