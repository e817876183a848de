"""Value markers in the index and the ranking of a question's terms near a value of the type it asks for
(aptmem/recall/answer_type.py ``marked``, aptmem/recall/engines/fts.py ``_typed_match``), and the numeric,
temporal, place and channel answer types they rest on."""

from __future__ import annotations

from pathlib import Path

import pytest

from aptmem.continuation import create_session
from aptmem.entries import Assistant, ToolResult, User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall.answer_type import asked_types, holds_type, marked, marker
from aptmem.recall.api import open_index
from aptmem.recall.engines import fts


@pytest.mark.parametrize(("question", "kind"), [
    ("How much memory may the spindle workers use?", "quantity"),
    ("Wie viele Verbindungen darf spindle offen halten?", "quantity"),  # German "how many"
    ("¿Cuántos reintentos hace spindle?", "quantity"),  # Spanish "how many"
    ("spindle 的并发上限是几", "quantity"),  # Chinese "upper limit"
    ("How often does the spindle report job run?", "schedule"),
    ("spindle のレポートはどのくらいの頻度で動きますか", "schedule"),  # Japanese "frequency"
    ("When may we restart spindle?", "time"),
    ("Wann wird spindle neu gestartet?", "time"),  # German "when"
    ("Where does spindle run?", "place"),
    ("Which slack channel gets the spindle pages?", "channel"),
])
def test_the_interrogatives_and_amount_nouns_of_several_languages_ask_for_a_type(question: str, kind: str) -> None:
    assert kind in asked_types(question)


def test_chinese_how_much_asks_for_an_amount_only_when_nothing_else_is_asked() -> None:
    assert asked_types("spindle 现在放量到多少了") == ("quantity",)
    assert asked_types("spindle 的版本是多少") == ("version",)


@pytest.mark.parametrize(("kind", "holds", "lacks"), [
    ("quantity", "the pool is capped at 2.5GiB per worker", "the pool is capped per worker"),
    ("quantity", "rollout held at 37.5% overnight", "rollout held overnight, see #37"),
    ("quantity", "SPINDLE_RETRY_BACKOFF_MS=2500", "SPINDLE_RETRY_MODE=slow"),
    ("quantity", "并发限制是 64 个", "并发限制还没定"),
    ("schedule", 'schedule: "15 */6 * * *"', "the schedule is up to ops"),
    ("schedule", "the export runs every 20 minutes", "the export runs whenever"),
    ("time", "restarts are fine Tue 01:15-03:00 UTC", "restarts are fine on Tuesdays"),
    ("time", "freeze starts 2025-11-03", "freeze starts soon"),
    ("place", "spindle moved to ap-southeast-2 last night", "spindle moved to the new cluster"),
    ("channel", "pages go to #spindle-oncall now", "pages go to ticket #4411 now"),
    ("route", "the token lives at kv/prod/spindle/api-token", "the token lives in the vault"),
    ("version", "prod schema is at 20250114_0930_add_spindle_jobs", "prod schema is current"),
])
def test_a_value_of_the_new_types_has_its_shape(kind: str, holds: str, lacks: str) -> None:
    assert holds_type((kind,), holds)
    assert not holds_type((kind,), lacks)


def test_marked_puts_each_values_marker_right_after_it() -> None:
    text = "spindle: 3 workers, 512MiB each\nowner @quill, pages to #spindle-oncall"
    out = marked(text)
    assert f"512MiB {marker('quantity')}" in out
    assert f"@quill {marker('person')}" in out
    assert f"#spindle-oncall {marker('channel')}" in out
    assert out.replace(f" {marker('quantity')} ", "").replace(f" {marker('person')} ", "") \
        .replace(f" {marker('channel')} ", "") == text  # the text itself is unchanged around them
    assert marked("nothing of a value here") == "nothing of a value here"


def _busy_root(tmp_path: Path, statement: str) -> Path:
    """A history naming the subject ``spindle`` in a large share of its records, none stating a value about it,
    other subjects' values in others, and ``statement`` once."""
    root = tmp_path / "root"
    root.mkdir()
    with JsonlStore(root) as store:
        sid = create_session(store, root, title="batch jobs")
        entries = []
        for n in range(60):
            entries.append(User(content=f"spindle looked fine on check {n}, nothing to do", ts=10 * n))
            entries.append(ToolResult(name="bash", content=f"loom queue depth 12{n} items, loom p95 {n + 40}ms", ts=10 * n + 1))
            entries.append(Assistant(content=f"I read the spindle dashboard again ({n}); the graphs look flat.", ts=10 * n + 2))
        entries.append(User(content=statement, ts=10_000, id="fact"))
        store.append_many(sid, entries)
    return root


