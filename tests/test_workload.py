"""The synthetic workload: determinism, turn structure, sizes, content mix, planted facts."""

from __future__ import annotations

import hashlib
import itertools
import os
import statistics
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from aptmem.entries import Assistant, ToolCall, ToolResult, User
from experiments.workloads.synthetic import WorkloadConfig, generate, iter_session

ROOT = Path(__file__).resolve().parent.parent
SEEDS = [0, 1, 7]


@pytest.fixture(scope="module", params=SEEDS, ids=[f"seed={s}" for s in SEEDS])
def session(request: pytest.FixtureRequest):  # type: ignore[no-untyped-def]
    """A default 300-turn session per seed (the seed shows in the test id)."""
    return generate(seed=request.param)


def _text(entry: object) -> str:
    if isinstance(entry, (User, Assistant, ToolResult)):
        return entry.content
    if isinstance(entry, ToolCall):
        return msgspec.json.encode(entry.args).decode()
    return ""


def test_same_seed_gives_identical_bytes_even_in_another_process() -> None:
    here = hashlib.sha256(generate(seed=3, turns=80).encode()).hexdigest()
    assert hashlib.sha256(generate(seed=3, turns=80).encode()).hexdigest() == here
    code = ("import hashlib; from experiments.workloads.synthetic import generate; "
            "print(hashlib.sha256(generate(seed=3, turns=80).encode()).hexdigest())")
    # A different hash seed: nothing may depend on Python's per-process randomized hash().
    env = {**os.environ, "PYTHONHASHSEED": "12345", "PYTHONPATH": str(ROOT)}
    other = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    assert other.stdout.strip() == here


def test_different_seeds_differ() -> None:
    assert generate(seed=1, turns=30).encode() != generate(seed=2, turns=30).encode()


def test_iter_session_yields_the_same_entries_as_generate() -> None:
    config = WorkloadConfig(turns=40, seed=5)
    assert list(iter_session(config)) == generate(config).entries


def test_turn_structure(session) -> None:  # type: ignore[no-untyped-def]
    entries, turn_of = session.entries, session.turn_of
    assert len(entries) == len(turn_of) == len(session.kinds)
    assert turn_of[-1] + 1 == session.config.turns
    assert isinstance(entries[0], User)
    pending: dict[str, int] = {}  # open calls: id -> index
    answered: set[str] = set()
    for i, entry in enumerate(entries):
        new_turn = i == 0 or turn_of[i] != turn_of[i - 1]
        # A turn starts with the user, and only there; the previous turn ended with a reply
        # and with every call answered.
        assert isinstance(entry, User) == new_turn, f"entry {i}"
        if new_turn and i:
            assert isinstance(entries[i - 1], Assistant), f"turn before entry {i} does not end with a reply"
            assert not pending, f"calls {sorted(pending)} unanswered at the end of a turn"
        if isinstance(entry, ToolCall):
            assert entry.id and entry.id not in pending and entry.id not in answered
            pending[entry.id] = i
        elif isinstance(entry, ToolResult):
            assert entry.call_id in pending, f"result {i} names {entry.call_id!r}, not an earlier open call"
            assert turn_of[pending.pop(entry.call_id)] == turn_of[i]
            answered.add(entry.call_id)
    assert not pending
    assert isinstance(entries[-1], Assistant)
    assert answered, "no tool use at all"


def test_ids_unique_and_timestamps_increase(session) -> None:  # type: ignore[no-untyped-def]
    ids = [e.id for e in session.entries]
    assert all(ids) and len(set(ids)) == len(ids)
    ts = [e.ts for e in session.entries]
    assert all(b > a for a, b in itertools.pairwise(ts))
    assert ts[0] > session.config.start_ts


