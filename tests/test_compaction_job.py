"""The compaction job: fact retention scored right on a hand-made session, exact table schemas and
row counts on a tiny replay, and the report section rebuilt from the stored tables alone."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import polars as pl
import pytest
from omegaconf import OmegaConf

from aptmem.compaction.policy import CompactionPolicy
from aptmem.entries import Assistant, Entry, User
from aptmem.ids import new_session_id
from aptmem.jsonl_store import JsonlStore
from aptmem.tokens import get_estimator
from experiments.measurements.compaction.job import TABLES, run_compaction, workload_for
from experiments.measurements.compaction.settings import CompactionSettings
from experiments.measurements.compaction.replay import (COMPACTION_SCHEMA, FACT_CHECK_SCHEMA, FACT_SCHEMA, OCCUPANCY_SCHEMA,
                                           ObservedSession, replay_with_facts)
from experiments.measurements.compaction.report import compaction_section
from experiments.workloads.synthetic import WorkloadConfig, generate
from experiments.workloads.facts import PlantedFact

LABELS = {"window": pl.Int64, "tier": pl.String, "estimator": pl.String, "confirm": pl.String}
STAMP = {"persist": pl.String, "turns": pl.Int64, "seed": pl.Int64, "commit": pl.String, "machine": pl.String}
KEY_A, PORT_C, PATH_B = "dk_0123456789abcdef0123", "27182", "/srv/raven-api/etc/live-123.toml"


class KeepOnly:
    """A summarizer that keeps exactly one given text, whatever it is shown."""

    name = "keep-only"

    def __init__(self, text: str) -> None:
        self.text = text

    def summarize(self, entries: Sequence[Entry], *, previous: str | None, budget: int,
                  count: Callable[[str], int]) -> str:
        return self.text


def _fact(ident: str, answer: str, entry_id: str, carrier: str) -> PlantedFact:
    return PlantedFact(id=ident, kind=ident, lang="english", subject="raven", text=f"remember {answer}",
                       question="?", answer=answer, entry_id=entry_id, entry_type=carrier)


def _session(store: JsonlStore, summarizer: KeepOnly | None = None, window: int = 1000) -> ObservedSession:
    policy = CompactionPolicy(window=window, keep_turns=1)
    return ObservedSession(store, new_session_id(), policy=policy, estimator=get_estimator("rough"),
                           summarizer=summarizer)


def test_fact_retention_on_a_hand_made_session(tmp_path: Path) -> None:
    """Turn 0 holds facts A (user) and C (assistant); turn 1 holds B. The fourth append reaches the
    trigger (800 of 1,000 tokens), turn 1 is kept verbatim, turn 0 summarized by a summary that
    keeps only C's answer: A is lost at compaction 1, C lives on in the summary, B in a kept turn."""
    filler = "lorem ipsum dolor sit amet " * 46  # 1,242 ASCII characters: ~310 rough tokens
    entries = [
        User(ts=1, id="u0", content=f"The deploy key is {KEY_A}. {filler}"),
        Assistant(ts=2, id="a0", content=f"Port {PORT_C} it is. {filler}"),
        User(ts=3, id="u1", content=f"The config is at {PATH_B}."),
        Assistant(ts=4, id="a1", content=filler[:600]),
    ]
    facts = [_fact("A", KEY_A, "u0", "user"), _fact("B", PATH_B, "u1", "user"), _fact("C", PORT_C, "a0", "assistant")]
    with JsonlStore(tmp_path) as store:
        session = _session(store, KeepOnly(f"The port is {PORT_C}."))
        tables = replay_with_facts(entries, facts, session)
        context = session.context().text()
    assert tables.occupancy.schema == pl.Schema(OCCUPANCY_SCHEMA)
    assert tables.occupancy["compacted"].to_list() == [False, False, False, True]
    assert tables.occupancy["turn"].to_list() == [0, 0, 1, 1]
    assert tables.occupancy["entry_type"].to_list() == ["user", "assistant", "user", "assistant"]
    comp = tables.compaction.row(0, named=True)
    assert tables.compaction.height == 1 and comp["seq"] == 4 and comp["turn"] == 1
    assert (comp["summarized"], comp["kept_entries"], comp["kept_turns"]) == (2, 2, 1)
    assert comp["occupancy_before"] >= 0.8 and comp["occupancy_after"] <= 0.3 and not comp["over_target"]
    assert (comp["facts_planted"], comp["facts_live"], comp["split_tool_pairs"]) == (3, 2, 0)
    facts_table = {row["fact"]: row for row in tables.facts.iter_rows(named=True)}
    a, b, c = facts_table["A"], facts_table["B"], facts_table["C"]
    assert (a["retained_at_end"], a["where_at_end"], a["first_lost_at"], a["compactions_survived"]) == (False, "lost", 1, 0)
    assert (b["retained_at_end"], b["where_at_end"], b["first_lost_at"], b["compactions_survived"]) == (True, "kept", None, 1)
    assert (c["retained_at_end"], c["where_at_end"], c["first_lost_at"], c["compactions_survived"]) == (True, "summary", None, 1)
    assert (a["planted_seq"], b["planted_seq"], c["planted_seq"]) == (1, 3, 2)
    assert (a["planted_turn"], b["planted_turn"]) == (0, 1) and a["carrier"] == "user" and c["carrier"] == "assistant"
    assert tables.facts["answer_elsewhere"].to_list() == [0, 0, 0]
    assert tables.fact_checks.sort("fact").select("fact", "present", "in_summary", "in_kept").rows() == [
        ("A", False, False, False), ("B", True, False, True), ("C", True, True, False)]
    # the end state the scorer rebuilt is what the session really shows the model
    assert KEY_A not in context and PORT_C in context and PATH_B in context


