"""A ninth held-out workload: a game studio's days with an agent (``generator=gamestudio``).

Each session is one day of a studio shipping a few titles towards console certification: the user
pastes the team's Discord lines (English, French, Simplified Chinese) and asks for checks and
drafts; the agent reads Unreal and Unity build logs, Perforce changelists and shelves, a crash
triage's symbolicated stacks, shader-compile output, a level designer's notes, a Jenkins pipeline,
a minified JSON asset manifest, INI CVars, a QA bug sheet pasted as TSV, C++ comments and the
platform holder's certification email, and replies. Its kinds and phrasings are in
:mod:`.gamestudio_text`, its filler in :mod:`.gamestudio_filler`.

Planted, with the shape's counts: facts of sixteen kinds (green changelists, Unity editor versions,
PS5 title ids, producers, day-one patch sizes, release streams, crash buckets, crashing GPUs,
shader permutation hashes and counts, streaming budgets, level owners, certification failures,
milestone tickets, middleware pins, decisions with their reason), some said indirectly (a stack
frame below the bucket, an INI key below its section, a manifest member); knowledge updates said
in a later session (asked for the current value and the one before); sets gathered one value per
session (platforms, QA bugs); two events in different sessions asked in time order; absent facts
(a subject and a kind never said together, each said with something else); and distractors: near
misses of each fact (the same kind of another subject, or another kind of the same subject) and
fact-shaped remarks in every turn. Every question comes in three wordings (the template, a
paraphrase without the relation's words, another language).

Written blind in phase 11: without reading the fact finder, the recall code or the strategies, and
only ``none`` and ``full_history`` were run on it while it was written. Items an answer of which
occurs outside their evidence are dropped, as in :mod:`.workload`. The skeleton (what is planted and how
a day is written) is :mod:`.dayworld`'s.
"""

from __future__ import annotations

from experiments.measurements.memory_quality.dayworld import DayWorld, build_day_world
from experiments.measurements.memory_quality.gamestudio_filler import TOOL_FORMATS, StudioFiller
from experiments.measurements.memory_quality.gamestudio_text import (
    AGGREGATES, KINDS, ORDER_EVENTS, ORDER_QUESTIONS, SET_TOPICS,
    MILESTONES, fill, language_of, noise_statement)
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape

__all__ = ["WORLD", "build_gamestudio"]

#: the game-studio days: their text, filler and names
WORLD = DayWorld(name="gamestudio", prefix="gs", title="game-studio", kinds=KINDS, aggregates=AGGREGATES,
                 set_topics=SET_TOPICS, order_subjects=MILESTONES, order_events=ORDER_EVENTS,
                 order_questions=ORDER_QUESTIONS, fill=fill, language_of=language_of, noise_statement=noise_statement,
                 filler=StudioFiller, tool_formats=TOOL_FORMATS, start_ms=1_768_380_000_000,  # a mid-January morning
                 user_line="**me**: {}", model="sim-studio-1")


def build_gamestudio(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` studio days of ``shape.turns`` turns with the shape's items planted, unambiguous only."""
    return build_day_world(WORLD, shape, seed)
