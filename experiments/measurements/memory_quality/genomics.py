"""An eleventh held-out workload: a genomics core facility's days with an agent (``generator=genomics``).

Each session is one day of the bioinformatics staff of a sequencing core: the user pastes the team's
Zulip lines (English, Russian, Italian) and asks for checks and drafts; the agent reads Nextflow and
Snakemake run logs, a bcl-convert samplesheet, SLURM ``sacct`` tables, a conda environment YAML, a
minified MultiQC JSON, R ``sessionInfo()``, Jupyter cell output, an ELN page in Markdown, a LIMS
export as TSV, NovaSeq RunInfo.xml and RunParameters fragments, a PI's email thread and a Zulip
stream, and replies. Its kinds and phrasings are in :mod:`.genomics_text`, its filler in
:mod:`.genomics_filler`; the planting and the day's writing are :mod:`.dayworld`'s.

Planted, with the shape's counts: facts of twenty-one kinds (i7 indexes, library concentrations, tube
barcodes, read-pair counts, cost centres, analysts, delivery buckets, request tickets, analysis
branches, report commits, pipeline releases, work directories, container digests, cluster configs,
weblog endpoints, Q30 shares, archive tapes, run yields, reagent cartridges, decisions with their
reason, the user's preferences), some said indirectly (a value under its ELN heading, a RunParameters
element below the run's id, a Nextflow options block, a Snakemake rule's
count line, an ELN page's front matter); knowledge updates said in a later
session (asked for the current value and the one before); sets gathered one value per session
(failed libraries, opened reagent lots); two events in different sessions asked in time order (a
pool loaded on the sequencer, a data hand-over); absent facts (a subject and a kind never said
together, each said with something else); and distractors: near misses of each fact (the same kind
of another subject, or another kind of the same subject) and fact-shaped remarks in every turn.
Every question comes in three wordings (the template, a paraphrase without the relation's words,
Russian or Italian).

Written blind in phase 12: without reading the fact finder, the recall code, the strategies or any
other generator's wording, and only ``none`` and ``full_history`` were run on it while it was
written. Items an answer of which occurs outside their evidence are dropped, as in :mod:`.workload`.
"""

from __future__ import annotations

from experiments.measurements.memory_quality.dayworld import DayWorld, build_day_world
from experiments.measurements.memory_quality.genomics_filler import TOOL_FORMATS, GenomicsFiller
from experiments.measurements.memory_quality.genomics_text import (AGGREGATES, COHORTS, KINDS, ORDER_EVENTS,
                                                                   ORDER_QUESTIONS, SET_TOPICS, fill, language_of,
                                                                   noise_statement)
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape

__all__ = ["WORLD", "build_genomics"]

#: the sequencing core's days: their text, filler and names
WORLD = DayWorld(name="genomics", prefix="gn", title="genomics", kinds=KINDS, aggregates=AGGREGATES,
                 set_topics=SET_TOPICS, order_subjects=COHORTS, order_events=ORDER_EVENTS,
                 order_questions=ORDER_QUESTIONS, fill=fill, language_of=language_of, noise_statement=noise_statement,
                 filler=GenomicsFiller, tool_formats=TOOL_FORMATS, start_ms=1_770_192_000_000,  # a February morning
                 user_line="@me › {}", model="sim-genomics-1")


def build_genomics(shape: WorkloadShape, seed: int) -> Workload:
    """``shape.sessions`` days of the core of ``shape.turns`` turns with the shape's items planted, unambiguous only."""
    return build_day_world(WORLD, shape, seed)