def test_sizes_within_caps_and_shaped_as_configured(session) -> None:  # type: ignore[no-untyped-def]
    cfg = session.config
    size = {User: [], Assistant: [], ToolResult: []}  # type: dict[type, list[int]]
    for entry in session.entries:
        if type(entry) in size:
            size[type(entry)].append(len(entry.content.encode()))
    assert max(size[User]) <= cfg.user_max_bytes
    assert max(size[Assistant]) <= cfg.assistant_max_bytes
    assert max(size[ToolResult]) <= cfg.max_tool_result_bytes
    # Users short, replies medium, tool results heavy-tailed.
    assert statistics.median(size[User]) < statistics.median(size[Assistant])
    results = sorted(size[ToolResult])
    assert max(results) >= 64 * 1024, "no tool result near the 100 KB scale"
    assert results[len(results) // 2] < 4096
    assert results[int(len(results) * 0.99)] > 10 * results[len(results) // 2]


def test_small_cap_is_respected() -> None:
    s = generate(seed=2, turns=120, max_tool_result_bytes=4096, facts=30)
    assert max(len(e.content.encode()) for e in s.entries if isinstance(e, ToolResult)) <= 4096
    # Facts planted in capped results survive the clipping.
    by_id = {e.id: e for e in s.entries}
    assert all(f.answer in _text(by_id[f.entry_id]) for f in s.facts)


def test_content_mixes_chinese_code_and_json(session) -> None:  # type: ignore[no-untyped-def]
    texts = [_text(e) for e in session.entries]
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in t) for t in texts), "no Chinese"
    assert any(("def " in t and "return" in t) or "function " in t for t in texts), "no source code"
    documents = []
    for e in session.entries:
        if isinstance(e, ToolResult) and e.content.startswith("{"):
            documents.append(msgspec.json.decode(e.content))  # JSON tool output is valid JSON
    assert documents and all(isinstance(d, dict) and "items" in d for d in documents)
    assert {"english", "chinese", "code", "json", "logs", "mixed"} <= set(session.kinds)


def test_planted_facts_appear_where_recorded(session) -> None:  # type: ignore[no-untyped-def]
    facts = session.facts
    assert len(facts) == session.config.facts
    assert len({f.id for f in facts}) == len(facts)
    assert len({f.question for f in facts}) == len(facts)
    by_id = {e.id: (i, e) for i, e in enumerate(session.entries)}
    for fact in facts:
        index, entry = by_id[fact.entry_id]
        assert fact.text in _text(entry) and fact.answer in fact.text
        assert type(entry).__struct_config__.tag == fact.entry_type
        assert session.turn_of[index] == fact.turn
    assert {f.lang for f in facts} == {"english", "chinese"}
    assert len({f.entry_type for f in facts}) >= 2


def test_max_entries_gives_exactly_that_many_with_every_fact() -> None:
    s = generate(max_entries=1234, seed=4, facts=25)
    assert len(s.entries) == 1234
    assert len(s.facts) == 25
    ids = {e.id for e in s.entries}
    assert all(f.entry_id in ids for f in s.facts)


@pytest.mark.parametrize(
    "bad",
    [{"turns": 0}, {"mix": {"english": 1.0, "klingon": 1.0}}, {"mix": {"english": 0.0}},
     {"max_tool_result_bytes": 100}, {"facts": 500}, {"max_entries": 0}, {"turns": 5, "facts": 6}],
)
def test_bad_config_is_refused(bad: dict) -> None:
    with pytest.raises(ValueError):
        WorkloadConfig(**bad)


def test_a_short_session_gets_one_fact_per_whole_turn() -> None:
    s = generate(max_entries=30, facts=20)
    whole_turns = sum(1 for t in set(s.turn_of) if t < s.turn_of[-1])  # the last turn may be cut
    assert 0 < len(s.facts) <= whole_turns + 1 and len({f.turn for f in s.facts}) == len(s.facts)


def test_mix_weights_steer_the_content() -> None:
    english_only = generate(seed=0, turns=60, mix={"english": 1.0}, facts=0)
    assert not any(any("\u4e00" <= ch <= "\u9fff" for ch in _text(e)) for e in english_only.entries)
    assert set(english_only.kinds) <= {"english", "logs", "json"}  # json: the tool calls' args
