"""A tenth held-out workload: an embedded firmware team's days with an agent (``generator=firmware``).

Each session is one day of a team taking a few boards from bring-up to a production run: the user
pastes the team's Mattermost lines (English, German, Japanese) and asks for checks and drafts; the
agent reads a UART boot log, Yocto bitbake and Zephyr west output, devicetree fragments,
Kconfig/defconfig lines, a CAN candump, an OpenOCD session, a BOM exported as CSV, a bring-up
checklist in Markdown, a contract manufacturer's RMA email, a minified JSON OTA manifest, datasheet
excerpts and C comments, and replies. Its kinds and phrasings are in :mod:`.firmware_text`, its
filler in :mod:`.firmware_filler`.

Planted, with the shape's counts: facts of eighteen kinds (SoCs, firmware versions, hardware
revisions, bring-up owners, flash slot addresses, OTA digests, CAN ids and periods, fault program
counters and tickets, part numbers, lead times and prices, RMA numbers, first-pass yields, Zephyr
baselines, release tags, decisions with their reason), some said indirectly (a devicetree property
below its node comment, a defconfig symbol below its release header, a manifest member, a fault's
pc above its addr2line); knowledge updates said in a later session (asked for the current value and
the one before); sets gathered one value per session (failed test points, silicon errata); two
events in different sessions asked in time order (an OTA beta rollout, a factory image handover);
absent facts (a subject and a kind never said together, each said with something else); and
distractors: near misses of each fact (the same kind of another subject, or another kind of the
same subject) and fact-shaped remarks in every turn. Every question comes in three wordings (the
template, a paraphrase without the relation's words, another language).

Written blind in phase 11: without reading the fact finder, the recall code or the strategies, and
only ``none`` and ``full_history`` were run on it while it was written. Items an answer of which
occurs outside their evidence are dropped, as in :mod:`.workload`. The skeleton (what is planted and how
a day is written) is :mod:`.dayworld`'s.
"""

from __future__ import annotations

from experiments.measurements.memory_quality.dayworld import DayWorld, build_day_world
from experiments.measurements.memory_quality.firmware_filler import TOOL_FORMATS, FirmwareFiller
from experiments.measurements.memory_quality.firmware_text import (
    AGGREGATES, KINDS, ORDER_EVENTS, ORDER_QUESTIONS, SET_TOPICS,
    RELEASES, fill, language_of, noise_statement)
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape

__all__ = ["WORLD", "build_firmware"]

#: the firmware days: their text, filler and names
WORLD = DayWorld(name="firmware", prefix="fw", title="firmware", kinds=KINDS, aggregates=AGGREGATES,
                 set_topics=SET_TOPICS, order_subjects=RELEASES, order_events=ORDER_EVENTS,
                 order_questions=ORDER_QUESTIONS, fill=fill, language_of=language_of, noise_statement=noise_statement,
                 filler=FirmwareFiller, tool_formats=TOOL_FORMATS, start_ms=1_771_318_800_000,  # a February morning
                 user_line="me {}", model="sim-firmware-1")


def build_firmware(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` firmware days of ``shape.turns`` turns with the shape's items planted, unambiguous only."""
    return build_day_world(WORLD, shape, seed)