@pytest.mark.parametrize(("statement", "question"), [
    # Paraphrase: the question shares only the subject with the statement; it asks "how much".
    ("we capped the spindle workers at 2.5GiB apiece after the OOM", "How much RAM may one spindle process take?"),
    # Other language: German "how often" about a cron line.
    ('spindle report job: schedule "15 */6 * * *" in the manifest', "Wie oft läuft der Bericht von spindle?"),
    # Other language: Chinese "where" about a region.
    ("spindle now lives in eu-central-2 for the data residency rules", "spindle 部署在哪里？"),
])
def test_a_question_asked_otherwise_finds_the_statement_by_the_value_it_asks_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, statement: str, question: str) -> None:
    index = open_index(_busy_root(tmp_path, statement))
    index.refresh()
    assert "fact" in [h.entry_id for h in index.search(question, k=5)]
    assert "fact" not in [h.entry_id for h in index.search(question, k=5, engine="fts_untyped")]
    # Without the ranking of the subject near a value of the type asked, the statement is one of the many
    # records that name the subject, and the others (shorter, or repeating it) rank first.
    monkeypatch.setattr(fts, "_typed_match", lambda db, question, counts: [])
    assert "fact" not in [h.entry_id for h in index.search(question, k=5)]
    index.close()
    index.store.close()


def test_the_function_words_of_other_languages_are_no_search_terms_and_no_names() -> None:
    from aptmem.recall.analyze import query_tokens
    from aptmem.recall.question import names

    assert query_tokens("Wie oft läuft der Bericht von spindle?") == ["läuft", "bericht", "spindle"]
    assert query_tokens("¿Dónde está el servidor de spindle?") == ["servidor", "spindle"]
    assert query_tokens("Où est le serveur de spindle ?") == ["serveur", "spindle"]
    assert not {"wie", "der", "von"} & names("Wie oft läuft der Bericht von spindle?")
    # Japanese kana of grammar alone make no term; a word in katakana or kanji still does.
    tokens = query_tokens("spindle のレポートはどこ")
    assert "レポ" in tokens and "はど" not in tokens and "どこ" not in tokens


def test_a_ranking_that_cannot_tell_its_records_apart_does_not_push_out_another_rankings_find() -> None:
    flat = [(n, 0.5) for n in range(1, 51)]  # cut at the depth, every score one
    found = [(99, 7.0)]
    fused = fts.comb_sum([flat, found], 10, depth=50)
    assert fused[0] == (99, 1.0) and len(fused) == 10  # the flat ranking's records follow, as candidates
    # Not cut (fewer records than the depth): equal scores still say which records match.
    fused = fts.comb_sum([flat[:20], found], 30, depth=50)
    assert fused[0][0] == 1 and dict(fused)[99] == 1.0


def test_a_chinese_name_standing_alone_is_a_person() -> None:
    from aptmem.recall.bridge import available

    if not available():
        pytest.skip("needs the CC-CEDICT bridge (extra recall-crosslingual)")
    assert holds_type(("person",), "| spindle | 欧阳思琪 | primary |")  # a two-character surname and two more
    assert holds_type(("person",), "reviewer: 钱嘉禾")  # a one-character surname and two more
    assert holds_type(("person",), "值班：申屠子航 / 备份：陆一鸣")  # two one-character surnames (申屠), and 陆
    assert not holds_type(("person",), "spindle 的 日志 已经 看过")  # headwords and grammar, no name
    assert not holds_type(("person",), "高可用 setup")  # a headword that starts with a surname
    assert asked_types("spindle 的主值班是谁") == ("person",)


def test_a_marker_never_cuts_the_token_its_value_is_in() -> None:
    from aptmem.recall.analyze import index_tokens

    for text in ("ship it from release/spindle-2.4 today", "see https://wiki.example.invalid/spindle/runbook-7 first"):
        out = marked(text)
        assert all(word in out.split() for word in text.split())  # every token of the text is there whole
        # The identifier's joined token is the same with the markers as without them.
        assert set(index_tokens(text).split()) <= set(index_tokens(out).split())