def test_end_state_matches_the_sessions_context_on_a_generated_session(tmp_path: Path) -> None:
    """Several compactions, the extractive summarizer, shortened tool output: retained_at_end is
    exactly 'the answer is in the context the session would send'."""
    session = generate(turns=25, facts=10, seed=5)
    with JsonlStore(tmp_path) as store:
        observed = _session(store, window=3000)
        ticks: list[int] = []
        tables = replay_with_facts(session.entries, session.facts, observed, progress=ticks.append)
        context = observed.context().text()
    assert sum(ticks) == len(session.entries) == tables.occupancy.height
    assert tables.compaction.height >= 3 and tables.compaction.schema == pl.Schema(COMPACTION_SCHEMA)
    want = {f.id: f.answer in context for f in session.facts}
    assert dict(tables.facts.select("fact", "retained_at_end").rows()) == want
    assert tables.facts.schema == pl.Schema(FACT_SCHEMA) and tables.fact_checks.schema == pl.Schema(FACT_CHECK_SCHEMA)
    # every fact is checked once per compaction at or after the append that planted it
    for row in tables.facts.iter_rows(named=True):
        assert row["compactions_after"] == tables.compaction.filter(pl.col("seq") >= row["planted_seq"]).height


def test_a_fact_whose_carrier_is_missing_is_an_error(tmp_path: Path) -> None:
    with JsonlStore(tmp_path) as store, pytest.raises(ValueError, match="not among the entries"):
        replay_with_facts([User(ts=1, id="u0", content="hi")], [_fact("X", "x", "nope", "user")], _session(store))


TINY = CompactionSettings(windows=[3000, 1500], tiers=["medium", "rough:bytes"], turns=12, facts=5, seed=2)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, pl.DataFrame]]:
    """One tiny job run: 12 turns, windows 3,000 and 1,500, tiers medium and rough, in a module-wide folder."""
    out = tmp_path_factory.mktemp("compaction")
    scratch = tmp_path_factory.mktemp("scratch")
    tables = run_compaction(TINY, WorkloadConfig(seed=99), out, tmp=str(scratch))
    assert list(scratch.iterdir()) == []  # the scratch sessions are removed
    return out, tables


