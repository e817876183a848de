"""The recall library: chunking, analysis, the index's incremental catch-up, search, packing, scoring."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.compaction.policy import CompactionPolicy
from aptmem.continuation import continue_session, create_session
from aptmem.entries import Assistant, Compaction, Metadata, ToolCall, ToolResult, User
from aptmem.errors import RecallEngineUnavailable, UnknownRecallEngine
from aptmem.jsonl_store import JsonlStore
from aptmem.recall import open_index, pack, recall
from aptmem.recall.api import in_time_order
from aptmem.recall.analyze import index_tokens, query_tokens
from aptmem.recall.chunking import CHUNK_CHARS, entry_docs, flatten_json, structured_lines
from aptmem.recall.engines import ENGINES, get_engine, install_size
from aptmem.recall.engines.hybrid import rrf
from aptmem.recall.facts import extract_facts
from aptmem.recall.records import Hit
from aptmem.recall.scoring import Question, judge, ndcg, summarize
from aptmem.session import Session
from aptmem.tokens import get_estimator
from aptmem.working_memory import WorkingMemory


def _records(index) -> list[tuple]:
    """Every record of an index, sorted, without its doc_id (comparable across indexes)."""
    return sorted(index.db.execute("SELECT session_id, level, kind, entry_id, position, ts, text FROM docs").fetchall())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "sessions"


def _session(root: Path, entries, title: str = "") -> str:
    with JsonlStore(root) as store:
        sid = create_session(store, root, title=title)
        store.append_many(sid, list(entries))
    return sid


# -- analysis and chunking ---------------------------------------------------------------------


def test_analysis_splits_identifiers_and_bigrams_chinese() -> None:
    text = index_tokens("DATABASE_URL of retryBackoff: 数据库迁移 on feature/pay-1234")
    assert "数据 据库 库迁 迁移" in text
    assert "featurepay1234" in text and "Backoff" in text
    tokens = query_tokens("还记得上周我们讨论的数据库迁移方案吗？ What is the branch?")
    assert "数据" in tokens and "迁移" in tokens and "branch" in tokens
    assert "what" not in tokens and "the" not in tokens  # stop words
    assert all(t not in tokens for t in ("我们", "记得"))  # bigrams of function characters only are noise


def test_minified_json_and_log_lines_are_flattened() -> None:
    doc = '{"env":{"staging":{"DATABASE_URL":"postgres://db7:5432/pay"}},"list":[1,{"k":"v"}]}'
    assert list(flatten_json({"a": {"b": [1, {"c": True}]}})) == ["a.b[0]: 1", "a.b[1].c: true"]
    assert "env.staging.DATABASE_URL: postgres://db7:5432/pay" in structured_lines(doc)
    log = 'plain line\n2024-05-01 INFO {"user":{"id":42}}'
    assert structured_lines(log) == ["plain line", "2024-05-01 INFO", "user.id: 42"]


def test_long_json_is_chunked_as_path_value_lines_and_evidence_names_the_entry() -> None:
    big = {"items": [{"name": f"item{i}", "value": i} for i in range(400)], "deep": {"secret": {"token": "zx81"}}}
    import msgspec

    entry = ToolResult(call_id="c1", content=msgspec.json.encode(big).decode(), ts=5, id="r1")
    docs = entry_docs("s", entry, 3)
    assert len(docs) > 1 and all(d.entry_id == "r1" and d.position == 3 for d in docs)
    assert all(len(d.text) <= CHUNK_CHARS for d in docs)
    assert any("deep.secret.token: zx81" in d.text for d in docs)


def test_entries_without_an_id_are_named_by_position_and_metadata_is_not_indexed() -> None:
    assert entry_docs("s", User(content="hello there", ts=1), 7)[0].entry_id == "@7"
    assert entry_docs("s", Metadata(kind="x", data={"a": 1}, ts=1), 0) == []
    call = entry_docs("s", ToolCall(name="bash", args={"cmd": "ls"}, result="a.txt", ts=1), 0)[0]
    assert "a.txt" in call.text and "cmd: ls" in call.search


def test_facts_are_single_statements_of_the_chunk() -> None:
    chunk = entry_docs("s", Assistant(content="Some chatter here.\nDATABASE_URL=postgres://x:1/y\nWe decided to use Kafka because ordering matters.", ts=1, id="a"), 0)[0]
    facts = [f.text for f in extract_facts(chunk)]
    assert "DATABASE_URL=postgres://x:1/y" in facts
    assert any("Kafka" in f for f in facts)
    assert all(f.entry_id == "a" and f.kind == "fact" for f in extract_facts(chunk))


# -- the index ---------------------------------------------------------------------------------


def test_recall_finds_l3_and_l2_with_evidence(root: Path) -> None:
    sid = _session(root, [User(content="the staging DATABASE_URL is postgres://db7.internal:5432/pay", ts=1),
                          ToolResult(call_id="c", content='{"a":{"b":[1,{"token":"zx81-secret"}]}}', ts=2, id="r1")],
                   title="数据库迁移方案")
    WorkingMemory(root, sid).set("ticket", "PAY-1234")
    result = recall("zx81-secret", root=root, k=3)
    assert result.hits[0].session_id == sid and result.hits[0].entry_id == "r1" and result.hits[0].level == "l3"
    assert "zx81-secret" in result.text and result.tokens <= result.budget
    l2 = recall("还记得上周我们讨论的数据库迁移方案吗？", root=root, level="l2")
    assert l2.hits and l2.hits[0].entry_id == "meta" and "PAY-1234" in l2.hits[0].text
    assert recall("staging database", root=root, level="l3").hits[0].entry_id == "@0"


def test_catch_up_is_incremental_after_appends(root: Path) -> None:
    sid = _session(root, [User(content=f"turn {i} about caching", ts=i) for i in range(5)])
    index = open_index(root)
    first = index.refresh()
    assert first.updated[0].new_entries == 5 and first.updated[0].reindexed is None
    assert index.refresh().updated == []  # nothing changed: nothing read
    with JsonlStore(root) as store:
        store.append(sid, User(content="the rollout is blocked on ticket OPS-77", ts=9))
    update = index.refresh().updated[0]
    assert update.new_entries == 1 and update.reindexed is None
    assert index.search("OPS-77")[0].entry_id == "@5"
    fresh = open_index(root, engines=("fts",))
    index.close()
    rebuilt_path = root / "rebuilt.sqlite"
    from aptmem.recall.index import RecallIndex

    rebuilt = RecallIndex(fresh.store, root, path=rebuilt_path)
    rebuilt.rebuild()
    assert _records(fresh) == _records(rebuilt)  # incremental == from scratch
    fresh.close()
    rebuilt.close()


def test_rewrite_compaction_is_detected_and_reindexed(root: Path) -> None:
    sid = _session(root, [User(content=f"message {i}: " + "filler words " * 30, ts=i, id=f"u{i}") for i in range(30)])
    index = open_index(root)
    index.refresh()
    with JsonlStore(root) as store:
        session = Session(store, sid, policy=CompactionPolicy(window=4000, persist="rewrite", keep_turns=2),
                          estimator=get_estimator("rough"))
        session.compact()
    update = index.refresh().updated[0]
    assert update.reindexed is not None and "rewritten" in update.reindexed
    assert "u3" not in {h.entry_id for h in index.search("message 3", level="l3", k=50)}  # summarized away
    summary = index.search("message", level="l2", k=5)
    assert any(h.kind == "summary" for h in summary)
    with JsonlStore(root) as store:
        assert len(list(store.iter_entries(sid))) == index.db.execute(
            "SELECT entries FROM sessions WHERE session_id = ?", (sid,)).fetchone()[0]
    index.close()


def test_appended_compaction_replaces_the_l2_summary(root: Path) -> None:
    sid = _session(root, [User(content="one", ts=1), Compaction(summary="first summary: kafka chosen", ts=2, id="k1")])
    index = open_index(root)
    index.refresh()
    with JsonlStore(root) as store:
        store.append(sid, Compaction(summary="second summary: kafka chosen, ticket OPS-9", ts=3, id="k2"))
    index.refresh()
    summaries = [h for h in index.search("kafka chosen", level="l2", k=10) if h.kind == "summary"]
    assert [h.entry_id for h in summaries] == ["k2"]
    index.close()


def test_truncated_log_sidecar_change_and_removed_session(root: Path) -> None:
    sid = _session(root, [User(content=f"entry {i} mentions zebra{i}", ts=i) for i in range(4)])
    other = _session(root, [User(content="unrelated", ts=1)])
    index = open_index(root)
    index.refresh()
    with JsonlStore(root) as store:
        store.replace(sid, [User(content="entry 0 mentions zebra0", ts=0)])  # fewer entries than indexed
    update = index.refresh().updated[0]
    assert update.reindexed and "1 entries, 4 were indexed" in update.reindexed
    assert not index.search("zebra3")
    WorkingMemory(root, sid).set_text("remember the okapi")
    assert index.refresh().updated[0].session_id == sid
    assert index.search("okapi")[0].entry_id == "meta"
    (root / f"{other}.jsonl").unlink()
    assert index.refresh().dropped == [other]
    assert not index.search("unrelated")
    index.close()


def test_one_hit_per_entry_and_level_filter(root: Path) -> None:
    long = "\n".join(f"line {i} talks about the walrus migration" for i in range(200))
    _session(root, [Assistant(content=long, ts=1, id="a1"), User(content="walrus", ts=2, id="u1")])
    index = open_index(root)
    index.refresh()
    hits = index.search("walrus migration", k=5)
    assert len({(h.session_id, h.entry_id) for h in hits}) == len(hits) == 2
    assert index.search("walrus", level="l2") == []
    with pytest.raises(ValueError):
        index.search("walrus", level="l4")
    index.close()


def test_facts_variant(root: Path) -> None:
    _session(root, [Assistant(content="chatter chatter.\nREDIS_URL=redis://cache-9:6379/0\nmore chatter", ts=1, id="a1")])
    index = open_index(root, facts=True)
    index.refresh()
    facts = index.search("REDIS_URL", l3="facts")
    assert facts[0].kind == "fact" and facts[0].text == "REDIS_URL=redis://cache-9:6379/0" and facts[0].entry_id == "a1"
    assert index.stats().facts
    index.close()


def test_continue_with_recall_seeds_the_first_entry(root: Path) -> None:
    old = _session(root, [User(content="we pinned fastapi==0.110.2 for billing", ts=1)])
    packet = recall("fastapi pin for billing", root=root).text
    with JsonlStore(root) as store:
        new = continue_session(store, root, old, recalled=packet)
        first = next(iter(store.iter_entries(new)))
    assert isinstance(first, Compaction) and "fastapi==0.110.2" in first.summary


# -- engines, packing, scoring -----------------------------------------------------------------


def test_registry_and_install_sizes() -> None:
    with pytest.raises(UnknownRecallEngine):
        get_engine("nope")
    assert install_size(get_engine("fts")).bytes == 0
    for name in ENGINES:
        engine = get_engine(name)
        assert engine.name == name and engine.components


def test_missing_optional_engine_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import builtins

    real_import = builtins.__import__

    def refuse(name, *args, **kwargs):  # type: ignore[no-untyped-def]
        if name.startswith("wordllama"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", refuse)
    with pytest.raises(RecallEngineUnavailable, match=r"aptmem\[recall-embed\]"):
        get_engine("wordllama").prepare(None)  # type: ignore[arg-type]


def test_rrf_fuses_by_rank() -> None:
    assert [i for i, _ in rrf([[(1, 9.0), (2, 8.0), (3, 7.0)], [(3, 5.0), (1, 4.0), (4, 3.0)]], 3)] == [1, 3, 2]
    # A ranking whose scores are all tied cannot tell its records apart: the other one decides.
    assert rrf([[(1, 0.0), (2, 0.0)], [(2, 3.0), (1, 1.0)]], 2)[0][0] == 2


def test_pack_fits_the_budget() -> None:
    rng = random.Random(5)
    hits = [Hit(session_id="s", entry_id=f"e{i}", level="l3", kind="chunk", score=1.0,
                text=" ".join(rng.choice(["alpha", "beta", "数据", "gamma"]) for _ in range(400))) for i in range(10)]
    estimator = get_estimator("medium")
    for budget in (64, 200, 1024):
        result = pack("q", hits, budget)
        assert result.tokens <= budget, f"seed 5, budget {budget}"
        assert estimator.count(result.text) == result.tokens
    assert pack("q", hits, 5).hits == []


def test_pack_lays_the_chosen_hits_out_in_time_order() -> None:
    # Ranked best first: the new value, a session record (no time), the old value, then one too
    # long to fit after them.
    hits = [Hit(session_id="s", entry_id="new", level="l3", kind="chunk", score=3.0, ts=200, doc_id=9,
                text="the retry budget is now 9"),
            Hit(session_id="s", entry_id="card", level="l2", kind="session", score=2.0, doc_id=1, text="session: retries"),
            Hit(session_id="s", entry_id="old", level="l3", kind="chunk", score=1.0, ts=100, doc_id=4,
                text="the retry budget is 3"),
            Hit(session_id="s", entry_id="same-time", level="l3", kind="chunk", score=0.5, ts=100, doc_id=2,
                text="retry budget discussed")]
    result = pack("retry budget?", hits, 1024)
    assert [h.entry_id for h in result.hits] == ["new", "card", "old", "same-time"], "hits stay best first"
    order = [result.text.index(f"entry {e} ") for e in ("card", "same-time", "old", "new")]
    assert order == sorted(order), result.text
    assert "[1] l3 chunk entry new score 3" in result.text, "each block keeps its rank"
    assert result.text.count("session s\n") == 1, "the session is named once before its run of hits"
    estimator = get_estimator("medium")
    for budget in (40, 60, 80):  # whatever is left out, what is shown fits and is in time order
        small = pack("retry budget?", hits, budget)
        assert small.tokens <= budget and estimator.count(small.text) == small.tokens
        shown = [h.entry_id for h in in_time_order(small.hits)]
        assert [e for e in ("card", "same-time", "old", "new") if e in shown] == shown


def test_scoring_metrics() -> None:
    q = Question(qid="q", fact_id="f", kind="env", wording="template", language="en", carrier="json", split="tune",
                 text="?", answer="v1", evidence=(("s1", "e1"),))
    j = judge(q, [("s2", "x"), ("s1", "y"), ("s1", "e1")], "the answer is v1")
    assert j.entry_rank == 3 and j.session_rank == 2 and j.entry_recall == {1: 0.0, 5: 1.0, 10: 1.0}
    assert j.entry_rr == pytest.approx(1 / 3) and j.answerable
    assert ndcg([False, True], 1) == pytest.approx(1 / 1.584962500721156)
    agg = Question(qid="a", fact_id="a", kind="aggregation", wording="template", language="en", carrier="mixed", split="tune",
                   text="?", evidence=(("s1", "e1"), ("s2", "e2")), aggregation=True)
    assert judge(agg, [("s1", "e1")], "").evidence_share10 == 0.5
    absent = Question(qid="n", fact_id="n", kind="absent", wording="template", language="en", carrier="none", split="tune", text="?")
    assert judge(absent, [("s1", "e1")], "", frozenset({("s1", "e1")})).false_positive
    rows = summarize([(q, j), (absent, judge(absent, [], "", frozenset()))])
    assert rows[0]["entry_recall@5"] == 1.0 and rows[0]["false_positive_rate"] == 0.0


def test_a_name_written_flush_against_chinese_is_found_by_an_english_question(tmp_path: Path) -> None:
    assert query_tokens("iris-worker的接口在哪") == ["iris", "worker", "的接", "接口", "口在", "irisworker"]
    assert "irisworker" in index_tokens("iris-worker的接口地址是https://wren-60.example.dev/v4/saffron。").split()
    with JsonlStore(tmp_path) as store:
        sid = create_session(store, tmp_path)
        # "iris" and "worker" are common (other iris-* services, worker pools); "irisworker" is rare.
        noise = [User(ts=i, id=f"n{i}", content=f"iris-gateway batch {i} finished" if i <= 10 else f"worker pool {i} is fine")
                 for i in range(1, 120)]
        noise.append(User(ts=170, id="restart", content="iris-worker restarted at noon"))
        for entry in [*noise, Assistant(ts=200, id="fact", content="iris-worker的接口地址是https://wren-60.example.dev/v4/saffron。")]:
            store.append(sid, entry)
    with open_index(tmp_path) as index:
        index.refresh()
        hits = index.search("What is the API endpoint of iris-worker?", k=5)
        assert "fact" in [h.entry_id for h in hits]


def test_pack_shows_the_lines_that_answer_and_keeps_a_json_records_fields_together() -> None:
    filler = "\n".join(f"line {i} of a long log that says nothing in particular" for i in range(200))
    hits = [Hit(session_id="s", entry_id=f"e{i}", level="l3", kind="chunk", score=1.0,
                text=f"{filler}\nitems[{i}].component: iris-notifier-{i}\nitems[{i}].ticket: PLAT-{6000 + i}\n{filler}")
            for i in range(8)]
    result = pack("Which ticket tracks the iris-notifier-3 outage?", hits, 1024)
    assert result.tokens <= 1024 and len(result.hits) == 8, "excerpts let every hit fit"
    assert "items[3].component: iris-notifier-3; items[3].ticket: PLAT-6003" in result.text


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.sampled_from("ab \t{}:"), max_size=40), max_size=12), st.integers(1, 120))
def test_split_text_shortcut_equals_the_line_by_line_loop(lines: list[str], size: int) -> None:
    from aptmem.recall.chunking import _grouped, split_text

    assert split_text(lines, size) == _grouped(lines, size)


def test_pack_excerpts_name_their_heading_show_a_listing_once_and_skip_repeated_texts() -> None:
    yaml = "\n".join(["jobs:", *(f"  svc{i}-reindex:\n    schedule: \"{i} 3 * * 0\"\n    concurrency: Forbid" for i in range(40))])
    rows = "\n".join(f"prism-{i:05x}   1/1   Running   {i % 9}   3m" for i in range(80))
    hits = [Hit(session_id="s", entry_id="yaml", level="l3", kind="chunk", score=3.0, text=yaml.replace("svc7-", "prism-")),
            Hit(session_id="s", entry_id="pods", level="l3", kind="chunk", score=2.0, text=rows),
            Hit(session_id="s", entry_id="args", level="l3", kind="chunk", score=1.5, text='{"path":"deploy/prism.yaml"}'),
            Hit(session_id="s", entry_id="again", level="l3", kind="chunk", score=1.0, text='{"path":"deploy/prism.yaml"}')]
    result = pack("When does prism reindex?", hits, 1024)
    assert '… jobs: › prism-reindex: › schedule: "7 3 * * 0"' in result.text, result.text
    assert result.text.count("Running") == 1, "rows of one form with the same terms: the first one"
    assert [h.entry_id for h in result.hits] == ["yaml", "pods", "args"], "the repeated text is not shown again"


def test_pack_gives_every_hit_its_best_line_before_any_hit_a_second() -> None:
    # Twenty long hits, each with eight lines that hold every term (of different forms): best
    # first, each hit taking up to a quarter of the budget, four hits would fill the packet; in
    # rounds every hit shows its first such line.
    filler = "\n".join(f"nothing to see in line {j}" for j in range(40))
    hits = [Hit(session_id=f"s{i // 7}", entry_id=f"e{i}", level="l3", kind="chunk", score=20.0 - i, ts=i,
                text=filler + "\n" + "\n".join(f"atlas-rpc deploy key note {'word ' * j}dk_{i:04d}_{j}" for j in range(8)))
            for i in range(20)]
    result = pack("What is the deploy key of atlas-rpc?", hits, 1024)
    assert result.tokens <= 1024 and len(result.hits) == 20, result.text
    assert all(f"dk_{i:04d}_0" in result.text for i in range(20)), "every hit's best line is shown"
    assert result.text.count("session s1\n") == 1 and "session s1 " not in result.text


def test_pack_does_not_show_a_block_opener_apart_from_the_line_it_names() -> None:
    yaml = "\n".join([*(f"svc{i}:\n  replicas: {i}" for i in range(60)), "sundial:", "  memory: 3604Mi", "  replicas: 2"])
    hits = [Hit(session_id="s", entry_id="chart", level="l3", kind="chunk", score=1.0, text=yaml)]
    result = pack("How much memory does sundial get?", hits, 1024)
    assert "… sundial: › memory: 3604Mi" in result.text, result.text
    assert "… sundial:\n" not in result.text, "the opener alone says nothing its next line does not"


def test_pack_shows_the_line_holding_the_asked_value_beside_the_line_that_names_it() -> None:
    # A git log pasted among settings: the message names the subject, the hash is two lines above it.
    settings_lines = "\n".join(f"  option_{i}: {'on' if i % 2 else 'off'}" for i in range(60))
    text = f"{settings_lines}\ncommit 1a967c640ddb\nAuthor: ci-bot <ci@example.invalid>\n\n    fjord: stop retrying on 4xx\n{settings_lines}"
    hits = [Hit(session_id="s", entry_id="log", level="l3", kind="chunk", score=2.0, text=text)]
    shown = pack("Which commit stops fjord retrying on 4xx?", hits, 1024).text
    assert "commit 1a967c640ddb" in shown and shown.index("1a967c640ddb") < shown.index("fjord: stop retrying"), shown
    # A question that asks for no type of value shows the line alone.
    assert "1a967c640ddb" not in pack("Does fjord stop retrying on 4xx?", hits, 1024).text
