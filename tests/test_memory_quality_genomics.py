"""What only the genomics workload generator (``memory_quality.workload.generator=genomics``) writes, and its bracket.

The checks every day-world generator passes (seeded across processes, every item type with real
evidence ids and exact answers, three wordings, absent facts beside near misses of both sides, linked
days, three languages, indirect statements, a filler that names no subject, no phrasing shared with
the generators before it) run on it from ``test_day_worlds.py``. Here: its minified MultiQC JSON, its
RunInfo/RunParameters XML, its LIMS and samplesheet tables, its thirteen tool formats, its languages,
and the bracket the measurement needs: ``full_history`` answers nearly everything, ``none`` little.
"""

from __future__ import annotations

import json
import random
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest
import yaml  # PyYAML: OmegaConf, which the harness needs, depends on it

from aptmem.entries import ToolResult
from experiments.measurements.memory_quality.genomics import WORLD, build_genomics
from experiments.measurements.memory_quality.genomics_filler import TOOL_FORMATS, GenomicsFiller
from experiments.measurements.memory_quality.genomics_text import (AGGREGATES, KINDS, ORDER_EVENTS, ORDER_QUESTIONS,
                                                                   language_of)
from experiments.measurements.memory_quality.job import MemoryQualitySettings, run_memory_quality
from experiments.measurements.memory_quality.workload import Workload, WorkloadShape

SEEDS = (13, 200, 4242)
#: a larger shape, and seeds of it among which some plant a work directory in an environment file or a cartridge in
#: RunParameters (each a rare draw: a kind of twenty-one, a format of its four)
_LARGE = WorkloadShape(sessions=4, turns=30, facts=40, updates=8)
_LARGE_SEEDS = range(8)


def _results(workload: Workload, opens: str) -> dict[str, str]:
    """The tool outputs of ``workload`` that open with ``opens``, by entry id."""
    return {e.id or "": e.content for s in workload.sessions for e in s
            if isinstance(e, ToolResult) and e.content.startswith(opens)}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_multiqc_document_is_one_line_of_json_with_its_planted_members(seed: int) -> None:
    """A MultiQC document parses as one line of JSON, and a value planted in it is a member under its subject."""
    workload = build_genomics(WorkloadShape(), seed)
    documents = _results(workload, '{"report_creation_date":')
    assert documents, f"seed {seed}: no MultiQC document was read"
    for content in documents.values():
        assert "\n" not in content, "a MultiQC document is minified"
        json.loads(content)
    planted = [i for i in workload.items if i.format == "multiqc"]
    for item in planted:
        members = [json.loads(documents[e]) for e in item.evidence if e in documents]
        sections = [m["report_general_stats_data"] for m in members]
        sections += [raw for m in members for raw in m["report_saved_raw_data"].values()]
        assert any(item.answers[0] in section.get(item.subject, {}).values() for section in sections), item.id


def test_some_multiqc_document_carries_a_planted_member_over_the_seeds() -> None:
    """The check above is not vacuous: the measurement's seeds plant values inside MultiQC JSON."""
    planted = [i for seed in (*SEEDS, 201, 202) for i in build_genomics(WorkloadShape(), seed).items if i.format == "multiqc"]
    assert len(planted) >= 2, planted


def test_runinfo_and_runparameters_parse_as_xml_and_a_cartridge_sits_below_its_run() -> None:
    planted = 0
    for seed in _LARGE_SEEDS:
        workload = build_genomics(_LARGE, seed)
        outputs = _results(workload, "==> RunInfo.xml <==")
        assert outputs, f"seed {seed}: no RunInfo.xml was read"
        for content in outputs.values():
            parts = content.split("==> RunParameters.xml <==")
            info = ET.fromstring(parts[0].removeprefix("==> RunInfo.xml <==").strip().removeprefix('<?xml version="1.0"?>'))
            assert info.tag == "RunInfo" and info.find("Run/Reads") is not None
            for block in parts[1:]:
                ET.fromstring(f"<all>{block}</all>")
        for item in (i for i in workload.items if i.type == "fact" and i.format == "runinfo"):
            planted += 1
            blocks = [b for e in item.evidence if e in outputs for b in outputs[e].split("==> RunParameters.xml <==")[1:]]
            runs = [p for b in blocks for p in ET.fromstring(f"<all>{b}</all>").iter("RunParameters")]
            assert any(p.findtext("RunId") == item.subject
                       and p.findtext("RfidsInfo/ReagentKitSerialBarcode") == item.answers[0] for p in runs), f"seed {seed} {item.id}"
    assert planted >= 2, f"{planted} cartridges planted in RunParameters over seeds {_LARGE_SEEDS}"


