"""The recall memory strategies (aptmem/memory/recall.py) in real sessions, and their scoring in memory_quality."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from aptmem.compaction.policy import CompactionPolicy
from aptmem.continuation import create_session
from aptmem.entries import Assistant, ToolCall, ToolResult, User
from aptmem.jsonl_store import JsonlStore
from aptmem.memory.handoff import continue_with_memory
from aptmem.memory.recall import STATE_KEY, RecallMemory
from aptmem.memory.registry import memory_strategy
from aptmem.session import Session
from aptmem.tokens import get_estimator
from aptmem.working_memory import WorkingMemory
from experiments.measurements.memory_quality.recall_section import recall_lines
from experiments.measurements.memory_quality.job import run_memory_quality
from experiments.measurements.memory_quality.settings import MemoryQualitySettings
from experiments.measurements.memory_quality.workload import WorkloadShape

MEDIUM = get_estimator("medium")
FACT = "The deploy key for atlas-rpc is dk_5f1e0c9a7b3d2e41."


def _turn(i: int, fact: str = "") -> list:
    filler = " ".join(f"line {i}.{k} of the build log mentions nothing worth keeping" for k in range(60))
    return [User(ts=10_000 * i, id=f"u{i}", content=f"Please look at step {i} of the rollout."),
            ToolCall(ts=10_000 * i + 1, id=f"c{i}", name="bash", args={"command": "make"}),
            ToolResult(ts=10_000 * i + 2, id=f"r{i}", call_id=f"c{i}", name="bash", content=filler),
            Assistant(ts=10_000 * i + 3, id=f"a{i}", content=f"Done with step {i}. {fact}".strip())]


def _open(store: JsonlStore, root: Path, sid: str, strategy: RecallMemory, window: int = 4000) -> Session:
    return Session(store, sid, policy=CompactionPolicy(window=window), estimator=MEDIUM,
                   memory=WorkingMemory(root, sid), memory_strategy=strategy)


@pytest.mark.parametrize("name", ["l2_sessions", "l3_keyword", "l3_keyword_facts"])
def test_a_fact_compacted_out_and_handed_over_is_recalled_for_its_question(name: str, tmp_path: Path) -> None:
    strategy = memory_strategy(name)
    assert isinstance(strategy, RecallMemory)
    with JsonlStore(tmp_path) as store:
        sid = create_session(store, tmp_path)
        session = _open(store, tmp_path, sid, strategy)
        for i in range(14):
            for entry in _turn(i, FACT if i == 0 else ""):
                session.append(entry)
        question = "What is the deploy key for atlas-rpc?"
        live = "\n".join(m.text for m in session.context().rendered.messages)
        assert "dk_5f1e0c9a7b3d2e41" not in live, "the fact left the live context"
        if name != "l2_sessions":  # within the session, only L3 holds what a compaction took out
            assert "dk_5f1e0c9a7b3d2e41" in session.context(question).rendered.system_text
        new = continue_with_memory(strategy, store, tmp_path, sid, policy=session.policy, count=MEDIUM.count)
        following = _open(store, tmp_path, new, strategy)
        following.append(User(ts=10**9, id="u-next", content="Something unrelated about the logo colours."))
        system = following.context(question).rendered.system_text
        assert "dk_5f1e0c9a7b3d2e41" in system
        assert f"session {sid}" in system, "evidence names the session it came from"
        state = WorkingMemory(tmp_path, new).get(STATE_KEY)
        assert state["session"] == new and state["root"] == str(tmp_path.resolve())
    strategy.close()


def test_the_current_sessions_live_entries_are_not_recalled_twice(tmp_path: Path) -> None:
    strategy = memory_strategy("l3_keyword")
    with JsonlStore(tmp_path) as store:
        sid = create_session(store, tmp_path)
        session = _open(store, tmp_path, sid, strategy, window=64_000)
        for i in range(3):
            for entry in _turn(i, FACT if i == 2 else ""):
                session.append(entry)
        WorkingMemory(tmp_path, sid).set(STATE_KEY, {"root": str(tmp_path), "session": sid, "until": 0})
        # Everything is in context: nothing of this session may come back as recalled evidence.
        assert "Recalled for" not in session.context("What is the deploy key for atlas-rpc?").rendered.system_text
    strategy.close()


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="level"):
        RecallMemory(name="x", level="l4")
    with pytest.raises(ValueError, match="facts=True"):
        RecallMemory(name="x", l3="facts")
    with pytest.raises(ValueError, match="budget"):
        RecallMemory(name="x", budget=10)


def test_memory_quality_scores_recall_strategies_and_reports_them(tmp_path: Path) -> None:
    shape = WorkloadShape(sessions=2, turns=8, facts=10, updates=2, aggregates=1, orders=1, absent=3)
    settings = MemoryQualitySettings(strategies=["none", "l3_keyword"], windows=[8000, 32000], seeds=[1], workload=shape)
    tables = run_memory_quality(settings, tmp_path)
    questions, runs = tables["memory_recall"], tables["memory_recall_runs"]
    assert set(questions["strategy"]) == {"l3_keyword"} and runs.height == 2
    items = tables["memory_items"]
    assert questions.height == 2 * 3 * items.height
    template = questions.filter((pl.col("wording") == "template") & (pl.col("type") == "fact"))
    assert template["entry_recall@10"].mean() >= 0.8, "template questions find their evidence"
    assert (runs["records"] > 0).all() and (runs["bytes"] > 0).all() and (runs["query_p50_ms"] > 0).all()
    summary = tables["memory_summary"].filter(pl.col("metric") == "answerable_1024")
    mean = dict(zip(summary["strategy"] + "@" + summary["window"].cast(pl.String), summary["mean"]))
    assert mean["l3_keyword@8000"] > mean["none@8000"], "recall brings back what compaction dropped"
    text = "\n".join(recall_lines(tmp_path))
    assert "Recall strategies" in text and "l3_keyword" in text and "flat across windows" in text


def test_coverage_abstains_on_a_question_whose_relation_was_never_said() -> None:
    from aptmem.recall.abstain import abstain, best_coverage, coverage
    from aptmem.recall.records import Hit

    said = Hit(session_id="s", entry_id="e", level="l3", kind="chunk", score=3.0,
               text="The health check endpoint of iris-worker is /healthz.")
    assert coverage("What is the health check endpoint of iris-worker?", said.text) == 1.0
    absent = "What is the metrics scrape endpoint of iris-worker?"
    assert 0 < best_coverage(absent, [said]) < 1
    assert abstain(absent, [said], 0.9) == [] and abstain(absent, [said], 0.0) == [said]
    assert abstain("What is the health check endpoint of iris-worker?", [said], 0.9) == [said]
