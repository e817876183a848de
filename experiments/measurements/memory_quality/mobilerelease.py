"""An eighth held-out workload: a mobile team's release days with an agent (``generator=mobilerelease``).

Each session is one day of shipping an iOS and an Android app: the user pastes Slack lines of the
team (English, Korean, Brazilian Portuguese) and asks for checks and drafts; the agent runs
``fastlane`` and Gradle, reads diffs, Info.plist, the release workflow and checklist, Remote Config
JSON, Sentry crashes, ``adb logcat``, App Store review notes, the Play Console and partners'
email, and replies. Its kinds and phrasings are in :mod:`.mobilerelease_text`, its filler in
:mod:`.mobilerelease_filler`.

Planted, with the shape's counts: facts of nineteen kinds (bundle ids, build numbers, versionCodes,
keystore aliases, SHA-1 fingerprints, crash-free rates, API base URLs, release captains,
provisioning profiles, certificate expiry dates, flag keys, rollout percentages, deep links, Sentry
issues, crashing devices, review guidelines, release tickets, toolchain pins, decisions with their
reason), some said indirectly (a nested JSON key under its subject, a stack frame below the issue
id, a table row, a diff's ``+`` line); knowledge updates said in a later session (asked for the
current value and the one before); sets gathered one value per session (locales, QA bugs); two
events in different sessions asked in time order; absent facts (a subject and a kind never said
together, each said with something else); and distractors: near misses of each fact (the same kind
of another subject, or another kind of the same subject) and fact-shaped remarks in every turn.
Every question comes in three wordings (the template, a paraphrase without the relation's words,
another language).

Written blind in phase 10: without reading the fact finder, the recall code or the strategies, and
only ``none`` and ``full_history`` were run on it while it was written. Items an answer of which
occurs outside their evidence are dropped, as in :mod:`.workload`. The skeleton (what is planted and how
a day is written) is :mod:`.dayworld`'s.
"""

from __future__ import annotations

from experiments.measurements.memory_quality.dayworld import DayWorld, build_day_world
from experiments.measurements.memory_quality.mobilerelease_filler import TOOL_FORMATS, ReleaseFiller
from experiments.measurements.memory_quality.mobilerelease_text import (
    AGGREGATES, KINDS, ORDER_EVENTS, ORDER_QUESTIONS, SET_TOPICS,
    RELEASES, fill, language_of, noise_statement)
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape

__all__ = ["WORLD", "build_mobilerelease"]

#: the mobile-release days: their text, filler and names
WORLD = DayWorld(name="mobilerelease", prefix="mr", title="mobile-release", kinds=KINDS, aggregates=AGGREGATES,
                 set_topics=SET_TOPICS, order_subjects=RELEASES, order_events=ORDER_EVENTS,
                 order_questions=ORDER_QUESTIONS, fill=fill, language_of=language_of, noise_statement=noise_statement,
                 filler=ReleaseFiller, tool_formats=TOOL_FORMATS, start_ms=1_767_600_000_000,  # a January morning
                 user_line="me: {}", model="sim-mobile-1")


def build_mobilerelease(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` release days of ``shape.turns`` turns with the shape's items planted, unambiguous only."""
    return build_day_world(WORLD, shape, seed)
