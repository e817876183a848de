"""The keyword engine's coverage rerank (aptmem/recall/rerank.py)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.continuation import create_session
from aptmem.entries import ToolCall, User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall.analyze import index_tokens
from aptmem.recall.api import open_index
from aptmem.recall.engines import fts
from aptmem.recall.rerank import RERANK_DEPTH, RESTATED_PENALTY, concepts, covered, passages, rerank, weighted_coverage


def test_a_concept_is_covered_by_a_synonym_an_inflection_or_all_bigrams_of_a_chinese_word() -> None:
    asked = concepts("need the sha that sorted out the double charge on kestrel-api")
    statement = index_tokens("commit 3f9a2b1c0d fixed the double charge in kestrel-api")
    # sha (by commit), sorted (by fixed), double, charge, kestrel, api, kestrelapi; "need" and "out" are not there
    assert len(asked) == 9 and covered(asked, statement) == 7
    assert covered(asked, index_tokens("kestrel-api double charge alert fired")) == 5
    assert covered(concepts("which endpoints"), index_tokens("the endpoint is /healthz")) == 1
    # A Chinese word of the lexicon is one concept (with its group's words), covered by an English synonym.
    zh = concepts("kestrel-api 的健康检查接口是什么")
    assert covered(zh, index_tokens("the health endpoint of kestrel-api")) == len(zh)
    assert covered(zh, index_tokens("kestrel-api 的检查")) < len(zh)  # 检查 alone is not 健康检查


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_rerank_reorders_only_the_head_and_keeps_scores_falling(seed: int) -> None:
    rng = random.Random(seed)
    words = ["kestrel", "api", "commit", "fixed", "double", "charge", "cache", "queue"]
    n = rng.randint(2, 2 * RERANK_DEPTH)
    scores = sorted((rng.uniform(0.1, 9.0) for _ in range(n)), reverse=True)
    ranked = list(enumerate(scores))
    bodies = {i: " ".join(rng.sample(words, rng.randint(0, len(words)))) for i in range(n)}
    out = rerank("which commit fixed the double charge on kestrel-api", ranked, bodies)
    assert sorted(i for i, _ in out) == list(range(n)), seed
    assert [s for _, s in out] == sorted((s for _, s in out), reverse=True), seed
    assert [i for i, _ in out[RERANK_DEPTH:]] == [i for i, _ in ranked[RERANK_DEPTH:]], seed
    cover = [weighted_coverage("which commit fixed the double charge on kestrel-api", bodies[i]) for i, _ in out[:RERANK_DEPTH]]
    assert cover == sorted(cover, reverse=True), seed


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    with JsonlStore(root) as store:
        other = create_session(store, root, title="chores")  # so that the subject is a rare term
        store.append_many(other, [User(content=f"shard {n} of the {w} cluster rebalanced", ts=1)
                                  for n in range(400) for w in ("cache", "queue")])
        sid = create_session(store, root, title="kestrel-api billing")
        store.append_many(sid, [
            User(content="commit 3f9a2b1c0d fixed the double charge in kestrel-api after the retry storm of last week, "
                         "with a test that charges twice and expects one ledger row", ts=3, id="u-fix"),
            # Short records that name the subject and the symptom, not the change: BM25 likes them.
            *(ToolCall(name="bash", args={"cmd": f"grep 'double charge' kestrel-api.log | tail -{n}"}, ts=5 + n, id=f"c{n}")
              for n in range(1, 4)),
            *(User(content=f"kestrel-api double charge alert {w}", ts=20 + n, id=f"n{n}")
              for n, w in enumerate(["fired", "again", "paged", "muted"])),
        ])
    return root


def test_the_statement_covering_the_question_outranks_records_naming_only_its_subject(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    index = open_index(_root(tmp_path))
    index.refresh()
    question = "need the sha that sorted out the double charge on kestrel-api"
    engine = index._searcher("fts")
    assert [h.entry_id for h in index.search(question, k=5)][0] == "u-fix"
    # The same fused ranking without the rerank, and without the ranking of the records holding a commit near
    # the question's terms (which finds the fix by itself), puts the short records first.
    engine.rerank = False
    monkeypatch.setattr(fts, "_typed_match", lambda db, question, counts: [])
    assert [h.entry_id for h in index.search(question, k=5)][0] != "u-fix"
    index.close()


def test_a_word_of_the_question_covers_by_its_stem_less_than_by_itself() -> None:
    question = "which installers does kestrel-api ship"
    assert weighted_coverage(question, index_tokens("kestrel-api installers")) > weighted_coverage(
        question, index_tokens("kestrel-api installation")) > weighted_coverage(question, index_tokens("kestrel-api"))


def test_a_restatement_is_covered_by_one_passage_not_across_its_lines() -> None:
    question = "what is the rate limit of ferryman"
    # A summary's lines come from different entries: the subject in one, the relation words in others.
    # (Both hold a quantity, the type the question asks for, so that neither gets it alone.)
    scattered = "\n".join(["Summary of the conversation so far", "- ferryman pods restarted twice in 30s", "- noemi: brb",
                           "- the rate of errors fell", "- limit the blast radius first"])
    stated = "\n".join(["Summary of the conversation so far", "- noemi: brb",
                        "- the gateway rate limit of ferryman is 1308 req/s", "- ok"])
    bodies = {1: index_tokens(scattered), 2: index_tokens(stated)}
    assert [i for i, _ in rerank(question, [(1, 9.0), (2, 5.0)], bodies, frozenset({1, 2}))] == [2, 1]
    # An entry keeps its whole-record coverage (BM25 breaks the tie here).
    assert [i for i, _ in rerank(question, [(1, 9.0), (2, 5.0)], bodies)] == [1, 2]
    # Its heading travels with a line: the subject named by a file comment, the value on the line below.
    assert "docker ps\n# services/zephyr/Dockerfile\nFROM python:3.12-slim" in passages(
        "docker ps\na1b2 redis\n# services/zephyr/Dockerfile\nFROM python:3.12-slim\nWORKDIR /src")
    assert passages("one line\nand another") == ("one line\nand another",)


def test_a_summary_repeating_a_better_summarys_line_ranks_below_the_entry_that_said_it() -> None:
    question = "where does zendesk_connector land its files"
    line = "Stage for zendesk_connector points at gs://landing/zendesk_connector/v6/"
    first = index_tokens(f"Summary of the conversation so far\n- retry 2 of 3\n- {line}\n- task exited")
    later = index_tokens(f"Summary of the conversation so far\n- retry 3 of 3\n- {line}\n- task exited")
    entry = index_tokens(f"Pasting the thread\n[14:50] me: sandbox took 566s\n{line}\n[14:51] ok")
    ranked = [(1, 9.5), (2, 9.4), (3, 6.0)]
    bodies = {1: first, 2: later, 3: entry}
    assert [i for i, _ in rerank(question, ranked, bodies)] == [1, 2, 3]  # none named a restatement: BM25 breaks the tie
    out = rerank(question, ranked, bodies, frozenset({1, 2}))
    assert [i for i, _ in out] == [3, 1, 2]  # the entry first, then the first summary, then its copy
    score = dict(out)
    assert score[1] - score[2] > RESTATED_PENALTY  # the copy lost a concept (their BM25 shares differ by 0.01)
    assert [s for _, s in out] == sorted((s for _, s in out), reverse=True)
    # A copy that covers more of the question than the entry still comes before it.
    richer = index_tokens("Summary\n- zendesk_connector lands its files in gs://landing/zendesk_connector/v6/")
    poorer = index_tokens("Pasting the thread\nzendesk_connector sync is slow\nnothing else\nok")
    out = rerank(question, [(1, 5.0), (2, 4.0), (3, 9.0)], {1: richer, 2: richer, 3: poorer}, frozenset({1, 2}))
    assert [i for i, _ in out][0] == 1
