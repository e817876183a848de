"""Turn boundaries that survive reused call ids, aborted calls and the original design's name-only results."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from aptmem.compaction.planner import plan_compaction
from aptmem.compaction.policy import CompactionPolicy
from aptmem.compaction.turns import split_tool_pairs, split_turns, turn_starts
from aptmem.entries import Assistant, Entry, ToolCall, ToolResult, User


def agent_session(turns: int, aborted_at: int, *, by_name: bool = False) -> list[Entry]:
    """An agent that numbers its calls per turn (call_0, call_1, ...); one reply is aborted mid-call."""
    entries: list[Entry] = []
    for t in range(turns):
        entries.append(User(ts=t, content=f"request {t}: " + "please " * 20, id=f"u{t}"))
        for c in range(2):
            ident = None if by_name else f"call_{c}"
            name = f"tool{c}"
            entries.append(ToolCall(ts=t, name=name, id=ident, args={"turn": t}))
            if t == aborted_at and c == 1:
                break  # the reply was cut off: this call is never answered
            entries.append(ToolResult(ts=t, call_id=ident, name=name, content="output " * 30))
        else:
            entries.append(Assistant(ts=t, content=f"done {t}"))
    return entries


def test_reused_ids_and_an_aborted_call_do_not_glue_turns() -> None:
    for by_name in (False, True):
        entries = agent_session(26, aborted_at=5, by_name=by_name)
        turns = split_turns(entries)
        assert len(turns) == 26, by_name
        assert all(isinstance(t[0], User) for t in turns)
        assert max(len(t) for t in turns) <= 6


def test_compaction_summarizes_old_turns_instead_of_shortening_the_users_messages() -> None:
    entries = agent_session(26, aborted_at=5)
    counts = [60 if isinstance(e, (User, ToolResult)) else 10 for e in entries]
    policy = CompactionPolicy(window=20_000, keep_turns=10)  # room for 10 turns of ~210 tokens
    plan = plan_compaction(entries, counts, policy=policy, fixed_tokens=0, count_entry=lambda e: 60)
    assert plan.kept_turns == 10 and plan.truncated == {} and plan.turns == 26
    assert isinstance(plan.kept[0], User) and plan.kept[0].id == "u16"
    assert split_tool_pairs(plan.kept, plan.summarized) == 0


def test_an_answer_counts_only_after_its_call() -> None:
    entries = [User(ts=0, content="a"), ToolResult(ts=1, call_id="c1"), User(ts=2, content="b"), ToolCall(ts=3, name="x", id="c1")]
    assert turn_starts(entries) == [0, 2]
    original = [User(ts=0, content="a"), ToolCall(ts=1, name="read", result="..."), User(ts=2, content="b"),
                ToolResult(ts=3, name="read", content="...")]
    assert turn_starts(original) == [0], "a name-only result answers the call before it: the pair stays in one turn"


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 2**32))
def test_no_turn_start_splits_a_pair_with_reused_ids_and_names(seed: int) -> None:
    rng = random.Random(seed)
    entries: list[Entry] = []
    for i in range(rng.randint(1, 60)):
        r = rng.random()
        ident = rng.choice([None, "call_0", "call_1"])
        name = rng.choice(["read", "grep"])
        if r < 0.25:
            entries.append(User(content="u", ts=i))
        elif r < 0.55:
            entries.append(ToolCall(name=name, ts=i, id=ident))
        elif r < 0.85:
            entries.append(ToolResult(call_id=ident, name=name, ts=i))
        else:
            entries.append(Assistant(content="a", ts=i))
    for start in turn_starts(entries):
        assert split_tool_pairs(entries[start:], entries[:start]) == 0, f"seed={seed} cut at {start}"
