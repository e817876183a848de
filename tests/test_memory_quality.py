"""The memory-quality measurement: its workload, its scorer, and a small run end to end (tables and section)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import polars as pl
import pytest

from aptmem.entries import encode_line
from aptmem.tokens import render_entry
from experiments.measurements.memory_quality.job import MemoryQualitySettings, run_memory_quality
from experiments.core.knowledge import Judged, Unit, judge, packet, units
from experiments.measurements.memory_quality.report import memory_section, targets
from experiments.measurements.memory_quality.tables import (ANSWER_SCHEMA, CHECK_SCHEMA, ITEM_SCHEMA, PLANT_SCHEMA, RUN_SCHEMA,
                                                             TABLES)
from experiments.measurements.memory_quality.workload import WorkloadShape, build_workload

SMALL = WorkloadShape(sessions=2, turns=8, facts=10, updates=2, aggregates=1, orders=1, absent=3)


@pytest.mark.parametrize("split", ["dev", "heldout"])
def test_the_workload_is_seeded_and_every_answer_is_found_only_in_its_evidence(split: str) -> None:
    shape = WorkloadShape(split=split)
    one, two = build_workload(shape, 7), build_workload(shape, 7)
    assert [b"".join(map(encode_line, s)) for s in one.sessions] == [b"".join(map(encode_line, s)) for s in two.sessions]
    assert one.items == two.items
    texts = {e.id: render_entry(e) for s in one.sessions for e in s}
    everything = "\n".join(texts.values())
    types = {item.type for item in one.items}
    assert types == {"fact", "update", "update_before", "aggregate", "order", "absent"}, f"seed 7: {types}"
    for item in one.items:
        for answer in item.answers:
            evidence = "\n".join(texts[e] for e in item.evidence)
            assert everything.count(answer) == evidence.count(answer) > 0, f"seed 7 {item.id}: {answer!r}"
    facts = [i for i in one.items if i.type == "fact"]
    assert {"json", "log", "prose"} <= {i.format for i in facts}
    assert {"user", "tool"} <= {i.carrier for i in facts}
    assert {"english", "chinese"} <= {i.lang for i in facts}
    assert all(len(set(i.questions)) == 3 for i in one.items)


def test_held_out_phrasings_are_not_the_development_ones() -> None:
    dev, held = build_workload(WorkloadShape(split="dev"), 3), build_workload(WorkloadShape(split="heldout"), 3)
    assert {i.kind for i in held.items} - {i.kind for i in dev.items}, "held-out kinds exist only there"
    from experiments.measurements.memory_quality.kinds import KINDS

    for kind in KINDS:
        assert not set(kind.dev.prose) & set(kind.heldout.prose), kind.name


def _units(*texts: str) -> list[Unit]:
    return units([("user", "\n".join(texts))])


def test_the_scorer_judges_updates_order_and_absent_facts_on_reading_order() -> None:
    update = Judged(type="update", subject="svc", answers=("40001",), stale="31234")
    assert judge(update, _units("svc is on 31234", "svc moved to 40001"))
    assert not judge(update, _units("svc moved to 40001", "svc is on 31234")), "the stale value comes last"
    assert judge(update, _units("svc is on 31234", "svc: 40001 (before: 31234)"))
    assert not judge(update, _units("svc is on 31234"))
    order = Judged(type="order", subject="", answers=("v1.2.3", "sk_1"))
    assert judge(order, _units("rolled back to v1.2.3", "new key sk_1"))
    assert not judge(order, _units("new key sk_1", "rolled back to v1.2.3"))
    absent = Judged(type="absent", subject="atlas-rpc", answers=(), pattern=r"\b\d{5}\b")
    assert judge(absent, _units("atlas-api listens on 31234", "atlas-rpc has an endpoint"))
    assert not judge(absent, _units("atlas-rpc listens on 31234"))


def test_a_packet_takes_the_best_ranked_units_that_fit_the_budget() -> None:
    parts = _units("a " * 10, "b " * 100, "c " * 10)
    chosen = packet([1, 0, 2], parts, 30, lambda i: len(parts[i].text.split()))
    assert [u.position for u in chosen] == [0, 2], "the unit over the budget is skipped, the next one taken"
    assert len(packet([1, 0, 2], parts, None, lambda i: 1)) == 3


def test_a_unit_carries_its_heading_and_the_reader_finds_the_line_by_it() -> None:
    from aptmem.memory.lexical import Ranker
    from experiments.core.knowledge import searched

    yaml = "deploy:\n  orchid:\n    replicas: 3\n    image_tag: 4.1.0\n  basalt:\n    image_tag: 9.9.9"
    parts = units([("user", "what runs where?"), ("tool", yaml)])
    line = next(u for u in parts if u.text == "image_tag: 4.1.0")
    assert (line.message, line.context) == (1, "deploy: › orchid:") and line.shown == "deploy: › orchid: › image_tag: 4.1.0"
    with Ranker([searched(u) for u in parts]) as ranker:
        assert parts[ranker.rank("image tag of orchid?")[0]] == line
    assert judge(Judged(type="fact", subject="orchid", answers=("4.1.0",)), [line])


def test_a_packet_takes_a_line_once_and_one_row_per_message_before_the_rest() -> None:
    rows = "\n".join(f"kiwi-{i:05d}   1/1   Running" for i in range(20))
    parts = units([("tool", rows), ("user", "kiwi belongs to Ingrid"), ("tool", "kiwi 1/1"), ("tool", "kiwi 1/1")])
    ranked = list(range(len(parts)))  # the rows first, as BM25 ranks short lines that name the subject
    chosen = packet(ranked, parts, 12, lambda i: 2, "who owns kiwi?")
    texts = [u.text for u in chosen]
    assert "kiwi belongs to Ingrid" in texts and texts.count("kiwi 1/1") == 1, texts
    assert texts[0] == "kiwi-00000   1/1   Running" and sum("Running" in t for t in texts) == 12 // 2 - 2, texts
    assert len(packet(ranked, parts, None, lambda i: 2, "who owns kiwi?")) == len(parts), "no budget: every unit"


def test_a_long_line_is_cut_into_units_and_nothing_is_lost() -> None:
    line = ",".join(f'{{"id":{i},"name":"n{i}"}}' for i in range(200))
    parts = units([("tool", line)])
    assert len(parts) > 5 and "".join(u.text for u in parts) == line


@pytest.fixture(scope="module")
def small_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("memory")
    settings = MemoryQualitySettings(strategies=["none", "full_history", "salient", "kv_dict"], windows=[8000], seeds=[1, 2],
                                     workload=SMALL)
    run_memory_quality(settings, out)
    return out


def test_a_small_run_writes_every_table_with_its_schema(small_run: Path) -> None:
    for name in TABLES:
        assert (small_run / f"{name}.parquet").exists() and (small_run / f"{name}.csv").exists()
    for name, schema in (("memory_items", ITEM_SCHEMA), ("memory_checks", CHECK_SCHEMA), ("memory_answers", ANSWER_SCHEMA),
                         ("memory_runs", RUN_SCHEMA)):
        table = pl.read_parquet(small_run / f"{name}.parquet")
        assert dict(table.schema) == schema and table.height > 0
    runs = pl.read_parquet(small_run / "memory_runs.parquet")
    assert runs.height == 4 * 2 and (runs.filter(pl.col("strategy") == "full_history")["compactions"] == 0).all()


def test_none_and_full_history_bracket_the_others_and_the_section_says_so(small_run: Path) -> None:
    summary = pl.read_parquet(small_run / "memory_summary.parquet")
    def shares(metric: str) -> dict[str, float]:
        return {r["strategy"]: r["mean"] for r in summary.filter(pl.col("metric") == metric).iter_rows(named=True)}
    # The oracle bounds what the context holds (the whole rendering); within a 1,024-token packet a distilled memory
    # may beat it (the reader's packet out of the whole history can take a near miss first), so there none is the floor.
    whole, packet_1024 = shares("answerable_all"), shares("answerable_1024")
    for name in ("salient", "kv_dict"):
        assert whole["none"] <= whole[name] <= whole["full_history"], (name, whole)
        assert packet_1024["none"] <= packet_1024[name], (name, packet_1024)
    bracket = targets(summary).filter(pl.col("target").str.contains("bracket"))
    assert bracket["met"].to_list() == [True, True, True]  # present at the end, answerable and updates right from the whole rendering
    text = memory_section(small_run)
    assert text.startswith("## Memory: what the agent still knows") and "memory_frontier.png" in text
    assert "](figures/memory_frontier.png)" in text and (small_run / "figures" / "memory_frontier.png").stat().st_size > 10_000
    plants = pl.read_parquet(small_run / "memory_plants.parquet")
    assert dict(plants.schema) == PLANT_SCHEMA and plants.height > 0 and "end" not in plants["at"].to_list()
    # every plant is scored once, at the first compaction or hand-over after it: never before it was appended
    assert plants.group_by("strategy", "window", "seed", "item", "evidence").len()["len"].max() == 1
    at = pl.read_parquet(small_run / "memory_checks.parquet").select("strategy", "window", "seed", "checkpoint",
                                                                      pl.col("seq").alias("at_seq")).unique()
    scored = plants.join(at, on=["strategy", "window", "seed", "checkpoint"])
    assert scored.height > 0 and scored.filter(pl.col("at_seq") < pl.col("seq")).height == 0
    for strategy in ("none", "full_history", "salient", "kv_dict"):
        assert f"| {strategy} |" in text


def test_the_independent_generator_is_seeded_unambiguous_and_shares_no_phrasing_with_the_planted_one() -> None:
    from experiments.measurements.memory_quality.independent import _KINDS, build_independent
    from experiments.measurements.memory_quality.kinds import KINDS

    shape = WorkloadShape(sessions=2, turns=8, facts=12, updates=3)
    one, two = build_independent(shape, 5), build_independent(shape, 5)
    assert [b"".join(map(encode_line, s)) for s in one.sessions] == [b"".join(map(encode_line, s)) for s in two.sessions]
    texts = {e.id: render_entry(e) for s in one.sessions for e in s}
    everything = "\n".join(texts.values())
    assert {i.type for i in one.items} == {"fact", "update", "update_before"}, "seed 5"
    for item in one.items:
        evidence = "\n".join(texts[e] for e in item.evidence)
        assert all(everything.count(a) == evidence.count(a) > 0 for a in item.answers), f"seed 5 {item.id}"
    planted = {t for kind in KINDS for said in (kind.dev, kind.heldout)
               for t in (*said.prose, *said.update, *said.comment, *said.log)}
    mine = {t for kind in _KINDS for t in (*(said[2] for said in kind.said), *kind.update)}
    assert not planted & mine


def _phrasings(module: object) -> set[str]:
    """Every statement and update template of a generator written apart (its ``_KINDS``)."""
    return {t for kind in module._KINDS for t in (*(x[2] for x in kind.said), *kind.update)}  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "seed"), [("fieldnotes", 7), ("tracker", 11)])
def test_a_held_out_generator_is_seeded_unambiguous_registered_and_shares_no_phrasing_or_kind_with_the_others(
        name: str, seed: int) -> None:
    import importlib

    from experiments.measurements.memory_quality.generators import GENERATORS
    from experiments.measurements.memory_quality.kinds import KINDS

    module = importlib.import_module(f"experiments.measurements.memory_quality.{name}")
    others = [importlib.import_module(f"experiments.measurements.memory_quality.{m}")
              for m in ("independent", "fieldnotes", "tracker", "pairing") if m != name]
    build = GENERATORS[name]
    shape = WorkloadShape(sessions=2, turns=8, facts=12, updates=3)
    one, two = build(shape, seed), build(shape, seed)
    assert [b"".join(map(encode_line, s)) for s in one.sessions] == [b"".join(map(encode_line, s)) for s in two.sessions]
    texts = {e.id: render_entry(e) for s in one.sessions for e in s}
    everything = "\n".join(texts.values())
    assert one.items and {i.type for i in one.items} <= {"fact", "update", "update_before"}, f"seed {seed}"
    for item in one.items:
        evidence = "\n".join(texts[e] for e in item.evidence)
        assert all(everything.count(a) == evidence.count(a) > 0 for a in item.answers), f"seed {seed} {item.id}"
    planted = {t for kind in KINDS for w in (kind.dev, kind.heldout) for t in (*w.prose, *w.update, *w.comment, *w.log)}
    assert not _phrasings(module) & planted and not any(_phrasings(module) & _phrasings(m) for m in others)
    names = {k.name for k in KINDS} | {k.name for m in others for k in m._KINDS}
    assert not {k.name for k in module._KINDS} & names


class _EchoApi(BaseHTTPRequestHandler):
    """An OpenAI-compatible chat endpoint on 127.0.0.1 whose 'summary' is the prompt's lines that hold a digit."""

    def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        lines = [line for line in body["messages"][-1]["content"].splitlines() if any(c.isdigit() for c in line)]
        reply = json.dumps({"choices": [{"message": {"content": "\n".join(f"- {line[:120]}" for line in lines[-30:])}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(reply.encode())

    def log_message(self, *args: object) -> None:
        """Quiet."""


def test_the_llm_summarizer_is_scored_only_when_an_endpoint_is_configured(tmp_path: Path) -> None:
    plain = MemoryQualitySettings(strategies=["none", "llm"], windows=[8000], seeds=[1], workload=SMALL)
    run_memory_quality(plain, tmp_path / "without")
    runs = pl.read_parquet(tmp_path / "without" / "memory_runs.parquet")
    assert runs["strategy"].to_list() == ["none"] and "llm left out" in memory_section(tmp_path / "without")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _EchoApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with_llm = MemoryQualitySettings(strategies=["llm"], windows=[8000], seeds=[1], workload=SMALL, llm_model="test",
                                         llm_base_url=f"http://127.0.0.1:{server.server_port}/v1")
        run_memory_quality(with_llm, tmp_path / "with")
    finally:
        server.shutdown()
    runs = pl.read_parquet(tmp_path / "with" / "memory_runs.parquet")
    assert runs["strategy"].to_list() == ["llm"] and runs["compactions"][0] > 0


def test_budget_figures_are_means_and_shares_over_a_runs_compactions() -> None:
    from experiments.measurements.memory_quality.replay import BUDGET_FIGURES, CompactionBudget, budget_figures

    assert budget_figures([]) == dict.fromkeys(BUDGET_FIGURES)
    figures = budget_figures([CompactionBudget(fixed=0, summary=0, kept=900, kept_turns=2, shortened=0, floored=False),
                              CompactionBudget(fixed=300, summary=600, kept=500, kept_turns=1, shortened=2, floored=True)])
    assert figures == {"post_fixed_tokens": 150, "post_summary_tokens": 300, "post_kept_tokens": 700, "post_kept_turns": 1.5,
                       "shortened_share": 0.5, "floored_share": 0.5, "memory_empty_share": 0.5}


def test_the_run_says_where_the_context_went_after_each_compaction(small_run: Path) -> None:
    runs = pl.read_parquet(small_run / "memory_runs.parquet")
    by = {r["strategy"]: r for r in runs.filter(pl.col("seed") == 1).iter_rows(named=True)}
    assert by["full_history"]["post_kept_tokens"] is None  # it never compacts
    target = 8000 * 0.3
    for name in ("none", "salient", "kv_dict"):
        row = by[name]
        assert row["compactions"] > 0
        # right after a compaction the parts add up to the context, which is at most about the target
        parts = row["post_fixed_tokens"] + row["post_summary_tokens"] + row["post_kept_tokens"]
        assert 0 < parts <= target * 1.1 and row["post_kept_turns"] >= 1
    assert by["none"]["memory_empty_share"] == 1 and by["none"]["floored_share"] == 0  # no memory, no floor for it
    assert by["salient"]["post_summary_tokens"] > 0 and by["salient"]["memory_empty_share"] == 0
    assert by["kv_dict"]["post_fixed_tokens"] > 0  # its facts are rendered beside the history
    assert "### Where the context goes right after a compaction" in memory_section(small_run)
