"""The relation lexicon (aptmem/recall/lexicon.py) and the default engine's expanded, fused query."""

from __future__ import annotations

from pathlib import Path

from aptmem.continuation import create_session
from aptmem.entries import Assistant, ToolCall, User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall.api import open_index
from aptmem.recall.lexicon import GROUPS, expansions, group_expansions


def test_expansion_adds_the_other_words_of_a_touched_group_in_both_languages() -> None:
    added = expansions("Which route does the load balancer probe on kestrel-api?")
    assert ("health",) in added and ("healthz",) in added and ("endpoint",) in added
    assert ("健康", "康检", "检查") in added  # a Chinese word is searched as its bigram phrase
    assert ("probe",) not in added and ("route",) not in added  # words asked are not added again
    assert expansions("kestrel-api 上线从哪个分支切？")[:1] and ("branch",) in expansions("kestrel-api 从哪个分支切？")
    assert group_expansions("the logo colours of kestrel-api") == []


def test_groups_hold_lowercase_single_words_and_no_single_cjk_character() -> None:
    for group in GROUPS:
        for word in group:
            assert word == word.lower() and " " not in word, word
            assert len(word) >= 2, word  # a single CJK character would match only a lone one (bigram index)


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    root.mkdir()
    with JsonlStore(root) as store:
        # Other work, so that the service name is a rare term (at most 2% of the records hold it).
        other = create_session(store, root, title="chores")
        store.append_many(other, [User(content=f"shard {n} of the {w} cluster rebalanced", ts=1)
                                  for n in range(400) for w in ("cache", "queue")])
        sid = create_session(store, root, title="kestrel-api work")
        store.append_many(sid, [
            User(content="the health check endpoint of kestrel-api is /v2/kestrel/healthz", ts=3, id="u-health"),
            Assistant(content="kestrel-api pins fastapi==0.110.2", ts=4, id="a-pin"),
            # Short records that name the subject and nothing else: plain BM25 ranks them first.
            *(ToolCall(name="bash", args={"cmd": f"kubectl logs kestrel-api --tail {n}"}, ts=5 + n, id=f"c{n}") for n in range(2)),
            *(User(content=f"kestrel-api {w} looked fine today", ts=20 + n, id=f"n{n}")
              for n, w in enumerate(["cache", "queue", "shard", "lease"])),
            # A near miss: the same relation for another service.
            User(content="the health check endpoint of ovanix-api is /v1/ovanix/ping", ts=30, id="u-other"),
        ])
    return root


def _rank(index, question: str, entry_id: str, engine: str) -> int:
    ids = [h.entry_id for h in index.search(question, k=20, engine=engine)]
    return ids.index(entry_id) if entry_id in ids else 99


def test_a_paraphrase_finds_the_statement_that_plain_keywords_miss(tmp_path: Path) -> None:
    index = open_index(_root(tmp_path))
    index.refresh()
    for question in ("Which route should the load balancer probe to know kestrel-api is alive?",
                     "负载均衡器该探测 kestrel-api 的哪个路径来判断存活？"):
        assert _rank(index, question, "u-health", "fts") == 0, question
        assert _rank(index, question, "u-health", "fts_plain") > 0, question
    # The template question is not hurt by the expansion: the statement stays first, the near miss below it.
    assert _rank(index, "What is the health check endpoint of kestrel-api?", "u-health", "fts") == 0
    index.close()


def test_term_counts_are_taken_again_once_the_index_grew_by_an_eighth(tmp_path: Path) -> None:
    root = _root(tmp_path)
    index = open_index(root)
    index.refresh()
    engine = index._searcher("fts")
    counts = engine._counts
    held, _, _ = counts.held(index.db, ["kestrel"])
    assert held["kestrel"] == 9  # the statement, the pin, 2 tool calls, 4 remarks, the session title
    with JsonlStore(root) as store:
        sid = create_session(store, root, title="more")
        store.append_many(sid, [User(content=f"kestrel-api note {n}", ts=40) for n in range(300)])
    index.refresh()
    held, _, broad = counts.held(index.db, ["kestrel"])
    assert held["kestrel"] == broad + 1  # counted again, and only up to the broad threshold
    index.close()


def test_abstention_coverage_counts_a_relation_word_found_by_its_synonym() -> None:
    from aptmem.recall.abstain import coverage
    from aptmem.recall.lexicon import synonyms

    statement = "the health check endpoint of kestrel-api is /v2/kestrel/healthz"
    assert "endpoint" in synonyms("route") and "route" not in synonyms("route")
    # "route" and "probe" are found through "endpoint" and "health"; "balancer" is not.
    assert coverage("Which route does the balancer probe on kestrel-api?", statement) > coverage(
        "Which gizmo does the balancer poke on kestrel-api?", statement)
