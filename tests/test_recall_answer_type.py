"""Answer types of questions and the shapes of their values (aptmem/recall/answer_type.py), and their use in the rerank."""

from __future__ import annotations

import pytest

from aptmem.recall.analyze import index_tokens
from aptmem.recall.answer_type import ANSWER_TYPES, asked_types, holds_type
from aptmem.recall.rerank import rerank


@pytest.mark.parametrize(("question", "types"), [
    ("Which version of numpy does billing pin?", ("version",)),
    ("what port does the broker listen on", ("address",)),
    ("Which revision fixed the crash?", ("commit",)),
    ("what is the liveness route of billing", ("route",)),
    ("which branch should the hotfix be merged into", ("branch",)),  # "merged" is a word start of "merge"
    ("the jira ticket for the migration?", ("ticket",)),
    ("Why did we pick Kafka?", ("reason",)),
    ("billing 的健康检查接口是什么", ("route",)),
    ("billing 固定的 numpy 版本是多少", ("version",)),
    ("为什么 billing 没有用 MySQL", ("reason",)),
    ("what does the user like about billing", ("preference",)),
    ("what did we say about billing", ()),
    ("is the portable build reported", ()),  # "port" asks only as a whole word
])
def test_a_question_asks_for_the_types_its_cue_words_name(question: str, types: tuple[str, ...]) -> None:
    assert asked_types(question) == types


@pytest.mark.parametrize(("kind", "holds", "lacks"), [
    ("address", "REDIS_URL is redis://cache-1.staging.internal:6379/0", "the cache is warm"),
    ("address", "it listens on db-main.internal:5432", "at 10:45 it stopped"),
    ("route", "the health check is /v2/billing/healthz", "see docs/ for more"),
    ("branch", "ship it from release/billing-2.4", "release notes are out"),
    ("commit", "commit 3f9a2b1c0d fixed it", "request id=3f9a2b1c logged"),  # a log's id= is no commit
    ("commit", "cherry-pick 3f9a2b1", "deadbeef is all letters"),
    ("ticket", "tracked in PAY-1234", "pay attention to it"),
    ("version", "billing pins numpy==1.26.4", "two to one"),
    ("reason", "we chose it because latency halved", "we chose it"),
    ("reason", "选它是因为延迟更低", "选了它"),
])
def test_a_value_of_each_type_has_its_shape(kind: str, holds: str, lacks: str) -> None:
    assert holds_type((kind,), holds)
    assert not holds_type((kind,), lacks)
    others = tuple(t.name for t in ANSWER_TYPES if t.name != kind)
    assert not holds_type((), holds)  # no type asked: nothing holds one
    assert holds_type((kind, *others), holds)


def test_the_rerank_counts_the_asked_type_as_one_concept_more() -> None:
    question = "billing-api: which revision has to stay in?"
    bodies = {
        1: index_tokens("kubectl logs billing-api --tail 50"),  # names the subject only
        2: index_tokens("billing-api deploy notes for the week"),
        3: index_tokens("commit 5967f532f3 fixed the timezone drift in billing-api"),  # the answer, worded otherwise
    }
    ranked = [(1, 9.0), (2, 8.0), (3, 2.0)]
    assert [i for i, _ in rerank(question, ranked, bodies)] == [3, 1, 2]
    # Without a type asked, a value of any type is half a concept: it lifts a record over one of equal
    # coverage whose BM25 share is less than half a point higher, not over a further one.
    assert [i for i, _ in rerank("billing-api: what has to stay in?", [(1, 9.0), (2, 8.0), (3, 6.0)], bodies)] == [3, 1, 2]
    assert [i for i, _ in rerank("billing-api: what has to stay in?", ranked, bodies)] == [1, 2, 3]
    # ... and never outweighs a covered word.
    worded = {**bodies, 2: index_tokens("billing-api deploy: what stays")}
    assert [i for i, _ in rerank("billing-api: what stays in?", [(1, 9.0), (2, 8.0), (3, 8.5)], worded)][0] == 2
