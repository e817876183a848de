"""The day-world workload generators (:mod:`experiments.measurements.memory_quality.dayworld`), each written blind.

Each must be seeded (the same bytes in another process), registered, plant every item type with its
evidence and exact answers, keep its absent facts absent beside their near misses, write near misses
of both sides (the same kind of another subject, another kind of the same subject), link its days like
the other generators (rising times, a night between days), speak English and its two other languages,
say some facts indirectly, keep its subjects out of its filler and share no phrasing with the
generators written before it. A new day-world generator adds its :class:`World` to ``WORLDS``; what
only it writes (a manifest's members) is tested in its own file. The workloads are pinned by digest:
the skeleton's refactor into :mod:`.dayworld` left every one byte for byte as it was.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import random
import re
import subprocess
import sys
from dataclasses import dataclass
from types import ModuleType

import msgspec
import pytest

from aptmem.entries import encode_line
from experiments.measurements.memory_quality.dayworld import DayWorld, _Plan
from experiments.measurements.memory_quality.generators import GENERATORS
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape
from workload_checks import check_absent, check_days, check_items, texts_of

SHAPE = WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4)
SEEDS = (13, 200, 4242)
_PACKAGE = "experiments.measurements.memory_quality"
#: the generators written before the day worlds (their kinds and phrasings no day world may share)
_EARLIER = ("kinds", "independent", "fieldnotes", "tracker", "pairing", "oncall_text", "dataplatform_text")


@dataclass(frozen=True)
class World:
    """One day-world generator under test: its name, other languages, subjects and what was written before it."""

    name: str
    #: the two languages beside English its other-language wordings are in
    languages: tuple[str, str]
    #: the text module's names of the subjects (none may appear in the filler)
    subjects: tuple[str, ...]
    #: the text modules of the generators written before it
    earlier: tuple[str, ...]
    #: the digest of seed 200's workload at the default shape and of seed 7's at 5 sessions of 40 turns, 40 facts
    pins: tuple[str, str]

    def module(self, suffix: str = "") -> ModuleType:
        """The generator's module (``_text``, ``_filler``: its text and filler)."""
        return importlib.import_module(f"{_PACKAGE}.{self.name}{suffix}")

    @property
    def world(self) -> DayWorld:
        """The generator's :class:`DayWorld`."""
        return self.module().WORLD


WORLDS = (
    World("mobilerelease", ("korean", "portuguese"), ("APPS", "FEATURES", "CRASHES", "RELEASES", "PINS", "TOPICS", "SET_TOPICS"),
          _EARLIER, ("95b88c2bca38b16e", "4a488d0fc4de3f52")),
    World("gamestudio", ("french", "chinese"),
          ("GAMES", "CRASHES", "SHADERS", "LEVELS", "MILESTONES", "PLUGINS", "STUDIO_TOPICS", "SET_TOPICS"),
          (*_EARLIER, "mobilerelease_text"), ("70a6398efaf38748", "f775dfd7ea41e34d")),
    World("firmware", ("german", "japanese"),
          ("BOARDS", "FRAMES", "FAULTS", "PARTS", "RUNS", "RELEASES", "TEAM_TOPICS", "SET_TOPICS"),
          (*_EARLIER, "mobilerelease_text", "gamestudio_text"), ("6e38391785c2b937", "6fceb197f828e25e")),
    World("genomics", ("russian", "italian"),
          ("SAMPLES", "PROJECTS", "PIPELINES", "RUNS", "TOPICS", "LIKED", "SET_TOPICS", "COHORTS"),
          (*_EARLIER, "mobilerelease_text", "gamestudio_text", "firmware_text"), ("746184c30da20174", "8b8389dd4c4875e4")),
)
_IDS = [w.name for w in WORLDS]
_CASES = [pytest.param(w, seed, id=f"{w.name}-{seed}") for w in WORLDS for seed in SEEDS]


def _build(world: World, shape: WorkloadShape, seed: int) -> Workload:
    return GENERATORS[world.name](shape, seed)


def _digest(workload: Workload) -> str:
    return hashlib.sha256(b"".join(encode_line(e) for s in workload.sessions for e in s)).hexdigest()


def _pin(workload: Workload) -> str:
    """The sessions' bytes, the items, where each entry sits and the counts, in one digest."""
    digest = hashlib.sha256(b"".join(encode_line(e) for s in workload.sessions for e in s))
    digest.update(msgspec.json.encode(workload.items))
    digest.update(msgspec.json.encode(workload.turn_of))
    digest.update(f"{workload.dropped}/{workload.distractors}".encode())
    return digest.hexdigest()[:16]