def test_tables_have_exact_schemas_and_row_counts(run) -> None:  # type: ignore[no-untyped-def]
    out, tables = run
    session = generate(workload_for(TINY, WorkloadConfig(seed=99)))
    assert session.config.seed == 2 and len(session.facts) == 5
    replays = len(TINY.windows) * len(TINY.tiers)
    for name, schema in (("occupancy", OCCUPANCY_SCHEMA), ("compaction", COMPACTION_SCHEMA), ("facts", FACT_SCHEMA),
                         ("fact_checks", FACT_CHECK_SCHEMA)):
        assert tables[name].schema == pl.Schema({**LABELS, **schema, **STAMP}), name
    occ = tables["occupancy"]
    assert occ.height == len(session.entries) * replays
    per = occ.group_by("window", "tier").agg(pl.len().alias("n"), pl.col("seq").max().alias("last"))
    assert per.height == replays and (per["n"] == len(session.entries)).all() and (per["last"] == per["n"]).all()
    notes = msgspec.json.decode((out / "compaction_notes.json").read_bytes())
    for replay in notes["replays"]:
        part = tables["compaction"].filter((pl.col("window") == replay["window"]) & (pl.col("tier") == replay["tier"]))
        assert part.height == replay["compactions"] == occ.filter(
            (pl.col("window") == replay["window"]) & (pl.col("tier") == replay["tier"]))["compacted"].sum()
        assert replay["entries"] == len(session.entries)
    assert tables["compaction"].height >= replays  # every replay compacts at these windows
    assert tables["facts"].height == len(session.facts) * replays
    assert tables["fact_checks"].height == tables["facts"]["compactions_after"].sum()
    assert set(tables["occupancy"]["confirm"]) == {"cl100k_base"} and (tables["facts"]["seed"] == 2).all()
    summary = tables["compaction_summary"]
    assert summary.height == replays and (summary["facts"] == 5).all()
    assert summary["max_occupancy"].max() <= 0.8 and (summary["split_tool_pairs"] == 0).all()
    assert set(tables["fact_retention"]["by"]) == {"kind", "lang", "carrier"}
    for name in TABLES:
        assert pl.read_parquet(out / f"{name}.parquet").equals(tables[name]), name
        assert pl.read_csv(out / f"{name}.csv").height == tables[name].height, name


def test_section_rebuilds_from_stored_tables_alone(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    out, _ = run
    bare = tmp_path / "bare"
    bare.mkdir()
    for name in ("occupancy", "compaction", "facts", "fact_checks"):  # the raw tables and the notes, nothing else
        shutil.copy(out / f"{name}.parquet", bare)
    shutil.copy(out / "compaction_notes.json", bare)
    text = compaction_section(bare)
    assert text is not None and text.startswith("## Compaction: context occupancy and fact retention")
    assert "| 3,000 | medium |" in text and "| 1,500 | rough:bytes |" in text and "By fact kind" in text
    for png in ("compaction_occupancy.png", "fact_retention.png"):
        assert (bare / "figures" / png).stat().st_size > 10_000
        assert f"(figures/{png})" in text
    shutil.rmtree(bare / "figures")
    assert compaction_section(bare) == text
    assert (bare / "figures" / "compaction_occupancy.png").exists()
    assert compaction_section(tmp_path / "nothing-here") is None


def test_settings_are_a_hydra_schema() -> None:
    cfg = OmegaConf.structured(CompactionSettings)
    cfg.windows = [128000, 32000, 8000]
    cfg.confirm = None
    settings = OmegaConf.to_object(cfg)
    assert isinstance(settings, CompactionSettings) and settings.windows == [128000, 32000, 8000]
    assert settings.confirm is None and settings.seed is None
    with pytest.raises(Exception):
        cfg.windowz = [1]


@pytest.mark.parametrize("bad", [dict(windows=[100]), dict(windows=[]), dict(trigger=0.2), dict(persist="mail"),
                                 dict(tiers=["fast"]), dict(keep_turns=0)])
def test_bad_settings_fail_early(bad: dict) -> None:
    with pytest.raises(ValueError):
        CompactionSettings(**bad)
