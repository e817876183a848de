"""The keyword query scores every record holding a question term; the packet leaves a summary's restatements to their history."""

from __future__ import annotations

from pathlib import Path

import pytest

from aptmem.continuation import create_session
from aptmem.entries import User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall import open_index, pack
from aptmem.recall.api import statement
from aptmem.recall.records import Hit


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history that names ``orchid`` everywhere; ``servers`` only about other services; one statement of where orchid runs."""
    root = tmp_path_factory.mktemp("query") / "sessions"
    chores = ["the rollout looks fine", "the canary step took longer", "the cache warmed up slowly",
              "the shard rebalance finished", "the probe went green again"]
    with JsonlStore(root) as store:
        sid = create_session(store, root, title="ops")
        # 200 records: a term is common when more than 4 hold it (COMMON_SHARE); orchid is in 11.
        names = ["orchid" if n % 19 == 0 else f"svc{n}" for n in range(196)]
        entries = [User(content=f"{name}: {chores[n % len(chores)]} on attempt {n}", ts=n + 1) for n, name in enumerate(names)]
        entries += [User(content=f"the {name} servers were rebooted last night", ts=300 + n)
                    for n, name in enumerate(["basalt", "kiwi", "marmot"])]
        entries.append(User(content="orchid moved off eu-north-1; it lives in ap-south-4 going forward.", ts=400,
                            id="u-region"))
        store.append_many(sid, entries)
    return root


def test_a_statement_sharing_only_a_common_subject_is_found(root: Path) -> None:
    # "servers" is rare and "orchid" common: a query restricted to the rare term's records (the
    # other services' reboots) would never score the statement, which shares only the subject.
    index = open_index(root)
    try:
        index.refresh()
        hits = index.search("Where are the servers of orchid?", k=20)
        assert "u-region" in [h.entry_id for h in hits]
    finally:
        index.close()
        index.store.close()


def _hit(entry: str, kind: str, ts: int, text: str) -> Hit:
    return Hit(session_id="s", entry_id=entry, level="l3", kind=kind, score=1.0, ts=ts, text=text, doc_id=ts)  # type: ignore[arg-type]


def test_a_summary_line_restating_history_is_left_to_the_history() -> None:
    old = _hit("old", "chunk", 100, "Throttle copper at 6750 requests per minute per tenant.")
    new = _hit("new", "chunk", 200, "Raise the copper limit to 3500 per minute (was 6750).")
    # Written later, a rolling summary carries the old statement forward, and one of its own.
    summary = _hit("sum", "summary", 300, "Facts:\n- Throttle copper at 6750 requests per minute per tenant.\n"
                   "- The copper dashboards moved to the shared folder.")
    text = pack("copper requests per minute limit", [summary, old, new], 1024).text
    assert text.count("Throttle copper at 6750") == 1
    assert text.index("Throttle copper at 6750") < text.index("Raise the copper limit to 3500")
    assert "dashboards moved" in text


def test_statement_ignores_marks_markers_and_spacing() -> None:
    assert statement("… - Throttle  copper at 6750") == statement("Throttle copper at 6750") == "throttle copper at 6750"
    assert statement("> > 1. Run it") == "run it"


@pytest.fixture(scope="module")
def sessions_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A history naming ``heron`` in most entries and ``quota`` in a few, and one session titled for heron alone."""
    root = tmp_path_factory.mktemp("pruned") / "sessions"
    with JsonlStore(root) as store:
        sid = create_session(store, root, title="ops")
        # 120 records: heron is in 2 of 3 (broad, above BROAD_SHARE), quota in 3 (narrow).
        entries = [User(content=f"{'heron' if n % 3 else f'svc{n}'} step {n} went fine", ts=n + 1) for n in range(117)]
        entries += [User(content=f"the {name} quota was raised", ts=200 + n) for n, name in enumerate(["basalt", "kiwi", "marmot"])]
        store.append_many(sid, entries)
        other = create_session(store, root, title="heron cutover")
        store.append_many(other, [User(content="we start now", ts=500)])
    return root


def test_a_pruned_query_that_leaves_too_few_records_is_widened(sessions_root: Path) -> None:
    # The narrow term (quota) is held by L3 records only: pruned to its records, an L2 search
    # would score nothing, though a session record names the question's subject.
    index = open_index(sessions_root)
    try:
        index.refresh()
        hits = index.search("What quota does heron have?", k=5, level="l2")
        assert any("heron cutover" in h.text for h in hits)
        # Over the whole index the narrow term's records are enough: the pruned query ranks them first.
        assert {h.text for h in index.search("What quota does heron have?", k=3)} >= {"the kiwi quota was raised"}
    finally:
        index.close()
        index.store.close()