@pytest.mark.parametrize("world", WORLDS, ids=_IDS)
def test_the_workloads_are_pinned_byte_for_byte(world: World) -> None:
    """The same sessions, items and counts as the generator wrote before its skeleton moved to dayworld."""
    assert _pin(_build(world, WorkloadShape(generator=world.name), 200)) == world.pins[0]
    big = WorkloadShape(generator=world.name, sessions=5, turns=40, facts=40)
    assert _pin(_build(world, big, 7)) == world.pins[1]


@pytest.mark.parametrize("world", WORLDS, ids=_IDS)
def test_the_generator_is_registered_and_seeded_across_processes(world: World) -> None:
    build = getattr(world.module(), f"build_{world.name}")
    assert GENERATORS[world.name] is build and world.world.name == world.name
    one, two, other = build(SHAPE, 13), build(SHAPE, 13), build(SHAPE, 14)
    assert _digest(one) == _digest(two) and one.items == two.items and one.distractors == two.distractors
    assert _digest(one) != _digest(other), "seeds 13 and 14 wrote the same sessions"
    code = ("import hashlib; from aptmem.entries import encode_line; "
            f"from {_PACKAGE}.{world.name} import build_{world.name} as build; "
            f"from {_PACKAGE}.workload import WorkloadShape; "
            "w = build(WorkloadShape(sessions=3, turns=10, facts=16, updates=4, aggregates=2, orders=2, absent=4), 13); "
            "print(hashlib.sha256(b''.join(encode_line(e) for s in w.sessions for e in s)).hexdigest(), len(w.items))")
    env = {**os.environ, "PYTHONHASHSEED": "987"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == [_digest(one), str(len(one.items))], "seed 13 in a process with PYTHONHASHSEED=987"


@pytest.mark.parametrize(("world", "seed"), _CASES)
def test_every_item_type_is_planted_and_every_answer_is_found_only_in_its_evidence(world: World, seed: int) -> None:
    workload = _build(world, SHAPE, seed)
    language_of = world.world.language_of
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


@pytest.mark.parametrize(("world", "seed"), _CASES)
def test_absent_facts_are_never_said_but_their_subject_and_kind_are(world: World, seed: int) -> None:
    absent = check_absent(_build(world, SHAPE, seed), f"seed {seed}")
    assert len(absent) >= 3 and len({i.kind for i in absent}) >= 2, f"seed {seed}"


@pytest.mark.parametrize(("world", "seed"), _CASES)
def test_near_misses_of_both_sides_are_said_outside_the_evidence(world: World, seed: int) -> None:
    workload = _build(world, WorkloadShape(), seed)
    texts, _ = texts_of(workload)
    kinds_of = world.world.kinds
    kinds = {k.name: k for k in kinds_of}
    same_kind = same_subject = 0
    for item in (i for i in workload.items if i.type == "fact" and kinds[i.kind].pattern):
        kind = kinds[item.kind]
        siblings = [k for k in kinds_of if k.family is kind.family and k is not kind and k.pattern]
        lines = [line for e, t in texts.items() if e not in item.evidence for line in t.splitlines()]
        same_kind += any(re.search(kind.pattern, line) and any(s in line for s in kind.family if s != item.subject)
                         for line in lines)
        same_subject += any(item.subject in line and any(re.search(k.pattern, line) for k in siblings) for line in lines)
    assert same_kind >= 5 and same_subject >= 3, f"seed {seed}: {same_kind} same-kind and {same_subject} same-subject near misses"
    assert workload.distractors > WorkloadShape().sessions * WorkloadShape().turns, f"seed {seed}: a remark per turn at least"


@pytest.mark.parametrize("world", WORLDS, ids=_IDS)
def test_the_patterns_of_a_family_never_match_a_sibling_value_or_template(world: World) -> None:
    rng, kinds, fill = random.Random(5), world.world.kinds, world.world.fill
    for kind in kinds:
        for other in (k for k in kinds if k.family is kind.family and k is not kind and kind.pattern):
            for _ in range(50):
                subject = other.subject(rng)
                value = other.value(rng, subject)
                for _, _, template in other.said:
                    line = fill(template, subject, value, why="because")
                    assert not re.search(kind.pattern, line), (kind.name, other.name, line)
        for _ in range(50):  # and every value of the kind matches its own pattern
            value = kind.value(rng, kind.subject(rng))
            assert not kind.pattern or re.search(kind.pattern, value), (kind.name, value)


@pytest.mark.parametrize(("world", "seed"), _CASES)
def test_days_are_linked_like_the_other_generators(world: World, seed: int) -> None:
    check_days(_build(world, SHAPE, seed), SHAPE, f"seed {seed}")


@pytest.mark.parametrize(("world", "seed"), _CASES)
def test_facts_come_in_many_kinds_carriers_formats_and_three_languages(world: World, seed: int) -> None:
    workload = _build(world, WorkloadShape(), seed)  # the default shape, as the measurement runs it
    facts = [i for i in workload.items if i.type == "fact"]
    assert len(facts) >= 20 and len({i.kind for i in facts}) >= 10, f"seed {seed}"
    assert {i.carrier for i in facts} == {"user", "assistant", "tool"}, f"seed {seed}"
    assert {i.lang for i in workload.items if i.type != "absent"} == {"english", *world.languages}, f"seed {seed}"
    assert len({i.format for i in workload.items if i.type != "absent"}) >= 6, f"seed {seed}"
    for decision in (i for i in facts if i.kind == f"{world.world.prefix}_decision"):
        assert len(decision.answers) == 2, f"seed {seed} {decision.id}: a decision is answered with its reason"


@pytest.mark.parametrize("world", WORLDS, ids=_IDS)
def test_some_facts_are_said_away_from_their_subject(world: World) -> None:
    """A nested JSON value, a property below its section, a crash's frame below its id: the value's line does not
    name the subject, its block does."""
    indirect = 0
    for seed in SEEDS:
        workload = _build(world, WorkloadShape(), seed)
        texts, _ = texts_of(workload)
        for item in (i for i in workload.items if i.type == "fact"):
            lines = [line for e in item.evidence for line in texts[e].splitlines() if item.answers[0] in line]
            indirect += all(item.subject not in line for line in lines)
    assert indirect >= 2, f"{indirect} facts said away from their subject over seeds {SEEDS}"


@pytest.mark.parametrize("world", WORLDS, ids=_IDS)
def test_every_question_asks_in_english_twice_then_in_another_language(world: World) -> None:
    day, text = world.world, world.module("_text")
    language_of = day.language_of
    triples = [t for kind in day.kinds for t in (kind.ask, kind.ask_before) if any(t)]
    triples += [spec[3] for spec in day.aggregates] + [text.ORDER_QUESTIONS]
    for triple in triples:
        assert language_of(triple[0]) == language_of(triple[1]) == "english" != language_of(triple[2]), triple
        assert len(set(triple)) == 3, triple
    assert {language_of(t[2]) for t in triples} == set(world.languages)
    said = [x[2] for kind in day.kinds for x in kind.said] + [u for kind in day.kinds for u in kind.update]
    assert {language_of(t) for t in said} == {"english", *world.languages}


@pytest.mark.parametrize("world", WORLDS, ids=_IDS)
def test_the_filler_names_no_subject(world: World) -> None:
    day, text = world.world, world.module("_text")
    filler = day.filler(random.Random(9))
    out = "\n".join([*(filler.assemble(f, filler.tool(f, 4000)[2]) for f in day.tool_formats for _ in range(5)),
                     *(filler.reply() for _ in range(50)), *("\n".join(filler.opening(2)) for _ in range(50))])
    subjects = [s for name in world.subjects for s in getattr(text, name)]
    named = [s for s in subjects if s in out]
    assert subjects and not named, f"the filler names {named}"


def _strings(value: object) -> set[str]:
    """Every string in a kind's phrasings (nested tuples and dicts of templates)."""
    if isinstance(value, str):
        return {value}
    if isinstance(value, dict):
        return {s for v in value.values() for s in _strings(v)}
    if isinstance(value, (tuple, list)):
        return {s for v in value for s in _strings(v)}
    return {s for name in ("prose", "comment", "log", "json", "update", "said") for s in _strings(getattr(value, name, ()))}


@pytest.mark.parametrize("world", WORLDS, ids=_IDS)
def test_no_kind_or_phrasing_is_shared_with_the_other_generators(world: World) -> None:
    others = [k for m in world.earlier for attr in ("KINDS", "_KINDS")
              for k in getattr(importlib.import_module(f"{_PACKAGE}.{m}"), attr, ())]
    assert len(others) > 30, "the other generators' kinds were found"
    kinds = world.world.kinds
    mine = {s for kind in kinds for s in _strings(kind.said) | _strings(kind.update)}
    theirs = {s for kind in others for s in _strings(kind) | _strings(getattr(kind, "dev", ())) | _strings(getattr(kind, "heldout", ()))}
    assert not {k.name for k in kinds} & {k.name for k in others}
    assert not {s for s in mine if len(s) > 12} & theirs


@pytest.mark.parametrize(("world", "seed"), _CASES)
def test_every_distractor_is_said_once(world: World, seed: int) -> None:
    plan = _Plan(world.world, WorkloadShape(), random.Random(seed))
    plan.plan()
    distractors = [s.text for s in plan.said if not s.items]
    assert len(distractors) > WorkloadShape().sessions * WorkloadShape().turns
    assert len(set(distractors)) == len(distractors), f"seed {seed}: a distractor said twice"