def test_a_nextflow_log_launches_one_pipeline_and_a_planted_command_opens_it() -> None:
    """Each Nextflow log has one launch line; a planted ``nextflow run`` is the log's first line and its pipeline the
    one launched (unless a planted launch line names its own)."""
    commands = 0
    for seed in _LARGE_SEEDS:
        for content in _results(build_genomics(_LARGE, seed), "").values():
            lines = content.splitlines()
            if not any(line.startswith("N E X T F L O W") for line in lines):
                continue
            launches = [line for line in lines if line.startswith("Launching `")]
            assert len(launches) == 1, content
            if lines[0].startswith("$ nextflow run "):
                commands += 1
                head = [line for line in lines if line.startswith("$ nextflow run ")]
                assert lines[: len(head)] == head, content
                assert "revision: main" not in launches[0] or f"`{head[0].split()[3]}`" in launches[0], content
            assert not any(line.startswith("nextflow run ") for line in lines), content
    assert commands >= 2, f"{commands} planted command lines over seeds {_LARGE_SEEDS}"


def test_the_lims_export_and_the_samplesheet_keep_their_columns() -> None:
    """Every LIMS row has the header's four tab-separated fields, every samplesheet data row the header's five columns."""
    workload = build_genomics(WorkloadShape(sessions=4, turns=30, facts=40), 200)
    lims = _results(workload, "entity\tattribute\tvalue\tstate")
    sheets = _results(workload, "[Header]")
    assert lims and sheets
    for content in lims.values():
        assert all(len(line.split("\t")) == 4 for line in content.splitlines()), content
    for content in sheets.values():
        rows = content.split("Lane,Sample_ID,index,index2,Sample_Project\n", 1)[1].splitlines()
        assert rows and all(len(row.split(",")) == 5 for row in rows), rows


def test_the_conda_environment_is_yaml_with_its_planted_variables() -> None:
    """An environment file parses as YAML (a planted work directory is a variable of it) and keeps its dependency list."""
    planted = 0
    for seed in _LARGE_SEEDS:
        workload = build_genomics(_LARGE, seed)
        envs = _results(workload, "name: ")
        assert envs, f"seed {seed}: no environment file was read"
        for content in envs.values():
            doc = yaml.safe_load(content)
            assert doc["channels"] == ["conda-forge", "bioconda"] and doc["dependencies"], content
        for item in (i for i in workload.items if i.kind == "gn_work_dir" and i.format == "condayaml"):
            planted += 1
            docs = [yaml.safe_load(envs[e]) for e in item.evidence if e in envs]
            assert any(d.get("variables", {}).get("NXF_WORK") == item.answers[0] for d in docs), f"seed {seed} {item.id}"
    assert planted >= 2, f"{planted} work directories planted in environment files over seeds {_LARGE_SEEDS}"


def test_the_tool_formats_are_the_core_facilitys() -> None:
    """Every format a kind or set is said in by a tool is one the filler writes, and they use at least eleven of the thirteen."""
    used = {fmt for kind in KINDS for carrier, fmt, _ in kind.said if carrier == "tool"}
    used |= {fmt for spec in AGGREGATES for carrier, fmt, _ in spec[2] if carrier == "tool"}
    used |= {fmt for _, (carrier, fmt, _) in ORDER_EVENTS if carrier == "tool"}
    assert used <= set(TOOL_FORMATS) and len(used) >= 11, sorted(used)
    assert tuple(WORLD.tool_formats) == TOOL_FORMATS
    filler = GenomicsFiller(random.Random(3))
    for fmt in TOOL_FORMATS:  # each writes output of about the size asked (a MultiQC library drawn twice merges)
        name, _, blocks = filler.tool(fmt, 3000)
        assert name and 2400 <= len(filler.assemble(fmt, blocks)) < 9000, fmt


def test_the_languages_are_told_apart() -> None:
    """English templates never read as Italian (the Italian markers are words no English template uses), and each
    kind is said in at least two of the three languages."""
    english = [t for kind in KINDS for _, _, t in kind.said if language_of(t) == "english"]
    assert len(english) > 30
    assert language_of("Qual è la concentrazione della libreria X?") == "italian"
    assert language_of("Какой индекс i7 у образца X?") == "russian"
    assert language_of("Which tube barcode holds sample X?") == "english"
    for kind in KINDS:
        langs = {language_of(t) for _, _, t in kind.said} | {language_of(u) for u in kind.update}
        assert len(langs) >= 2, (kind.name, langs)
    assert language_of(ORDER_QUESTIONS[2]) == "russian"


def test_full_history_answers_nearly_everything_and_none_little(tmp_path: Path) -> None:
    """The bracket on a small shape at an 8k window: the oracle answers nearly every findable item within 1,024 tokens,
    keeping only the last turns answers far fewer."""
    shape = WorkloadShape(sessions=2, turns=8, facts=10, updates=2, aggregates=1, orders=1, absent=3, generator="genomics")
    settings = MemoryQualitySettings(strategies=["none", "full_history"], windows=[8000], seeds=[1], workload=shape)
    run_memory_quality(settings, tmp_path)
    summary = pl.read_parquet(tmp_path / "memory_summary.parquet")
    share = {row["strategy"]: row["mean"] for row in summary.filter(pl.col("metric") == "answerable_1024").iter_rows(named=True)}
    assert share["full_history"] >= 0.85, share
    assert share["none"] <= 0.5 and share["full_history"] - share["none"] >= 0.4, share
